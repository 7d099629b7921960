"""Fixtures shared by the watch, trigger and sensor tests (``watch_helpers``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "watch"))

from watch_helpers import create, create_managed, hook, log, no_hook_retries

__all__ = ["create", "create_managed", "hook", "log", "no_hook_retries"]

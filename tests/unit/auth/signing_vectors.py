"""The published ``bce-auth-v1`` vectors, kept with the tests (``data/README.md`` says where
each one comes from)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS_FILE = Path(__file__).resolve().parent / "data" / "bce_signing_vectors.json"


def load_vectors() -> list[dict[str, Any]]:
    """Every vector of ``data/bce_signing_vectors.json``, in file order."""
    vectors: list[dict[str, Any]] = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
    return vectors

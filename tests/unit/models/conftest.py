"""Fixtures of the model tests: the seed job of Baidu's v1 create example (Megatron LLaMA2-7B)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from seed_job import SEED_BODY, SEED_PARAMS


@pytest.fixture
def seed_body() -> dict[str, Any]:
    """A fresh copy of the seed request body."""
    return copy.deepcopy(SEED_BODY)


@pytest.fixture
def seed_params() -> dict[str, Any]:
    """A fresh copy of the seed job as operator parameters."""
    return copy.deepcopy(SEED_PARAMS)

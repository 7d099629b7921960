"""Lenient field types of the AIHC response models.

A status poll must not crash because AIHC sent ``null`` where Go usually sends nothing, a
number where a string was expected, or ``""`` for a time that has not happened yet.  These
``Annotated`` types turn such values into the field's default instead of failing.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator

from airflow_provider_aihc.models._base import to_int

__all__ = [
    "EMPTY_LIST_OK",
    "EMPTY_OBJECT_OK",
    "AnyMap",
    "Flag",
    "Int",
    "Number",
    "OptionalFlag",
    "OptionalInt",
    "Quantities",
    "Str",
    "StrMap",
    "Strs",
    "Timestamp",
    "parse_timestamp",
]

# Go's time.String(): "2024-07-15 16:52:50 +0000 UTC", maybe with fractions and " m=+1.2".
_GO_TIME = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-]\d{4})")


def parse_timestamp(value: object) -> datetime | None:
    """Parse an AIHC timestamp; ``None`` when empty or unparseable (never raises).

    Accepts ISO 8601 (``2024-07-16T08:33:43Z``, jobs), Go's ``time.String()``
    (``2024-07-15 16:52:50 +0000 UTC``, events) and epoch seconds.  Naive times are UTC.

    :param value: the raw field value.
    """
    parsed: datetime | None = None
    try:
        if isinstance(value, datetime):
            parsed = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            parsed = datetime.fromtimestamp(value, UTC)
        elif isinstance(value, str) and value.strip():
            text = value.strip()
            match = _GO_TIME.match(text)
            if match:
                date, clock, fraction, offset = match.groups()
                text = f"{date}T{clock}{(fraction or '')[:7]}{offset}"
            parsed = datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _text(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


def _count(value: object) -> int | None:
    try:
        return to_int(value)
    except ValueError:
        return None


def _flag(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 0: False}.get(value)
    text = value.strip().lower() if isinstance(value, str) else ""
    return {"true": True, "1": True, "false": False, "0": False}.get(text)


def _strs(value: object) -> object:
    if value is None:
        return []
    return [_text(item) for item in value] if isinstance(value, list | tuple) else value


def _str_map(value: object) -> object:
    if value is None:
        return {}
    return {k: _text(v) for k, v in value.items()} if isinstance(value, Mapping) else value


def _quantities(value: object) -> object:
    """Kubernetes-style quantities: a number written as a string (``"16"``) read as the
    number, anything else (``"8Gi"``) kept as written."""
    if not isinstance(value, Mapping):
        return value or {}
    read: dict[str, object] = {}
    for name, amount in value.items():
        read[str(name)] = amount
        if isinstance(amount, str):
            with contextlib.suppress(ValueError):
                number = float(amount)
                if math.isfinite(number):
                    read[str(name)] = int(number) if number.is_integer() else number
    return read


Str = Annotated[str, BeforeValidator(_text)]
Int = Annotated[int, BeforeValidator(lambda value: _count(value) or 0)]
OptionalInt = Annotated[int | None, BeforeValidator(_count)]
Flag = Annotated[bool, BeforeValidator(lambda value: bool(_flag(value)))]
OptionalFlag = Annotated[bool | None, BeforeValidator(_flag)]
Timestamp = Annotated[datetime | None, BeforeValidator(parse_timestamp)]
Number = Annotated[int | float, BeforeValidator(lambda value: _number(value))]
Strs = Annotated[list[str], BeforeValidator(_strs)]
StrMap = Annotated[dict[str, str], BeforeValidator(_str_map)]
AnyMap = Annotated[dict[str, Any], BeforeValidator(lambda value: value or {})]
Quantities = Annotated[dict[str, int | float | str], BeforeValidator(_quantities)]
EMPTY_LIST_OK = BeforeValidator(lambda value: value or [])
EMPTY_OBJECT_OK = BeforeValidator(lambda value: value or {})


def _number(value: object) -> int | float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    try:
        return float(str(value))
    except ValueError:
        return 0

"""Base classes and small shared validators of the AIHC wire models.

Fields are snake_case in Python and camelCase on the wire (``alias_generator=to_camel``);
both spellings validate, and dumps use the wire names.  ``to_camel`` gets acronyms wrong
(``enable_rdma`` → ``enableRdma``), so such fields name their wire spelling explicitly
(``enableRDMA``, ``PodIP``, ``k8sUID``, ``k8sNamespace``, ``for``) as validation and
serialization aliases; :func:`wire_name` reads it back.

* :class:`_RequestModel`: ``extra="forbid"``, so a typo in a task parameter is an error.
* :class:`_ResponseModel`: ``extra="allow"``, so fields AIHC adds later parse and are kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from airflow_provider_aihc.job_parameters import show

__all__ = [
    "show",
    "stringify_scalar",
    "to_int",
    "to_number",
    "wire_name",
    "wrap_single",
]


class _WireModel(BaseModel):
    """Snake_case in Python, camelCase on the wire, both accepted on input."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Not use_attribute_docstrings: it reads the source of every model class in each
        # worker's first execute() (0.47 s of a cold 1.25 s in bench/bench_submit.py).
    )

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-ready wire form: camelCase names, unset (``None``) fields left out."""
        return self.model_dump(mode="json", exclude_none=True)


class _RequestModel(_WireModel):
    """A model sent to AIHC: unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid")


class _ResponseModel(_WireModel):
    """A model read from AIHC: unknown fields are tolerated and kept."""

    model_config = ConfigDict(extra="allow")


def wire_name(field_name: str, info: FieldInfo) -> str:
    """The name a field has on the wire (its serialization alias, else its alias or name).

    Acronym fields use ``validation_alias``/``serialization_alias`` rather than ``alias``, so
    that type checkers accept their Python names as constructor keywords.

    :param field_name: the Python attribute name.
    :param info: the field's ``FieldInfo`` from ``model_fields``.
    """
    return info.serialization_alias or info.alias or field_name


def stringify_scalar(value: object) -> object:
    """Turn a number or bool into the string AIHC expects (``1`` → ``"1"``, ``True`` → ``"true"``).

    Anything else is returned unchanged for the field's own validation.

    :param value: an env or label value.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        try:
            return str(value)
        except ValueError:  # an int too long to print
            raise ValueError("must be a string; got a number too long to convert") from None
    return value


def to_number(value: object, *, what: str = "a number") -> int | float:
    """Coerce a count or quantity: numbers and numeric strings, never bools, NaN or infinity.

    A whole float becomes an ``int``, so ``8.0`` goes on the wire as ``8``.

    :param value: the value to coerce.
    :param what: how to describe the expected value in the error message.
    :raises ValueError: with a message naming what is allowed and what was given.
    """
    number: int | float
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"must be {what}, got {show(value)}")
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            try:
                number = float(value.strip())
            except ValueError:
                raise ValueError(f"must be {what}, got {show(value)}") from None
    else:
        number = value
    try:
        finite = math.isfinite(float(number))  # also what a float64 on the wire can hold
    except OverflowError:
        finite = False
    if not finite:
        raise ValueError(f"must be {what}, got {show(value)}")
    if isinstance(number, float) and number.is_integer():
        return int(number)
    return number


def to_int(value: object, *, what: str = "an integer") -> int:
    """Coerce a count: an integer, a whole float (``2.0``) or a numeric string (``"2"``).

    :param value: the value to coerce.
    :param what: how to describe the expected value in the error message.
    :raises ValueError: with a message naming what is allowed and what was given.
    """
    number = to_number(value, what=what)
    if not isinstance(number, int):
        raise ValueError(f"must be {what}, got {show(value)}")
    return number


def wrap_single(value: object, keys: frozenset[str], required: str) -> object:
    """Wrap one wire-form item given on its own into a one-item list.

    Lets ``{"name": "A", "value": "1"}`` mean one env var rather than two env vars named
    ``name`` and ``value``.

    :param value: the user's value.
    :param keys: the item's wire keys; every key of ``value`` must be one of them.
    :param required: the key that must be present for ``value`` to count as one item.
    """
    if isinstance(value, Mapping) and required in value and set(value) <= keys:
        return [dict(value)]
    return value

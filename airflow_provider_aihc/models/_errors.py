"""Plain-language problems for pydantic errors of the create-job request.

Each problem says what is allowed and what was given (``must be >= 1, got 0``); an unknown
field lists the allowed names.  Values under ``imageConfig`` and ``jobSpec.envs`` are never
echoed: they may be registry credentials or tokens.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from airflow_provider_aihc.models._base import show, wire_name

__all__ = ["describe_error"]

Loc = Sequence[str | int]

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "a boolean (true/false, yes/no, on/off, 1/0)",
    "bool_parsing": "a boolean (true/false, yes/no, on/off, 1/0)",
    "list_type": "a list",
    "model_type": "an object (a mapping)",
    "model_attributes_type": "an object (a mapping)",
    "dict_type": "an object (a mapping)",
}
_LIST_FORMS: dict[tuple[str | int, ...], str] = {
    ("jobSpec", "envs"): 'a list of {name, value} objects or a {"NAME": "value"} mapping',
    ("jobSpec", "resources"): 'a list of {name, quantity} objects or a {"name": quantity} mapping',
    ("labels",): 'a list of {key, value} objects or a {"key": "value"} mapping',
    ("datasources",): "a list of {type, name, mountPath, sourcePath, options} objects",
}
_BOUNDS = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}
_MISPLACED = {
    "resourcePoolId": "it is a query parameter: use the operator's resource_pool_id",
    "jobType": "the v1 API calls it jobFramework",
}
_PARAMETERS: dict[tuple[str | int, ...], str] = {
    ("name",): "name",
    ("jobSpec", "image"): "image",
    ("jobSpec", "command"): "command",
}


def describe_error(
    error: ErrorDetails,
    loc: Loc,
    model_at: Callable[[Loc], type[BaseModel] | None],
) -> str:
    """Describe one pydantic error as a problem: what is allowed, and what was given.

    :param error: one item of ``ValidationError.errors()``.
    :param loc: the error's location, spelled with wire names.
    :param model_at: finds the model whose fields live at a location (for unknown fields).
    """
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    hidden = "imageConfig" in loc or "envs" in loc  # credentials, tokens
    given = "<hidden>" if hidden else show(error.get("input"))
    if kind == "missing":
        param = _PARAMETERS.get(tuple(loc))
        return f"required; pass {param}= or set it in body" if param else "required"
    if kind == "extra_forbidden":
        return _unknown_field(loc, model_at)
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "list_type" and tuple(loc) in _LIST_FORMS:
        return f"must be {_LIST_FORMS[tuple(loc)]}, got {given}"
    if kind in _EXPECTED:
        return f"must be {_EXPECTED[kind]}, got {given}"
    if kind in _BOUNDS:
        symbol, key = _BOUNDS[kind]
        return f"must be {symbol} {ctx.get(key)}, got {given}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}; got {given}"
    return f"{error['msg']}; got {given}"


def _unknown_field(loc: Loc, model_at: Callable[[Loc], type[BaseModel] | None]) -> str:
    key = str(loc[-1]) if loc else ""
    model = model_at(loc[:-1])
    allowed = [
        wire_name(name, info) for name, info in (model.model_fields if model else {}).items()
    ]
    if key in _MISPLACED and len(loc) == 1:
        hint = f" ({_MISPLACED[key]})"
    elif len(loc) == 1 and key in _job_spec_fields(model_at):
        hint = f" (in the v1 API it belongs inside jobSpec: jobSpec.{key})"
    else:
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"unknown field{hint}; allowed: {', '.join(allowed)}"


def _job_spec_fields(model_at: Callable[[Loc], type[BaseModel] | None]) -> set[str]:
    spec = model_at(("jobSpec",))
    return {wire_name(name, info) for name, info in (spec.model_fields if spec else {}).items()}

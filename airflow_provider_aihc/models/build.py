"""Build the create-job request from a task's rendered parameters.

:func:`build_create_request` is what ``AIHCCreateJobOperator.execute()`` calls after Jinja
rendering: it merges the named parameters over ``body`` (a whole request in wire form),
validates the result as a :class:`~.request.CreateJobRequest`, and reports every problem at
once as one :class:`~airflow_provider_aihc.exceptions.AIHCValidationError`, whose fields are
wire paths plus the operator parameter that supplied the value::

    jobSpec.replicas (replicas): must be >= 1, got 0
    priority: must be one of high, normal, low; got 'urgent'

No other exception leaves it, whatever the input.  Values rendered to text by Jinja are
accepted: dict and list parameters may be JSON (or Python-literal) strings, and ``""``,
``"None"`` and ``"null"`` mean "not given" for them; numbers and booleans in strings are
coerced by the model.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.job_parameters import BUILDER_PARAMETERS, field, param_docs
from airflow_provider_aihc.models._base import show, wire_name
from airflow_provider_aihc.models._errors import describe_error
from airflow_provider_aihc.models.request import CROSS_FIELD_ERROR, CreateJobRequest, JobSpec

__all__ = ["PARAMETER_PATHS", "build_create_request"]

Loc = tuple[str | int, ...]

PARAMETER_PATHS: dict[str, tuple[str, ...]] = {
    name: field(name).path for name in BUILDER_PARAMETERS
}
"""Operator parameter → wire path of the request field it sets."""

_STRUCTURED = frozenset(name for name in BUILDER_PARAMETERS if field(name).structured)
_NOT_GIVEN_TEXT = frozenset({"", "None", "null"})
_SPEC = "jobSpec"
_UNPARSEABLE = object()  # a text value that failed to parse (already reported)


def build_create_request(
    body: Mapping[str, Any] | str | CreateJobRequest | None = None,
    *,
    default_name: str | None = None,
    **parameters: Any,
) -> CreateJobRequest:
    """Merge the named parameters over ``body`` and validate the create-job request.

    ``None`` means "not given".  A named parameter overrides the same field of ``body``;
    ``queue`` (``default``), ``jobFramework`` (``PyTorchJob``), ``priority`` (``normal``)
    and ``jobSpec.replicas`` (1) default only when neither gives a value.  ``body`` is
    never modified.  The named parameters are :data:`BUILDER_PARAMETERS
    <airflow_provider_aihc.job_parameters.BUILDER_PARAMETERS>`, each the field of its row in
    :data:`~airflow_provider_aihc.job_parameters.JOB_FIELDS`; dict and list ones may be
    text.

    :param body: a whole create request in wire (camelCase) form: a mapping, a JSON string
        (a rendered ``.json`` file or an XCom value), or a :class:`CreateJobRequest`.
    :param default_name: the name to use when neither ``name`` nor ``body`` gives one (the
        operator's deterministic per-task-instance name).
    {job_parameters}
    :raises AIHCValidationError: listing every problem as ``(field, problem)``.
    :raises TypeError: a parameter that is no field's (a programming error, as Python's own).
    """
    unknown = sorted(set(parameters) - set(PARAMETER_PATHS))
    if unknown:
        raise TypeError(f"build_create_request() got an unexpected keyword argument {unknown[0]!r}")
    named = {param: parameters.get(param) for param in BUILDER_PARAMETERS}
    name = named["name"]
    errors: list[tuple[str, str]] = []
    payload = _load_body(body, errors)
    body_failed = bool(errors)
    spec = _prepare(payload, errors)
    supplied: dict[Loc, str] = {}
    if default_name is not None and name is None and "name" not in payload:
        payload["name"] = default_name
        supplied[("name",)] = "default_name"
    for param, value in named.items():
        path = PARAMETER_PATHS[param]
        if param in _STRUCTURED:
            value = _parse_structured(value, f"{'.'.join(path)} ({param})", errors)
        if value is not None and value is not _UNPARSEABLE:
            (spec if path[0] == _SPEC else payload)[path[-1]] = value
            supplied[path] = param
    try:
        request = CreateJobRequest.model_validate(payload)
    except ValidationError as exc:
        errors.extend(_translate(exc, supplied, skip_missing=body_failed))
    except RecursionError:
        errors.append(("body", "is nested too deeply"))
    else:
        errors.extend(_unsendable(request, supplied))
    if errors:
        raise AIHCValidationError(errors) from None
    return request


def _prepare(payload: dict[str, Any], errors: list[tuple[str, str]]) -> dict[str, Any]:
    """Normalize the body's top level and its ``jobSpec`` (always a dict); return the latter."""
    _normalize_level(payload, CreateJobRequest, (), errors)
    if not isinstance(payload.get(_SPEC), Mapping):
        if payload.get(_SPEC) is not None:
            errors.append((_SPEC, f"must be an object, got {show(payload[_SPEC])}"))
        payload[_SPEC] = {}
    spec: dict[str, Any] = dict(payload[_SPEC])
    payload[_SPEC] = spec
    _normalize_level(spec, JobSpec, (_SPEC,), errors)
    return spec


def _unsendable(request: CreateJobRequest, supplied: Mapping[Loc, str]) -> list[tuple[str, str]]:
    """Fields that cannot go into a JSON body: NaN, huge or deeply nested values, or odd
    objects in the free-form parts (``alertConfig.alertItems``, datasource ``options``)."""
    if _json_problem(request, None) is None:
        return []
    problems = []
    for field_name, info in CreateJobRequest.model_fields.items():
        reason = _json_problem(request, field_name)
        if reason is not None:
            label = _label((wire_name(field_name, info),), supplied)
            problems.append((label, f"cannot be sent as JSON: {reason}"))
    return problems or [("body", "cannot be sent as JSON")]


def _json_problem(request: CreateJobRequest, field_name: str | None) -> str | None:
    include = None if field_name is None else {field_name}
    try:
        json.dumps(
            request.model_dump(mode="json", include=include, exclude_none=True), allow_nan=False
        )
    except (ValueError, TypeError, RecursionError) as exc:
        return (str(exc).splitlines() or [type(exc).__name__])[0]
    return None


def _load_body(body: object, errors: list[tuple[str, str]]) -> dict[str, Any]:
    """Return a fresh, plain copy of ``body`` as a dict; record why it cannot be one."""
    if body is None:
        return {}
    if isinstance(body, BaseModel):
        return dict(body.model_dump(mode="json", exclude_none=True))
    if isinstance(body, str):
        value = _parse_text(body, "body", errors)
        if value is None or value is _UNPARSEABLE:
            return {}
        if not isinstance(value, dict):
            errors.append(("body", f"must be a JSON object, got {type(value).__name__}"))
            return {}
        body = value
    if not isinstance(body, Mapping):
        errors.append(
            ("body", f"must be a mapping or a JSON object string, got {type(body).__name__}")
        )
        return {}
    try:
        return {key: _plain(item) for key, item in body.items()}
    except RecursionError:
        errors.append(("body", "is nested too deeply"))
        return {}


def _plain(value: object) -> object:
    """Deep-copy mappings and lists into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _parse_text(text: str, label: str, errors: list[tuple[str, str]]) -> object:
    """Parse a JSON (or Python-literal) string: ``None`` when it says "not given",
    ``_UNPARSEABLE`` (with the error recorded) when it is neither."""
    stripped = text.strip()
    if stripped in _NOT_GIVEN_TEXT:
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError) as exc:
        json_error = exc
    try:  # Jinja renders a dict as its Python repr: {'A': '1'}
        return ast.literal_eval(stripped)
    except Exception:  # literal_eval raises many types (ValueError, SyntaxError, ...)
        pass
    if isinstance(json_error, json.JSONDecodeError):
        where = f"{json_error.msg} at line {json_error.lineno}, column {json_error.colno}"
    else:
        where = str(json_error) or type(json_error).__name__
    errors.append((label, f"is not valid JSON: {where}"))
    return _UNPARSEABLE


def _parse_structured(value: object, label: str, errors: list[tuple[str, str]]) -> object:
    """Turn a dict/list parameter (maybe rendered to text) into plain data."""
    if isinstance(value, str):
        value = _parse_text(value, label, errors)
    try:
        return _plain(value)
    except RecursionError:
        errors.append((label, "is nested too deeply"))
        return _UNPARSEABLE


def _normalize_level(
    data: dict[Any, Any], model: type[BaseModel], prefix: Loc, errors: list[tuple[str, str]]
) -> None:
    """Drop ``None`` values and rename snake_case keys of ``model``'s fields to wire names."""
    for key in [key for key, value in data.items() if value is None]:
        del data[key]
    for field_name, info in model.model_fields.items():
        alias = wire_name(field_name, info)
        if field_name == alias or field_name not in data:
            continue
        value = data.pop(field_name)
        if alias in data:
            where = ".".join(map(str, (*prefix, alias)))
            errors.append((where, f"given twice, as '{alias}' and as '{field_name}'"))
        else:
            data[alias] = value


def _translate(
    exc: ValidationError, supplied: Mapping[Loc, str], *, skip_missing: bool
) -> list[tuple[str, str]]:
    """Turn pydantic's errors into ``(field (parameter), problem)`` pairs."""
    pairs: list[tuple[str, str]] = []
    for error in exc.errors(include_url=False):
        loc = _wire_loc(error["loc"])
        if error["type"] == CROSS_FIELD_ERROR:
            for field, problem in (error.get("ctx") or {}).get("problems", ()):
                pairs.append((_label((*loc, *field.split(".")), supplied), problem))
        elif not (skip_missing and error["type"] == "missing"):
            pairs.append((_label(loc, supplied), describe_error(error, loc, _model_at)))
    return pairs


def _label(loc: Loc, supplied: Mapping[Loc, str]) -> str:
    text = "".join(
        f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part))
        for i, part in enumerate(loc)
    )
    for end in range(len(loc), 0, -1):
        if loc[:end] in supplied:
            return f"{text} ({supplied[loc[:end]]})"
    return text or "body"


def _wire_loc(loc: Sequence[str | int]) -> Loc:
    """Spell every field of a pydantic error location by its wire name."""
    model: type[BaseModel] | None = CreateJobRequest
    wire: list[str | int] = []
    for part in loc:
        if isinstance(part, int):
            wire.append(part)
            continue
        found = _field(model, part)
        wire.append(found[0] if found else part)
        model = _submodel(found[1]) if found else None
    return tuple(wire)


def _model_at(loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model whose fields live at ``loc`` (a wire path), or ``None``."""
    model: type[BaseModel] | None = CreateJobRequest
    for part in loc:
        if isinstance(part, str):
            found = _field(model, part)
            model = _submodel(found[1]) if found else None
    return model


def _field(model: type[BaseModel] | None, key: str) -> tuple[str, object] | None:
    for field_name, info in (model.model_fields if model else {}).items():
        wire = wire_name(field_name, info)
        # The names pydantic accepted; an alias the generator made but validation does not
        # accept (``enableRdma`` beside ``enableRDMA``) is the user's typo, kept as written.
        accepted = info.validation_alias if info.validation_alias is not None else info.alias
        if key in (field_name, wire, accepted):
            return wire, info.annotation
    return None


def _submodel(annotation: object) -> type[BaseModel] | None:
    """The model inside ``X``, ``X | None`` or ``list[X]``, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _submodel(arg)
        if found:
            return found
    return None


build_create_request.__doc__ = (build_create_request.__doc__ or "").replace(
    "    {job_parameters}", param_docs(BUILDER_PARAMETERS, operator=False)
)

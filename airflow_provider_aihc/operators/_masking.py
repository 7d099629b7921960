"""Rendering the create operator's fields, and masking the secrets they carry, on the path
both plain and mapped tasks take (security review F1, F2).

Airflow renders a mapped task (``.partial().expand()``) by calling the unmapped operator's
``_do_render_template_fields`` directly, not its ``render_template_fields``: an override of
the latter never runs for a mapped task.  So the operator overrides the former and calls
:func:`render_job_fields`, which, for both paths,

* loads ``body`` from its ``.json`` file (rendered like any template),
* renders, and names each field whose template does not render,
* registers with Airflow's secrets masker, before the rendered fields are stored
  (Rendered Templates) or anything logs them, every registry password and every env value
  whose name looks secret (Airflow's sensitive-name rule, ``[core] sensitive_var_conn_names``
  included) and a code source's BOS temporary token, found on the validated request when
  it validates and, whatever the
  validation says, by walking every accepted spelling (``imageConfig``, ``image_config``,
  ``jobSpec``, ``job_spec``) and form (a dict, JSON text, the Python-literal text Jinja
  renders a dict to; for envs also ``[{"name", "value"}]``).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC
from typing import Any

from airflow_provider_aihc.job_parameters import field as job_field

#: A ``body`` naming a file to load, relative to the DAG folder or ``template_searchpath``.
BODY_FILE_EXTENSION = ".json"


def _spellings(name: str) -> frozenset[str]:
    """A field's accepted keys in a body: its wire name and its snake_case name."""
    row = job_field(name)
    return frozenset({(row.v1 or row.v2 or (name,))[-1], name})


_IMAGE_CONFIG_KEYS = _spellings("image_config")
#: A v1 ``codeSource`` carries a BOS temporary token (bce-sdk-go ``CodeSourceV3``).
_CODE_SOURCE_KEYS = _spellings("code_source")
_TOKEN_KEYS = ("bosTemporaryToken", "bos_temporary_token")
_ENVS_KEY = (job_field("envs").v1 or ())[-1]
#: Nesting walked at most (a body is a few levels deep; the validation refuses deeper).
_MAX_DEPTH = 32

Secret = tuple[Any, str | None]


def render_job_fields(
    operator: Any,
    render: Callable[..., None],
    template_fields: Any,
    context: Any,
    jinja_env: Any,
    seen_oids: set[int],
) -> None:
    """Load the ``body`` file, render ``template_fields`` with ``render`` (Airflow's own
    ``_do_render_template_fields``), then mask the job's secrets.

    :param operator: the ``AIHCCreateJobOperator`` (the unmapped one for a mapped task).
    :param render: Airflow's ``_do_render_template_fields`` of ``operator``, bound.
    :raises AIHCValidationError: naming each field whose template cannot render (an
        undefined variable, a missing ``body`` file, bad syntax): no retry renders it.
    """
    import jinja2

    from airflow_provider_aihc.exceptions import AIHCValidationError
    from airflow_provider_aihc.operators._checks import template_problem

    env = jinja_env or operator.get_template_env()
    operator.body = load_body_file(env, operator.body)
    templates = {field: getattr(operator, field) for field in template_fields}
    try:
        render(operator, template_fields, context, env, seen_oids)
    except jinja2.TemplateError as err:
        errors = _template_errors(operator, templates, context, env)
        raise AIHCValidationError(errors or [("template", template_problem(err))]) from err
    mask_job_secrets(operator)


def load_body_file(env: Any, body: Any) -> Any:
    """The text of the file ``body`` names (``job.json``), or ``body`` as it is.

    :raises AIHCValidationError: the file is not found.
    """
    import jinja2

    from airflow_provider_aihc.exceptions import AIHCValidationError

    if not (isinstance(body, str) and body.strip().endswith(BODY_FILE_EXTENSION)):
        return body
    try:
        return env.loader.get_source(env, body.strip())[0]
    except jinja2.TemplateNotFound as err:
        problem = f"template file {err.name!r} not found"
        raise AIHCValidationError([("body", problem)]) from err


def render_for_validation(
    operator: Any, context: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The operator's templated fields rendered for
    :meth:`~airflow_provider_aihc.operators.aihc.AIHCCreateJobOperator.validate`, the
    operator left as it is; and ``(field, problem)`` for each that does not render.

    :param context: template variables over a stand-in for a manual run now.
    """
    from datetime import datetime

    import jinja2

    from airflow_provider_aihc.exceptions import AIHCValidationError
    from airflow_provider_aihc.operators._checks import template_problem

    now = datetime.now(UTC)
    dag = operator.dag if operator.has_dag() else None
    params = {key: getattr(value, "value", value) for key, value in (operator.params or {}).items()}
    stand_in: dict[str, Any] = {
        "params": params,
        "dag": dag,
        "task": operator,
        "run_id": f"manual__{now.isoformat()}",
        "logical_date": now,
        "ds": now.strftime("%Y-%m-%d"),
        "ds_nodash": now.strftime("%Y%m%d"),
        "ts": now.isoformat(),
        "ts_nodash": now.strftime("%Y%m%dT%H%M%S"),
    }
    stand_in.update(context or {})
    if dag is not None:
        env = operator.get_template_env()
    else:  # a task made outside a DAG (a test): Airflow's defaults
        from jinja2.sandbox import SandboxedEnvironment

        env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, cache_size=0)
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for name in operator.template_fields:
        value = getattr(operator, name)
        if hasattr(value, "resolve"):  # an upstream task's XCom: unknown before the run
            values[name] = None
            continue
        try:
            values[name] = operator.render_template(load_body_file(env, value), stand_in, env)
        except AIHCValidationError as err:
            problems.extend(err.errors)
        except jinja2.TemplateError as err:
            problems.append((name, template_problem(err)))
    return values, problems


def _template_errors(
    operator: Any, templates: Mapping[str, Any], context: Any, env: Any
) -> list[tuple[str, str]]:
    """``(field, problem)`` for every template (by field) that does not render."""
    import jinja2

    from airflow_provider_aihc.operators._checks import template_problem

    errors = []
    for field, template in templates.items():
        try:
            operator.render_template(template, context, env)
        except jinja2.TemplateError as err:
            errors.append((field, template_problem(err)))
    return errors


def mask_job_secrets(operator: Any) -> None:
    """Register the rendered request's secrets with Airflow's secrets masker.

    A registry password is masked whatever its name; an env value only when its name is
    sensitive (Airflow's rule).  Only those are handed to the masker: it warns "Skipping
    masking for a secret as it's too short" of any short value before it looks at the
    name, so ``NCCL_DEBUG=WARN`` would make every task log that warning (issue #38).
    """
    from airflow_provider_aihc.version_compat import is_sensitive_name, mask_secret

    for value, name in job_secrets(operator):
        if name is None or is_sensitive_name(name):
            mask_secret(value, name)


def job_secrets(operator: Any) -> list[Secret]:
    """``(value, name)`` of every registry password and BOS temporary token (``name``
    ``None``: always secret) and every env var (``name`` its name) of the operator's
    rendered fields."""
    from airflow_provider_aihc.job_parameters import JOB_PARAMETERS

    found: list[Secret] = list(_validated_secrets(operator, JOB_PARAMETERS))
    found += _walk(_parsed(operator.body), 0)
    config = _parsed(operator.image_config)
    if isinstance(config, Mapping):
        found += _password(config)
    source = _parsed(operator.code_source)
    if isinstance(source, Mapping):
        found += _bos_token(source)
    found += _env_values(_parsed(operator.envs))
    unique: dict[tuple[str, str | None], Secret] = {}
    for value, name in found:
        if value not in (None, ""):
            unique.setdefault((repr(value), name), (value, name))
    return list(unique.values())


def _validated_secrets(operator: Any, parameters: tuple[str, ...]) -> Iterator[Secret]:
    """The secrets of the request as ``build_create_request`` validates it (the values that
    are sent: numbers already text), if it validates."""
    from airflow_provider_aihc.exceptions import AIHCValidationError
    from airflow_provider_aihc.models.build import build_create_request

    try:
        request = build_create_request(
            operator.body,
            default_name="masking",
            **{param: getattr(operator, param) for param in parameters},
        )
    except AIHCValidationError:
        return  # what the walk finds is masked; the error text hides these values
    spec = request.job_spec
    if spec.image_config is not None:
        yield spec.image_config.password.get_secret_value(), None
    if request.code_source is not None and request.code_source.bos_temporary_token:
        yield request.code_source.bos_temporary_token, None
    for env in spec.envs or []:
        yield env.value, env.name


def _parsed(value: object) -> object:
    """Text as the request builder reads it (JSON, else a Python literal); else ``value``."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(value.strip())
    except Exception:  # literal_eval raises many types (ValueError, SyntaxError, ...)
        return value


def _walk(value: object, depth: int) -> list[Secret]:
    """Every password under an image-config key and every env value under ``envs``,
    anywhere in ``value`` (text inside parsed too)."""
    if depth > _MAX_DEPTH:
        return []
    value = _parsed(value)
    found: list[Secret] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            item = _parsed(item)
            if key in _IMAGE_CONFIG_KEYS and isinstance(item, Mapping):
                found += _password(item)
            elif key in _CODE_SOURCE_KEYS and isinstance(item, Mapping):
                found += _bos_token(item)
            elif key == _ENVS_KEY:
                found += _env_values(item)
            found += _walk(item, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            found += _walk(item, depth + 1)
    return found


def _password(config: Mapping[Any, Any]) -> list[Secret]:
    password = config.get("password")
    return [] if password is None else [(_text(password), None)]


def _bos_token(source: Mapping[Any, Any]) -> list[Secret]:
    return [(_text(source[key]), None) for key in _TOKEN_KEYS if source.get(key) is not None]


def _env_values(envs: object) -> list[Secret]:
    """``(value, name)`` of each env var, in the dict, list or text form."""
    envs = _parsed(envs)
    if isinstance(envs, Mapping):
        return [(_text(value), str(name)) for name, value in envs.items() if value is not None]
    if not isinstance(envs, list | tuple):
        return []
    return [
        (_text(item.get("value")), str(item.get("name")))
        for item in envs
        if isinstance(item, Mapping) and item.get("value") is not None
    ]


def _text(value: object) -> Any:
    """A scalar as the text that is sent; lists and dicts as they are (the masker walks
    them, and a malformed value may still be echoed by a later error)."""
    if isinstance(value, str | list | dict):
        return value
    return "" if isinstance(value, bool) else str(value)  # true/false: nothing to hide

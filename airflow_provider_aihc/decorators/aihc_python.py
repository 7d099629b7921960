"""``@task.aihc_python``: the decorated function itself runs in the AIHC job.

::

    @task.aihc_python(image="registry.baidubce.com/org/train:1.4", replicas=2)
    def train(rows: int, lr: float) -> dict:
        import os  # imports inside: the function runs in the job, not on the worker

        rank = int(os.environ["RANK"])
        ...
        return {"loss": loss}

    metrics = train(rows=1000, lr=0.05)  # rank 0's return value, for downstream tasks

The function's source (task decorators blanked, dedented) and its arguments (JSON,
resolved when the task runs) travel in the job's environment (``_payload.py`` says how,
and the limits); nothing is pickled, so the job's Python need not be the worker's.  Every
replica runs it with the image's ``python3`` and AIHC's distributed environment
(``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``); rank 0 prints its return
value as the result marker line, which the operator reads back (XCom ``result``): that
value is the task's return value.  An exception fails the job and the task, and the
task's log shows the job's traceback (the operator streams the job's log).

Every other parameter is :class:`~airflow_provider_aihc.operators.aihc.AIHCCreateJobOperator`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.decorators._base import (
    AIHCDecoratedOperator,
    job_decorator,
    typed_like,
)
from airflow_provider_aihc.operators._sealed import SealedAttribute
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import is_sensitive_name

if TYPE_CHECKING:
    from airflow_provider_aihc.version_compat import Context

#: The XCom the operator pushes the job's result marker value to.
RESULT_XCOM = "result"
#: Nesting of an argument walked at most when masking (arguments are JSON, a few levels).
_MAX_ARGUMENT_DEPTH = 32


class AIHCPythonDecoratedOperator(AIHCDecoratedOperator):
    """The operator behind ``@task.aihc_python``: the job runs the function."""

    custom_operator_name = "@task.aihc_python"
    #: The payload env's value, made at execute time.  Not in ``envs``: that is a template
    #: field, which Airflow stores again after execution (``overwrite_rtif_after_execution``)
    #: and shows in Rendered Templates, where the arguments inside the payload's JSON text
    #: escape Airflow's key-name redaction (security review S4-1).  Sealed: not in the
    #: instance ``__dict__`` either (operators/_sealed.py).
    payload = SealedAttribute()

    def __init__(self, *, python_callable: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(python_callable=python_callable, **kwargs)
        outside = outside_names(python_callable)
        if outside:  # found at DAG parse, not in the job after it waited for GPUs
            from airflow_provider_aihc.exceptions import AIHCValidationError

            raise AIHCValidationError(
                [
                    (
                        "python_callable",
                        f"{python_callable.__name__}() uses {', '.join(map(repr, outside))} "
                        "from outside the function, which its job does not have: import or "
                        "define them inside the function, or pass them as arguments",
                    )
                ],
                task_id=self.task_id,
            )

    def execute(self, context: Context) -> Any:
        self._pack()
        super().execute(context)  # the job id; the task's value is the job's return value
        return self._job_value(context)

    def execute_complete(self, context: Context, event: Mapping[str, Any]) -> Any:
        super().execute_complete(context, event)
        return self._job_value(context)

    def _pack(self) -> None:
        """Put the function and its arguments into the job: its command and one env.

        :raises AIHCValidationError: an argument is not JSON, the source cannot be read or
            the whole is too large; nothing is sent.
        """
        from airflow_provider_aihc.decorators import _payload
        from airflow_provider_aihc.exceptions import AIHCValidationError

        try:
            payload = _payload.build(
                self.python_callable, list(self.op_args), self.op_kwargs, self.result_marker
            )
        except _payload.PayloadError as err:
            raise AIHCValidationError(err.problems) from err
        for value in self.op_args:
            _mask_argument(value, False, 0)
        for name, value in self.op_kwargs.items():
            _mask_argument(value, is_sensitive_name(name), 0)
        self.command = _payload.command()
        self.payload = payload

    def _job_parameters(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The operator's parameters, ``envs`` plus the payload env (once packed)."""
        from airflow_provider_aihc.decorators._payload import PAYLOAD_ENV

        parameters = super()._job_parameters(given)
        if self.payload is not None:
            parameters["envs"] = _with_env(parameters["envs"], PAYLOAD_ENV, self.payload)
        return parameters

    def _job_value(self, context: Context) -> Any:
        """What rank 0 returned: the ``result`` the operator read from the job's log."""
        ti = context["ti"]
        return ti.xcom_pull(
            task_ids=ti.task_id, key=RESULT_XCOM, map_indexes=getattr(ti, "map_index", -1)
        )


def _mask_argument(value: Any, sensitive: bool, depth: int) -> None:
    """Register an argument's secrets with Airflow's masker, by Airflow's key-name rule
    (the rule Rendered Templates apply to ``op_kwargs``): every string under a sensitive
    name (``api_key``, ``db_password``), at any depth of dicts and lists."""
    if depth > _MAX_ARGUMENT_DEPTH:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _mask_argument(item, sensitive or is_sensitive_name(str(key)), depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _mask_argument(item, sensitive, depth + 1)
    elif sensitive and isinstance(value, str) and value:
        # Imported here: at a DAG file's top it loaded common.compat (and, on 3.0,
        # ``airflow.sdk.log``) at every parse.
        from airflow_provider_aihc.version_compat import mask_secret

        mask_secret(value)


def outside_names(function: Callable[..., Any]) -> list[str]:
    """The names ``function`` reads from its DAG file or an enclosing function: the job
    runs the function's source alone, where each would be a ``NameError`` (after the job
    waited for its GPUs).  Builtins and the function's own name are there."""
    import builtins
    import dis
    import types

    code = getattr(function, "__code__", None)
    if code is None:  # a callable object: its source is not a function's
        return []
    names = set(code.co_freevars)  # an enclosing function's variables
    codes = [code]
    while codes:
        current = codes.pop()
        names.update(
            str(op.argval)
            for op in dis.get_instructions(current)
            if op.opname in ("LOAD_GLOBAL", "LOAD_NAME")
        )
        codes.extend(const for const in current.co_consts if isinstance(const, types.CodeType))
    return sorted(names - set(vars(builtins)) - {function.__name__, "__name__"})


def _with_env(envs: Any, name: str, value: str) -> Any:
    """``envs`` (a mapping, a list of ``{name, value}`` or JSON text of either) plus one."""
    if isinstance(envs, str):
        import json

        from airflow_provider_aihc.exceptions import AIHCValidationError

        try:
            envs = json.loads(envs) if envs.strip() else None
        except ValueError as err:
            raise AIHCValidationError([("envs", f"is not JSON: {err}")]) from err
    if envs is None:
        return {name: value}
    if isinstance(envs, Mapping):
        return {**envs, name: value}
    kept = [e for e in envs if not (isinstance(e, Mapping) and e.get("name") == name)]
    return [*kept, {"name": name, "value": value}]


@typed_like(AIHCCreateJobOperator)
def aihc_python_task(
    python_callable: Callable[..., Any] | None = None,
    multiple_outputs: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Make the function a task whose AIHC job runs the function itself."""
    return job_decorator(AIHCPythonDecoratedOperator, python_callable, multiple_outputs, kwargs)

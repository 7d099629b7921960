"""``@task.aihc``: the decorated function returns the command of an AIHC job.

::

    @task.aihc(image="registry.baidubce.com/org/train:1.4", replicas=2)
    def train(data: str, lr: float) -> str:
        return f"torchrun train.py --data {data} --lr {lr}"

    train.partial(job_queue="default").expand(lr=[1e-4, 3e-4])

The function runs on the worker when the task runs, with the task's arguments (literals,
upstream XComs, mapped values) and, like any TaskFlow function, the context values it
names; it returns a string, or a list of arguments (joined with ``shlex.join``).  Every
other parameter is :class:`~airflow_provider_aihc.operators.aihc.AIHCCreateJobOperator`'s
and means the same; the task waits for the job by default (deferrable per ``[operators]
default_deferrable``) and returns the job id, as the operator does.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airflow_provider_aihc.decorators._base import AIHCDecoratedOperator, job_decorator
from airflow_provider_aihc.version_compat import Context


class AIHCCommandDecoratedOperator(AIHCDecoratedOperator):
    """The operator behind ``@task.aihc``: the function's return value is the command."""

    custom_operator_name = "@task.aihc"

    def execute(self, context: Context) -> Any:
        self.command = self._generate_command(context)
        return super().execute(context)

    def _generate_command(self, context: Context) -> str:
        """Call the function and check what it returned.

        :raises AIHCValidationError: it returned no command (nothing is sent).
        """
        from airflow.providers.common.compat.sdk import context_merge, determine_kwargs

        from airflow_provider_aihc.exceptions import AIHCValidationError

        context_merge(context, self.op_kwargs)
        kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        generated = self.python_callable(*self.op_args, **kwargs)
        function = getattr(self.python_callable, "__name__", "the function")
        if isinstance(generated, list | tuple) and all(isinstance(a, str) for a in generated):
            generated = shlex.join(generated)
        if not isinstance(generated, str):
            problem = (
                f"{function} must return the command, a str or a list of str; "
                f"it returned a {type(generated).__name__}"
            )
            raise AIHCValidationError([("command", problem)])
        if not generated.strip():
            raise AIHCValidationError([("command", f"{function} returned an empty command")])
        return generated


def aihc_task(
    python_callable: Callable[..., Any] | None = None,
    multiple_outputs: bool | None = None,
    *,
    name: str | None = None,
    image: str | None = None,
    resource_pool_id: str | None = None,
    job_queue: str | None = None,
    replicas: int | str | None = None,
    job_resources: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
    envs: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
    priority: str | None = None,
    job_framework: str | None = None,
    enable_rdma: bool | str | None = None,
    datasources: Sequence[Mapping[str, Any]] | str | None = None,
    labels: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | None = None,
    fault_tolerance: bool | str | None = None,
    fault_tolerance_config: Mapping[str, Any] | str | None = None,
    enable_bccl: bool | str | None = None,
    image_config: Mapping[str, Any] | str | None = None,
    tensorboard_config: Mapping[str, Any] | str | None = None,
    alert_config: Mapping[str, Any] | str | None = None,
    retention_period: str | None = None,
    body: Mapping[str, Any] | str | None = None,
    wait_for_completion: bool = True,
    deferrable: bool | None = None,
    poll_interval: float = 30,
    timeout: float | None = None,
    cancel_on_kill: bool = True,
    stream_logs: bool = True,
    result_marker: str | None = "AIHC_RESULT ",
    metrics: Mapping[str, str] | None = None,
    queue_timeout: float | None = None,
    aihc_conn_id: str = "aihc_default",
    **kwargs: Any,
) -> Any:
    """Make the function a task that creates an AIHC job running the command it returns.

    :param python_callable: the function (when used without parentheses).
    :param multiple_outputs: Airflow's; the return value is the job id, so rarely useful.
    :param wait_for_completion: wait for the job and fail with it (default ``True``,
        unlike the operator: a TaskFlow task's value is what it ran).

    Every other parameter is :class:`AIHCCreateJobOperator`'s (see there), except
    ``command``, which the function returns; ``kwargs`` are ``BaseOperator``'s.
    """
    given = {k: v for k, v in locals().items() if k not in _NOT_OPERATOR}
    return job_decorator(
        AIHCCommandDecoratedOperator, python_callable, multiple_outputs, given, kwargs
    )


_NOT_OPERATOR = frozenset({"python_callable", "multiple_outputs", "kwargs"})

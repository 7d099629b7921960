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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.decorators._base import (
    AIHCDecoratedOperator,
    job_decorator,
    typed_like,
)
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

if TYPE_CHECKING:
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


@typed_like(AIHCCreateJobOperator)
def aihc_task(
    python_callable: Callable[..., Any] | None = None,
    multiple_outputs: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Make the function a task that creates an AIHC job running the command it returns."""
    return job_decorator(AIHCCommandDecoratedOperator, python_callable, multiple_outputs, kwargs)

"""What ``@task.aihc`` and ``@task.aihc_python`` share: the decorated operator's base and
the factory call.

Built as Airflow's own providers build theirs (cncf.kubernetes ``@task.kubernetes_cmd``,
docker ``@task.docker``): a :class:`DecoratedOperator` that is also the provider's operator,
made by ``task_decorator_factory``, imported through ``airflow.providers.common.compat``
(Airflow 2.11 and 3.x).  The operator's ``execute`` does everything else (identity labels,
adoption of an earlier try's job, the wait, deferral, results), so a decorated task creates
exactly one job per try series and mapped index, as the operator does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from airflow.providers.common.compat.sdk import DecoratedOperator, task_decorator_factory

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator


class AIHCDecoratedOperator(DecoratedOperator, AIHCCreateJobOperator):  # type: ignore[misc]
    """A TaskFlow task that creates one AIHC job; the subclass decides its command."""

    template_fields: Sequence[str] = tuple(
        dict.fromkeys(("op_args", "op_kwargs", *AIHCCreateJobOperator.template_fields))
    )
    # The command is made at execute time: store the rendered fields again afterwards
    # (Airflow 3), as @task.kubernetes_cmd does, so the UI shows the command that ran.
    overwrite_rtif_after_execution: bool = True
    shallow_copy_attrs: Sequence[str] = ("python_callable",)
    custom_operator_name: str = "@task.aihc"

    def __init__(self, *, python_callable: Callable[..., Any], **kwargs: Any) -> None:
        if kwargs.get("command") is not None:
            raise TypeError(
                f"{self.custom_operator_name} makes the job's command itself: do not pass "
                "command (return it from the function with @task.aihc)"
            )
        kwargs.pop("command", None)
        super().__init__(python_callable=python_callable, **kwargs)


def job_decorator(
    decorated_operator_class: type[AIHCDecoratedOperator],
    python_callable: Callable[..., Any] | None,
    multiple_outputs: bool | None,
    given: Mapping[str, Any],
    kwargs: Mapping[str, Any],
) -> Any:
    """``task_decorator_factory`` with the operator parameters the user gave.

    :param given: the typed wrapper's operator parameters; those equal to the operator's
        default are left out, so that a DAG's ``default_args`` still apply to them.
    :param kwargs: the rest (``BaseOperator``'s: ``task_id``, ``retries``, ...).
    """
    defaults = operator_defaults()
    chosen = {name: value for name, value in given.items() if value != defaults.get(name)}
    return task_decorator_factory(
        python_callable=python_callable,
        multiple_outputs=multiple_outputs,
        decorated_operator_class=decorated_operator_class,
        **chosen,
        **kwargs,
    )


def operator_defaults() -> dict[str, Any]:
    """``AIHCCreateJobOperator.__init__``'s parameter defaults, by name."""
    parameters = inspect.signature(AIHCCreateJobOperator.__init__).parameters.values()
    return {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}

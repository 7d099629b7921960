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
from typing import Any, ParamSpec

from airflow.providers.common.compat.sdk import DecoratedOperator, task_decorator_factory

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator

P = ParamSpec("P")


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


def job_parameters(
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
    """The parameters of ``@task.aihc`` and ``@task.aihc_python`` (never called: the two
    decorators take this signature, through :func:`typed_like`, for IDEs and type checkers).

    :param python_callable: the function (when the decorator is used without parentheses).
    :param multiple_outputs: push each key of a returned dict as its own XCom.
    :param wait_for_completion: wait for the job and fail with it; ``True`` by default,
        unlike the operator: a TaskFlow task's value is what its job did.

    Every other parameter is
    :class:`~airflow_provider_aihc.operators.aihc.AIHCCreateJobOperator`'s and means the
    same, except ``command``, which the function makes; ``kwargs`` are ``BaseOperator``'s
    (``task_id``, ``retries``, ...).  A test holds this signature to the operator's.
    """
    raise NotImplementedError("a signature only")


def typed_like(template: Callable[P, Any]) -> Callable[[Callable[..., Any]], Callable[P, Any]]:
    """Give the decorated function ``template``'s signature, statically (``ParamSpec``) and
    at runtime (``__signature__``), so that one parameter list serves both decorators."""

    def apply(function: Callable[..., Any]) -> Callable[P, Any]:
        function.__signature__ = inspect.signature(template)  # type: ignore[attr-defined]
        return function

    return apply


def job_decorator(
    decorated_operator_class: type[AIHCDecoratedOperator],
    python_callable: Callable[..., Any] | None,
    multiple_outputs: bool | None,
    given: Mapping[str, Any],
) -> Any:
    """``task_decorator_factory`` with exactly the parameters the user gave (so that a
    DAG's ``default_args`` still apply to the others), waiting unless told not to.

    :param given: the operator's and ``BaseOperator``'s parameters, as passed.
    """
    return task_decorator_factory(
        python_callable=python_callable,
        multiple_outputs=multiple_outputs,
        decorated_operator_class=decorated_operator_class,
        **{"wait_for_completion": True, **given},
    )

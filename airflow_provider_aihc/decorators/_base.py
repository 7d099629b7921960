"""What ``@task.aihc`` and ``@task.aihc_python`` share: the decorated operator's base and
the factory call.

Built as Airflow's own providers build theirs (cncf.kubernetes ``@task.kubernetes_cmd``,
docker ``@task.docker``): a :class:`DecoratedOperator` that is also the provider's operator,
made by ``task_decorator_factory``, imported through ``version_compat`` (common.compat's
choice: ``airflow.sdk.bases.decorator`` on 3.x, ``airflow.decorators.base`` on 2.11).  The
operator's ``execute`` does everything else (identity labels, adoption of an earlier try's
job, the wait, deferral, results), so a decorated task creates exactly one job per try
series and mapped index, as the operator does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, Protocol, overload

from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.version_compat import DecoratedOperator, task_decorator_factory

if TYPE_CHECKING:  # typing only: a Protocol class costs every DAG parse ~0.1 ms
    P = ParamSpec("P")

    class JobDecorator(Protocol[P]):
        """A decorator typed like the operator it makes: bare (``@task.aihc``) or called with
        the operator's parameters (``@task.aihc(image=...)``)."""

        @overload
        def __call__(self, python_callable: Callable[..., Any], /) -> Any: ...

        @overload
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any: ...


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
    command_made_by_task = True

    def __init__(self, *, python_callable: Callable[..., Any], **kwargs: Any) -> None:
        if kwargs.get("command") is not None:
            raise TypeError(
                f"{self.custom_operator_name} makes the job's command itself: do not pass "
                "command (return it from the function with @task.aihc)"
            )
        kwargs.pop("command", None)
        super().__init__(python_callable=python_callable, **kwargs)


#: The decorators' parameters that are not the operator's (``command`` is the function's).
OWN_PARAMETERS = (
    inspect.Parameter(
        "python_callable",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=None,
        annotation="Callable[..., Any] | None",
    ),
    inspect.Parameter(
        "multiple_outputs",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=None,
        annotation="bool | None",
    ),
)
#: Operator parameters the decorators do not take, and defaults they change.
MADE_BY_FUNCTION = ("command",)
DECORATOR_DEFAULTS = {"wait_for_completion": True}

PARAMETERS_DOC = """
    :param python_callable: the function (when the decorator is used without parentheses).
    :param multiple_outputs: push each key of a returned dict as its own XCom.
    :param wait_for_completion: wait for the job and fail with it; ``True`` by default,
        unlike the operator: a TaskFlow task's value is what its job did.

    Every other parameter is
    :class:`~airflow_provider_aihc.operators.aihc.AIHCCreateJobOperator`'s and means the
    same, except ``command``, which the function makes; ``kwargs`` are ``BaseOperator``'s
    (``task_id``, ``retries``, ...).
"""


@functools.cache  # both decorators' (made at DAG parse): computed once
def decorator_signature() -> inspect.Signature:
    """The decorators' runtime signature: the operator's ``__init__`` (read, not written
    again) without ``self`` and ``command``, after :data:`OWN_PARAMETERS`, waiting by default."""
    operator = inspect.signature(AIHCCreateJobOperator.__init__).parameters.values()
    taken = [
        p.replace(default=DECORATOR_DEFAULTS[p.name]) if p.name in DECORATOR_DEFAULTS else p
        for p in operator
        if p.name not in ("self", *MADE_BY_FUNCTION)
    ]
    return inspect.Signature([*OWN_PARAMETERS, *taken])


def typed_like(template: Callable[P, Any]) -> Callable[[Callable[..., Any]], JobDecorator[P]]:
    """Type the decorated function as ``template`` (the operator class), statically
    (``ParamSpec``: IDEs and type checkers) and at runtime (``__signature__``: the
    :func:`decorator_signature`), and add the decorators' :data:`PARAMETERS_DOC`."""

    def apply(function: Callable[..., Any]) -> JobDecorator[P]:
        function.__signature__ = decorator_signature()  # type: ignore[attr-defined]
        function.__doc__ = (function.__doc__ or "") + "\n" + PARAMETERS_DOC
        return function  # type: ignore[return-value]

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

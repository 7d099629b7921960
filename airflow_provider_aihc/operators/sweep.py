"""``AIHCOrphanSweepOperator``: stop the AIHC jobs this Airflow deployment's tasks left
running after they ended (issue #34).

Run it from a maintenance DAG every few minutes (``dags_examples/aihc_orphan_sweep.py``).
Each run lists every pool once, reads the states of the task instances that the jobs'
labels name, and stops a job only when ``operators/_sweep.py`` says so: its tag verifies,
it is this deployment's (``[aihc] deployment_id``), its task watched it, and that task
instance has ended.  The states come from Airflow the way task code may read them: the Task
SDK's ``get_task_states`` on Airflow 3 (the execution API; no database access, no
credentials), the ORM on Airflow 2.11, where task code has a session.

AIHC actions used: ListJobs (one listing per pool), StopJob.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from airflow_provider_aihc.version_compat import AIRFLOW_V_3_0_PLUS, BaseOperator, Context

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.operators._sweep import SweepDecision, TaskInstanceState

__all__ = ["AIHCOrphanSweepOperator", "read_task_states"]


class AIHCOrphanSweepOperator(BaseOperator):
    """Stop the jobs of ended task instances of this deployment; leave every other job.

    Needs ``[aihc] deployment_id`` (``AIRFLOW__AIHC__DEPLOYMENT_ID``), unique per Airflow
    deployment, set on every component before the jobs to sweep were created: a job is
    this deployment's only when its tag-covered ``airflow-deployment`` label says so.

    :param resource_pool_ids: the pools to sweep (default: the connection's
        ``resource_pool_id``): list each where this deployment's tasks create jobs.
    :param report_only: a dry run: log what would be stopped, stop nothing (a
        method of BaseOperator is already named ``dry_run``).
    :param stop_unknown: also stop a job whose task instance cannot be found (its DAG run
        or DAG was deleted); by default such a job is only reported, since nothing proves
        its task has ended.
    :param aihc_conn_id: the AIHC connection: the one the tasks created the jobs with
        (its tag key verifies them).
    """

    template_fields: Sequence[str] = ("resource_pool_ids",)
    ui_color = "#f0e4d8"

    def __init__(
        self,
        *,
        resource_pool_ids: Collection[str] | None = None,
        report_only: bool = False,
        stop_unknown: bool = False,
        aihc_conn_id: str = "aihc_default",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.resource_pool_ids = list(resource_pool_ids or [])
        self.report_only = report_only
        self.stop_unknown = stop_unknown
        self.aihc_conn_id = aihc_conn_id

    @cached_property
    def hook(self) -> AIHCHook:
        """The AIHC hook of this task."""
        from airflow_provider_aihc.hooks.aihc import AIHCHook

        return AIHCHook(aihc_conn_id=self.aihc_conn_id)

    def execute(self, context: Context) -> dict[str, Any]:
        """Sweep every pool once; the job ids stopped (or that would be) and the counts."""
        from airflow_provider_aihc.exceptions import AIHCConfigError
        from airflow_provider_aihc.operators._identity import deployment_id, tag_key
        from airflow_provider_aihc.operators._sweep import claimed_dag_ids, plan_sweep

        deployment = deployment_id()
        if not deployment:
            raise AIHCConfigError(
                "the orphan sweep needs [aihc] deployment_id (AIRFLOW__AIHC__DEPLOYMENT_ID): "
                "a name unique to this Airflow deployment, set on every component"
            )
        key = tag_key(self.hook.config)
        pools = self.resource_pool_ids or [self.hook.resource_pool(None)]
        counts: Counter[str] = Counter()
        stopped: list[str] = []
        for pool in pools:
            jobs = self.hook.list_job_summaries(pool)
            running = sum(not job.is_terminal for job in jobs)
            self.log.info("Pool %s: %d job(s) listed, %d running", pool, len(jobs), running)
            states = read_task_states(context, claimed_dag_ids(jobs, key, deployment))
            decisions = plan_sweep(
                jobs, states, key=key, deployment=deployment, stop_unknown=self.stop_unknown
            )
            for decision in decisions:
                counts[decision.action] += 1
                if self._act(decision, pool):
                    stopped.append(decision.job.job_id)
        self.log.info(
            "Orphan sweep of deployment %r%s: %d job(s) stopped, %d reported, %d left",
            deployment,
            " (dry run)" if self.report_only else "",
            len(stopped),
            counts["report"],
            counts["leave"],
        )
        return {"stopped": stopped, "report_only": self.report_only, **counts}

    def _act(self, decision: SweepDecision, pool: str) -> bool:
        """Log the decision and stop the job when it says so; whether it was (or would be)
        stopped.  A stop that fails is logged, never raised: the next sweep tries again."""
        from airflow_provider_aihc.exceptions import AIHCError

        job, ti = decision.job, decision.task_instance
        what = f"AIHC job {job.job_id} ({job.name}, {job.status})"
        of = f" of task instance {ti}" if ti is not None else ""
        if decision.action == "leave":
            self.log.info("Left %s%s: %s", what, of, decision.reason)
            return False
        if decision.action == "report" or self.report_only:
            verb = "Would stop" if decision.action == "stop" else "Not stopping"
            self.log.warning("%s %s%s: %s", verb, what, of, decision.reason)
            return decision.action == "stop"
        try:
            self.hook.stop_job(job.job_id, pool)
        except AIHCError as err:
            self.log.error("Could not stop %s%s (%s): %s", what, of, decision.reason, err)
            return False
        self.log.warning("Stopped %s%s: %s", what, of, decision.reason)
        return True


def read_task_states(context: Context, dag_ids: Collection[str]) -> dict[str, TaskInstanceState]:
    """The task instances of ``dag_ids``, by their ``airflow-ti`` key.

    Airflow 3: the Task SDK's ``get_task_states`` (one execution-API call per DAG).
    Airflow 2.11: one ORM query.
    """
    from airflow_provider_aihc.operators._sweep import TaskInstanceState, states_from_task_sdk

    found: list[TaskInstanceState] = []
    if AIRFLOW_V_3_0_PLUS:
        ti = context["ti"]
        for dag_id in sorted(dag_ids):
            found += states_from_task_sdk(dag_id, ti.get_task_states(dag_id=dag_id))
    elif dag_ids:
        from airflow.models.taskinstance import TaskInstance
        from airflow.utils.session import create_session

        with create_session() as session:
            rows = (
                session.query(
                    TaskInstance.dag_id,
                    TaskInstance.task_id,
                    TaskInstance.run_id,
                    TaskInstance.map_index,
                    TaskInstance.state,
                )
                .filter(TaskInstance.dag_id.in_(sorted(dag_ids)))
                .all()
            )
        # A state enum's hash is its name's: compare its value.
        found = [TaskInstanceState(d, t, r, m, getattr(s, "value", s)) for d, t, r, m, s in rows]
    return {state.key: state for state in found}

"""The "AIHC Job" button on a task: the job's page, shown as soon as the job exists.

The task stores the URL in XCom (:meth:`AIHCJobLink.persist`) right after it learns the
job id, so the button works while the job runs, not only after the task ends.  Airflow 3's
API server reads that XCom under :attr:`AIHCJobLink.xcom_key` by itself; Airflow 2's
webserver calls :meth:`AIHCJobLink.get_link`, which reads the same XCom.

Import-light: no hook, no pydantic.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote, urlencode, urlsplit

from airflow_provider_aihc.version_compat import BaseOperatorLink, get_xcom_value

if TYPE_CHECKING:
    from airflow_provider_aihc.version_compat import Context

log = logging.getLogger(__name__)

#: Baidu's console page of one training job.  Unverified: the console's URL scheme is not
#: documented; this is the page the console opens from its job list.
CONSOLE_JOB_URL = "https://console.bce.baidu.com/aihc/jobs/detail"
#: Hosts of Baidu's real endpoints (``aihc.bj.baidubce.com``, ...).
BAIDU_DOMAIN = "baidubce.com"
#: The emulator's page of a job, under its control prefix.
EMULATOR_JOB_PATH = "/_emulator/jobs/"


def job_url(base_url: str, job_id: str, resource_pool_id: str) -> str:
    """The page of a job: Baidu's console for a Baidu endpoint, else the emulator's page.

    :param base_url: the connection's endpoint, ``scheme://host[:port]``.
    :param job_id: the job.
    :param resource_pool_id: its pool (the console needs it).
    """
    host = (urlsplit(base_url).hostname or "").lower()
    if host == BAIDU_DOMAIN or host.endswith("." + BAIDU_DOMAIN):
        query = urlencode({"jobId": job_id, "resourcePoolId": resource_pool_id})
        return f"{CONSOLE_JOB_URL}?{query}"
    return f"{base_url.rstrip('/')}{EMULATOR_JOB_PATH}{quote(job_id, safe='')}"


class AIHCJobLink(BaseOperatorLink):  # type: ignore[misc]
    """Link to the AIHC job a task created or watches."""

    name = "AIHC Job"
    #: The XCom key of the URL; Airflow 3's default for this class (``_link_<class name>``).
    XCOM_KEY: ClassVar[str] = "_link_AIHCJobLink"

    @property
    def xcom_key(self) -> str:
        """Where the URL is kept in XCom (Airflow 3 reads it from there for the UI)."""
        return self.XCOM_KEY

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        """The URL the task stored, or ``""`` when it stored none (no job yet).

        Airflow 3 calls this in the task's own process as the task ends (``ti_key`` is then
        the running task instance, whose ``task`` is ``operator``).  There the operator
        knows whether it stored no link: a create operator without a job (its ``job_id``),
        a sensor that refused its input (its ``input_refused``); then the link is absent
        and the XCom is not read, which would log an ``XCom not found`` error.
        """
        if getattr(ti_key, "task", None) is operator and (
            getattr(operator, "job_id", "") is None or getattr(operator, "input_refused", False)
        ):
            return ""
        url = get_xcom_value(ti_key, self.XCOM_KEY)
        return url if isinstance(url, str) else ""

    @classmethod
    def persist(cls, context: Context, base_url: str, job_id: str, resource_pool_id: str) -> None:
        """Store the job's URL for this task instance; a failure only costs the button.

        :param context: the task's context.
        :param base_url: the connection's endpoint.
        :param job_id: the job.
        :param resource_pool_id: its pool.
        """
        url = job_url(base_url, job_id, resource_pool_id)
        try:
            context["ti"].xcom_push(key=cls.XCOM_KEY, value=url)
        except Exception:
            log.warning("Could not store the AIHC job link %s", url, exc_info=True)

"""Deploy, roll, scale and delete AIHC online services, each exactly once.

``api_version`` v2 only.  AIHC actions used: DescribeServices, CreateService,
DescribeService, ModifyService, DescribeServiceChangelogs, ModifyServiceReplicas,
DeleteService, DescribeModelVersion (to mount a model version).

Exactly once (what this infers: ``docs/service_lifecycle.md``):

* a service is created with a ``clientToken`` derived from the try series, its name and
  its tag, and with the task instance's identity in ``misc.podAnnotations``; before
  creating, the services are listed and one of that name whose annotations carry this
  task instance's current try series and a verifying tag is adopted (a create whose
  answer was lost is found so).  A name held by any other service fails the task.
* a roll compares the live configuration with the wanted one before sending: a
  configuration already live (an earlier try's change) is not sent again; its change is
  found in the changelog by the marker in its ``description``.
* a scale sends an absolute count; a delete of a service already gone counts as done.

None of these requests is resent by the transport on a 5xx or a dropped connection.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_provider_aihc.operators._service_base import XCOM_SERVICE_ID, ServiceOperator
from airflow_provider_aihc.version_compat import Context

if TYPE_CHECKING:
    from airflow_provider_aihc.hooks.aihc import AIHCHook
    from airflow_provider_aihc.operators._identity import TaskIdentity

__all__ = [
    "AIHCDeleteServiceOperator",
    "AIHCDeployServiceOperator",
    "AIHCScaleServiceOperator",
    "AIHCUpdateServiceOperator",
]

XCOM_CHANGE_ID = "change_id"
#: The env a mounted model version's path is given in, by default.
MODEL_PATH_ENV = "AIHC_MODEL_PATH"
#: The env that names the mounted model version (so a new version is a new configuration).
MODEL_VERSION_ENV = "AIHC_MODEL_VERSION"
ON_FAILURE = ("fail", "revert")
UPDATE_CHANGE_TYPE = 2


def _checked(conf: object) -> dict[str, Any]:
    from airflow_provider_aihc.models.service_requests import raise_problems, service_conf_problems

    raise_problems(service_conf_problems(conf), "service")
    assert isinstance(conf, Mapping)
    return copy.deepcopy(dict(conf))


class AIHCDeployServiceOperator(ServiceOperator):
    """Create an AIHC online service, once, and wait until it serves.

    A retry, or a try whose ``CreateService`` answer was lost, adopts the service an
    earlier try of the same try series created (found by name, its annotations verified)
    instead of creating a second one.  Returns ``{service_id, service_name, created}``
    (plus ``summary`` when waiting); XCom key ``service_id`` too.

    .. seealso:: https://cloud.baidu.com/doc/AIHC/s/Imb4uf20u (CreateService)

    :param service_conf: the whole ``ServiceConf`` in wire form (``name``,
        ``acceleratorType``, ``instanceCount``, ``resourcePool``, ``containers``, ...);
        checked before any request (templated).
    """

    template_fields: Sequence[str] = ("service_conf",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"service_conf": "json"}

    def __init__(self, *, service_conf: Mapping[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service_conf = service_conf

    def execute(self, context: Context) -> dict[str, Any]:
        from airflow_provider_aihc.operators._identity import TaskIdentity
        from airflow_provider_aihc.operators._service_identity import (
            identity_labels,
            service_client_token,
        )

        conf = _checked(self.service_conf)
        hook = self.hook
        hook.require_v2(type(self).__name__)
        identity = TaskIdentity.from_context(context)
        secret = hook.config.secret_access_key
        name = str(conf["name"])
        misc = conf.setdefault("misc", {})
        misc["podAnnotations"] = {
            **(misc.get("podAnnotations") or {}),
            **identity_labels(secret, identity, name),
        }
        service_id, annotations = self._adoptable(hook, identity, secret, name)
        created = service_id is None
        if annotations is not None:  # the adopted service's, made by an earlier try
            misc["podAnnotations"] = dict(annotations)
        if service_id is None:
            token = service_client_token(secret, identity, name)
            service_id = hook.create_service(conf, token)
            self.log.info("Created AIHC service %s (%s)", name, service_id)
        else:
            self.log.info(
                "Adopted AIHC service %s (%s), created by an earlier try", name, service_id
            )
        context["ti"].xcom_push(key=XCOM_SERVICE_ID, value=service_id)
        result = {"service_id": service_id, "service_name": name, "created": created}
        return self.wait(service_id, result, expected_conf=conf)

    def _adoptable(
        self, hook: AIHCHook, identity: TaskIdentity, secret: str, name: str
    ) -> tuple[str | None, Mapping[str, Any] | None]:
        """The service of this name this try series created, and its annotations."""
        from airflow_provider_aihc.exceptions import AIHCConfigError
        from airflow_provider_aihc.operators._service_identity import ours

        others = []
        for brief in hook.list_services():
            if brief.name != name:
                continue
            live = hook.get_service(brief.id).service
            misc = live.get("misc") if isinstance(live.get("misc"), Mapping) else {}
            annotations = misc.get("podAnnotations") if isinstance(misc, Mapping) else None
            if isinstance(annotations, Mapping) and ours(secret, identity, annotations, name):
                return brief.id, annotations
            others.append(brief.id)
        if others:
            raise AIHCConfigError(
                f"service name {name!r} is held by {', '.join(others)}, not created by this "
                "task's current try series: delete it, pick another name, or roll it with "
                "AIHCUpdateServiceOperator"
            )
        return None, None


class AIHCUpdateServiceOperator(ServiceOperator):
    """Roll an AIHC online service to a new configuration, once, and wait for it.

    Give a whole ``service_conf``, or a patch of the live one: ``image``, ``envs``,
    ``model_version`` (mounted as envs), ``instance_count``, ``max_surge``,
    ``max_unavailable``.  The network configuration (``access``) is never changed (AIHC
    does not allow it: "不允许修改网络配置").  A configuration that is already live is not
    sent again (a retry after a lost answer does not roll twice).  Returns ``{service_id,
    change_id, previous_conf_digest, conf_digest, applied}`` (plus ``summary`` when
    waiting); XCom key ``change_id`` too.

    .. seealso:: https://cloud.baidu.com/doc/AIHC/s/Zmb4v974k (ModifyService)

    :param service_id: the service (templated).
    :param service_conf: the whole new ``ServiceConf`` (wire form) (templated).
    :param image: the new image URL of ``container`` (templated).
    :param envs: envs to set in ``container`` (merged over the live ones) (templated).
    :param model_version: ``{"model_id", "version_id"}`` (e.g. the register operator's
        return value): the version's ``bos://bucket/path`` goes into env
        ``model_path_env`` and its ids into ``AIHC_MODEL_VERSION`` (templated).
    :param model_path_env: the env the model's path is given in.
    :param instance_count: the new instance count (templated).
    :param max_surge: the canary's ``maxSurge`` percentage (templated).
    :param max_unavailable: the canary's ``maxUnavailable`` percentage (not both 0)
        (templated).
    :param container: the container the patch applies to, by name (``None``: the first).
    :param description: the change's description; a marker of this task instance is added
        after it (templated).
    :param on_failure: ``fail``: a failed rollout fails the task; ``revert``: the previous
        configuration is put back first (the log says so).  A change an earlier try sent
        cannot be reverted by a later one (its previous configuration is unknown to it).
    """

    template_fields: Sequence[str] = (
        "service_id", "service_conf", "image", "envs", "model_version", "instance_count",
        "max_surge", "max_unavailable", "description",
    )  # fmt: skip
    template_fields_renderers: ClassVar[dict[str, str]] = {"service_conf": "json", "envs": "json"}

    def __init__(
        self,
        *,
        service_id: str,
        service_conf: Mapping[str, Any] | None = None,
        image: str | None = None,
        envs: Mapping[str, str] | None = None,
        model_version: Mapping[str, str] | None = None,
        model_path_env: str = MODEL_PATH_ENV,
        instance_count: int | None = None,
        max_surge: int | None = None,
        max_unavailable: int | None = None,
        container: str | None = None,
        description: str | None = None,
        on_failure: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if on_failure not in ON_FAILURE:
            from airflow_provider_aihc.exceptions import AIHCConfigError

            raise AIHCConfigError(f"on_failure must be one of fail, revert; got {on_failure!r}")
        self.service_id = service_id
        self.service_conf = service_conf
        self.image = image
        self.envs = envs
        self.model_version = model_version
        self.model_path_env = model_path_env
        self.instance_count = instance_count
        self.max_surge = max_surge
        self.max_unavailable = max_unavailable
        self.container = container
        self.description = description
        self.on_failure = on_failure

    def execute(self, context: Context) -> dict[str, Any]:
        from airflow_provider_aihc.models.service_requests import conf_digest, conf_matches
        from airflow_provider_aihc.operators._identity import TaskIdentity
        from airflow_provider_aihc.operators._service_identity import marked, marker

        self._check_patch()
        hook = self.hook
        hook.require_v2(type(self).__name__)
        live = hook.get_service(self.service_id).service
        wanted = _checked(self._wanted(hook, live))
        digest = conf_digest(wanted)
        subject = f"{self.service_id}/{digest}"
        secret = hook.config.secret_access_key
        identity = TaskIdentity.from_context(context)
        applied = not conf_matches(wanted, live)
        if applied:
            mark = marked(self.description, marker(secret, identity, subject))
            hook.modify_service(self.service_id, wanted, mark)
            self.log.info("Rolling AIHC service %s to configuration %s", self.service_id, digest)
        else:
            self.log.info(
                "AIHC service %s already runs configuration %s: not sent again",
                self.service_id, digest,
            )  # fmt: skip
        change_id = self._change_id(hook, secret, subject)
        context["ti"].xcom_push(key=XCOM_CHANGE_ID, value=change_id)
        result = {
            "service_id": self.service_id,
            "change_id": change_id,
            "previous_conf_digest": conf_digest(live),
            "conf_digest": digest,
            "applied": applied,
        }
        previous = live if applied else None
        return self.wait(self.service_id, result, expected_conf=wanted, previous_conf=previous)

    def _check_patch(self) -> None:
        from airflow_provider_aihc.models.service_requests import (
            check_percentages,
            raise_problems,
        )

        patch = (self.image, self.envs, self.model_version, self.instance_count,
                 self.max_surge, self.max_unavailable)  # fmt: skip
        given = [value for value in patch if value is not None]
        problems = []
        if self.service_conf is not None and given:
            problems.append(("service_conf", "give a whole service_conf or a patch, not both"))
        if self.service_conf is None and not given:
            problems.append(("service_conf", "give a whole service_conf or a patch"))
        problems += check_percentages("max_surge / max_unavailable", self.max_surge,
                                      self.max_unavailable)  # fmt: skip
        if self.model_version is not None and not (
            isinstance(self.model_version, Mapping)
            and self.model_version.get("model_id")
            and self.model_version.get("version_id")
        ):
            problems.append(("model_version", "must be a mapping with model_id and version_id"))
        raise_problems(problems, "service")

    def _wanted(self, hook: AIHCHook, live: Mapping[str, Any]) -> dict[str, Any]:
        """The whole configuration to send: ``service_conf``, or the live one patched; the
        live network configuration either way."""
        if self.service_conf is not None:
            wanted = copy.deepcopy(dict(self.service_conf))
        else:
            wanted = copy.deepcopy(dict(live))
            self._patch(hook, wanted)
        if "access" in live:
            wanted["access"] = copy.deepcopy(live["access"])
        return wanted

    def _patch(self, hook: AIHCHook, conf: dict[str, Any]) -> None:
        from airflow_provider_aihc.exceptions import AIHCValidationError

        if self.instance_count is not None:
            conf["instanceCount"] = self.instance_count
        if self.max_surge is not None or self.max_unavailable is not None:
            canary = conf.setdefault("deploy", {}).setdefault("canaryStrategy", {})
            if self.max_surge is not None:
                canary["maxSurge"] = self.max_surge
            if self.max_unavailable is not None:
                canary["maxUnavailable"] = self.max_unavailable
        if self.image is None and self.envs is None and self.model_version is None:
            return
        containers = conf.get("containers") or []
        chosen = next((c for c in containers if self.container in (None, c.get("name"))), None)
        if chosen is None:
            names = [c.get("name") for c in containers]
            raise AIHCValidationError(
                [("container", f"no container {self.container!r}: {names}")], "service"
            )
        if self.image is not None:
            chosen.setdefault("image", {})["imageUrl"] = self.image
        envs = dict(chosen.get("envs") or {})
        envs.update({str(k): str(v) for k, v in (self.envs or {}).items()})
        if self.model_version is not None:
            model_id = str(self.model_version["model_id"])
            version_id = str(self.model_version["version_id"])
            entry = hook.get_model_version(model_id, version_id).version_entry
            envs[self.model_path_env] = (
                f"bos://{entry.storage_bucket}/{entry.storage_path.lstrip('/')}"
            )
            envs["AIHC_MODEL_VERSION"] = f"{model_id}/{version_id}"
        if envs:
            chosen["envs"] = envs

    def _change_id(self, hook: AIHCHook, secret: str, subject: str) -> str:
        """The update change whose marker verifies for this configuration ("" if none:
        that the changelog keeps ``ModifyService``'s description is *inferred*)."""
        from airflow_provider_aihc.operators._service_identity import labels_in, verifies

        found = ""
        for change in hook.list_service_changelogs(self.service_id, UPDATE_CHANGE_TYPE):
            if verifies(secret, labels_in(change.description), subject):
                found = change.change_id
        return found

    def on_rollout_failure(
        self, result: Mapping[str, Any], previous_conf: Mapping[str, Any] | None, why: str
    ) -> None:
        """With ``on_failure="revert"``, put the previous configuration back."""
        if self.on_failure != "revert":
            return
        if previous_conf is None:
            # AIHC's changelog records carry no configuration (bce-sdk-go inference/v2
            # models.go: changeId, prev, changeType, description, creator, createdAt), and
            # Airflow clears a task's XComs at each try: what the earlier try replaced is
            # known nowhere this try can read.  The user gets the change to undo by hand.
            self.log.warning(
                "Rollout of AIHC service %s failed; not reverted: change %s was sent by an "
                "earlier try, and what it replaced is not known to this one (AIHC's change "
                "records carry no configuration); revert it in AIHC's change history of the "
                "service", self.service_id, result.get("change_id") or "(not found)",
            )  # fmt: skip
            return
        from airflow_provider_aihc.models.service_requests import with_secrets_of

        description = f"airflow revert of change {result.get('change_id') or '?'}"
        # A configuration the trigger carried lost its registry passwords: the live
        # service's (the same registry, as a patch keeps it) are put back in.
        live = self.hook.get_service(self.service_id).service
        self.hook.modify_service(self.service_id, with_secrets_of(previous_conf, live), description)
        self.log.warning(
            "Rollout of AIHC service %s failed (%s); reverted to its previous configuration "
            "%s", self.service_id, why, result.get("previous_conf_digest"),
        )  # fmt: skip


class AIHCScaleServiceOperator(ServiceOperator):
    """Set an AIHC online service's instance count (absolute: a retry sends the same
    count), and by default wait until that many instances serve.

    :param service_id: the service (templated).
    :param instance_count: the instance count, 0 or more (templated).
    """

    template_fields: Sequence[str] = ("service_id", "instance_count")

    def __init__(self, *, service_id: str, instance_count: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service_id = service_id
        self.instance_count = instance_count

    def execute(self, context: Context) -> dict[str, Any]:
        from airflow_provider_aihc.models.service_requests import raise_problems

        count = self.instance_count
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise_problems(
                [("instance_count", f"must be a whole number, 0 or more; got {count!r}")],
                "service",
            )
        self.hook.require_v2(type(self).__name__)
        self.hook.scale_service(self.service_id, count)
        self.log.info("Scaling AIHC service %s to %d instances", self.service_id, count)
        result = {"service_id": self.service_id, "instance_count": count}
        return self.wait(self.service_id, result, instance_count=count)


class AIHCDeleteServiceOperator(ServiceOperator):
    """Delete an AIHC online service; a service already gone counts as deleted.

    :param service_id: the service (templated).
    """

    template_fields: Sequence[str] = ("service_id",)

    def __init__(self, *, service_id: str, **kwargs: Any) -> None:
        kwargs.setdefault("wait_for_completion", False)
        super().__init__(**kwargs)
        self.service_id = service_id

    def execute(self, context: Context) -> str:
        from airflow_provider_aihc.exceptions import AIHCNotFoundError

        self.hook.require_v2(type(self).__name__)
        try:
            self.hook.delete_service(self.service_id)
        except AIHCNotFoundError:
            self.log.info("AIHC service %s is already gone", self.service_id)
        else:
            self.log.info("Deleted AIHC service %s", self.service_id)
        return self.service_id

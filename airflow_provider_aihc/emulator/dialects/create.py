"""Create-body validation, as the server would answer it (bce-sdk-go ``api/v1/aiJob.go``).

* A field of the wrong JSON type is ``400 MalformedJSON`` (third-party report: "a number
  where a string is expected"); a body that is not a JSON object is
  ``400 InappropriateJSON``.
* A missing or empty required field (``name``, ``jobSpec``, ``jobSpec.image``,
  ``jobSpec.command``) or a bad value (``priority``, ``jobFramework``, ``replicas``, the
  name's shape, BCCL preconditions) is ``400 InvalidParam`` naming the field.
* ``null`` counts as absent for optional fields (the aihc CLI sends ``"labels": null``).
* Unknown fields are kept and echoed, not rejected.

v2 ``CreateJob`` (bce-openapi-meta ``schema/aihc/CreateJob.json``; docs ``Hmayv96tj``;
bce-python-sdk 0.9.79 ``CreateJob``) differs: ``command`` is top level and required,
``jobType`` (``PyTorchJob``, ``TFJob``,
``MPIJob``; ``RayJob`` from aihc-gen) replaces ``jobFramework``, a TFJob's ``jobSpec``
maps roles (``Chief``/``Worker``/``PS``/``Evaluator``) to specs, the queue is the
``queueID`` query (the body's ``queue``, optional because the SDK omits it, must name the
same queue: "保持和queueID一致即可"), ``datasources[].type`` is one of ``pfs``,
``hostpath``, ``bos``, ``cfs``, ``rapidfs``, ``dataset`` (case-insensitive: the SDK writes
``hostPath``), ``retentionPeriod`` is ``<n>m|h|d`` (SDK docstring), ``tensorboardConfig``
and ``alertConfig`` are objects, and ``enableBccl``/``faultTolerance`` may be ``null``
(the SDK always sends them).  Inferred: refusing a ``queue`` that differs from
``queueID``, the datasource type and retention checks (the docs list the values; what the
server answers for others is unknown), a TFJob's image, command and replica count taken
from its roles.

Inferred (not in any official source): the name rule (lowercase alphanumerics and ``-``,
starting and ending with an alphanumeric, at most 50 characters; third-party) and the
exact messages.
"""

from __future__ import annotations

import re
from typing import Any

from airflow_provider_aihc.emulator.state.errors import EmulatorError, invalid_param, malformed_json
from airflow_provider_aihc.emulator.state.jobs import PRIORITIES, JobRequest

FRAMEWORKS = ("PyTorchJob", "MPIJob")
JOB_TYPES_V2 = ("PyTorchJob", "TFJob", "MPIJob", "RayJob")
TF_ROLES = ("Chief", "Worker", "PS", "Evaluator")
DATASOURCE_TYPES_V2 = ("pfs", "hostpath", "bos", "cfs", "rapidfs", "dataset")
_RETENTION_RE = re.compile(r"^[1-9][0-9]*[mhd]$")
MAX_NAME_LENGTH = 50
_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def parse_create(body: object) -> JobRequest:
    """Validate a ``POST /api/v1/aijobs`` body.

    :param body: the decoded JSON body.
    :raises EmulatorError: ``InappropriateJSON``, ``MalformedJSON`` or ``InvalidParam``.
    """
    if not isinstance(body, dict):
        raise EmulatorError(400, "InappropriateJSON", "the request body must be a JSON object")
    name = _required_str(body, "name", "name")
    _check_name(name)
    spec = body.get("jobSpec")
    if spec is None:
        raise invalid_param("jobSpec is required")
    if not isinstance(spec, dict):
        raise malformed_json("jobSpec must be an object")
    priority = _optional(body, "priority", str, "priority") or "normal"
    if priority not in PRIORITIES:
        raise invalid_param(f"priority must be one of high, normal, low, got {priority!r}")
    framework = _optional(body, "jobFramework", str, "jobFramework") or "PyTorchJob"
    if framework not in FRAMEWORKS:
        raise invalid_param(f"jobFramework must be PyTorchJob or MPIJob, got {framework!r}")
    request = JobRequest(
        name=name,
        queue=_optional(body, "queue", str, "queue") or "default",
        framework=framework,
        priority=priority,
        image=_required_str(spec, "image", "jobSpec.image"),
        command=_required_str(spec, "command", "jobSpec.command"),
        replicas=_replicas(spec),
        resources=_objects(spec, "resources", "jobSpec.resources"),
        envs=_objects(spec, "envs", "jobSpec.envs"),
        labels=_labels(body),
        body=body,
        **_echoed(body, framework),
    )
    _check_optional_types(body, spec)
    _check_bccl(body, request)
    return request


def parse_create_v2(body: object, queue_id: str | None) -> JobRequest:
    """Validate a v2 ``CreateJob`` body and its ``queueID`` query (module docstring).

    :param body: the decoded JSON body.
    :param queue_id: the ``queueID`` query parameter.
    :raises EmulatorError: ``InappropriateJSON``, ``MalformedJSON`` or ``InvalidParam``.
    """
    if not isinstance(body, dict):
        raise EmulatorError(400, "InappropriateJSON", "the request body must be a JSON object")
    if not queue_id:
        raise invalid_param("queueID is required")
    name = _required_str(body, "name", "name")
    _check_name(name)
    command = _required_str(body, "command", "command")
    job_type = _optional(body, "jobType", str, "jobType") or "PyTorchJob"
    if job_type not in JOB_TYPES_V2:
        raise invalid_param(f"jobType must be one of {', '.join(JOB_TYPES_V2)}, got {job_type!r}")
    # bce-openapi-meta marks ``queue`` required (schema/aihc/CreateJob.json:24-29), but
    # bce-python-sdk 0.9.79 never sends it (modules/job/job_client.py, CreateJob's body):
    # what an official client sends is accepted; when given it must equal queueID.
    queue = _optional(body, "queue", str, "queue")
    if queue and queue != queue_id:
        raise invalid_param(f"queue {queue!r} must be the same as queueID {queue_id!r}")
    spec = _v2_spec(body, job_type)
    priority = _optional(body, "priority", str, "priority") or "normal"
    if priority not in PRIORITIES:
        raise invalid_param(f"priority must be one of high, normal, low, got {priority!r}")
    request = JobRequest(
        name=name,
        queue=queue_id,
        framework=job_type,
        priority=priority,
        image=_required_str(spec, "image", "jobSpec.image"),
        command=command,
        replicas=_v2_replicas(body, job_type),
        resources=_whole_quantities(_objects(spec, "resources", "jobSpec.resources")),
        envs=_objects(spec, "envs", "jobSpec.envs"),
        labels=_labels(body),
        body=body,
        **_echoed(body, job_type),
    )
    _check_optional_types(body, spec)
    _check_v2_extras(body)
    _check_bccl(body, request)
    return request


def _echoed(body: dict[str, Any], framework: str) -> dict[str, Any]:
    """The :class:`~airflow_provider_aihc.emulator.state.jobs.JobRequest` fields the answers
    echo, as sent (their types are checked after: ``_check_optional_types``)."""
    sent = body.get("jobSpec")
    spec = sent if isinstance(sent, dict) else {}
    config = body.get("faultToleranceConfig")
    return {
        "datasources": body.get("datasources"),
        "enable_bccl": bool(body.get("enableBccl")),
        "fault_tolerance": bool(body.get("faultTolerance")),
        "fault_tolerance_args": body.get("faultToleranceArgs"),
        "fault_tolerance_patterns": list(config.get("customFaultTolerancePattern") or [])
        if isinstance(config, dict)
        else [],
        "enable_rdma": spec.get("enableRDMA"),
        "host_network": spec.get("hostNetwork"),
        "privileged": spec.get("privileged"),
        "image_config": spec.get("imageConfig"),
        "roles": spec if framework in ("TFJob", "RayJob") and isinstance(sent, dict) else None,
    }


def _v2_spec(body: dict[str, Any], job_type: str) -> dict[str, Any]:
    """The spec the job's image and resources come from (a TFJob's first role)."""
    spec = body.get("jobSpec")
    if spec is None:
        raise invalid_param("jobSpec is required")
    if not isinstance(spec, dict):
        raise malformed_json("jobSpec must be an object")
    if job_type == "RayJob":
        # "若 jobType=RayJob：传递Map结构（Key必须包含Head…）":
        # bce-openapi-meta i18n/zh-CN/aihc/CreateJob.json:8.
        if not isinstance(spec.get("Head"), dict):
            raise invalid_param("a RayJob's jobSpec maps roles to specs and must contain Head")
        return dict(spec["Head"])
    if job_type != "TFJob":
        return spec
    roles = [role for role in spec if role in TF_ROLES]
    if not roles or len(roles) != len(spec):
        raise invalid_param(f"a TFJob's jobSpec maps roles ({', '.join(TF_ROLES)}) to specs")
    for role in roles:
        if not isinstance(spec[role], dict):
            raise malformed_json(f"jobSpec.{role} must be an object")
    return dict(spec[roles[0]])


def _v2_replicas(body: dict[str, Any], job_type: str) -> int:
    spec = body["jobSpec"]
    if job_type not in ("TFJob", "RayJob"):
        return _replicas(spec)
    return sum(_replicas(role_spec) for role_spec in spec.values() if isinstance(role_spec, dict))


def _whole_quantities(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v2 quantities are Integers (bce-openapi-meta schema/aihc/CreateJob.json:78-79;
    baiducloud-go-sdk services/aihc/model_resource.go:5 ``*int32``): a fraction or a
    string fails to decode, as it would in the Go server."""
    for resource in resources:
        quantity = resource.get("quantity")
        if quantity is not None and (isinstance(quantity, bool) or not isinstance(quantity, int)):
            raise malformed_json(
                f"jobSpec.resources[].quantity must be an integer, got {quantity!r}"
            )
    return resources


def _check_v2_extras(body: dict[str, Any]) -> None:
    retention = _optional(body, "retentionPeriod", str, "retentionPeriod")
    if retention is not None and not _RETENTION_RE.match(retention):
        raise invalid_param(
            f"retentionPeriod must be a number followed by m, h or d (e.g. 1d), got {retention!r}"
        )
    _optional(body, "tensorboardConfig", dict, "tensorboardConfig")
    _optional(body, "alertConfig", dict, "alertConfig")
    for source in body.get("datasources") or []:
        kind = str(source.get("type", "")).lower()
        if kind not in DATASOURCE_TYPES_V2:
            raise invalid_param(
                f"datasources[].type must be one of {', '.join(DATASOURCE_TYPES_V2)}, "
                f"got {source.get('type')!r}"
            )


def _required_str(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if value is None or value == "":
        raise invalid_param(f"{where} is required")
    if not isinstance(value, str):
        raise malformed_json(f"{where} must be a string")
    if not value.strip():
        raise invalid_param(f"{where} is required")
    return value


def _optional(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise malformed_json(f"{where} must be a {_TYPE_NAMES.get(kind, kind.__name__)}")
    return value


_TYPE_NAMES = {str: "string", bool: "boolean", int: "integer", dict: "object", list: "list"}


def _check_name(name: str) -> None:
    if len(name) > MAX_NAME_LENGTH:
        raise invalid_param(f"name must be at most {MAX_NAME_LENGTH} characters")
    if not _NAME_RE.match(name):
        raise invalid_param(
            "name must consist of lowercase alphanumerics and '-', "
            "and start and end with an alphanumeric"
        )


def _replicas(spec: dict[str, Any]) -> int:
    replicas = _optional(spec, "replicas", int, "jobSpec.replicas")
    if replicas is None:
        return 1
    if replicas < 1:
        raise invalid_param("jobSpec.replicas must be at least 1")
    return int(replicas)


def _objects(data: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    items = _optional(data, key, list, where) or []
    for item in items:
        if not isinstance(item, dict):
            raise malformed_json(f"{where} must be a list of objects")
        if not isinstance(item.get("name"), str):
            raise malformed_json(f"{where}[].name must be a string")
    return list(items)


def _labels(body: dict[str, Any]) -> list[dict[str, str]]:
    labels = _optional(body, "labels", list, "labels") or []
    for label in labels:
        if not isinstance(label, dict):
            raise malformed_json("labels must be a list of {key, value} objects")
        if not isinstance(label.get("key"), str) or not isinstance(label.get("value"), str):
            raise malformed_json("labels[].key and labels[].value must be strings")
        if not label["key"]:
            raise invalid_param("labels[].key must not be empty")
    return [{"key": label["key"], "value": label["value"]} for label in labels]


def _check_optional_types(body: dict[str, Any], spec: dict[str, Any]) -> None:
    for key in ("enableRDMA", "hostNetwork", "privileged"):
        _optional(spec, key, bool, f"jobSpec.{key}")
    _optional(spec, "imageConfig", dict, "jobSpec.imageConfig")
    for key in ("faultTolerance", "enableBccl"):
        _optional(body, key, bool, key)
    _optional(body, "faultToleranceConfig", dict, "faultToleranceConfig")
    _optional(body, "faultToleranceArgs", str, "faultToleranceArgs")
    datasources = _optional(body, "datasources", list, "datasources") or []
    if not all(isinstance(item, dict) for item in datasources):
        raise malformed_json("datasources must be a list of objects")


def _check_bccl(body: dict[str, Any], request: JobRequest) -> None:
    """BCCL needs at least 2 instances and RDMA (official create page)."""
    if not body.get("enableBccl"):
        return
    if request.replicas < 2:
        raise invalid_param("enableBccl requires at least 2 instances (jobSpec.replicas)")
    if not body["jobSpec"].get("enableRDMA"):
        raise invalid_param("enableBccl requires jobSpec.enableRDMA")

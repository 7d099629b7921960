"""One valid v1 create body for every test that needs a job, in wire (camelCase) form."""

from __future__ import annotations

from typing import Any

#: ``job_body`` keywords that go into ``jobSpec``; every other keyword is a top-level field.
SPEC_FIELDS = frozenset({"replicas", "image", "command", "envs", "enableRDMA"})


def job_body(name: str, *, replicas: int = 1, **fields: Any) -> dict[str, Any]:
    """A valid create body: PyTorchJob on the ``default`` queue, 8 A800s per replica.

    :param name: the job's name.
    :param replicas: ``jobSpec.replicas`` (``master-0`` plus ``replicas - 1`` workers).
    :param fields: ``image``, ``command``, ``envs`` and ``enableRDMA`` replace the spec's;
        anything else is set on the body (``labels``, ``queue``, ``priority``, ...).
    """
    spec: dict[str, Any] = {
        "image": "registry.baidubce.com/aihc-aiak/aiak-megatron:latest",
        "command": "python pretrain_gpt.py",
        "replicas": replicas,
        "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
    }
    spec.update({key: fields.pop(key) for key in list(fields) if key in SPEC_FIELDS})
    body: dict[str, Any] = {
        "name": name,
        "queue": "default",
        "jobFramework": "PyTorchJob",
        "priority": "normal",
        "jobSpec": spec,
        "labels": [{"key": "team", "value": "llm"}],
    }
    body.update(fields)
    return body


#: The v1 create fields bce-sdk-go sends (``services/aihc/api/v1/aiJob.go:172-194``), in
#: wire form, with values a test can look for in what the emulator stored.
OFFICIAL_V1_FIELDS: dict[str, Any] = {
    "retentionPeriod": "7d",
    "runningTimeoutStopTimeUnit": "12h",
    "codeSource": {"filePath": "/code/train.tar.gz", "mountPath": "/workspace"},
    "logCollectionFilePatterns": ["/workspace/logs/*.log"],
    "requiredNodeAffinity": ["192.168.0.11"],
    "preferredNodeAffinity": ["192.168.0.12"],
    "datasources": [{"type": "dataset", "id": "ds-42", "mountPath": "/mnt/ds"}],
}
#: A RayJob's v2 ``advancedSettings`` (bce-openapi-meta ``CreateJob.json:246-261``).
RAY_SETTINGS: dict[str, Any] = {"runtimeEnv": '{"pip": ["ray[train]"]}', "SubmitterBackoffLimit": 3}

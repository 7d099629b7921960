"""The model, dataset and service calls on the wire: each request as Baidu's own client
sends it (bce-python-sdk 0.9.79 ``modules/{service,model,dataset}``; the query
arguments and body fields of bce-openapi-meta ``schema/aihc/*.json`` for models and
datasets), a v1 connection refused before anything is sent, and no blind resend of a
creating call.

The requests go over real HTTP to the in-process emulator; where the emulator does not
(yet) serve an action it answers ``400 unknown action``, and the ids here exist in no
emulator (``404``): these tests ignore both and judge what the hook sent, recorded on the
client side.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hook_helpers import Sent

from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.exceptions import AIHCApiError, AIHCConfigError
from airflow_provider_aihc.hooks.aihc import AIHCHook

Spy = Callable[[AIHCHook], list[Sent]]
ConnSetter = Callable[..., None]


@pytest.fixture
def v2_hook(set_conn: ConnSetter) -> AIHCHook:
    set_conn(extra={"api_version": "v2"})
    return AIHCHook()


def _sent(hook: AIHCHook, wire: Spy, call: Callable[[AIHCHook], Any]) -> Sent:
    """The one request ``call`` makes (an answer the emulator cannot give is ignored)."""
    sent = wire(hook)
    try:
        call(hook)
    except AIHCApiError as err:
        # Not served yet, or about an id that does not exist: the request itself was
        # read (a request the emulator cannot read is a 400 and fails the test).
        if "unknown action" not in str(err) and err.status != 404:
            raise
    assert sent, "nothing was sent"
    return sent[0]


def _query(sent: Sent) -> dict[str, list[str]]:
    return parse_qs(urlsplit(sent.url).query, keep_blank_values=True)


def _body(sent: Sent) -> Any:
    return json.loads(sent.body) if sent.body else None


def _version_header(sent: Sent) -> str | None:
    return next((v for k, v in sent.headers.items() if k.lower() == "version"), None)


CONF = {
    "name": "svc-a",
    "acceleratorType": "A100",
    "workloadType": "",
    "instanceCount": 1,
    "resourcePool": {"resourcePoolId": "cce-x", "queueName": "default"},
    "containers": [
        {
            "name": "main",
            "cpus": 2,
            "memory": 4,
            "acceleratorCount": 1,
            "image": {"imageType": 2, "imageUrl": "registry/x:1"},
        }
    ],
}


@pytest.mark.parametrize(
    ("call", "method", "query", "body"),
    [
        # bce-python-sdk: POST /?action=CreateModelVersion&modelId=m-1 body {storageBucket, ...}
        (
            lambda h: h.create_model_version(
                "m-1", {"storageBucket": "b", "storagePath": "/p", "source": "UserUpload"}
            ),
            "POST",
            {"action": ["CreateModelVersion"], "modelId": ["m-1"]},
            {"storageBucket": "b", "storagePath": "/p", "source": "UserUpload"},
        ),
        # bce-python-sdk: POST /?action=CreateDatasetVersion&datasetId=ds-1 {storagePath, mountPath}
        (
            lambda h: h.create_dataset_version("ds-1", "/d", "/mnt/d"),
            "POST",
            {"action": ["CreateDatasetVersion"], "datasetId": ["ds-1"]},
            {"storagePath": "/d", "mountPath": "/mnt/d"},
        ),
        # META DescribeModels.json:6-24: keyword, pageNumber, pageSize in the query.
        (
            lambda h: h.list_models("m"),
            "GET",
            {
                "action": ["DescribeModels"],
                "keyword": ["m"],
                "pageNumber": ["1"],
                "pageSize": ["100"],
            },
            None,
        ),
        (
            lambda h: h.list_model_versions("m-1"),
            "GET",
            {
                "action": ["DescribeModelVersions"],
                "modelId": ["m-1"],
                "pageNumber": ["1"],
                "pageSize": ["100"],
            },
            None,
        ),
        (
            lambda h: h.list_dataset_versions("ds-1"),
            "GET",
            {
                "action": ["DescribeDatasetVersions"],
                "datasetId": ["ds-1"],
                "pageNumber": ["1"],
                "pageSize": ["100"],
            },
            None,
        ),
        (
            lambda h: h.get_model_version("m-1", "v-1"),
            "GET",
            {"action": ["DescribeModelVersion"], "modelId": ["m-1"], "versionId": ["v-1"]},
            None,
        ),
        (
            lambda h: h.delete_model_version("m-1", "v-1"),
            "POST",
            {"action": ["DeleteModelVersion"], "modelId": ["m-1"], "versionId": ["v-1"]},
            None,
        ),
        # bce-python-sdk: POST /?action=CreateService&clientToken=tok-1, body the ServiceConf
        (
            lambda h: h.create_service(CONF, "tok-1"),
            "POST",
            {"action": ["CreateService"], "clientToken": ["tok-1"]},
            CONF,
        ),
        # bce-python-sdk: no token given, no clientToken key at all (service_client.py:156)
        (lambda h: h.create_service(CONF), "POST", {"action": ["CreateService"]}, CONF),
        (
            lambda h: h.get_service("s-1"),
            "GET",
            {"action": ["DescribeService"], "serviceId": ["s-1"]},
            None,
        ),
        # bce-python-sdk: ModifyService&description=…&serviceId=s-1, body the ServiceConf
        (
            lambda h: h.modify_service("s-1", CONF, "roll"),
            "POST",
            {"action": ["ModifyService"], "serviceId": ["s-1"], "description": ["roll"]},
            CONF,
        ),
        # bce-python-sdk: ModifyServiceReplicas&instanceCount=3&serviceId=s-1, no body
        (
            lambda h: h.scale_service("s-1", 3),
            "POST",
            {"action": ["ModifyServiceReplicas"], "serviceId": ["s-1"], "instanceCount": ["3"]},
            None,
        ),
        (
            lambda h: h.delete_service("s-1"),
            "POST",
            {"action": ["DeleteService"], "serviceId": ["s-1"]},
            None,
        ),
        (
            lambda h: h.list_services(),
            "GET",
            {"action": ["DescribeServices"], "pageNumber": ["1"], "pageSize": ["100"]},
            None,
        ),
        (
            lambda h: h.list_service_changelogs("s-1", 2),
            "GET",
            {
                "action": ["DescribeServiceChangelogs"],
                "serviceId": ["s-1"],
                "changeType": ["2"],
                "pageNumber": ["1"],
                "pageSize": ["100"],
            },
            None,
        ),
    ],
)
def test_request_is_what_baidus_client_sends(
    v2_hook: AIHCHook,
    wire: Spy,
    call: Callable[[AIHCHook], Any],
    method: str,
    query: dict[str, list[str]],
    body: Any,
) -> None:
    sent = _sent(v2_hook, wire, call)
    assert sent.method == method
    assert urlsplit(sent.url).path == "/"
    assert _query(sent) == query
    assert _body(sent) == body
    # Models, datasets and services: header "version: v2" (bce-python-sdk
    # aihc_base_client.py:79-86; bce-sdk-go inference/v2/service.go:15).
    assert _version_header(sent) == "v2"


def test_a_v1_connection_is_refused_before_anything_is_sent(
    set_conn: ConnSetter, wire: Spy
) -> None:
    set_conn(extra={"api_version": "v1"})
    hook = AIHCHook()
    sent = wire(hook)
    with pytest.raises(AIHCConfigError, match="api_version"):
        hook.require_v2("AIHCRegisterModelVersionOperator")
    with pytest.raises(AIHCConfigError, match="api_version v2"):
        hook.create_model_version("m-1", {"storageBucket": "b"})
    assert sent == []


def test_a_creating_call_is_not_resent_after_a_server_error(
    v2_hook: AIHCHook, wire: Spy, aihc_emulator: Any
) -> None:
    """A 5xx on CreateModelVersion is raised after one request: the operator's lookup,
    not a blind resend, decides whether the version exists."""
    aihc_emulator.backend.add_fault(scenarios.error(503, times=3))
    sent = wire(v2_hook)
    with pytest.raises(AIHCApiError):
        v2_hook.create_model_version("m-1", {"storageBucket": "b", "storagePath": "/p"})
    assert len(sent) == 1


@pytest.mark.parametrize("path_id", ["", "../x", "a/b"])
def test_an_id_that_could_escape_is_refused(v2_hook: AIHCHook, wire: Spy, path_id: str) -> None:
    sent = wire(v2_hook)
    with pytest.raises(AIHCConfigError, match="service_id"):
        v2_hook.get_service(path_id)
    assert sent == []


# Every model and dataset request the hook makes, held to bce-openapi-meta's definitions
# (HEAD 11913e343072 schema/aihc/*.json, as the emulator's copy of them lists them): the
# method, each argument in its place (query or body), every required argument present.
REGISTRY_CALLS: list[Callable[[AIHCHook], Any]] = [
    lambda h: h.create_dataset(
        {"name": "d", "storageType": "PFS", "storageInstance": "pfs-1", "importFormat": "FOLDER",
         "visibilityScope": "ONLY_OWNER", "initVersionEntry": {"storagePath": "/d",
                                                                "mountPath": "/m"}}
    ),
    lambda h: h.create_dataset_version("ds-1", "/d", "/mnt/d", "why"),
    lambda h: h.list_datasets("d"),
    lambda h: h.list_dataset_versions("ds-1"),
    lambda h: h.create_model(
        {"name": "m", "modelFormat": "HuggingFace",
         "initVersionEntry": {"source": "UserUpload", "storageBucket": "b", "storagePath": "/p"}}
    ),
    lambda h: h.create_model_version(
        "m-1", {"storageBucket": "b", "storagePath": "/p", "source": "UserUpload",
                "modelMetrics": "{}", "description": "x"}
    ),
    lambda h: h.list_models("m"),
    lambda h: h.list_model_versions("m-1"),
    lambda h: h.get_model_version("m-1", "v-1"),
    lambda h: h.delete_model_version("m-1", "v-1"),
]  # fmt: skip


@pytest.mark.parametrize("call", REGISTRY_CALLS)
def test_model_and_dataset_requests_follow_baidus_definitions(
    v2_hook: AIHCHook, wire: Spy, call: Callable[[AIHCHook], Any]
) -> None:
    from airflow_provider_aihc.emulator.dialects.v2.definitions import ACTIONS

    sent = _sent(v2_hook, wire, call)
    query = {k: v[0] for k, v in _query(sent).items()}
    action = query.pop("action")
    method, params = ACTIONS[action]
    assert sent.method == method
    places = {p.name: p.position for p in params}
    body = _body(sent) or {}
    assert {k: places.get(k) for k in query} == dict.fromkeys(query, "QUERY")
    assert {k: places.get(k) for k in body} == dict.fromkeys(body, "BODY")
    required = {p.name for p in params if p.required}
    assert required <= set(query) | set(body)

"""Signature checks: each failure answers its BCE code; both signedHeaders forms pass."""

from __future__ import annotations

import time

import pytest
import requests
from aihc_emulator_client import POOL, Client

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.emulator import EmulatorServer

POOLS = "/api/v1/resourcepools"


def error_of(response: requests.Response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"requestId", "code", "message"}
    assert response.headers["x-bce-request-id"] == body["requestId"]
    return response.status_code, body["code"]


def test_explicit_and_empty_signed_headers_both_pass(server: EmulatorServer) -> None:
    explicit = Client(server.url).request("GET", POOLS)
    assert explicit.status_code == 200
    assert "/host;x-bce-date/" in explicit.request.headers["Authorization"]
    default = Client(server.url, default_signed_headers=True)
    response = default.request("GET", POOLS)
    assert response.status_code == 200
    assert "/1800//" in response.request.headers["Authorization"]
    created = default.request(
        "POST",
        "/api/v1/aijobs",
        {"resourcePoolId": POOL},
        {"name": "x", "jobSpec": {"image": "i", "command": "c"}},
    )
    assert created.status_code == 200  # content-length and content-type signed too


def test_wrong_secret_is_signature_does_not_match(server: EmulatorServer) -> None:
    client = Client(server.url, secret_access_key="not-the-secret")
    response = client.request("GET", POOLS)
    assert error_of(response) == (403, "SignatureDoesNotMatch")
    assert "not-the-secret" not in response.text


def test_unknown_access_key(server: EmulatorServer) -> None:
    response = Client(server.url, access_key_id="someone-else").request("GET", POOLS)
    assert error_of(response) == (403, "InvalidAccessKeyId")
    assert "someone-else" in response.json()["message"]


def test_expired_timestamp(client: Client) -> None:
    response = client.request("GET", POOLS, timestamp=time.time() - 3600)
    assert error_of(response) == (400, "RequestExpired")
    assert "1800" in response.json()["message"]


def test_timestamp_far_in_the_future(client: Client) -> None:
    response = client.request("GET", POOLS, timestamp=time.time() + 3600)
    assert error_of(response) == (400, "RequestExpired")
    assert "ahead" in response.json()["message"]
    assert client.request("GET", POOLS, timestamp=time.time() + 60).status_code == 200


def test_missing_authorization(server: EmulatorServer) -> None:
    response = requests.get(server.url + POOLS, timeout=5)
    assert error_of(response) == (403, "AccessDenied")


@pytest.mark.parametrize(
    "value",
    [
        "Bearer abc",
        "bce-auth-v1/ak/2024-07-16T08:33:43Z/1800/host",
        "bce-auth-v1/aihc-emulator-ak/yesterday/1800/host/abc",
        "bce-auth-v1/aihc-emulator-ak/2024-07-16T08:33:43Z/never/host/abc",
    ],
)
def test_garbled_authorization(server: EmulatorServer, value: str) -> None:
    response = requests.get(server.url + POOLS, headers={"Authorization": value}, timeout=5)
    assert error_of(response) == (400, "InvalidHTTPAuthHeader")


def test_tampering_after_signing_is_caught(client: Client, server: EmulatorServer) -> None:
    good = client.request("GET", "/api/v1/aijobs", {"resourcePoolId": POOL})
    headers = dict(good.request.headers)
    url = server.url + "/api/v1/aijobs?resourcePoolId=aihc-serverless"
    response = requests.get(url, headers=headers, timeout=5)
    assert error_of(response) == (403, "SignatureDoesNotMatch")


def test_query_and_path_are_re_derived_from_the_wire(client: Client) -> None:
    params = {"resourcePoolId": POOL, "queue": "a b+c/é", "empty": "", "order": "desc"}
    response = client.request("GET", "/api/v1/aijobs", params)
    assert response.status_code == 200, response.text
    assert "%20" in response.request.url
    assert "%2B" in response.request.url
    odd = client.request("GET", "/api/v1/aijobs/job id~(1)", {"resourcePoolId": POOL})
    assert error_of(odd) == (404, "JobNotFound")


def test_aihc_cli_style_signing_passes(server: EmulatorServer) -> None:
    """The aihc CLI signs content-type, host and x-bce-date, listed sorted."""
    host = server.url.split("//")[1]
    stamp = time.time()
    headers = {
        "x-bce-date": signer.format_timestamp(stamp),
        "Content-Type": "application/json",
        "Host": host,
    }
    signed = signer.sign(
        access_key_id="aihc-emulator-ak",
        secret_access_key="aihc-emulator-sk",
        method="GET",
        path=POOLS,
        params={"pageSize": "20", "pageNo": "1"},
        headers=headers,
        timestamp=stamp,
        headers_to_sign=["content-type", "host", "x-bce-date"],
    )
    headers["Authorization"] = signed.authorization
    url = f"{server.url}{POOLS}?pageSize=20&pageNo=1"
    assert requests.get(url, headers=headers, timeout=5).status_code == 200


def test_failures_are_recorded_without_secrets(server: EmulatorServer) -> None:
    Client(server.url, secret_access_key="wrong").request("GET", POOLS)
    records = server.backend.requests
    assert [(r.operation, r.status) for r in records] == [("ListResourcePools", 403)]
    assert "wrong" not in repr(records)

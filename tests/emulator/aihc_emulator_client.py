"""Test helpers: a signed HTTP client (built on the provider's signer), a fake clock, bodies."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aihc_jobs
import requests

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.emulator import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_RESOURCE_POOL_ID,
    DEFAULT_SECRET_ACCESS_KEY,
)

POOL = DEFAULT_RESOURCE_POOL_ID


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, start: float = 1_720_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Client:
    """Signs like the provider: ``host`` + every ``x-bce-*``, explicit signedHeaders
    (or, with ``default_signed_headers=True``, an empty field and the spec's default set)."""

    def __init__(
        self,
        base_url: str,
        access_key_id: str = DEFAULT_ACCESS_KEY_ID,
        secret_access_key: str = DEFAULT_SECRET_ACCESS_KEY,
        *,
        default_signed_headers: bool = False,
    ) -> None:
        self.base_url = base_url
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.default_signed_headers = default_signed_headers
        self.session = requests.Session()

    def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, object] | None = None,
        body: Any = None,
        *,
        timestamp: float | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        raw_body: bytes | None = None,
    ) -> requests.Response:
        data = b"" if body is None else json.dumps(body).encode()
        if raw_body is not None:
            data = raw_body
        sent = {"Host": urlsplit(self.base_url).netloc, "Content-Type": "application/json"}
        stamp = time.time() if timestamp is None else timestamp
        sent["x-bce-date"] = signer.format_timestamp(stamp)
        if method != "GET":
            sent["Content-Length"] = str(len(data))
        sent.update(headers or {})
        to_sign = None if self.default_signed_headers else signer.provider_signed_headers(sent)
        signed = signer.sign(
            access_key_id=self.access_key_id,
            secret_access_key=self.secret_access_key,
            method=method,
            path=path,
            params=params,
            headers=sent,
            timestamp=stamp,
            headers_to_sign=to_sign,
        )
        sent["Authorization"] = signed.authorization
        url = self.base_url + signed.canonical_uri
        if signed.canonical_query_string:
            url += "?" + signed.canonical_query_string
        return self.session.request(method, url, data=data or None, headers=sent, timeout=timeout)

    def ok(
        self, method: str, path: str, params: Mapping[str, object] | None = None, body: Any = None
    ) -> Any:
        """The decoded body of a 200 answer."""
        response = self.request(method, path, params, body)
        assert response.status_code == 200, response.text
        return response.json()

    # the v1 endpoints, for brevity in tests
    def create(self, name: str, pool: str = POOL, **fields: Any) -> dict[str, Any]:
        body = job_body(name, **fields)
        return self.ok("POST", "/api/v1/aijobs", {"resourcePoolId": pool}, body)["result"]

    def get(self, job_id: str, pool: str = POOL) -> dict[str, Any]:
        return self.ok("GET", f"/api/v1/aijobs/{job_id}", {"resourcePoolId": pool})["result"]

    def status(self, job_id: str, pool: str = POOL) -> str:
        return str(self.get(job_id, pool)["status"])


def job_body(name: str, **fields: Any) -> dict[str, Any]:
    """A valid v1 create body, with an environment variable and RDMA on."""
    defaults = {"envs": [{"name": "CUDA_DEVICE_MAX_CONNECTIONS", "value": "1"}], "enableRDMA": True}
    return aihc_jobs.job_body(name, **{**defaults, **fields})

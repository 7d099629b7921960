"""A signed client for the emulator's API and its control API, for tests and benchmarks.

It signs as the provider does (``host`` and every ``x-bce-*`` header, explicit
``signedHeaders``; with ``default_signed_headers=True`` an empty field and the spec's
default set), with the provider's own signer, over a ``requests`` keep-alive session.
It is a test helper: the emulator's server never imports it, and it is not the provider's
client (``hooks/``), which tests check against the emulator and Baidu's own clients.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY

if TYPE_CHECKING:
    import requests

#: Query parameters: a mapping, or pairs in the order they are sent (the signer's form).
Params = signer.Pairs


class EmulatorClient:
    """Signed API calls and control calls to one emulator.

    :param base_url: the emulator's URL (``EmulatorServer.url``).
    :param access_key_id: the access key id to sign with.
    :param secret_access_key: its secret.
    :param default_signed_headers: leave ``signedHeaders`` empty (the spec's default set).
    :param control_token: the control token; ``None`` reads ``AIHC_EMULATOR_CONTROL_TOKEN``.
    """

    def __init__(
        self,
        base_url: str,
        access_key_id: str = DEFAULT_ACCESS_KEY_ID,
        secret_access_key: str = DEFAULT_SECRET_ACCESS_KEY,
        *,
        default_signed_headers: bool = False,
        control_token: str | None = None,
    ) -> None:
        import requests

        self.base_url = base_url
        self.access_key_id = access_key_id
        self.secret_access_key = secret_access_key
        self.default_signed_headers = default_signed_headers
        self.control_token = control_token
        self.session = requests.Session()

    @property
    def url(self) -> str:
        """The emulator's URL."""
        return self.base_url

    def request(
        self,
        method: str,
        path: str,
        params: Params | None = None,
        body: Any = None,
        *,
        timestamp: float | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        raw_body: bytes | None = None,
    ) -> requests.Response:
        """One signed request; the answer whatever its status.

        :param body: sent as JSON (``raw_body``: these bytes instead).
        :param timestamp: the ``x-bce-date`` and signing time (now by default).
        :param headers: more headers, signed when they are ``x-bce-*``.
        """
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

    def ok(self, method: str, path: str, params: Params | None = None, body: Any = None) -> Any:
        """The decoded body of a ``200`` answer (``AssertionError`` with the body if not)."""
        response = self.request(method, path, params, body)
        if response.status_code != 200:
            raise AssertionError(response.text)
        return response.json()

    def call(self, method: str, path: str, params: Params, body: Any = None) -> Any:
        """A signed v1 call; the ``result`` of its envelope (``HTTPError`` if not 2xx)."""
        response = self.request(method, path, params, body, timeout=30.0)
        response.raise_for_status()
        return response.json().get("result")

    def create_job(self, pool: str, name: str, replicas: int = 1) -> str:
        """A small v1 PyTorch job in the ``default`` queue; returns its id."""
        body = {
            "name": name,
            "queue": "default",
            "jobFramework": "PyTorchJob",
            "jobSpec": {
                "image": "registry.baidubce.com/aihc/pytorch:2.1",
                "command": "python -m trainer",
                "replicas": replicas,
                "resources": [{"name": "baidu.com/a800_80g_cgpu", "quantity": 8}],
            },
        }
        result = self.call("POST", "/api/v1/aijobs", [("resourcePoolId", pool)], body)
        return str(result["jobId"])

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """A call to the control API (``/_emulator/<path>``), its decoded answer."""
        from airflow_provider_aihc.emulator.http.control import control_headers

        response = self.session.request(
            method,
            f"{self.base_url}/_emulator/{path}",
            data=json.dumps({} if body is None else body),
            headers=control_headers(self.control_token),
            timeout=30,
        )
        response.raise_for_status()
        return response.json()

    def request_counts(self) -> dict[str, int]:
        """Requests per operation so far."""
        return dict(self.control("GET", "state")["requests"])


__all__ = ["EmulatorClient", "Params"]

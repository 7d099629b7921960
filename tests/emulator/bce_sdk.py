"""Baidu's bce-python-sdk 0.9.79 ``AihcClient`` pointed at an in-process emulator, unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from baidubce.auth.bce_credentials import BceCredentials
from baidubce.bce_client_configuration import BceClientConfiguration
from baidubce.exception import BceHttpClientError, BceServerError
from baidubce.retry.retry_policy import NoRetryPolicy
from baidubce.services.aihc.aihc_client import AihcClient

from airflow_provider_aihc.emulator import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY


def bce_client(url: str) -> AihcClient:
    """The SDK's client for an emulator at ``url`` (no retries: a fault shows at once)."""
    config = BceClientConfiguration(
        credentials=BceCredentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY),
        endpoint=url,
        retry_policy=NoRetryPolicy(),
    )
    return AihcClient(config)


def server_error(call: Any) -> BceServerError:
    """The server's error answer, as the SDK raises it."""
    with pytest.raises(BceHttpClientError) as raised:
        call()
    error = raised.value.last_error
    assert isinstance(error, BceServerError)
    return error

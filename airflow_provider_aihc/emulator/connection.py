"""The Airflow connection that points at an emulator, in JSON and URI form.

``EmulatorServer.connection(**extra)`` (and :func:`connection_to` for a URL alone) is the
one place that writes it: the pytest fixtures, the benchmarks, the DAG-run drivers, the
deployment stack and the demo all take it from here.  Extras are the connection extras
the provider documents (``docs/connection.md``); ``resource_pool_id`` defaults to the
emulator's pool, and an extra given as ``None`` is left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from . import DEFAULT_ACCESS_KEY_ID, DEFAULT_RESOURCE_POOL_ID, DEFAULT_SECRET_ACCESS_KEY

CONN_TYPE = "aihc"
#: The environment variable that defines ``aihc_default``.
CONN_ENV = "AIRFLOW_CONN_AIHC_DEFAULT"


@dataclass(frozen=True)
class EmulatorConnection:
    """One Airflow connection of type ``aihc``.

    :param host: the emulator's URL (``http://127.0.0.1:PORT``): plain ``http`` only
        because the host says so explicitly.
    :param login: the access key id.
    :param password: the secret access key.
    :param extra: the connection extras.
    """

    host: str
    login: str = DEFAULT_ACCESS_KEY_ID
    password: str = DEFAULT_SECRET_ACCESS_KEY
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form's fields (``conn_type``, ``login``, ``password``, ``host``,
        ``extra``)."""
        return {
            "conn_type": CONN_TYPE,
            "login": self.login,
            "password": self.password,
            "host": self.host,
            "extra": dict(self.extra),
        }

    @property
    def json(self) -> str:
        """The JSON form, for ``AIRFLOW_CONN_<ID>``."""
        return json.dumps(self.to_dict())

    @property
    def uri(self) -> str:
        """The URI form: ``aihc://<AK>:<SK>@<host, URL-encoded>?<extras>`` (an extra that is
        not a string is sent in ``__extra__`` as JSON, as Airflow reads it)."""
        credentials = f"{quote(self.login, safe='')}:{quote(self.password, safe='')}"
        uri = f"{CONN_TYPE}://{credentials}@{quote(self.host, safe='')}"
        if not self.extra:
            return uri
        if all(isinstance(value, str) for value in self.extra.values()):
            return f"{uri}?{urlencode(self.extra)}"
        return f"{uri}?{urlencode({'__extra__': json.dumps(self.extra)})}"

    def env(self, conn_id: str = "aihc_default") -> dict[str, str]:
        """``{AIRFLOW_CONN_<ID>: JSON}``, to put into a child process's environment."""
        return {f"AIRFLOW_CONN_{conn_id.upper()}": self.json}


def connection_to(
    url: str,
    *,
    access_key_id: str = DEFAULT_ACCESS_KEY_ID,
    secret_access_key: str = DEFAULT_SECRET_ACCESS_KEY,
    **extra: Any,
) -> EmulatorConnection:
    """The connection to the emulator at ``url``, the default pool unless ``extra`` says.

    :param url: the emulator's URL.
    :param access_key_id: the access key id it accepts.
    :param secret_access_key: its secret.
    :param extra: connection extras; ``None`` leaves one out (``resource_pool_id=None``).
    """
    extras = {"resource_pool_id": DEFAULT_RESOURCE_POOL_ID, **extra}
    kept = {key: value for key, value in extras.items() if value is not None}
    return EmulatorConnection(url, access_key_id, secret_access_key, kept)

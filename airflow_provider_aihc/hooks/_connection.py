"""An ``aihc`` Airflow connection read into :class:`ConnectionConfig`.

The extras are one pydantic model, :class:`ConnectionExtras`: it parses and checks every
extra at once (names, types, allowed values, defaults, and the values that would break a
request header), and :func:`config_from_connection` reports every problem of a connection
in one error.  Each message names the field and what it may be; a wrong value is repeated
only when it is short (:func:`shown`): a longer one may be a key pasted into the wrong
field.  Checks that keep secrets out of error text and clear text off the network are in
``hooks/_conncheck.py``.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from airflow_provider_aihc.exceptions import AIHCConfigError
from airflow_provider_aihc.hooks._conncheck import (
    host_problems,
    refuse,
    value_problems,
    warn_insecure,
)

#: Region → endpoint host (aihc CLI ``configure.py`` ``host_dict``).
REGION_HOSTS = {
    "cn-beijing": "aihc.bj.baidubce.com",
    "cn-baoding": "aihc.bd.baidubce.com",
    "cn-guangzhou": "aihc.gz.baidubce.com",
    "cn-wuhan": "aihc.fwh.baidubce.com",
    "cn-suzhou": "aihc.su.baidubce.com",
    "cn-yangquan": "aihc.yq.baidubce.com",
}
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_CONNECT_TIMEOUT_SECONDS = 10.0
DEFAULT_MAX_RETRIES = 5
#: The most ``max_retries`` may be: a typo such as ``1e9`` must not mean endless retries.
MAX_RETRIES_LIMIT = 20
#: The API generations a connection's extra ``api_version`` may name (``hooks/dialects``).
API_VERSIONS = ("v1", "v2")
#: The longest wrong extra value an error message repeats (a region name fits, a key not).
SHOWN_TEXT_MAX = 12
#: The error types of :class:`ConnectionExtras`: a value that would break a header (reported
#: alone, before anything else is read), and any other wrong extra.
HEADER_ERROR, EXTRA_ERROR = "aihc_header", "aihc_extra"
#: The extras whose values are secrets, handed to Airflow's masker as soon as they are read.
SECRET_EXTRAS = ("security_token", "job_tag_key")
#: The shortest ``job_tag_key``: 128 bits of hex, or as many characters of a passphrase.
JOB_TAG_KEY_MIN_LENGTH = 32


@dataclass(frozen=True)
class ConnectionConfig:
    """Settings read from an ``aihc`` connection; secrets stay out of ``repr``.

    :param base_url: ``scheme://host[:port]``.
    :param access_key_id: the Access Key ID.
    :param secret_access_key: the Secret Access Key.
    :param security_token: the STS token, if any.
    :param resource_pool_id: the default resource pool.
    :param timeout: read timeout of one attempt, in seconds.
    :param connect_timeout: connect timeout of one attempt, in seconds.
    :param max_retries: attempts after the first for retryable calls.
    :param api_version: the API generation spoken: ``v1`` (REST paths) or ``v2`` (actions).
    :param user_id: the AIHC user the credentials belong to (the ``ai-user-id`` label AIHC
        puts on that user's jobs), if the connection says; adoption then also requires it.
    :param job_tag_key: the key of the jobs' identity tags, if set (else the secret access
        key): stable across STS refreshes (``operators/_identity.tag_key``).
    """

    base_url: str
    access_key_id: str
    secret_access_key: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)
    resource_pool_id: str | None = None
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    api_version: str = "v1"
    user_id: str | None = None
    job_tag_key: str | None = field(default=None, repr=False)

    @cached_property
    def host_header(self) -> str:
        """The ``Host`` value: the netloc, without the scheme's default port."""
        parts = urlsplit(self.base_url)
        default_port = {"http": 80, "https": 443}[parts.scheme]
        host = parts.hostname or ""
        return host if parts.port in (None, default_port) else f"{host}:{parts.port}"


class ConnectionExtras(BaseModel):
    """The extras of an ``aihc`` connection.  An extra left empty (absent, ``null``,
    blank text, as connection forms save a field left blank) takes its default.

    Validated with context ``{"host": ...}``: ``region`` is read only when the
    connection has no host.  Every wrong extra is one error of type
    :data:`EXTRA_ERROR`, a value that would break a header one of :data:`HEADER_ERROR`;
    each error's message is the whole sentence shown to the user.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    # In the order their problems are reported.
    region: str | None = None
    security_token: Any = None
    resource_pool_id: Any = None
    #: Read timeout of one attempt (seconds, > 0: aiohttp reads 0 as "no timeout").
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    api_version: str = "v1"
    user_id: str | None = None
    job_tag_key: str | None = None

    @field_validator("region", mode="before")
    @classmethod
    def _region(cls, value: Any, info: ValidationInfo) -> str | None:
        if _is_blank(value):
            return None
        _refuse_in_header("extra region", value)
        if (info.context or {}).get("host"):
            return None  # the host names the endpoint; the region is not read
        return _choice("region", value, tuple(REGION_HOSTS))

    @field_validator("security_token", mode="before")
    @classmethod
    def _token(cls, value: Any) -> Any:
        _refuse_in_header("extra security_token", value)
        return value or None

    @field_validator("resource_pool_id", mode="before")
    @classmethod
    def _pool(cls, value: Any) -> Any:
        return value or None

    @field_validator("timeout", "connect_timeout", "max_retries", mode="before")
    @classmethod
    def _number(cls, value: Any, info: ValidationInfo) -> float:
        name = str(info.field_name)
        default = cls.model_fields[name].default
        whole = name == "max_retries"
        if _is_blank(value):
            return float(default)
        number = math.nan
        if not isinstance(value, bool):
            with contextlib.suppress(TypeError, ValueError, OverflowError):
                number = float(value)
        if whole and math.isfinite(number) and number.is_integer() and number >= 0:
            if number <= MAX_RETRIES_LIMIT:
                return number
        elif not whole and math.isfinite(number) and number > 0:
            return number
        allowed = (
            f"a whole number from 0 to {MAX_RETRIES_LIMIT}" if whole else "a number of seconds > 0"
        )
        raise _problem(
            f"extra {name} must be {allowed}, or empty for the default {default:g}; "
            f"got {shown(value)}"
        )

    @field_validator("api_version", mode="before")
    @classmethod
    def _api_version(cls, value: Any) -> str:
        return "v1" if _is_blank(value) else _choice("api_version", value, API_VERSIONS)

    @field_validator("user_id", mode="before")
    @classmethod
    def _user_id(cls, value: Any) -> str | None:
        return str(value or "").strip() or None

    @field_validator("job_tag_key", mode="before")
    @classmethod
    def _job_tag_key(cls, value: Any) -> str | None:
        if _is_blank(value):
            return None
        if not isinstance(value, str) or len(value) < JOB_TAG_KEY_MIN_LENGTH:
            # Never the value, however short: it is meant to be a secret.
            got = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
            raise _problem(
                f"extra job_tag_key must be text of at least {JOB_TAG_KEY_MIN_LENGTH} "
                "characters (a random secret, e.g. `openssl rand -hex 16`), or empty for "
                f"the secret access key; got {got}"
            )
        if value != value.strip() or not value.isprintable():
            raise _problem(
                "extra job_tag_key has whitespace at an end or a non-printable character"
            )
        return value


def read_extras(
    extra: Mapping[str, Any], host: str | None
) -> tuple[ConnectionExtras | None, dict[str, str], list[str]]:
    """The extras, else ``None`` with every problem: by extra name, and the header ones.

    :param extra: the connection's extras.
    :param host: the connection's host (``region`` is read only without one).
    """
    try:
        return ConnectionExtras.model_validate(dict(extra), context={"host": host}), {}, []
    except ValidationError as err:
        problems: dict[str, str] = {}
        header: list[str] = []
        for error in err.errors(include_url=False, include_input=False):
            if error["type"] == HEADER_ERROR:
                header.append(error["msg"])
            else:
                problems[str(error["loc"][0])] = error["msg"]
        return None, problems, header


def extras_of(conn: Any) -> Mapping[str, Any]:
    """A connection's extras, parsed here rather than through ``extra_dejson``, which hands
    every extra value to Airflow's masker: ``"v2"`` or ``"3"`` then logs "Skipping masking
    for a secret as it's too short" in every task (issue #38 point 7).  The extras that are
    secret (:data:`SECRET_EXTRAS`) are masked here, by name.  Extras
    that are not JSON fall back to ``extra_dejson``, which logs Airflow's own error.

    :param conn: an Airflow ``Connection`` (or anything with its ``extra_dejson``).
    """
    raw = getattr(conn, "extra", None)
    if isinstance(raw, Mapping):
        return raw
    if not isinstance(raw, str) or not raw:
        return getattr(conn, "extra_dejson", None) or {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return conn.extra_dejson or {}
    if not isinstance(parsed, dict):
        return {}
    from airflow_provider_aihc.version_compat import mask_secret

    for name in SECRET_EXTRAS:  # before anything can fail and print them
        if isinstance(parsed.get(name), str) and parsed[name]:
            mask_secret(parsed[name])
    return parsed


def config_from_connection(conn: Any) -> ConnectionConfig:
    """Read an ``aihc`` Airflow connection.

    :param conn: an Airflow ``Connection``.
    :raises AIHCConfigError: naming every field that is missing or wrong.
    """
    extra = extras_of(conn)
    extras, wrong, header = read_extras(extra, conn.host)
    header = (
        value_problems({"login (the Access Key ID)": conn.login, "host": conn.host})
        + header
        + value_problems({"password (the Secret Access Key)": conn.password}, header=False)
    )
    if header:  # checked first: a broken value must not reach the parsing below
        raise refuse(conn.conn_id, header)
    problems = [
        text
        for text, missing in (
            ("login (the Access Key ID) is empty", not conn.login),
            ("password (the Secret Access Key) is empty", not conn.password),
        )
        if missing
    ]
    base_url = ""
    if "region" in wrong:
        problems.append(wrong.pop("region"))
    else:
        try:
            region = extras.region if extras is not None else _region_of(extra, conn.host)
            base_url = _base_url(conn.host, conn.port, region, extra)
        except AIHCConfigError as err:
            problems.append(str(err))
    problems += wrong.values()
    if problems or extras is None:
        raise refuse(conn.conn_id, problems)
    warn_insecure(conn.conn_id, base_url)
    return ConnectionConfig(
        base_url=base_url,
        access_key_id=conn.login,
        secret_access_key=conn.password,
        **extras.model_dump(exclude={"region"}),  # the other extras, as the config names them
    )


def _region_of(extra: Mapping[str, Any], host: str | None) -> str | None:
    """The region extra read alone, when another extra is wrong: the endpoint is still
    checked, so that its problems are reported with theirs."""
    try:
        alone = ConnectionExtras.model_validate(
            {"region": extra.get("region")}, context={"host": host}
        )
    except ValidationError:
        return None
    return alone.region


def shown(value: object) -> str:
    """A wrong extra's value for an error message: numbers and short text as they are;
    anything longer only by its type and length (it may be a key or token pasted into the
    wrong field)."""
    if isinstance(value, bool | int | float) or (
        isinstance(value, str) and len(value) <= SHOWN_TEXT_MAX
    ):
        return repr(value)
    length = f" of {len(value)} characters" if isinstance(value, str) else ""
    return f"a {type(value).__name__}{length}"


def _problem(message: str, kind: str = EXTRA_ERROR) -> PydanticCustomError:
    # The sentence is passed as context, never as the template: a value it quotes may
    # hold braces.
    return PydanticCustomError(kind, "{message}", {"message": message})


def _refuse_in_header(name: str, value: Any) -> None:
    problems = value_problems({name: value})
    if problems:
        raise _problem(problems[0], HEADER_ERROR)


def _choice(key: str, value: Any, allowed: tuple[str, ...]) -> str:
    """A choice extra, trimmed and lowercased."""
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    raise _problem(f"extra {key} must be one of {', '.join(allowed)}, or empty; got {shown(value)}")


def _is_blank(value: object) -> bool:
    """An extra left empty: absent, ``null`` or blank text (connection forms save these)."""
    return value is None or (isinstance(value, str) and not value.strip())


def _base_url(
    host: str | None, port: int | None, region: str | None, extra: Mapping[str, Any]
) -> str:
    if not host:
        if not region:
            raise AIHCConfigError(
                f"host is empty and extra region is not set (one of {', '.join(REGION_HOSTS)})"
            )
        host = REGION_HOSTS[region]
    if "://" not in host:
        host = "https://" + host
    parts = urlsplit(host)
    if "@" in parts.netloc:
        raise AIHCConfigError("; ".join(host_problems(parts, extra)))
    try:
        parts.port  # noqa: B018 - raises ValueError on a port that is not 0-65535
    except ValueError:
        raise AIHCConfigError(f"host has an invalid port, got {host!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AIHCConfigError(f"host must be a host name or an http(s) URL, got {host!r}")
    problems = host_problems(parts, extra)
    if problems:  # before any message below repeats the host
        raise AIHCConfigError("; ".join(problems))
    if parts.path not in ("", "/") or parts.query:
        raise AIHCConfigError(f"host must not carry a path or query, got {host!r}")
    netloc = parts.netloc if parts.port or not port else f"{parts.netloc}:{port}"
    return f"{parts.scheme}://{netloc}"

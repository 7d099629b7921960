"""Checks of an ``aihc`` connection's values that keep secrets out of error text and clear
text off the network (security review F3, F7, F9).

Every problem names the field and never repeats its value: a value that breaks a header
is often a pasted secret.  ``hooks/_connection.py`` calls these while it reads a connection.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from airflow_provider_aihc.exceptions import AIHCConfigError

log = logging.getLogger(__name__)

#: The extra that lets ``http`` reach a host that is not loopback (never ``*.baidubce.com``).
INSECURE_HTTP_EXTRA = "allow_insecure_http"
#: Baidu's public cloud domain: always https, whatever the extras say.
BAIDU_DOMAIN = "baidubce.com"
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})


def value_problems(fields: Mapping[str, object], *, header: bool = True) -> list[str]:
    """The fields whose value cannot be used as it is, each named, never shown.

    :param fields: field name (as the error should name it) -> value; non-text is skipped.
    :param header: whether the values go into an HTTP header, which takes printable ASCII
        only (``requests`` and ``aiohttp`` encode headers as Latin-1 and refuse control
        characters); the secret key is only hashed, so it need not.
    """
    problems = []
    for name, value in fields.items():
        if not isinstance(value, str) or not value:
            continue
        if "\r" in value or "\n" in value:
            problems.append(
                f"{name} contains a line break (CR or LF), which cannot go into an HTTP header"
            )
        elif value != value.strip():
            problems.append(f"{name} has leading or trailing whitespace (pasted with it?)")
        elif not value.isprintable():
            problems.append(f"{name} contains a non-printable character (pasted with it?)")
        elif header and not value.isascii():
            problems.append(
                f"{name} contains a character outside ASCII, which cannot go into an HTTP "
                "header (a pasted zero-width space or a typographic quote?)"
            )
    return problems


def host_problems(parts: SplitResult, extra: Mapping[str, Any]) -> list[str]:
    """What is wrong with the endpoint URL: userinfo, or ``http`` where it is not allowed.

    ``http`` sends the signed requests, the STS token and the job bodies (registry
    passwords, env tokens) in clear: it is for the loopback emulator, or for a host the
    extra ``allow_insecure_http`` vouches for, and never for Baidu's cloud.

    :param parts: the host split as a URL (the scheme already implied).
    :param extra: the connection's extras.
    """
    if "@" in parts.netloc:
        return [
            "host must not carry a user name or password ('user:password@'); the Access "
            "Key ID is the login and the Secret Access Key the password"
        ]
    if parts.scheme != "http":
        return []
    hostname = (parts.hostname or "").lower().rstrip(".")
    if hostname == BAIDU_DOMAIN or hostname.endswith("." + BAIDU_DOMAIN):
        return [f"host must use https for *.{BAIDU_DOMAIN} (http would send requests in clear)"]
    if is_loopback(hostname):
        return []
    allowed = flag_extra(extra, INSECURE_HTTP_EXTRA)
    if allowed is None:
        return [f"extra {INSECURE_HTTP_EXTRA} must be true or false, or empty"]
    if not allowed:
        return [
            "host uses http, which sends the signed requests and the STS token in clear: "
            f"use https, or for a host you trust set extra {INSECURE_HTTP_EXTRA}: true "
            "(http needs no extra for a loopback emulator)"
        ]
    return []


def warn_insecure(conn_id: str, base_url: str) -> None:
    """Log that a connection sends in clear to a host that is not loopback (every read)."""
    parts = urlsplit(base_url)
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        log.warning(
            "AIHC connection %r sends requests in clear (http, %s: true) to %s: anyone on "
            "the path can read the STS token and job bodies and replay requests",
            conn_id,
            INSECURE_HTTP_EXTRA,
            base_url,
        )


def is_loopback(hostname: str) -> bool:
    """``localhost`` or an address of ``127.0.0.0/8`` or ``::1``."""
    if hostname.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def flag_extra(extra: Mapping[str, Any], key: str) -> bool | None:
    """A yes/no extra: ``False`` when empty; ``None`` when it is neither yes nor no."""
    value = extra.get(key)
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    return False if text in _FALSE else None


def refuse(conn_id: str, problems: list[str]) -> AIHCConfigError:
    """The error of a connection with ``problems``."""
    return AIHCConfigError(f"AIHC connection {conn_id!r}: " + "; ".join(problems))

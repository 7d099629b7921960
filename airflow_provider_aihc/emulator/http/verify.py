"""Checks ``bce-auth-v1`` on every API request, using the signer's public step functions.

The canonical request is re-derived from what arrived on the wire:

* **URI**: the raw path is percent-decoded, then re-encoded with
  :func:`~airflow_provider_aihc.auth.signer.canonical_uri`;
* **query**: the raw query is split on ``&`` and the first ``=``, each side
  percent-decoded (``+`` stays a plus: the spec encodes a space as ``%20``, and the aihc
  CLI never sends ``+``), then :func:`~airflow_provider_aihc.auth.signer.canonical_query_string`;
* **headers**: as received; an empty signedHeaders field means the spec's default set
  (``host``, ``content-length``, ``content-type``, ``content-md5``, every ``x-bce-*``),
  otherwise exactly the ``;``-separated names.

Answers (codes from BCE's common list unless marked):

* no ``Authorization`` header: ``403 AccessDenied``;
* not ``bce-auth-v1/{ak}/{timestamp}/{expiration}/{signedHeaders}/{signature}``, or a bad
  timestamp or expiration: ``400 InvalidHTTPAuthHeader``;
* unknown access key: ``403 InvalidAccessKeyId``;
* timestamp older than its expiration, or more than :data:`MAX_FUTURE_SKEW_SECONDS` ahead:
  ``400 RequestExpired`` (unverified code; the message gives the skew);
* wrong signature: ``403 SignatureDoesNotMatch`` (the status is inferred; BOS uses 403);
* an ``x-bce-content-sha256`` header that is not the hex SHA-256 of the body received:
  ``400 BadDigest`` (BOS's code for a body that does not match its digest; AIHC's answer is
  inferred).  The header is optional: the aihc CLI and bce-python-sdk's AihcClient do not
  send it, and a request without it is accepted.  A signed header makes a rewritten body
  fail even though the signature itself still matches.

``x-bce-date`` is not compared with the timestamp in the header (whether AIHC requires them
to be equal is an open question; the client signs it anyway).  Nothing here logs headers
or secrets.
"""

from __future__ import annotations

import hashlib
import hmac
from calendar import timegm
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from time import strptime
from urllib.parse import unquote

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.emulator.state.errors import EmulatorError

MAX_FUTURE_SKEW_SECONDS = 300
CONTENT_SHA256_HEADER = "x-bce-content-sha256"
_PARTS = 6


@dataclass(frozen=True, slots=True)
class AuthString:
    """The parsed ``Authorization`` header."""

    access_key_id: str
    timestamp: str
    issued_at: float
    expiration: int
    signed_headers: tuple[str, ...] | None
    signature: str


def parse_authorization(value: str | None) -> AuthString:
    """Split the header into its six fields.

    :raises EmulatorError: ``403 AccessDenied`` when missing, ``400 InvalidHTTPAuthHeader``
        when garbled.
    """
    if not value:
        raise EmulatorError(403, "AccessDenied", "missing Authorization header")
    parts = value.strip().split("/")
    if len(parts) != _PARTS or parts[0] != signer.AUTH_VERSION or not parts[1]:
        raise _garbled("expected bce-auth-v1/{ak}/{timestamp}/{expiration}/{headers}/{sig}")
    _, ak, stamp, expiration, headers, signature = parts
    issued_at = _epoch(stamp)
    if issued_at is None:
        raise _garbled(f"bad timestamp {stamp!r}, expected YYYY-MM-DDTHH:MM:SSZ")
    if not expiration.isdigit() or int(expiration) <= 0:
        raise _garbled(f"bad expiration {expiration!r}")
    names = tuple(n.strip().lower() for n in headers.split(";")) if headers else None
    return AuthString(ak, stamp, issued_at, int(expiration), names, signature)


def check_time(auth: AuthString, now: float) -> None:
    """Reject a signature that has expired or that was made in the future.

    :raises EmulatorError: ``400 RequestExpired``.
    """
    age = now - auth.issued_at
    if age > auth.expiration:
        raise EmulatorError(
            400,
            "RequestExpired",
            f"Request has expired: timestamp {auth.timestamp} is {age:.0f} s old, "
            f"more than its expiration of {auth.expiration} s",
        )
    if -age > MAX_FUTURE_SKEW_SECONDS:
        raise EmulatorError(
            400,
            "RequestExpired",
            f"Request timestamp {auth.timestamp} is {-age:.0f} s ahead of the server clock "
            f"(at most {MAX_FUTURE_SKEW_SECONDS} s allowed)",
        )


def query_pairs(raw_query: str) -> list[tuple[str, str]]:
    """The query as decoded pairs, in order; a key without ``=`` has the value ``""``."""
    pairs = []
    for item in raw_query.split("&"):
        if not item:
            continue
        key, _, value = item.partition("=")
        pairs.append((unquote(key), unquote(value)))
    return pairs


def expected_signature(
    auth: AuthString,
    secret_access_key: str,
    method: str,
    raw_path: str,
    raw_query: str,
    headers: Iterable[tuple[str, str]],
) -> str:
    """The signature the client should have sent, recomputed step by step."""
    uri = signer.canonical_uri(unquote(raw_path))
    query = signer.canonical_query_string(query_pairs(raw_query))
    header_block, _ = signer.canonical_headers(list(headers), auth.signed_headers)
    request = signer.canonical_request(method, uri, query, header_block)
    prefix = signer.auth_string_prefix(auth.access_key_id, auth.timestamp, auth.expiration)
    return signer.signature(signer.signing_key(secret_access_key, prefix), request)


def authenticate(
    credentials: Mapping[str, str],
    method: str,
    raw_path: str,
    raw_query: str,
    headers: list[tuple[str, str]],
    now: float,
) -> str:
    """Verify the request's signature; return the access key id it was signed with.

    :param credentials: access key id -> secret access key accepted.
    :param method: the HTTP method.
    :param raw_path: the path as sent (percent-encoded).
    :param raw_query: the query as sent, without ``?``.
    :param headers: the headers as received.
    :param now: the server's clock, epoch seconds.
    :raises EmulatorError: see the module docstring.
    """
    value = next((v for k, v in headers if k.lower() == "authorization"), None)
    auth = parse_authorization(value)
    secret = credentials.get(auth.access_key_id)
    if secret is None:
        raise EmulatorError(
            403, "InvalidAccessKeyId", f"The access key id {auth.access_key_id} does not exist"
        )
    check_time(auth, now)
    expected = expected_signature(auth, secret, method, raw_path, raw_query, headers)
    if not hmac.compare_digest(expected.encode(), auth.signature.encode()):
        raise EmulatorError(
            403,
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided",
        )
    return auth.access_key_id


def check_body_digest(headers: Iterable[tuple[str, str]], body: bytes) -> None:
    """Refuse a body whose ``x-bce-content-sha256`` header (when sent) does not match it.

    :raises EmulatorError: ``400 BadDigest``.
    """
    sent = next((v for k, v in headers if k.lower() == CONTENT_SHA256_HEADER), None)
    if sent is None:
        return
    if not hmac.compare_digest(sent.strip().lower(), hashlib.sha256(body).hexdigest()):
        raise EmulatorError(
            400,
            "BadDigest",
            f"The {CONTENT_SHA256_HEADER} you specified did not match what we received",
        )


@lru_cache(maxsize=256)
def _epoch(stamp: str) -> float | None:
    """Epoch seconds of a signing timestamp (cached: most requests share a few seconds)."""
    try:
        return float(timegm(strptime(stamp, signer.TIMESTAMP_FORMAT)))
    except ValueError:
        return None


def _garbled(detail: str) -> EmulatorError:
    return EmulatorError(400, "InvalidHTTPAuthHeader", f"Invalid Authorization header: {detail}")

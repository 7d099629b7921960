"""BCE ``bce-auth-v1`` request signing, one function per step of the spec.

Pure and stdlib-only, so that it costs nothing to import and can be proven against the
published vectors step by step.  The steps, as Baidu's spec names them
(https://cloud.baidu.com/doc/Reference/s/njwvz1yfu):

1. ``auth_string_prefix``: ``bce-auth-v1/{ak}/{timestamp}/{expiration}``
2. ``signing_key``: hex HMAC-SHA256 of the prefix under the secret key
3. ``canonical_uri``, ``canonical_query_string``, ``canonical_headers``
4. ``canonical_request``: ``METHOD\\nURI\\nQUERY\\nHEADERS``
5. ``signature``: hex HMAC-SHA256 of the canonical request under the signing key (as ASCII)

The caller reads the clock once and passes ``timestamp``; the same value must be sent as
``x-bce-date``.
"""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import quote

__all__ = [
    "AUTH_VERSION",
    "DEFAULT_EXPIRATION_SECONDS",
    "DEFAULT_SIGNED_HEADERS",
    "SignedRequest",
    "auth_string_prefix",
    "canonical_headers",
    "canonical_query_string",
    "canonical_request",
    "canonical_uri",
    "format_timestamp",
    "provider_signed_headers",
    "sign",
    "signature",
    "signing_key",
    "uri_encode",
]

AUTH_VERSION = "bce-auth-v1"
DEFAULT_EXPIRATION_SECONDS = 1800
#: The spec's default signed set (used when the signedHeaders field is left empty); every
#: ``x-bce-*`` header is signed too.
DEFAULT_SIGNED_HEADERS = frozenset({"host", "content-length", "content-type", "content-md5"})
BCE_HEADER_PREFIX = "x-bce-"
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_UNRESERVED = "-_.~"
_SAFE = re.compile(r"[A-Za-z0-9._~-]*").fullmatch
_SLASH_SAFE = re.compile(r"[A-Za-z0-9._~/-]*").fullmatch
#: The spec excludes this query parameter from the canonical query string.
_EXCLUDED_QUERY_KEY = "authorization"

Pairs = Mapping[str, object] | Iterable[tuple[str, object]]


@dataclass(frozen=True, slots=True)
class SignedRequest:
    """Every intermediate of one signing, so a failure names the step that broke."""

    canonical_uri: str
    canonical_query_string: str
    canonical_headers: str
    signed_headers: str
    canonical_request: str
    auth_string_prefix: str
    #: Kept out of ``repr``: with the prefix it signs any request until the prefix expires.
    signing_key: str = field(repr=False)
    signature: str
    timestamp: str

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value."""
        return f"{self.auth_string_prefix}/{self.signed_headers}/{self.signature}"


def uri_encode(value: str, *, keep_slash: bool = False) -> str:
    """Percent-encode UTF-8 bytes, keeping only ``A-Z a-z 0-9 - . _ ~`` (and ``/`` if asked)."""
    return _encode(value, keep_slash)


@lru_cache(maxsize=4096)
def _encode(value: str, keep_slash: bool) -> str:
    # Names, hosts, pools and content types repeat from request to request, and ``quote``
    # walks every byte in Python (it was over half of signing): remember the answers.
    if (_SLASH_SAFE if keep_slash else _SAFE)(value):
        return value
    return quote(value, safe=_UNRESERVED + "/" if keep_slash else _UNRESERVED)


def format_timestamp(timestamp: float | datetime) -> str:
    """Render epoch seconds or an aware datetime as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    if isinstance(timestamp, datetime):
        if timestamp.tzinfo is None:
            raise ValueError("timestamp must be timezone-aware")
        return timestamp.astimezone(UTC).strftime(TIMESTAMP_FORMAT)
    return time.strftime(TIMESTAMP_FORMAT, time.gmtime(int(timestamp)))


def auth_string_prefix(access_key_id: str, timestamp: str, expiration_in_seconds: int) -> str:
    """Step 1: ``bce-auth-v1/{ak}/{timestamp}/{expiration}``."""
    return f"{AUTH_VERSION}/{access_key_id}/{timestamp}/{expiration_in_seconds}"


@lru_cache(maxsize=16)
def signing_key(secret_access_key: str, prefix: str) -> str:
    """Step 2: lowercase hex HMAC-SHA256 of the prefix, keyed by the secret access key.

    The prefix holds the timestamp to the second, so a busy process (a triggerer polling a
    thousand jobs) signs every request of one second with one key: it is kept.
    """
    return _hmac_hex(secret_access_key, prefix)


def canonical_uri(path: str) -> str:
    """Step 3a: the raw path, URI-encoded with ``/`` kept; an empty path is ``/``."""
    encoded = _encode(path, True)
    return encoded if encoded.startswith("/") else "/" + encoded


def canonical_query_string(params: Pairs | None) -> str:
    """Step 3b: ``k=v`` pairs, both sides encoded, sorted bytewise as whole strings.

    ``None`` and empty values both render as ``k=``.
    """
    items = [
        f"{_encode(str(key), False)}={'' if value is None else _encode(str(value), False)}"
        for key, value in _pairs(params)
        if str(key).lower() != _EXCLUDED_QUERY_KEY
    ]
    return "&".join(sorted(items))


def canonical_headers(
    headers: Pairs, headers_to_sign: Iterable[str] | None = None
) -> tuple[str, tuple[str, ...]]:
    """Step 3c: the canonical header lines, and the names they sign.

    Names are trimmed and lower-cased, values trimmed; a header whose value is empty
    is skipped.  With ``headers_to_sign=None`` the spec's default set applies
    (:data:`DEFAULT_SIGNED_HEADERS` and every ``x-bce-*``); otherwise exactly the
    named headers.  Lines are sorted bytewise as whole lines.
    """
    wanted = None if headers_to_sign is None else {h.strip().lower() for h in headers_to_sign}
    lines: list[str] = []
    names: set[str] = set()
    for raw_name, raw_value in _pairs(headers):
        name = str(raw_name).strip().lower()
        if wanted is None:
            if name not in DEFAULT_SIGNED_HEADERS and not name.startswith(BCE_HEADER_PREFIX):
                continue
        elif name not in wanted:
            continue
        value = str(raw_value).strip()
        if value:
            lines.append(f"{_encode(name, False)}:{_encode(value, False)}")
            names.add(name)
    lines.sort()
    return "\n".join(lines), tuple(sorted(names))


def canonical_request(method: str, uri: str, query: str, headers: str) -> str:
    """Step 4: ``METHOD\\nCanonicalURI\\nCanonicalQueryString\\nCanonicalHeaders``."""
    return "\n".join((method.upper(), uri, query, headers))


def signature(key: str, request: str) -> str:
    """Step 5: lowercase hex HMAC-SHA256 of the canonical request, keyed by the hex key."""
    return _hmac_hex(key, request)


def provider_signed_headers(headers: Pairs) -> tuple[str, ...]:
    """The set this provider signs: ``host`` and every ``x-bce-*`` header it sends."""
    names = {str(name).strip().lower() for name, _ in _pairs(headers)}
    return tuple(sorted(n for n in names if n == "host" or n.startswith(BCE_HEADER_PREFIX)))


def sign(
    *,
    access_key_id: str,
    secret_access_key: str,
    method: str,
    path: str,
    params: Pairs | None,
    headers: Pairs,
    timestamp: float | datetime,
    expiration_in_seconds: int = DEFAULT_EXPIRATION_SECONDS,
    headers_to_sign: Iterable[str] | None = None,
) -> SignedRequest:
    """Sign one request with ``bce-auth-v1``.

    :param access_key_id: the Access Key ID.
    :param secret_access_key: the Secret Access Key; never part of the result.
    :param method: the HTTP method, any case.
    :param path: the raw, unencoded path; send :attr:`SignedRequest.canonical_uri` on the wire.
    :param params: query parameters as a mapping or pairs; send the canonical query string.
    :param headers: the headers that will be sent, as a mapping or pairs.
    :param timestamp: epoch seconds or an aware datetime; also sent as ``x-bce-date``.
    :param expiration_in_seconds: validity window of the signature.
    :param headers_to_sign: the names to sign, written sorted into the header; ``None``
        signs the spec's default set and leaves the signedHeaders field empty.
    """
    stamp = format_timestamp(timestamp)
    uri = canonical_uri(path)
    query = canonical_query_string(params)
    header_block, signed_names = canonical_headers(headers, headers_to_sign)
    if headers_to_sign is not None and not signed_names:
        # An empty signedHeaders field means "the server's default set", not "none".
        raise ValueError("headers_to_sign selects no non-empty header; pass None for the default")
    request = canonical_request(method, uri, query, header_block)
    prefix = auth_string_prefix(access_key_id, stamp, expiration_in_seconds)
    key = signing_key(secret_access_key, prefix)
    return SignedRequest(
        canonical_uri=uri,
        canonical_query_string=query,
        canonical_headers=header_block,
        signed_headers="" if headers_to_sign is None else ";".join(signed_names),
        canonical_request=request,
        auth_string_prefix=prefix,
        signing_key=key,
        signature=signature(key, request),
        timestamp=stamp,
    )


def _pairs(items: Pairs | None) -> Iterable[tuple[str, object]]:
    if items is None:
        return ()
    if isinstance(items, Mapping):
        return items.items()
    return items


def _hmac_hex(key: str, message: str) -> str:
    return hmac.digest(key.encode(), message.encode(), "sha256").hex()

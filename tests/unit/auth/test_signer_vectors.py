"""The signer against the published ``bce-auth-v1`` vectors, one assertion per spec step.

Vectors: ``data/bce_signing_vectors.json`` beside this file (``data/README.md`` says where
each comes from); the rules: Baidu's bce-auth-v1 specification.
A vector's ``signer`` maps to our ``headers_to_sign`` as follows:

* ``sign`` (bce-python-sdk): the vector's own value; ``None`` is the spec default set and
  an empty signedHeaders field;
* ``resource_pool_sign`` (bce-python-sdk): ``["host"]``;
* ``core_sign`` (core 0.0.6): ``provider_signed_headers(headers)``, i.e. ``host`` and every
  ``x-bce-*`` header, written sorted: the provider's own mode.

The 15 ``spec_conformant: true`` vectors must match step by step. q01/q02 record SDK quirks
we must *not* reproduce, and c07 an unverified core variant we do not follow.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from signing_vectors import load_vectors

from airflow_provider_aihc.auth import signer
from airflow_provider_aihc.auth.signer import SignedRequest, sign

VECTORS = load_vectors()
BY_PREFIX = {vector["id"][:3]: vector for vector in VECTORS}

#: Asserted in this order, the order the spec computes them, so the first failure is the
#: step that broke and the later ones only inherit it.
STEPS = (
    "auth_string_prefix",
    "signing_key",
    "canonical_uri",
    "canonical_query_string",
    "canonical_headers",
    "canonical_request",
    "signature",
    "authorization",
)
SPEC_CONFORMANT = {f"v{n:02d}" for n in range(1, 13)} | {"c01", "c02", "c11"}


def headers_to_sign_for(vector: dict[str, Any]) -> list[str] | tuple[str, ...] | None:
    """Map the vector's ``signer`` to our ``headers_to_sign`` (see the module docstring)."""
    kind = vector["signer"]
    if kind == "sign":
        return vector["headers_to_sign"]  # None: the spec default set, empty field
    if kind == "resource_pool_sign":
        return ["host"]
    if kind == "core_sign":
        return signer.provider_signed_headers(vector["headers"])  # our mode
    raise AssertionError(f"unknown signer {kind!r} in vector {vector['id']}")


def sign_vector(vector: dict[str, Any], **overrides: Any) -> SignedRequest:
    kwargs: dict[str, Any] = {
        "access_key_id": vector["ak"],
        "secret_access_key": vector["sk"],
        "method": vector["method"],
        "path": vector["path"],
        "params": vector["params"],
        "headers": vector["headers"],
        "timestamp": vector["timestamp_epoch"],
        "expiration_in_seconds": vector["expiration_in_seconds"],
        "headers_to_sign": headers_to_sign_for(vector),
    }
    kwargs.update(overrides)
    return sign(**kwargs)


def assert_steps(vector: dict[str, Any], result: SignedRequest) -> None:
    expected = vector["expected"]
    for step in STEPS:
        got = getattr(result, step)
        assert got == expected[step], f"{vector['id']}: step {step!r} differs: {got!r}"
    field = expected["authorization"].split("/")[4]
    assert result.signed_headers == field, f"{vector['id']}: signedHeaders field differs"
    assert result.timestamp == vector["timestamp"], f"{vector['id']}: timestamp differs"


# -- the vectors file itself -------------------------------------------------------------


def test_vectors_file_is_the_documented_one() -> None:
    assert len(VECTORS) == 18
    assert {v["id"][:3] for v in VECTORS if v["spec_conformant"] is True} == SPEC_CONFORMANT
    assert {v["id"][:3] for v in VECTORS if v["spec_conformant"] is False} == {"q01", "q02"}
    assert {v["id"][:3] for v in VECTORS if v["spec_conformant"] is None} == {"c07"}
    for vector in VECTORS:
        assert vector["authorization"] == vector["expected"]["authorization"], vector["id"]
        assert set(STEPS) <= set(vector["expected"]), vector["id"]


# -- every vector ------------------------------------------------------------------------


def check_spec_conformant(vector: dict[str, Any]) -> None:
    assert_steps(vector, sign_vector(vector))
    # The same instant as an aware datetime signs identically.
    moment = datetime.fromisoformat(vector["timestamp"].replace("Z", "+00:00"))
    assert_steps(vector, sign_vector(vector, timestamp=moment))


def check_q01(vector: dict[str, Any]) -> None:
    """SDK quirk: it signs an ``authorization`` query key; the spec excludes it."""
    result = sign_vector(vector)
    assert result.authorization != vector["expected"]["authorization"]
    assert result.canonical_query_string == "resourcePoolId=cce-abc"
    assert "authorization" not in result.canonical_query_string
    without = [(k, v) for k, v in vector["params"] if k != "authorization"]
    assert result == sign_vector(vector, params=without)
    # Everything the quirk does not touch still matches the SDK.
    for step in ("auth_string_prefix", "signing_key", "canonical_uri", "canonical_headers"):
        assert getattr(result, step) == vector["expected"][step], step


def check_q02(vector: dict[str, Any]) -> None:
    """SDK quirk: it signs unlisted ``x-bce-*`` headers; the spec signs only the list."""
    result = sign_vector(vector)
    assert result.authorization != vector["expected"]["authorization"]
    assert result.canonical_headers == "host:aihc.bj.baidubce.com"
    assert result.signed_headers == "host"
    assert result.authorization.split("/")[4] == "host"
    assert "x-bce-" not in result.canonical_request


def check_c07(vector: dict[str, Any]) -> None:
    """Core 0.0.6 signs the whitespace-only ``x-bce-empty`` as ``x-bce-empty:``; we skip it.

    The provider follows bce-python-sdk 0.9.79 ("值为空字符的header不参与签名计算"),
    which is what v07 pins for the same inputs. Which rule the server applies is unverified
    (``spec_conformant: null``), and the provider never sends an empty-valued header, so the
    question does not arise on the wire. We pin that we follow bce-python-sdk 0.9.79, not c07.
    """
    result = sign_vector(vector)
    expected = vector["expected"]
    assert result.authorization != expected["authorization"]
    assert "x-bce-empty" not in result.canonical_headers
    assert "x-bce-empty" not in result.signed_headers
    assert result.canonical_headers.split("\n") == [
        line for line in expected["canonical_headers"].split("\n") if line != "x-bce-empty:"
    ]
    assert result.signed_headers == "host;x-bce-date;x-bce-meta-owner;x-bce-request-id"
    # The header block is v07's minus the default-set headers core does not sign.
    v07_lines = BY_PREFIX["v07"]["expected"]["canonical_headers"].split("\n")
    assert result.canonical_headers.split("\n") == [
        line for line in v07_lines if line.startswith(("host:", "x-bce-"))
    ]


NON_CONFORMANT_CHECKS = {"q01": check_q01, "q02": check_q02, "c07": check_c07}


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    if vector["spec_conformant"] is True:
        check_spec_conformant(vector)
        return
    check = NON_CONFORMANT_CHECKS.get(vector["id"][:3])
    assert check is not None, f"no spec expectation written for {vector['id']}"
    check(vector)


# -- the steps on their own --------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        (" ", "%20"),
        ("+", "%2B"),
        ("*", "%2A"),
        ("%", "%25"),
        ("/", "%2F"),
        ("=", "%3D"),
        ("&", "%26"),
        (":", "%3A"),
        ("~", "~"),
        ("AZaz09-._~", "AZaz09-._~"),
        ("()!'", "%28%29%21%27"),
        ("测试", "%E6%B5%8B%E8%AF%95"),
        ("é", "%C3%A9"),
        ("😀", "%F0%9F%98%80"),
        ("\x7f", "%7F"),
        ("", ""),
    ],
)
def test_uri_encode(raw: str, encoded: str) -> None:
    assert signer.uri_encode(raw) == encoded


def test_uri_encode_keeps_slash_only_when_asked() -> None:
    assert signer.uri_encode("/a b/") == "%2Fa%20b%2F"
    assert signer.uri_encode("/a b/", keep_slash=True) == "/a%20b/"


def test_uri_encode_hex_is_uppercase() -> None:
    encoded = signer.uri_encode("".join(map(chr, range(256))))
    hex_digits = [encoded[i + 1 : i + 3] for i, ch in enumerate(encoded) if ch == "%"]
    assert len(hex_digits) == 128 - 66 + 128 * 2  # 66 ASCII kept; U+0080-U+00FF are 2 bytes
    assert all(h == h.upper() for h in hex_digits)


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("", "/"),
        ("/", "/"),
        ("api/v1", "/api/v1"),
        ("/api/v1/aijobs/", "/api/v1/aijobs/"),
        ("//a", "//a"),
        (
            "/api/v1/测试/a b~c+d%e/(x)*!'",
            "/api/v1/%E6%B5%8B%E8%AF%95/a%20b~c%2Bd%25e/%28x%29%2A%21%27",
        ),
    ],
)
def test_canonical_uri(path: str, uri: str) -> None:
    assert signer.canonical_uri(path) == uri


def test_format_timestamp_from_epoch() -> None:
    assert signer.format_timestamp(1721118823) == "2024-07-16T08:33:43Z"
    assert signer.format_timestamp(1721118823.999) == "2024-07-16T08:33:43Z"  # no fractions
    assert signer.format_timestamp(0) == "1970-01-01T00:00:00Z"


def test_format_timestamp_from_aware_datetime() -> None:
    utc = datetime(2024, 7, 16, 8, 33, 43, 987654, tzinfo=UTC)
    beijing = utc.astimezone(timezone(timedelta(hours=8)))
    assert beijing.hour == 16
    assert signer.format_timestamp(utc) == "2024-07-16T08:33:43Z"
    assert signer.format_timestamp(beijing) == "2024-07-16T08:33:43Z"


def test_format_timestamp_rejects_naive_datetime() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        signer.format_timestamp(datetime(2024, 7, 16, 8, 33, 43))


def test_sign_rejects_naive_datetime() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        sign_vector(BY_PREFIX["v01"], timestamp=datetime(2024, 7, 16, 8, 33, 43))


def test_timestamp_is_read_once_into_prefix() -> None:
    result = sign_vector(BY_PREFIX["v01"])
    assert result.auth_string_prefix.split("/")[2] == result.timestamp


def test_auth_string_prefix_and_signing_key() -> None:
    v01 = BY_PREFIX["v01"]
    prefix = signer.auth_string_prefix(v01["ak"], v01["timestamp"], 1800)
    assert prefix == v01["expected"]["auth_string_prefix"]
    assert signer.signing_key(v01["sk"], prefix) == v01["expected"]["signing_key"]
    key = v01["expected"]["signing_key"]
    request = v01["expected"]["canonical_request"]
    assert signer.signature(key, request) == v01["expected"]["signature"]


def test_none_and_empty_query_values_both_render_key_equals() -> None:
    assert signer.canonical_query_string([("a", None), ("b", "")]) == "a=&b="
    assert signer.canonical_query_string({"a": None}) == signer.canonical_query_string({"a": ""})


def test_no_params_is_an_empty_query() -> None:
    assert signer.canonical_query_string(None) == ""
    assert signer.canonical_query_string({}) == ""
    assert signer.canonical_query_string([]) == ""


def test_query_sorts_whole_encoded_pairs() -> None:
    v06 = BY_PREFIX["v06"]
    assert signer.canonical_query_string(v06["params"]) == "A=4&a-b=2&a.b=5&a=1&a_b=3&b=6"
    assert signer.canonical_query_string(dict(reversed(v06["params"]))) == (
        "A=4&a-b=2&a.b=5&a=1&a_b=3&b=6"
    )


def test_query_encodes_slash_and_reserved() -> None:
    assert signer.canonical_query_string({"p": "/a b+c=d&e"}) == "p=%2Fa%20b%2Bc%3Dd%26e"


@pytest.mark.parametrize("key", ["authorization", "Authorization", "AUTHORIZATION"])
def test_query_excludes_authorization_key(key: str) -> None:
    assert signer.canonical_query_string([("a", "1"), (key, "x")]) == "a=1"


def test_header_lines_are_sorted_as_whole_lines_v08() -> None:
    v08 = BY_PREFIX["v08"]
    block, names = signer.canonical_headers(v08["headers"])
    assert block.split("\n") == [
        "host:aihc.gz.baidubce.com",
        "x-bce-date-x:1",
        "x-bce-date:2025-01-02T03%3A04%3A05Z",
    ]
    assert block == v08["expected"]["canonical_headers"]
    assert names == ("host", "x-bce-date", "x-bce-date-x")


def test_header_names_and_values_trimmed_lowered_and_empty_skipped() -> None:
    block, names = signer.canonical_headers(
        [(" X-Bce-Meta ", "  a b  "), ("x-bce-empty", " \t "), ("Content-MD5", "abc=")]
    )
    assert block == "content-md5:abc%3D\nx-bce-meta:a%20b"
    assert names == ("content-md5", "x-bce-meta")


def test_default_set_ignores_unlisted_headers() -> None:
    block, _ = signer.canonical_headers(
        {"User-Agent": "x", "Accept": "*/*", "X-API-Version": "v2", "Host": "h"}
    )
    assert block == "host:h"


def test_explicit_set_signs_exactly_the_listed_headers() -> None:
    headers = {"Host": "h", "x-bce-date": "d", "x-bce-request-id": "r", "Content-Type": "t"}
    block, names = signer.canonical_headers(headers, [" X-BCE-DATE ", "Host"])
    assert block == "host:h\nx-bce-date:d"
    assert names == ("host", "x-bce-date")


def test_explicit_signed_headers_field_is_lowercase_and_sorted() -> None:
    v09 = BY_PREFIX["v09"]
    result = sign_vector(v09, headers_to_sign=["X-Bce-Date", " HOST "])
    assert result.signed_headers == "host;x-bce-date"
    assert result.authorization == v09["expected"]["authorization"]


def test_explicit_set_that_selects_nothing_is_refused() -> None:
    # An empty signedHeaders field tells the server "default set"; it cannot mean "none".
    v01 = BY_PREFIX["v01"]
    for empty in ([], ["content-md5"], ["x-bce-absent"]):
        with pytest.raises(ValueError, match="headers_to_sign"):
            sign_vector(v01, headers_to_sign=empty)


def test_provider_signed_headers_is_host_and_every_x_bce() -> None:
    names = signer.provider_signed_headers(BY_PREFIX["v07"]["headers"])
    assert names == ("host", "x-bce-date", "x-bce-empty", "x-bce-meta-owner", "x-bce-request-id")


def test_canonical_request_has_no_trailing_newline_and_keeps_empty_query() -> None:
    request = signer.canonical_request("delete", "/p", "", "host:h")
    assert request == "DELETE\n/p\n\nhost:h"
    assert BY_PREFIX["v04"]["expected"]["canonical_request"].startswith("DELETE\n/api/v1/")
    assert "\n\nhost:" in BY_PREFIX["v04"]["expected"]["canonical_request"]


def test_method_is_upper_cased() -> None:
    v01 = BY_PREFIX["v01"]
    assert sign_vector(v01, method="post").authorization == v01["expected"]["authorization"]


def test_params_and_headers_accept_mappings_and_pairs() -> None:
    v05 = BY_PREFIX["v05"]
    as_dicts = sign_vector(v05, params=dict(v05["params"]), headers=dict(v05["headers"]))
    assert as_dicts.authorization == v05["expected"]["authorization"]


def test_signing_is_deterministic() -> None:
    v07 = BY_PREFIX["v07"]
    assert sign_vector(v07) == sign_vector(v07)


def test_signed_request_is_frozen() -> None:
    result = sign_vector(BY_PREFIX["v01"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.signature = "0" * 64  # type: ignore[misc]
    assert not hasattr(result, "__dict__")  # slots: no stray attributes either


def test_signed_request_repr_holds_no_secret() -> None:
    v01 = BY_PREFIX["v01"]
    result = sign_vector(v01)
    text = repr(result)
    assert v01["sk"] not in text
    # The signing key signs any request under this prefix until it expires.
    assert result.signing_key not in text
    assert result.signing_key not in str(result)
    assert result.signature in text  # the non-secret intermediates stay visible

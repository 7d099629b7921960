"""Differential test: our signer against bce-python-sdk 0.9.79 over generated requests.

The SDK is the oracle the vectors were generated with (Baidu's signing specification,
cloud.baidu.com/doc/Reference/s/njwvz1yfu); it is a test-only
dependency. It is called exactly as the vectors' ``sdk_call`` says::

    sign(BceCredentials(ak, sk), method.encode(), normalize_string(path, False),
         {name.encode(): value.encode()}, dict(params), timestamp=..., expiration_in_seconds=...,
         headers_to_sign=[h.encode()] or None)

Generation is a seeded ``random.Random``, so every run checks the same cases. It steers
clear of the SDK's documented quirks and of inputs where no common answer exists:

* no ``authorization`` query key, in any case (q01);
* an explicit ``headers_to_sign`` always lists every ``x-bce-*`` header that carries a value
  (q02), and only headers that carry one (we list exactly what we sign; the SDK echoes its
  argument);
* paths start with ``/`` (the SDK signs the path as given; we add a missing ``/``);
* timestamps are never 0 (the SDK reads the clock for 0);
* header names are ASCII and header values never start or end with non-ASCII whitespace (the
  SDK strips bytes, which trims ASCII whitespace only; we strip ``str``, which
  also trims U+001C-U+001F, U+0085, U+00A0, U+3000 and the like; the provider never sends
  such a value, and ``http.client`` cannot send most of them);
* no two headers normalise to the same name and params have unique keys (the SDK takes dicts).

Whitespace-only and empty header values *are* generated: both signers skip them.
"""

from __future__ import annotations

import random
import string
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from signing_vectors import load_vectors

from airflow_provider_aihc.auth import signer

bce_v1_signer = pytest.importorskip("baidubce.auth.bce_v1_signer")
from baidubce import utils as bce_utils  # noqa: E402  (after the importorskip guard)
from baidubce.auth.bce_credentials import BceCredentials  # noqa: E402

SEED = 20240716
N_CASES = 2000

AK = "0b0f67dfb88244b289b72b142befad0c"
SK = "bad522c2126a4618a8125f4b6cf6356f"

UNRESERVED = string.ascii_letters + string.digits + "-._~"
RESERVED = "=&/+~ %*()!':"
OTHER_ASCII = '"#$,;<>?@[\\]^`{|}\t\n'
CJK = "测试训练任务百舸资源池队列"
EMOJI = "😀🚀👍🏽🧪"
OTHER_UNICODE = "éüßØ\u00a0\u3000"  # includes non-ASCII spaces: fine outside header values
HEADER_VALUE_CHARS = string.ascii_letters + string.digits + "-._~=&/+ %*()!':;,\"" + CJK + EMOJI

METHODS = ("GET", "POST", "PUT", "DELETE")
HOSTS = (
    "aihc.bj.baidubce.com",
    "aihc.gz.baidubce.com",
    "aihc.bj.baidubce.com:8443",
    "127.0.0.1:8080",
    "localhost:80",
)
EXPIRATIONS = (1800, 1800, 300, 3600, 60, 86400)
ZONES = (UTC, timezone(timedelta(hours=8)), timezone(timedelta(hours=-5, minutes=-30)))
ASCII_SPACE = (" ", "  ", "\t", " \t ")


@dataclass(frozen=True)
class Case:
    """One generated request, as our signer takes it and as the SDK takes it."""

    method: str  # ours may be mixed case; the SDK gets it upper-cased (as its client sends)
    path: str
    params: list[tuple[str, object]]
    params_as_dict: bool
    headers: list[tuple[str, str]]
    epoch: int
    our_timestamp: int | datetime
    expiration: int
    headers_to_sign: list[str] | None  # as we get it: any order, any case, padded
    sdk_headers_to_sign: list[str] | None  # as the SDK gets it: normalised and sorted


def _text(rng: random.Random, alphabet: str, low: int, high: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _mixed_case(rng: random.Random, name: str) -> str:
    return "".join(c.upper() if rng.random() < 0.3 else c for c in name)


def _pad(rng: random.Random, text: str, probability: float) -> str:
    if rng.random() >= probability:
        return text
    return rng.choice(("", *ASCII_SPACE)) + text + rng.choice(("", *ASCII_SPACE))


def _path(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return "/"
    alphabet = UNRESERVED * 2 + RESERVED * 2 + OTHER_ASCII + CJK + EMOJI + OTHER_UNICODE
    segments = [_text(rng, alphabet, 0, 10) for _ in range(rng.randint(1, 6))]
    return "/" + "/".join(segments) + ("/" if rng.random() < 0.1 else "")


def _params(rng: random.Random) -> list[tuple[str, object]]:
    count = rng.choice((0, 0, 1, 2, 3, 5, 8, 13, 20))
    key_alphabet = UNRESERVED * 3 + RESERVED + OTHER_ASCII + CJK + EMOJI + OTHER_UNICODE
    value_alphabet = UNRESERVED + RESERVED * 2 + OTHER_ASCII + CJK + EMOJI + OTHER_UNICODE
    params: dict[str, object] = {}
    while len(params) < count:
        key = _text(rng, key_alphabet, 0 if rng.random() < 0.02 else 1, 12)
        if key.lower() == "authorization":
            continue
        roll = rng.random()
        if roll < 0.1:
            value: object = None
        elif roll < 0.2:
            value = ""
        elif roll < 0.25:
            value = rng.randint(-5, 10**6)
        else:
            value = _text(rng, value_alphabet, 1, 16)
        params[key] = value
    return list(params.items())


def _header_value(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(("", *ASCII_SPACE))  # empty or whitespace-only: skipped by both
    core = _text(rng, HEADER_VALUE_CHARS, 1, 24)
    return _pad(rng, core, 0.4)


def _headers(rng: random.Random, stamp: str) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    seen: set[str] = set()

    def add(name: str, value: str) -> None:
        key = name.strip().lower()
        if key in seen:
            return
        seen.add(key)
        headers.append((_pad(rng, _mixed_case(rng, name), 0.15), value))

    add("Host", rng.choice(HOSTS))
    add("x-bce-date", _pad(rng, stamp, 0.1))
    if rng.random() < 0.6:
        add("Content-Type", _pad(rng, rng.choice(("application/json", "text/plain")), 0.2))
    if rng.random() < 0.6:
        add("Content-Length", str(rng.choice((0, 27, 412, rng.randint(0, 10**7)))))
    if rng.random() < 0.15:
        add("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg==")
    if rng.random() < 0.2:
        add("x-bce-security-token", "ZjkyZDQ2YmE0MjQ5NDE2YjgzNmFmODNk+/=")
    for _ in range(rng.choice((0, 1, 2, 3, 5))):
        suffix = _text(rng, string.ascii_lowercase + string.digits + "-", 1, 12)
        add(f"x-bce-{suffix}", _header_value(rng))
    for name in ("User-Agent", "Accept", "X-API-Version", "version"):
        if rng.random() < 0.3:
            add(name, _header_value(rng))
    rng.shuffle(headers)
    return headers


def _explicit_set(rng: random.Random, headers: list[tuple[str, str]]) -> list[str] | None:
    """Every valued ``x-bce-*`` header plus some other valued ones, or None if that is empty."""
    valued = [name.strip().lower() for name, value in headers if value.strip()]
    chosen = {n for n in valued if n.startswith("x-bce-")}
    chosen |= {n for n in valued if rng.random() < 0.5}
    return sorted(chosen) or None


def generate(rng: random.Random) -> Case:
    epoch = rng.randint(946_684_800, 4_102_444_799)  # 2000-01-01 .. 2099-12-31, never 0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
    roll = rng.random()
    our_timestamp: int | datetime = (
        epoch if roll < 0.6 else datetime.fromtimestamp(epoch, tz=rng.choice(ZONES))
    )
    headers = _headers(rng, stamp)
    sdk_set = _explicit_set(rng, headers) if rng.random() < 0.25 else None
    ours_set = None
    if sdk_set is not None:
        ours_set = [_pad(rng, _mixed_case(rng, name), 0.2) for name in sdk_set]
        rng.shuffle(ours_set)
    method = rng.choice(METHODS)
    return Case(
        method=method.lower() if rng.random() < 0.1 else method,
        path=_path(rng),
        params=_params(rng),
        params_as_dict=rng.random() < 0.5,
        headers=headers,
        epoch=epoch,
        our_timestamp=our_timestamp,
        expiration=rng.choice((*EXPIRATIONS, rng.randint(1, 604_800))),
        headers_to_sign=ours_set,
        sdk_headers_to_sign=sdk_set,
    )


def ours(case: Case, headers_to_sign: Any = "case") -> str:
    params: Any = dict(case.params) if case.params_as_dict else case.params
    return signer.sign(
        access_key_id=AK,
        secret_access_key=SK,
        method=case.method,
        path=case.path,
        params=params,
        headers=case.headers,
        timestamp=case.our_timestamp,
        expiration_in_seconds=case.expiration,
        headers_to_sign=case.headers_to_sign if headers_to_sign == "case" else headers_to_sign,
    ).authorization


def _sdk_args(case: Case) -> tuple[Any, ...]:
    return (
        BceCredentials(AK, SK),
        case.method.upper().encode(),
        bce_utils.normalize_string(case.path, False),
        {name.encode(): value.encode() for name, value in case.headers},
        dict(case.params),
    )


def sdk(case: Case) -> str:
    hts = (
        None if case.sdk_headers_to_sign is None else [h.encode() for h in case.sdk_headers_to_sign]
    )
    result = bce_v1_signer.sign(
        *_sdk_args(case),
        timestamp=case.epoch,
        expiration_in_seconds=case.expiration,
        headers_to_sign=hts,
    )
    return result.decode()


def sdk_resource_pool(case: Case) -> str:
    result = bce_v1_signer.resource_pool_sign(
        *_sdk_args(case), timestamp=case.epoch, expiration_in_seconds=case.expiration
    )
    return result.decode()


def features(case: Case) -> set[str]:
    """Labels of what a case exercises, to prove the generator covers what it claims."""
    found = {f"method:{case.method.upper()}"}
    found |= {f"path:{c}" for c in RESERVED if c in case.path}
    if any(c in CJK for c in case.path):
        found.add("path:cjk")
    if any(c in EMOJI for c in case.path):
        found.add("path:emoji")
    keys = "".join(k for k, _ in case.params)
    values = "".join(str(v) for _, v in case.params if v is not None)
    found |= {f"query-key:{c}" for c in RESERVED if c in keys}
    found |= {f"query-value:{c}" for c in RESERVED if c in values}
    if any(c in CJK + EMOJI for c in keys + values):
        found.add("query:unicode")
    if any(v is None for _, v in case.params):
        found.add("query:none")
    if any(v == "" for _, v in case.params):
        found.add("query:empty")
    if len(case.params) >= 13:
        found.add("query:many")
    for name, value in case.headers:
        key = name.strip().lower()
        if name != name.strip():
            found.add("header:padded-name")
        if key.startswith("x-bce-") and name.strip() != key:
            found.add("header:mixed-case-x-bce")
        if value and not value.strip():
            found.add("header:whitespace-only")
        if value != value.strip() and value.strip():
            found.add("header:padded-value")
        if key == "host" and ":" in value:
            found.add("host:port")
        if key == "host" and ":" not in value:
            found.add("host:no-port")
    if sum(n.strip().lower().startswith("x-bce-") for n, _ in case.headers) >= 4:
        found.add("header:several-x-bce")
    if case.headers_to_sign is not None:
        found.add("explicit-headers-to-sign")
    if isinstance(case.our_timestamp, datetime):
        found.add("timestamp:datetime")
    if case.expiration != 1800:
        found.add("expiration:non-default")
    if case.method != case.method.upper():
        found.add("method:lower-case")
    return found


REQUIRED_FEATURES = (
    {f"method:{m}" for m in METHODS}
    | {f"path:{c}" for c in RESERVED if c != "/"}
    | {f"query-key:{c}" for c in RESERVED}
    | {f"query-value:{c}" for c in RESERVED}
    | {
        "path:cjk",
        "path:emoji",
        "query:unicode",
        "query:none",
        "query:empty",
        "query:many",
        "header:padded-name",
        "header:mixed-case-x-bce",
        "header:whitespace-only",
        "header:padded-value",
        "header:several-x-bce",
        "host:port",
        "host:no-port",
        "explicit-headers-to-sign",
        "timestamp:datetime",
        "expiration:non-default",
        "method:lower-case",
    }
)


def test_differential_against_bce_python_sdk(record_property: Any) -> None:
    rng = random.Random(SEED)
    coverage: Counter[str] = Counter()
    mismatches: list[tuple[Case, str, str]] = []
    pool_checked = 0
    for _ in range(N_CASES):
        case = generate(rng)
        coverage.update(features(case))
        expected, got = sdk(case), ours(case)
        if got != expected:
            mismatches.append((case, expected, got))
        host_name = next(n for n, _ in case.headers if n.strip().lower() == "host")
        if host_name.lower() == "host":  # resource_pool_sign matches the name unstripped
            pool_checked += 1
            expected, got = sdk_resource_pool(case), ours(case, headers_to_sign=["host"])
            if got != expected:
                mismatches.append((case, expected, got))

    record_property("differential_cases", N_CASES)
    record_property("differential_resource_pool_cases", pool_checked)
    record_property("differential_mismatches", len(mismatches))
    print(
        f"\nbce-auth-v1 differential: {N_CASES} sign() cases + {pool_checked} "
        f"resource_pool_sign() cases, {len(mismatches)} mismatches"
    )
    assert N_CASES >= 1000
    assert not mismatches, "\n\n".join(
        f"{case!r}\n  sdk:  {expected}\n  ours: {got}" for case, expected, got in mismatches[:5]
    )
    missing = sorted(f for f in REQUIRED_FEATURES if coverage[f] < 5)
    assert not missing, f"generator under-covers: {missing}"
    assert pool_checked >= 1000


def test_generation_is_deterministic() -> None:
    first = [generate(random.Random(SEED)) for _ in range(3)]
    again = [generate(random.Random(SEED)) for _ in range(3)]
    assert first == again


# -- the oracle and its call convention ---------------------------------------------------


def test_sdk_call_reproduces_the_sdk_vectors() -> None:
    """The SDK, called as above, gives every ``sign``/``resource_pool_sign`` vector (v*, q*)."""
    checked = 0
    for vector in load_vectors():
        functions = {
            "sign": bce_v1_signer.sign,
            "resource_pool_sign": bce_v1_signer.resource_pool_sign,
        }
        function = functions.get(vector["signer"])
        if function is None:
            continue  # core_sign vectors come from a different package
        hts = vector["headers_to_sign"]
        result = function(
            BceCredentials(vector["ak"], vector["sk"]),
            vector["method"].encode(),
            bce_utils.normalize_string(vector["path"], False),
            {name.encode(): value.encode() for name, value in vector["headers"]},
            dict(vector["params"]),
            timestamp=vector["timestamp_epoch"],
            expiration_in_seconds=vector["expiration_in_seconds"],
            headers_to_sign=[h.encode() for h in hts] if hts else None,
        )
        assert result.decode() == vector["expected"]["authorization"], vector["id"]
        checked += 1
    assert checked == 14  # v01-v12, q01, q02


@pytest.mark.parametrize("blank", ["", " ", "   ", "\t", " \t "])
def test_both_skip_whitespace_only_header_values(blank: str) -> None:
    base = [("Host", "aihc.bj.baidubce.com"), ("x-bce-date", "2024-01-01T00:00:00Z")]
    with_blank = Case(
        method="GET",
        path="/api/v1/aijobs",
        params=[("a", "1")],
        params_as_dict=False,
        headers=[*base, ("x-bce-empty", blank), ("Content-Type", blank)],
        epoch=1704067200,
        our_timestamp=1704067200,
        expiration=1800,
        headers_to_sign=None,
        sdk_headers_to_sign=None,
    )
    without = replace(with_blank, headers=base)
    assert sdk(with_blank) == sdk(without)
    assert ours(with_blank) == ours(without)
    assert ours(with_blank) == sdk(with_blank)


def test_uri_encode_matches_sdk_normalize_string_per_character() -> None:
    characters = [chr(cp) for cp in range(0x800)] + list(CJK + EMOJI + "\U0010ffff\ufffd")
    for ch in characters:
        assert signer.uri_encode(ch) == bce_utils.normalize_string(ch).decode(), repr(ch)
        assert (
            signer.uri_encode(ch, keep_slash=True) == bce_utils.normalize_string(ch, False).decode()
        ), repr(ch)

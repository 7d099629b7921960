"""Property: whatever the input, ``build_create_request`` returns a valid request or raises
:class:`AIHCValidationError`, and never touches the caller's body."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from aihc_strategies import ANYTHING, JSONISH, PLAUSIBLE_JOB_PARAMETERS
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from seed_job import SEED_BODY

from airflow_provider_aihc.exceptions import AIHCValidationError
from airflow_provider_aihc.models.build import PARAMETER_PATHS, build_create_request
from airflow_provider_aihc.models.request import CreateJobRequest

PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    **PLAUSIBLE_JOB_PARAMETERS,
    "host_network": st.booleans(),
    "privileged": st.booleans(),
}
PARAMS = st.one_of(
    st.fixed_dictionaries({}, optional=PLAUSIBLE),
    st.fixed_dictionaries(
        {}, optional={param: st.one_of(PLAUSIBLE[param], ANYTHING) for param in PARAMETER_PATHS}
    ),
)


def _mutated(template: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """The template with each value mostly kept, sometimes junk or (nested) mutated."""
    fields = {
        key: st.one_of(
            st.just(value),
            st.just(value),
            st.just(value),
            ANYTHING,
            _mutated(value) if isinstance(value, dict) else st.just(None),
        )
        for key, value in template.items()
    }
    extras = st.one_of(st.just({}), st.dictionaries(st.text(max_size=8), JSONISH, max_size=2))
    return st.tuples(st.fixed_dictionaries(fields), extras).map(lambda pair: {**pair[1], **pair[0]})


def _outcome(build: Callable[[], CreateJobRequest]) -> CreateJobRequest | AIHCValidationError:
    """The built request, or the AIHCValidationError (checked for shape); anything else fails."""
    try:
        return build()
    except AIHCValidationError as exc:
        error = exc
    assert error.errors
    for field, problem in error.errors:
        assert isinstance(field, str)
        assert field
        assert isinstance(problem, str)
        assert problem
    return error


BODIES = st.one_of(st.none(), _mutated(SEED_BODY), _mutated(SEED_BODY).map(json.dumps), ANYTHING)


@settings(
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(body=BODIES, params=PARAMS)
def test_returns_a_request_or_raises_validation_error(body: Any, params: dict[str, Any]) -> None:
    body_before, params_before = repr(copy.deepcopy(body)), repr(copy.deepcopy(params))
    outcome = _outcome(lambda: build_create_request(body, **params))
    if isinstance(outcome, CreateJobRequest):
        event("built")
        wire = outcome.to_wire()
        json.dumps(wire, allow_nan=False)  # JSON-ready and finite
        assert CreateJobRequest.model_validate(wire).to_wire() == wire
    else:
        event("rejected")
    assert repr(body) == body_before
    assert repr(params) == params_before


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(value=ANYTHING, param=st.sampled_from(sorted(PARAMETER_PATHS)))
def test_any_single_parameter_value(value: Any, param: str) -> None:
    base = {"name": "job-1", "image": "busybox", "command": "true"}
    outcome = _outcome(lambda: build_create_request(**{**base, param: value}))
    if isinstance(outcome, CreateJobRequest):
        json.dumps(outcome.to_wire(), allow_nan=False)


def _or_text(strategy: st.SearchStrategy[Any], render: Any = json.dumps) -> Any:
    """A value, or the same value rendered to text the way templating might."""
    return st.one_of(strategy, strategy.map(render))


FINITE = st.one_of(st.integers(0, 10**6), st.floats(0, 1e6, allow_nan=False))
TEXT_VALUES = st.one_of(st.text(max_size=10), st.integers(), st.booleans(), FINITE)
#: Names, keys, queues and types must not be blank (whitespace only).
KEYS = st.text(min_size=1, max_size=10).filter(
    lambda key: key.strip() and key not in {"name", "key"}
)
BOOLS = st.one_of(st.booleans(), st.sampled_from(["true", "False", "1", "0", "yes", "off"]))
VALID: dict[str, st.SearchStrategy[Any]] = {
    "name": st.from_regex(r"[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?", fullmatch=True),
    "job_queue": st.text(min_size=1, max_size=10).filter(str.strip),
    "replicas": _or_text(st.integers(1, 64), str),
    "job_resources": _or_text(st.dictionaries(KEYS, _or_text(FINITE, str), max_size=3)),
    "envs": _or_text(st.dictionaries(KEYS, TEXT_VALUES, max_size=3)),
    "priority": st.sampled_from(["high", "normal", "low"]),
    "job_framework": st.sampled_from(["PyTorchJob", "MPIJob"]),
    "enable_rdma": BOOLS,
    "datasources": _or_text(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.text(min_size=1, max_size=5).filter(str.strip),
                    "mountPath": st.text(max_size=10).map(lambda path: "/" + path),
                },
                optional={"name": st.text(max_size=5), "sourcePath": st.text(max_size=5)},
            ),
            max_size=2,
        )
    ),
    "labels": _or_text(st.dictionaries(KEYS, TEXT_VALUES, max_size=3)),
    "fault_tolerance": BOOLS,
    "fault_tolerance_config": _or_text(
        st.fixed_dictionaries(
            {},
            optional={
                "faultToleranceLimit": st.integers(0, 9),
                "enabledHangDetection": st.booleans(),
            },
        )
    ),
    "enable_bccl": st.just(False),
    "image_config": _or_text(
        st.fixed_dictionaries({"username": st.text(max_size=5), "password": st.text(max_size=5)})
    ),
    "host_network": BOOLS,
    "privileged": BOOLS,
    "tensorboard_config": _or_text(
        st.fixed_dictionaries(
            {}, optional={"enableTensorboard": st.booleans(), "logPath": st.text(max_size=5)}
        )
    ),
    "alert_config": _or_text(
        st.fixed_dictionaries(
            {},
            optional={
                "alertIds": st.lists(st.text(max_size=5)),
                "for": st.sampled_from(["1m", "5m"]),
            },
        )
    ),
}


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(
    body=st.one_of(st.just(SEED_BODY), st.just(SEED_BODY).map(json.dumps)),
    params=st.fixed_dictionaries({}, optional=VALID),
)
def test_valid_input_in_any_form_always_builds(body: Any, params: dict[str, Any]) -> None:
    params_before = repr(copy.deepcopy(params))
    wire = build_create_request(body, **params).to_wire()
    json.dumps(wire, allow_nan=False)
    assert CreateJobRequest.model_validate(wire).to_wire() == wire
    assert repr(params) == params_before
    if "name" in params:
        assert wire["name"] == params["name"]

"""Whatever a DAG author passes, a valid request or a named error, nothing sent.

Property tests (hypothesis, ``derandomize=True``) through the operator's own path,
``AIHCCreateJobOperator.execute`` (``build_request``, then the submitter), and the
sensor's ``poke``, against the emulator over real HTTP:

* every operator parameter and ``body`` at once, from junk to plausible: the input is
  either refused with :class:`AIHCValidationError` before a single request (the emulator
  counts zero), or it becomes a create the emulator accepts; never another exception;
* one bad parameter in an otherwise valid task: the error names that parameter;
* the sensor's ``job_id`` and ``resource_pool_id``: refused before sending, naming the
  field, or sent as one GetJob on ``/api/v1/aijobs/<one segment>``, never another endpoint.

``build_create_request`` alone is property-tested in ``tests/unit/models``; templating is
Airflow's (the values here hold no Jinja), so ``execute`` gets them as rendered.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from aihc_bad_values import BAD_VALUES
from aihc_strategies import ANYTHING, JSONISH, PLAUSIBLE_JOB_PARAMETERS, SCALARS
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from rel_support import (
    FIGURES,
    POOL,
    StubTaskInstance,
    TaskDeferred,
    connection_json,
    task_context,
    total_requests,
)

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.exceptions import (
    AIHCApiError,
    AIHCError,
    AIHCJobTimeoutError,
    AIHCRefusedError,
    AIHCValidationError,
)
from airflow_provider_aihc.operators.aihc import AIHCCreateJobOperator
from airflow_provider_aihc.sensors.aihc import AIHCJobSensor

BASE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

SECONDS = st.sampled_from([0, -1, "abc", "0.005", math.nan, math.inf, True, None, -0.5])

#: Plausible values per operator parameter (some valid, some not).
PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    **PLAUSIBLE_JOB_PARAMETERS,
    "image": st.sampled_from(["busybox", ""]),
    "command": st.sampled_from(["true", "python train.py", ""]),
    "resource_pool_id": st.one_of(
        st.just(POOL), st.sampled_from(["a/b", "..", " ", "", "pool-unknown"]), st.text(max_size=6)
    ),
    "body": st.one_of(
        st.fixed_dictionaries(
            {}, optional={"name": st.text(max_size=8), "jobSpec": JSONISH, "queue": SCALARS}
        ),
        ANYTHING,
    ),
    "wait_for_completion": st.booleans(),
    "deferrable": st.booleans(),
    "poll_interval": st.one_of(
        st.floats(0.001, 0.01), SECONDS, st.text(max_size=5), st.lists(SCALARS, max_size=2)
    ),
    "timeout": st.one_of(st.none(), st.floats(0, 3), SECONDS),
    "cancel_on_kill": st.booleans(),
    "stream_logs": st.booleans(),
    "aihc_conn_id": st.sampled_from(
        ["aihc_default", "aihc_default", "aihc_broken", "aihc_hostless"]
    ),
}
#: Always given: image and command to reach the create, poll_interval to keep waits short.
REQUIRED = ("image", "command", "poll_interval")
#: Not mixed with arbitrary values: an undefined connection id is tested below.
REFERENCES = ("aihc_conn_id",)


OPERATOR_PARAMETERS = st.fixed_dictionaries(
    {
        "image": st.one_of(st.just("busybox"), PLAUSIBLE["image"], ANYTHING),
        "command": st.one_of(st.just("true"), PLAUSIBLE["command"], ANYTHING),
        "poll_interval": PLAUSIBLE["poll_interval"],
    },
    optional={
        name: strategy if name in REFERENCES else st.one_of(strategy, ANYTHING)
        for name, strategy in PLAUSIBLE.items()
        if name not in REQUIRED
    },
)
#: Refusals only AIHC can make (it alone knows its pools and queues).
SERVER_SIDE = ("ResourcePoolNotFound", "queue")


@pytest.fixture
def emulator(aihc_emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch) -> EmulatorServer:
    """The emulator, jobs moving on every poll, plus two unusable connections."""
    aihc_emulator.backend.reset(progression=Progression.per_poll(0))
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_BROKEN", connection_json(aihc_emulator, password=""))
    monkeypatch.setenv(
        "AIRFLOW_CONN_AIHC_HOSTLESS",
        json.dumps({"conn_type": "aihc", "login": "ak", "password": "sk", "host": ""}),
    )
    return aihc_emulator


def _execute(emulator: EmulatorServer, params: dict[str, Any]) -> str:
    """Run the operator once, assert the property, and say what happened."""
    emulator.backend.reset()
    error: BaseException | None = None
    try:  # a literal mistake is refused already when the operator is made (at DAG parse)
        operator = AIHCCreateJobOperator(task_id="train", **params)
        operator.execute(task_context(StubTaskInstance()))
    except (AIHCError, TaskDeferred) as raised:
        error = raised
    if isinstance(error, AIHCValidationError):
        assert total_requests(emulator) == 0, (error, emulator.backend.counts())
        assert error.errors
        assert all(field and problem for field, problem in error.errors), error.errors
        return "refused, nothing sent"
    if isinstance(error, AIHCRefusedError):  # a 400: fails without retries
        error = error.error
    if isinstance(error, AIHCApiError) and not isinstance(error, AIHCJobTimeoutError):
        assert any(reason in str(error) for reason in SERVER_SIDE), error
        assert emulator.backend.count("CreateJob", 200) == 0
        return f"refused by AIHC: {error.code}"
    assert error is None or isinstance(error, TaskDeferred | AIHCJobTimeoutError), error
    assert emulator.backend.count("CreateJob", 200) == 1, emulator.backend.requests
    assert emulator.backend.count("CreateJob") == 1
    return "created" if error is None else f"created, then {type(error).__name__}"


@settings(BASE, max_examples=500)
@given(params=OPERATOR_PARAMETERS)
def test_any_operator_input_is_a_create_aihc_accepts_or_refused_before_sending(
    emulator: EmulatorServer, params: dict[str, Any]
) -> None:
    FIGURES["bad input: operator inputs tried (all parameters)"] += 1
    outcome = _execute(emulator, params)
    event(outcome)
    FIGURES[f"bad input: operator, {outcome.split(':')[0]}"] += 1


VALID_TASK = {
    "name": "job-1",
    "image": "busybox",
    "command": "true",
    "wait_for_completion": True,
    "poll_interval": 0.01,
}


# Every bad value is tried (a sample of 300 left some untried), deterministically,
# each with two draws of the harmless extras around it.
@pytest.mark.parametrize("bad", BAD_VALUES, ids=lambda bad: bad[0])
@settings(BASE, max_examples=2)
@given(
    extra=st.fixed_dictionaries(
        {},
        optional={
            "deferrable": st.booleans(),
            "timeout": st.floats(0, 60),
            "labels": st.just({"team": "nlp"}),
        },
    ),
)
def test_one_bad_parameter_is_refused_by_name_and_nothing_is_sent(
    emulator: EmulatorServer, bad: tuple[str, Any, str], extra: dict[str, Any]
) -> None:
    param, value, named = bad
    params = {**VALID_TASK, **{k: v for k, v in extra.items() if k != param}, param: value}
    FIGURES["bad input: single bad parameters tried"] += 1
    emulator.backend.reset()

    with pytest.raises(AIHCValidationError) as refused:  # when made (literal) or run
        AIHCCreateJobOperator(task_id="train", **params).execute(task_context())

    fields = [field for field, _ in refused.value.errors]
    assert any(named in field for field in fields), (param, value, refused.value.errors)
    assert total_requests(emulator) == 0


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"poll_interval": 0}, "poll_interval"),
        ({"poll_interval": "abc"}, "poll_interval"),
        ({"poll_interval": -1, "deferrable": True}, "poll_interval"),
        ({"timeout": "x"}, "timeout"),
        ({"timeout": -5}, "timeout"),
        ({"aihc_conn_id": "aihc_broken"}, "aihc_conn_id"),
    ],
)
def test_waiting_parameters_and_the_connection_are_checked_before_the_job_is_created(
    emulator: EmulatorServer, params: dict[str, Any], named: str
) -> None:
    """Regression: these used to fail only after the create (the job left running, or,
    for a broken connection, an error blaming ``resource_pool_id``)."""
    with pytest.raises(AIHCValidationError) as refused:  # when made (literal) or run
        AIHCCreateJobOperator(
            task_id="train", image="i", command="c", wait_for_completion=True, **params
        ).execute(task_context())
    assert [field for field, _ in refused.value.errors] == [named]
    assert total_requests(emulator) == 0


def test_waiting_parameters_are_not_checked_when_nothing_waits(emulator: EmulatorServer) -> None:
    operator = AIHCCreateJobOperator(
        task_id="train", image="i", command="c", poll_interval=0, timeout="x"
    )
    assert operator.execute(task_context())
    assert emulator.backend.count("CreateJob", 200) == 1


def test_an_undefined_connection_is_refused_by_name_before_sending(
    emulator: EmulatorServer,
) -> None:
    """A missing connection fails without retries (it was Airflow's own
    ``AirflowNotFoundException``, which the task retried)."""
    operator = AIHCCreateJobOperator(
        task_id="train", image="i", command="c", aihc_conn_id="aihc_nowhere"
    )
    with pytest.raises(AIHCValidationError, match="aihc_nowhere") as raised:
        operator.execute(task_context())
    assert [field for field, _ in raised.value.errors] == ["aihc_conn_id"]
    assert total_requests(emulator) == 0


@pytest.mark.parametrize("field", ["image", "command"])
def test_a_blank_image_or_command_is_refused_before_sending(
    emulator: EmulatorServer, field: str
) -> None:
    params = {"image": "busybox", "command": "true", field: "  \n"}
    with pytest.raises(AIHCValidationError, match=field):
        AIHCCreateJobOperator(task_id="train", **params).execute(task_context())
    assert total_requests(emulator) == 0


def test_body_naming_a_missing_json_file_fails_at_rendering_before_sending(
    emulator: EmulatorServer,
) -> None:
    import jinja2

    operator = AIHCCreateJobOperator(task_id="train", body="no/such/job.json")
    with pytest.raises(AIHCValidationError, match=r"body: .*no/such/job\.json"):
        operator.render_template_fields({}, jinja2.Environment(loader=jinja2.FileSystemLoader(".")))
    assert total_requests(emulator) == 0


# -- the sensor --------------------------------------------------------------------------------

IDS = st.one_of(
    st.text(max_size=24),
    st.sampled_from(
        ["", " ", ".", "..", "a/b", "../resourcepools", "a\\b", "%2F", "%2e%2e", "?x=1", "#", "x y"]
    ),
    st.just("<real>"),
)
POOLS = st.one_of(
    st.none(),
    st.just(POOL),
    st.sampled_from(["a/b", "..", "", " ", "pool-unknown"]),
    st.text(max_size=8),
)


@settings(BASE, max_examples=300)
@given(job_id=IDS, pool=POOLS)
def test_sensor_ids_are_refused_by_name_or_reach_only_their_own_job(
    emulator: EmulatorServer, job_id: str, pool: str | None
) -> None:
    backend = emulator.backend
    backend.reset()
    if job_id == "<real>":
        body = {"name": "watched", "jobSpec": {"image": "i", "command": "c"}}
        job_id = backend.create_job(POOL, body)
    FIGURES["bad input: sensor job_id/resource_pool_id pairs tried"] += 1
    sensor = AIHCJobSensor(
        task_id="watch", job_id=job_id, resource_pool_id=pool, poke_interval=0.01, timeout=1
    )
    error: AIHCError | None = None
    try:
        sensor.poke(task_context())
    except AIHCError as raised:
        error = raised
    if error is None:
        event("watched")
    elif total_requests(emulator):
        event("sent, AIHC answered with an error")
    else:
        event("refused, nothing sent")
        assert "job_id" in str(error) or "resource_pool_id" in str(error), error
    for record in backend.requests:
        assert record.operation in ("GetJob", "GetJobEvents", "GetPodLogs"), record
        segments = record.path.split("/")
        assert segments[:4] == ["", "api", "v1", "aijobs"], record
        assert len(segments) == 5 or record.operation != "GetJob", record


@pytest.mark.parametrize("job_id", ["", "a/b", ".."])
def test_sensor_bad_job_id_is_a_validation_error(emulator: EmulatorServer, job_id: str) -> None:
    sensor = AIHCJobSensor(task_id="watch", job_id=job_id, poke_interval=0.01, timeout=1)
    with pytest.raises(AIHCValidationError, match="job_id"):
        sensor.poke(task_context())
    assert total_requests(emulator) == 0


def test_sensor_soft_fail_does_not_hide_a_malformed_job_id(emulator: EmulatorServer) -> None:
    sensor = AIHCJobSensor(task_id="watch", job_id="a/b", soft_fail=True, poke_interval=0.01)
    with pytest.raises(AIHCError):
        sensor.poke(task_context())

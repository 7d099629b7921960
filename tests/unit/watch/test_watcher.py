"""The pool watcher behind AIHCJobTrigger, over real sockets against the emulator: hundreds
of triggers in several pools and queues, jobs finishing, failing and vanishing, pages
failing, triggers cancelled mid-wait, two event loops."""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aihc_jobs import job_body

from airflow_provider_aihc.emulator.server import EmulatorServer
from airflow_provider_aihc.emulator.state.jobs import Progression
from airflow_provider_aihc.emulator.state.pools import Pool, Queue
from airflow_provider_aihc.emulator.steering import scenarios
from airflow_provider_aihc.hooks.aihc import AIHCHook, shared_async_hook
from airflow_provider_aihc.triggers.aihc import AIHCJobTrigger
from airflow_provider_aihc.watch import JobEvent
from airflow_provider_aihc.watch import watcher as watcher_module
from airflow_provider_aihc.watch.watcher import PoolWatcher, running_watchers, subscribe

POOL_A, POOL_B = "cce-emulator0", "cce-emulator1"
CONN = "aihc_default"


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorServer]:
    """Two self-managed pools (A: queues ``default`` and ``research``; B: ``default``);
    jobs move only when told; ``aihc_default`` without hook retries, so that every fault
    reaches the watcher."""
    pools = (
        Pool(POOL_A, "pool-a", queues=(Queue("default"), Queue("research"))),
        Pool(POOL_B, "pool-b"),
    )
    server = EmulatorServer(progression=Progression.manual(), pools=pools).start()
    connection = server.connection(resource_pool_id=POOL_A, max_retries=0)
    monkeypatch.setenv("AIRFLOW_CONN_AIHC_DEFAULT", connection.json)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def rounds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, float]]:
    """Every watcher round: (pool, jobs watched, loop time at its start)."""
    seen: list[tuple[str, int, float]] = []
    original = PoolWatcher.read_round

    async def spy(self: PoolWatcher) -> None:
        seen.append((self.pool, len(self.job_ids), asyncio.get_running_loop().time()))
        await original(self)

    monkeypatch.setattr(PoolWatcher, "read_round", spy)
    return seen


def make_jobs(server: EmulatorServer, pool: str, prefix: str, n: int, **body: Any) -> list[str]:
    """``n`` jobs created straight in the backend, set ``Running``; their ids."""
    ids = []
    for i in range(n):
        created = server.backend.create_job(pool, job_body(f"{prefix}-{i}", **body))
        server.backend.set_status(created, "Running")
        ids.append(created)
    return ids


async def fire(trigger: AIHCJobTrigger) -> tuple[JobEvent, float]:
    """The trigger's one event and when it came."""
    async for event in trigger.run():
        return JobEvent.from_payload(event.payload), time.time()
    raise AssertionError("the trigger ended without an event")


def start(
    ids: list[tuple[str, str]], poll: float = 0.2, **kwargs: Any
) -> dict[str, asyncio.Task[tuple[JobEvent, float]]]:
    """One trigger task per (pool, job id)."""
    return {
        job_id: asyncio.ensure_future(
            fire(AIHCJobTrigger(job_id, pool, poll_interval=poll, stream_logs=False, **kwargs))
        )
        for pool, job_id in ids
    }


async def until(condition: Callable[[], bool], within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def more_rounds(rounds: list[tuple[str, int, float]], n: int) -> None:
    """Wait until ``n`` more watcher rounds have started."""
    target = len(rounds) + n
    await until(lambda: len(rounds) >= target, within=60)


async def test_hundreds_of_jobs_in_two_pools_and_three_queues_end_as_their_jobs_did(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    backend = emulator.backend
    make_jobs(emulator, POOL_A, "other", 120)  # older jobs nobody watches
    watched = [(POOL_A, j) for j in make_jobs(emulator, POOL_A, "a", 150)]
    watched += [(POOL_A, j) for j in make_jobs(emulator, POOL_A, "r", 60, queue="research")]
    watched += [(POOL_B, j) for j in make_jobs(emulator, POOL_B, "b", 90)]
    tasks = start(watched)
    await until(lambda: len(rounds) >= 4)  # every trigger joined and was read
    assert set(running_watchers()) == {(CONN, POOL_A, None), (CONN, POOL_B, None)}
    expected: dict[str, tuple[str, str | None, str | None]] = {}
    for i, (pool, job_id) in enumerate(watched):
        kind = i % 5
        if kind == 0:
            backend.set_status(job_id, "Failed", reason=f"CUDA out of memory on rank {i}")
            expected[job_id] = ("failed", "Failed", f"CUDA out of memory on rank {i}")
        elif kind == 1:
            backend.delete_job(pool, job_id)
            expected[job_id] = ("error", None, None)
        elif kind == 2:
            backend.set_status(job_id, "ManualTermination")
            expected[job_id] = ("failed", "ManualTermination", None)
        else:
            backend.set_status(job_id, "Succeeded")
            expected[job_id] = ("success", "Succeeded", None)
        if i == len(watched) // 2:  # the other half ends two rounds later
            await more_rounds(rounds, 2)
    events = {job_id: (await task)[0] for job_id, task in tasks.items()}

    for job_id, event in events.items():
        status, job_status, reason = expected[job_id]
        assert (event.status, event.job_id) == (status, job_id)
        if status == "error":
            assert "JobNotFound" in event.message, event.message
            continue
        assert event.job_status == job_status
        if reason is not None:
            assert event.reason == reason
    assert running_watchers() == {}
    # One ListJobs page per 100 watched jobs a round (3 in pool A, 1 in pool B); GetJob
    # once per job that did not succeed: the pods' reasons of the failed and stopped ones,
    # the one look of the deleted ones; a deletion between two pages of a round shifts
    # the later pages up, and a job it skips gets one GetJob too.
    job_rounds = sum(n for _, n, _ in rounds)
    assert 60 + 60 + 60 <= backend.count("GetJob") <= 60 + 60 + 60 + 60
    assert backend.count("ListJobs") <= 4 * (len(rounds) // 2 + 1)
    assert backend.count("ListJobs") / job_rounds <= 0.05, (backend.count("ListJobs"), job_rounds)
    assert backend.count("StopJob") == 0


async def test_pages_stop_once_every_job_is_seen_and_an_old_job_is_read_alone(
    emulator: EmulatorServer,
) -> None:
    emulator.backend.clock = lambda: time.time() - 3600  # created an hour before the rest
    old = make_jobs(emulator, POOL_A, "old", 1)
    emulator.backend.clock = time.time
    make_jobs(emulator, POOL_A, "other", 450)
    new = make_jobs(emulator, POOL_A, "new", 20)
    hook = shared_async_hook(CONN)
    subscriptions = [subscribe(hook, POOL_A, job_id, 0.1) for job_id in old + new]
    first = await asyncio.gather(*(s.next() for s in subscriptions))
    assert [getattr(reading, "status", reading) for reading in first] == ["Running"] * 21
    for _ in range(3):  # three more rounds, each awaited to its end
        assert await subscriptions[0].next(fresh=True) is not None
    for subscription in subscriptions:
        subscription.close()
    # Round 1 reads its budget (1 + 3 pages) looking for the old job, then GetJobs it; the
    # later rounds read page 1 only (the 20 new jobs) and GetJob the old job directly.
    assert emulator.backend.count("ListJobs") == 4 + 3
    assert emulator.backend.count("GetJob") == 4
    assert running_watchers() == {}


async def test_jobs_older_than_the_pages_are_listed_again_once_more_triggers_join(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.backend.clock = lambda: time.time() - 3600
    deep = make_jobs(emulator, POOL_A, "deep", 2)
    emulator.backend.clock = time.time
    rest = make_jobs(emulator, POOL_A, "rest", 798)
    hook = shared_async_hook(CONN)

    # Rounds on demand only: round 2 when the late ones join (their shorter interval wakes
    # the watcher), none of its own in between or after, however slowly this test resumes
    # on a loaded machine (it once counted round 3's first page).
    async def on_demand(self: PoolWatcher, started: float) -> None:
        self._wake.clear()
        await self._wake.wait()

    monkeypatch.setattr(PoolWatcher, "_pause", on_demand)
    early = [subscribe(hook, POOL_A, job_id, 0.2) for job_id in deep + rest[-5:]]
    await asyncio.gather(*(s.next() for s in early))
    # Round 1: a budget of 1 + 3 pages; 2 jobs left and 4 pages to go: two GetJobs.
    assert (emulator.backend.count("ListJobs"), emulator.backend.count("GetJob")) == (4, 2)
    late = [subscribe(hook, POOL_A, job_id, 0.1) for job_id in rest[:-5]]
    await asyncio.gather(*(s.next() for s in late))  # round 2: 800 jobs, 8 + 3 pages
    # The deep jobs are on page 8 and are read there, not by GetJob.
    assert (emulator.backend.count("ListJobs"), emulator.backend.count("GetJob")) == (4 + 8, 2)
    for subscription in early + late:
        subscription.close()


async def test_past_the_budget_pages_are_read_on_while_cheaper_than_a_getjob_each(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = make_jobs(emulator, POOL_A, "start", 1000)
    hook = shared_async_hook(CONN)
    # A triggerer start: 150 jobs spread over all 10 pages (budget 2 + 3): reading the 5
    # pages past the budget costs less than 150 * 5 / 10 GetJobs. On a loaded machine the
    # triggers may join over more than one round, so the pages are counted per round.
    pages: list[tuple[int, int]] = []  # (jobs watched at its start, pages the round read)
    original = PoolWatcher.read_round

    async def counting(self: PoolWatcher) -> None:
        before = emulator.backend.count("ListJobs")
        watched = len(self.job_ids)
        await original(self)
        pages.append((watched, emulator.backend.count("ListJobs") - before))

    monkeypatch.setattr(PoolWatcher, "read_round", counting)
    subscriptions = [subscribe(hook, POOL_A, job_id, 0.1) for job_id in ids[::7][:150]]
    await asyncio.gather(*(s.next() for s in subscriptions))
    assert emulator.backend.count("GetJob") == 0
    # The first round read every page, past the budget, and no job was read one by one;
    # a later round that began before the last answers arrived may read a page more.
    assert pages[0][1] == 10, pages
    for subscription in subscriptions:
        subscription.close()


async def test_the_shortest_interval_paces_the_watcher_and_leaves_with_its_trigger(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    slow_id, fast_id = make_jobs(emulator, POOL_A, "pace", 2)
    hook = shared_async_hook(CONN)
    slow = subscribe(hook, POOL_A, slow_id, 30.0)
    assert await slow.next() is not None  # round 1
    [watcher] = running_watchers().values()
    assert watcher.interval == 30.0
    fast = subscribe(hook, POOL_A, fast_id, 0.1)  # wakes the 30 s pause
    assert await fast.next() is not None
    assert await fast.next(fresh=True) is not None
    assert len(rounds) >= 3
    assert rounds[-1][2] - rounds[0][2] < 5.0
    fast.close()
    assert watcher.interval == 30.0
    slow.close()
    assert running_watchers() == {}


async def test_failing_pages_back_off_the_watcher_and_only_a_deadline_ends_a_trigger(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    ids = make_jobs(emulator, POOL_A, "bumpy", 150)  # two pages a round
    emulator.backend.add_fault(
        scenarios.error(503, operation="ListJobs"),
        scenarios.throttle(0.8, operation="ListJobs"),
        scenarios.malformed(operation="ListJobs"),
        scenarios.drop_before(operation="ListJobs"),
    )
    tasks = start([(POOL_A, j) for j in ids[1:]], poll=0.1)
    short = start([(POOL_A, ids[0])], poll=0.1, deadline=time.time() + 1.0)
    await until(lambda: len(rounds) >= 6)  # four failed rounds, then answers
    assert emulator.backend.count("ListJobs", 200) > 0
    for job_id in ids:
        emulator.backend.set_status(job_id, "Succeeded")
    events = [(await task)[0] for task in tasks.values()]
    timed_out, _ = await short[ids[0]]

    assert {event.status for event in events} == {"success"}
    assert (timed_out.status, timed_out.stopped) == ("timeout", True)
    gaps = [b[2] - a[2] for a, b in itertools.pairwise(rounds)]
    # 503: 0.1 s; 429 Retry-After 0.8 s: 0.8 s; garbled: 0.4 s; dropped: 0.8 s (doubling)
    assert gaps[0] >= 0.09
    assert gaps[1] >= 0.75
    assert gaps[2] >= 0.35
    assert gaps[3] >= 0.75
    # No trigger polled on its own, and the watcher read no job whose triggers had left
    # (a round that began before the jobs' triggers left once sent a GetJob for each of the
    # 49 on page 2): a GetJob only in a round that watched one job alone, if any.
    lone_rounds = sum(1 for _, watched, _ in rounds if watched == 1)
    assert emulator.backend.count("GetJob") == lone_rounds


async def test_a_first_wait_ends_with_the_first_round_even_when_that_round_read_nothing(
    emulator: EmulatorServer,
) -> None:
    """A subscription's first ``next`` waits for the first round that tries its job,
    whatever ``at_most`` says, and that round ends it even when it could not read the job
    (``None``): a trigger with a deadline is not held past it by an AIHC failing from the
    start.  (The round's end wakes only such first waits; every other wait is woken by a
    reading as it arrives.)"""
    ids = make_jobs(emulator, POOL_A, "first", 2)  # two jobs: listed, not read one by one
    emulator.backend.add_fault(scenarios.error(503, operation="ListJobs"))
    hook = shared_async_hook(CONN)
    subscriptions = [subscribe(hook, POOL_A, job_id, 0.1) for job_id in ids]
    try:
        first = await asyncio.wait_for(
            asyncio.gather(*(s.next(at_most=0.0) for s in subscriptions)), 10
        )
        # (Each wait resumes in the loop's turn after the round's end, before the next
        # round's backoff timer can fire: a later reading cannot have taken its place.)
        assert first == [None, None]
        assert emulator.backend.count("ListJobs", 503) == 1
        second = await asyncio.wait_for(asyncio.gather(*(s.next() for s in subscriptions)), 10)
        assert [getattr(reading, "status", reading) for reading in second] == ["Running"] * 2
    finally:
        for subscription in subscriptions:
            subscription.close()


async def test_a_trigger_cancelled_mid_wait_leaves_the_watcher_serving_the_others(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    ids = make_jobs(emulator, POOL_A, "sweep", 40)
    tasks = start([(POOL_A, j) for j in ids])
    await until(lambda: len(rounds) >= 2)
    for job_id in ids[:10]:
        tasks[job_id].cancel()
    await asyncio.gather(*(tasks[j] for j in ids[:10]), return_exceptions=True)
    [watcher] = running_watchers().values()
    assert sorted(watcher.job_ids) == sorted(ids[10:])
    for job_id in ids:
        emulator.backend.set_status(job_id, "Succeeded")
    events = [(await tasks[j])[0] for j in ids[10:]]
    assert [event.status for event in events] == ["success"] * 30
    assert all(tasks[j].cancelled() for j in ids[:10])
    assert emulator.backend.count("StopJob") == 0
    assert running_watchers() == {}
    cancelled_job = emulator.backend.job(ids[0])
    assert cancelled_job["status"] == "Succeeded"


def test_two_event_loops_have_their_own_watchers_and_hooks(emulator: EmulatorServer) -> None:
    groups = [make_jobs(emulator, POOL_A, f"loop{n}", 20) for n in range(2)]
    seen: list[tuple[int, int]] = []
    results: list[list[str]] = []
    lock = threading.Lock()

    async def main(ids: list[str]) -> None:
        tasks = start([(POOL_A, j) for j in ids])
        await until(lambda: bool(running_watchers()))
        with lock:
            [watcher] = running_watchers().values()
            seen.append((id(watcher), id(shared_async_hook(CONN))))
        done = [(await task)[0].status for task in tasks.values()]
        with lock:
            results.append(done)

    threads = [threading.Thread(target=asyncio.run, args=(main(ids),)) for ids in groups]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(seen) < 2:  # both loops have their watcher
        assert time.monotonic() < deadline, "the two watchers did not start"
        time.sleep(0.01)
    for job_id in groups[0] + groups[1]:
        emulator.backend.set_status(job_id, "Succeeded")
    for thread in threads:
        thread.join(30)
    assert sorted(map(len, results)) == [20, 20]
    assert {status for done in results for status in done} == {"success"}
    (watcher_1, hook_1), (watcher_2, hook_2) = seen
    assert watcher_1 != watcher_2
    assert hook_1 != hook_2


async def test_live_logs_read_once_per_poll_and_status_events_never_wait_for_them(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    emulator.backend.progression = Progression.by_time(1e9)  # logs grow, statuses hold
    ids = make_jobs(emulator, POOL_A, "talky", 30)
    poll = 0.3
    started = time.time()
    tasks = {
        job_id: asyncio.ensure_future(
            fire(AIHCJobTrigger(job_id, POOL_A, poll_interval=poll, stream_logs=True))
        )
        for job_id in ids
    }
    # A few polls with logs growing: every job's log read twice.
    await until(lambda: emulator.backend.count("GetPodLogs") >= 2 * len(ids), within=60)
    for job_id in ids:
        emulator.backend.set_status(job_id, "Succeeded")
    events = {job_id: await task for job_id, task in tasks.items()}
    elapsed = time.time() - started

    # (No bound on each event's delay in seconds: a loaded machine stretches it. The
    # request counts below hold the design: logs once a poll, statuses from the pages.)
    assert {event.status for event, _ in events.values()} == {"success"}
    # One read per poll while running, one on the final status; GetJob once for the pods
    # and once for the env (to mask the job's secrets in its lines).
    assert emulator.backend.count("GetPodLogs") <= len(ids) * (elapsed / poll + 2)
    assert emulator.backend.count("GetJob") == 2 * len(ids)
    # One page a round; the last round may be cancelled before its page is asked (the
    # last trigger left as it began), never another one.
    assert len(rounds) - 1 <= emulator.backend.count("ListJobs") <= len(rounds)


async def test_a_watcher_that_breaks_fails_its_triggers_instead_of_hanging(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = make_jobs(emulator, POOL_A, "bug", 3)

    async def broken(self: AIHCHook, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(AIHCHook, "alist_job_page", broken)
    monkeypatch.setattr(AIHCHook, "aget_job_status_item", broken)  # a lone job's round too
    tasks = start([(POOL_A, j) for j in ids])
    events = [(await task)[0] for task in tasks.values()]
    assert [event.status for event in events] == ["error"] * 3
    assert all("a bug" in event.message for event in events)
    assert running_watchers() == {}


@pytest.fixture(autouse=True)
def no_watcher_outlives_its_triggers() -> Iterator[None]:
    """After each test of this module, in any order: no loop's registry holds a watcher
    (registries left by a test that failed before are not this test's)."""
    before = {id(loop) for loop, watchers in watcher_module._WATCHERS.items() if watchers}
    yield
    left = [
        watchers
        for loop, watchers in watcher_module._WATCHERS.items()
        if watchers and id(loop) not in before
    ]
    assert left == []


async def test_one_watcher_per_pool_and_queue_each_listing_its_own_queue(
    emulator: EmulatorServer, rounds: list[tuple[str, int, float]]
) -> None:
    """Triggers that know their job's queue share a watcher per (pool, queue): its list
    and its GetJobs name that queue (what a managed pool needs: its queue's id)."""
    default = make_jobs(emulator, POOL_A, "d", 3)
    research = make_jobs(emulator, POOL_A, "r", 2, queue="research")
    queues = {**dict.fromkeys(default, "default"), **dict.fromkeys(research, "research")}
    tasks = {
        job_id: asyncio.ensure_future(
            fire(AIHCJobTrigger(job_id, POOL_A, poll_interval=0.1, stream_logs=False,
                                job_queue=queue))
        )
        for job_id, queue in queues.items()
    }  # fmt: skip
    await until(lambda: sum(len(w.job_ids) for w in running_watchers().values()) == 5)
    assert set(running_watchers()) == {(CONN, POOL_A, "default"), (CONN, POOL_A, "research")}
    for watcher in running_watchers().values():
        assert sorted(watcher.job_ids) == sorted(j for j, q in queues.items() if q == watcher.queue)
    for job_id in queues:
        emulator.backend.set_status(job_id, "Succeeded")
    events = {job_id: (await task)[0] for job_id, task in tasks.items()}
    assert {e.status for e in events.values()} == {"success"}
    assert {e.job_queue for e in events.values()} == {"default", "research"}
    assert running_watchers() == {}


async def test_a_trigger_wakes_when_the_page_holding_its_job_arrives_not_after_the_round(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 10,000 jobs a round reads a hundred pages: a trigger whose job changed on the
    first one must not wait for the ninety-nine others (issue #37, event delay p99)."""
    ids = make_jobs(emulator, POOL_A, "paged", 150)  # two pages a round, newest first
    answered: list[int] = []
    original = AIHCHook.alist_job_page

    async def spy(self: AIHCHook, pool: str, *args: Any, page_no: int, **kwargs: Any) -> Any:
        page = await original(self, pool, *args, page_no=page_no, **kwargs)
        answered.append(page_no)
        return page

    monkeypatch.setattr(AIHCHook, "alist_job_page", spy)
    hook = shared_async_hook(CONN)
    subscriptions = [subscribe(hook, POOL_A, job_id, 1.0) for job_id in ids]
    try:
        await asyncio.gather(*(s.next() for s in subscriptions))  # round 1; a 1 s pause now
        newest = subscriptions[-1]
        emulator.backend.add_fault(
            scenarios.passthrough(operation="ListJobs"),  # page 1 answers at once
            scenarios.delay(3.0, operation="ListJobs"),  # page 2 three seconds late
        )
        emulator.backend.set_status(newest.job_id, "Succeeded")
        answered.clear()
        reading = await newest.next()
        assert reading is not None
        assert not isinstance(reading, Exception)
        assert reading.status == "Succeeded"
        assert answered == [1], answered  # woken before page 2 was answered
        await until(lambda: 2 in answered)  # (a request cut off would leave the server's)
    finally:
        for subscription in subscriptions:
            subscription.close()


async def test_a_page_is_let_go_before_the_next_one_is_read(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held through the next page's request and decoding, every page's readings were
    promoted to the oldest generation: at 10,000 jobs a full collection every round or
    two (issue #37)."""
    ids = make_jobs(emulator, POOL_A, "held", 150)  # two pages a round
    pages: list[Any] = []
    held_at_next: list[int] = []
    original = AIHCHook.alist_job_page

    async def spy(self: AIHCHook, pool: str, *args: Any, page_no: int, **kwargs: Any) -> Any:
        if pages:  # references to the page before: this list's, and getrefcount's own
            held_at_next.append(sys.getrefcount(pages[-1]) - 2)
        page = await original(self, pool, *args, page_no=page_no, **kwargs)
        pages.append(page)
        return page

    monkeypatch.setattr(AIHCHook, "alist_job_page", spy)
    hook = shared_async_hook(CONN)
    subscriptions = [subscribe(hook, POOL_A, job_id, 1.0) for job_id in ids]
    try:
        await asyncio.gather(*(s.next() for s in subscriptions))
    finally:
        for subscription in subscriptions:
            subscription.close()
    assert held_at_next[:1] == [0]


async def test_jobs_whose_triggers_left_mid_page_are_looked_for_no_more_in_that_round(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The jobs of page 2 stop being watched while page 1 is on its way: the round ends
    with page 1, without reading page 2 for them or sending a GetJob each."""
    ids = make_jobs(emulator, POOL_A, "leaving", 150)  # page 1 the newest 100, page 2 the rest
    asked: list[int] = []
    original = AIHCHook.alist_job_page

    async def spy(self: AIHCHook, pool: str, *args: Any, page_no: int, **kwargs: Any) -> Any:
        asked.append(page_no)
        return await original(self, pool, *args, page_no=page_no, **kwargs)

    monkeypatch.setattr(AIHCHook, "alist_job_page", spy)
    hook = shared_async_hook(CONN)
    subscriptions = [subscribe(hook, POOL_A, job_id, 0.5) for job_id in ids]
    try:
        await asyncio.gather(*(s.next() for s in subscriptions))  # round 1: pages 1 and 2
        assert asked == [1, 2]
        emulator.backend.add_fault(scenarios.delay(1.0, operation="ListJobs"))
        asked.clear()
        await until(lambda: asked == [1])  # round 2's page 1 is on its way
        for subscription in subscriptions[:50]:  # the jobs of page 2
            subscription.close()
        await until(lambda: asked.count(1) == 2, within=10)  # round 3 began
        assert asked == [1, 1]
        assert emulator.backend.count("GetJob") == 0
    finally:
        for subscription in subscriptions:
            subscription.close()

"""The storm of ``make test-chaos``: kills, a PostgreSQL restart and emulator faults, on a
seeded schedule, with a process supervisor that starts what died again.

Nothing of the provider is told: the kills are SIGKILLs of whole process groups (the
component and every task process it forked), the faults are the emulator's own (its control
API), and the supervisor restarts a component as systemd would (``Restart=always``), after a
delay.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from api import Emulator
from services import Service, Services, wait_for

#: The components the storm kills; the API server, the DAG processor and the databases are
#: left to run (PostgreSQL is restarted once, in order).
VICTIMS = ("worker_a", "worker_b", "triggerer_a", "triggerer_b", "scheduler_a", "scheduler_b")
#: Seconds between two kills, and from a kill to the restart (drawn evenly).
KILL_GAP = (12.0, 24.0)
RESTART_DELAY = (3.0, 10.0)
#: Seconds between two emulator faults (drawn evenly), and the faults drawn, with weights:
#: 5xx and 429 answers, connections dropped before an answer, late answers (up to a few
#: seconds: the hook's read timeout is longer), and create answers lost after the job was
#: created (``drop_after`` of ``CreateJob``).
FAULT_GAP = (0.4, 1.2)
FAULT_KINDS: dict[str, tuple[float, dict[str, Any]]] = {
    "5xx": (0.30, {"kind": "error", "status": 503}),
    "429": (0.25, {"kind": "throttle", "retry_after": 1}),
    "dropped connection": (0.15, {"kind": "drop_before"}),
    "slow answer": (0.20, {"kind": "delay", "seconds": 3}),
    "lost create answer": (0.10, {"kind": "drop_after", "operation": "CreateJob"}),
}


@dataclass
class Record:
    """What the storm did: kills by component, faults by kind, processes that died alone."""

    seed: int
    kills: Counter[str] = field(default_factory=Counter)
    #: When each component stopped: killed, or found exited by itself (within a second).
    kill_times: list[tuple[str, float]] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    died_alone: Counter[str] = field(default_factory=Counter)
    restarts: Counter[str] = field(default_factory=Counter)
    postgres_restarted_at: float | None = None
    events: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def triggerer_stops(self) -> list[float]:
        """When a triggerer was killed or found exited (epoch seconds)."""
        return [when for name, when in self.kill_times if name.startswith("triggerer")]

    def log(self, started: float, what: str) -> None:
        """One line of the storm's schedule, printed and kept."""
        line = f"chaos: t={time.monotonic() - started:6.1f} s  {what}"
        with self.lock:
            self.events.append(line)
        print(line, flush=True)


class Storm:
    """Kills, restarts and faults until :meth:`stop`; everything drawn from one seed.

    :param services: the deployment's processes.
    :param emulator: the emulator's control API.
    :param seed: the seed of every random draw (printed: a failure reproduces with it).
    :param kills: how many kills, spread over ``seconds``.
    :param seconds: how long the storm lasts.
    :param postgres_at: seconds after the start when PostgreSQL restarts.
    """

    def __init__(
        self,
        services: Services,
        emulator: Emulator,
        seed: int,
        kills: int,
        seconds: float,
        postgres_at: float,
    ) -> None:
        self.services = services
        self.emulator = emulator
        self.record = Record(seed)
        self.kills = kills
        self.seconds = seconds
        self.postgres_at = postgres_at
        self.down: dict[str, float] = {}  # a killed component → when it may start again
        self.done = threading.Event()
        self.started = time.monotonic()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the kill schedule, the fault schedule and the supervisor."""
        self.started = time.monotonic()
        rng = random.Random(self.record.seed)
        kill_rng, fault_rng = random.Random(rng.random()), random.Random(rng.random())
        for target, args in (
            (self._kill_loop, (kill_rng,)),
            (self._fault_loop, (fault_rng,)),
            (self._supervise, ()),
        ):
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """End the storm: no more kills or faults; every component running again."""
        self.done.set()
        for thread in self._threads:
            thread.join(timeout=60)
        with self._lock:  # what is still down after a kill starts again now
            self.down = dict.fromkeys(self.down, 0.0)
        self._restart_dead()

    # ---- kills ------------------------------------------------------------------------

    def _kill_loop(self, rng: random.Random) -> None:
        gap = self.seconds / max(self.kills, 1)
        for n in range(self.kills):
            if self.done.wait(rng.uniform(gap * 0.6, gap * 1.4) if n else gap / 2):
                return
            due = self.postgres_at and time.monotonic() - self.started >= self.postgres_at
            if due and self.record.postgres_restarted_at is None:
                self._restart_postgres()
            with self._lock:
                up = [name for name in VICTIMS if name not in self.down]
            name = rng.choice(up)
            delay = rng.uniform(*RESTART_DELAY)
            service = self.services.get(name)
            with self._lock:
                self.down[name] = time.monotonic() + delay
            service.kill()
            with self.record.lock:
                self.record.kills[name] += 1
                self.record.kill_times.append((name, time.time()))
            self.record.log(self.started, f"SIGKILL {name} (restart in {delay:.0f} s)")

    def _restart_postgres(self) -> None:
        """Stop PostgreSQL (a fast shutdown: every connection cut) and start it again."""
        service = self.services.get("postgres")
        self.record.log(self.started, "PostgreSQL: fast shutdown")
        service.signal(signal.SIGINT)
        service.process.wait(timeout=60)
        time.sleep(2)
        self.services.restart(service)
        wait_for(lambda: "ready to accept connections" in service.log_tail(600), 60, "postgres")
        self.record.postgres_restarted_at = time.time()
        self.record.log(self.started, "PostgreSQL: accepting connections again")

    # ---- the supervisor ---------------------------------------------------------------

    def _supervise(self) -> None:
        while not self.done.wait(1.0):
            self._restart_dead()

    def _restart_dead(self) -> None:
        now = time.monotonic()
        for service in self._supervised():
            with self._lock:
                waiting = self.down.get(service.name)
                if waiting is not None and now < waiting:
                    continue
                killed = self.down.pop(service.name, None) is not None
            if service.alive():
                continue
            if not killed:
                with self.record.lock:
                    self.record.died_alone[service.name] += 1
                    self.record.kill_times.append((service.name, time.time()))
                self.record.log(self.started, f"{service.name} exited by itself")
            self.services.restart(service)
            with self.record.lock:
                self.record.restarts[service.name] += 1
            self.record.log(self.started, f"restarted {service.name}")

    def _supervised(self) -> Sequence[Service]:
        return [s for s in self.services.started if s.name not in ("postgres", "redis", "emulator")]

    # ---- emulator faults --------------------------------------------------------------

    def _fault_loop(self, rng: random.Random) -> None:
        names = list(FAULT_KINDS)
        weights = [FAULT_KINDS[name][0] for name in names]
        while not self.done.wait(rng.uniform(*FAULT_GAP)):
            name = rng.choices(names, weights)[0]
            try:
                self.emulator.fault(**FAULT_KINDS[name][1])
            except Exception as exc:  # the control API is not part of the storm
                self.record.log(self.started, f"could not queue a fault: {exc}")
                continue
            with self.record.lock:
                self.record.faults[name] += 1

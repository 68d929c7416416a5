"""Property tests of the pure queue policy (``sessions/queue_policy.py``).

A small simulated lane applies each decision the way ``LaneQueue`` does (drop from the
front, append; take from the front) while hypothesis draws arrivals, commands, the
worker asking for work, turns ending, ``/stop`` and time passing, in every mode, cap and
debounce. The invariants of the module docstring must hold after every step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beamclaw_core.sessions.queue_policy import (
    ActNow,
    Arrival,
    Debounce,
    Enqueue,
    HandOver,
    QueueMode,
    QueueState,
    Take,
    WaitForWork,
    Waiting,
    arrive,
    take,
)


@dataclass
class Lane:
    """What a lane does with the policy's decisions, and a ledger of every message."""

    mode: QueueMode
    cap: int
    debounce: float
    queued: list[Waiting] = field(default_factory=list[Waiting])
    turn_running: bool = False
    now: float = 0.0
    last_arrival: float = 0.0
    sent: list[str] = field(default_factory=list[str])
    taken: list[str] = field(default_factory=list[str])
    dropped: list[str] = field(default_factory=list[str])
    cleared: list[str] = field(default_factory=list[str])

    def state(self) -> QueueState:
        return QueueState(
            tuple(self.queued),
            self.turn_running,
            self.mode,
            self.cap,
            self.debounce,
            self.last_arrival,
        )

    def message(self, scheduled: bool = False) -> None:
        run_id = f"r{len(self.sent)}"
        self.sent.append(run_id)
        before = self.state()
        decision = arrive(before, Arrival(run_id))
        if isinstance(decision, HandOver):
            assert not before.turn_running and not before.queued, "hand-over only when idle"
            self.queued.append(Waiting(run_id, behind=False, scheduled=scheduled))
        else:
            assert isinstance(decision, Enqueue), "a message is never a command"
            assert before.busy, "queued only behind a turn or other runs"
            oldest = [w.run_id for w in before.queued[: len(decision.dropped)]]
            assert list(decision.dropped) == oldest, "the oldest are dropped, in order"
            assert decision.dropped or len(before.queued) < self.cap, "no drop below the cap"
            assert decision.interrupt == (self.mode == "interrupt" and before.turn_running)
            del self.queued[: len(decision.dropped)]
            self.dropped += decision.dropped
            self.queued.append(Waiting(run_id, behind=True, scheduled=scheduled))
            assert decision.position == len(self.queued)
        self.last_arrival = self.now
        assert len(self.queued) <= self.cap, "never more than cap queued"

    def scheduled(self) -> None:
        self.message(scheduled=True)

    def command(self) -> None:
        before = self.state()
        decision = arrive(before, Arrival("cmd", command="/status"))
        assert decision == ActNow("/status"), "commands act at once, never queue"

    def worker(self) -> None:
        if self.turn_running:
            return  # one turn at a time: the worker asks only when free
        before = self.state()
        decision = take(before, self.now)
        if isinstance(decision, WaitForWork):
            assert not self.queued
        elif isinstance(decision, Debounce):
            assert self.mode == "collect" and self.debounce > 0
            assert any(w.behind for w in self.queued), "only runs that waited are debounced"
            assert 0 < decision.seconds <= self.debounce
            assert decision.seconds == self.last_arrival + self.debounce - self.now
        else:
            assert isinstance(decision, Take)
            ids = [w.run_id for w in self.queued]
            kinds = {w.run_id: w.scheduled for w in self.queued}
            expected = ids if self.mode == "collect" else ids[:1]
            if self.mode == "collect" and kinds[ids[0]]:
                expected = ids[:1]
            elif self.mode == "collect":
                expected = ids[: next((n for n, i in enumerate(ids) if kinds[i]), len(ids))]
            assert list(decision.run_ids) == expected, "collect takes all; otherwise the first"
            taken_kinds = {kinds[i] for i in decision.run_ids}
            assert len(decision.run_ids) == 1 or taken_kinds == {False}, (
                "a scheduled run is never merged with another"
            )
            del self.queued[: len(decision.run_ids)]
            self.taken += decision.run_ids
            self.turn_running = True

    def turn_ends(self) -> None:
        self.turn_running = False

    def stop(self) -> None:
        self.cleared += [w.run_id for w in self.queued]
        self.queued.clear()

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def check_ledger(self) -> None:
        queued = [w.run_id for w in self.queued]
        parts = [self.taken, self.dropped, self.cleared, queued]
        everything = [run_id for part in parts for run_id in part]
        assert sorted(everything) == sorted(self.sent), "nothing lost, nothing twice"
        order = {run_id: i for i, run_id in enumerate(self.sent)}
        for part in parts:
            assert part == sorted(part, key=order.__getitem__), "FIFO: arrival order kept"


STEPS = st.sampled_from(
    ["message", "message", "scheduled", "command", "worker", "turn_ends", "stop", "wait"]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(),
    st.sampled_from(get_args(QueueMode)),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.lists(STEPS, max_size=40),
)
def test_decisions_keep_the_queue_invariants(
    data: st.DataObject, mode: QueueMode, cap: int, debounce: float, steps: list[str]
) -> None:
    lane = Lane(mode, cap, debounce)
    for step in steps:
        if step == "wait":
            lane.wait(data.draw(st.sampled_from([0.1, 0.4, 1.0, 2.0])))
        else:
            getattr(lane, step)()
        lane.check_ledger()


@given(st.sampled_from(get_args(QueueMode)), st.integers(1, 4), st.sampled_from([0.0, 1.0]))
def test_a_free_worker_drains_every_queue(mode: QueueMode, cap: int, debounce: float) -> None:
    # whatever is queued, the worker eventually takes it: after at most one debounce
    lane = Lane(mode, cap, debounce, turn_running=True)
    for _ in range(cap + 2):
        lane.message()
    lane.turn_ends()
    for _ in range(3 * cap + 3):
        decision = take(lane.state(), lane.now)
        if isinstance(decision, Debounce):
            lane.wait(decision.seconds)
        lane.worker()
        lane.turn_ends()
    assert not lane.queued
    lane.check_ledger()


def test_interrupt_needs_a_running_turn() -> None:
    queued = (Waiting("a", behind=True),)
    idle_but_queued = QueueState(queued, turn_running=False, mode="interrupt")
    running = QueueState(queued, turn_running=True, mode="interrupt")
    assert arrive(idle_but_queued, Arrival("b")) == Enqueue(position=2)
    assert arrive(running, Arrival("b")) == Enqueue(position=2, interrupt=True)


def test_a_debounce_waits_out_the_window_from_the_newest_arrival() -> None:
    state = QueueState(
        (Waiting("a", behind=True), Waiting("b", behind=True)),
        mode="collect",
        debounce=1.0,
        last_arrival=10.0,
    )
    assert take(state, 10.25) == Debounce(0.75)
    assert take(state, 11.0) == Take(("a", "b"))
    handed_over = QueueState((Waiting("a", behind=False),), mode="collect", debounce=1.0)
    assert take(handed_over, 0.0) == Take(("a",)), "a run handed to an idle lane waits for none"


def test_collect_never_merges_a_scheduled_run_into_peoples_messages() -> None:
    people_then_job = QueueState(
        (Waiting("a", True), Waiting("b", True), Waiting("job", True, scheduled=True)),
        mode="collect",
    )
    assert take(people_then_job, 0.0) == Take(("a", "b"))
    job_first = QueueState(
        (Waiting("job", True, scheduled=True), Waiting("a", True)), mode="collect", debounce=5.0
    )
    assert take(job_first, 0.0) == Take(("job",)), "taken alone, and at once"

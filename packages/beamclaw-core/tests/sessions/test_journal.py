"""The event journal: numbering, replay from a number, gaps and numbers from the future."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.loop import Notice, TextChunk
from beamclaw_core.sessions import FutureSequenceError, ReplayGapError
from beamclaw_core.sessions.journal import EventJournal
from beamclaw_core.sessions.publisher import LanePublisher


class SteppedClock:
    """A clock that moves by the given steps (seconds), then stays."""

    def __init__(self, start: float, steps: list[float]) -> None:
        self.now = start
        self.steps = list(steps)

    def __call__(self) -> float:
        if self.steps:
            self.now += self.steps.pop(0)
        return self.now


@given(
    steps=st.lists(st.sampled_from([0.0, 0.0, 1e-7, 1e-6, 0.5]), max_size=60),
    capacity=st.integers(min_value=0, max_value=8),
    events=st.integers(min_value=0, max_value=40),
)
def test_numbers_rise_and_replay_is_exactly_what_followed(
    steps: list[float], capacity: int, events: int
) -> None:
    journal = EventJournal("s", SteppedClock(1_700_000_000.0, steps), capacity)
    start = journal.last_seq
    stamped = [journal.stamp(TextChunk("s", "t", text=str(n))) for n in range(events)]
    seqs = [e.seq for e in stamped]
    assert seqs == sorted(set(seqs)) and all(s > start for s in seqs)
    for at in [start, *seqs]:
        if at < journal.floor:
            with pytest.raises(ReplayGapError):
                journal.since(at)
        else:
            assert journal.since(at) == [e for e in stamped if e.seq > at]
            assert [e.seq for e in journal.since(at)] == [s for s in seqs if s > at]
    kept = stamped[-capacity:] if capacity else []
    assert journal.since(journal.floor) == kept  # what a full ring can still give
    with pytest.raises(FutureSequenceError):
        journal.since(journal.last_seq + 1)


def test_a_later_life_of_the_lane_numbers_above_the_earlier_one() -> None:
    """No state survives: the clock has moved past every number the earlier life used."""
    clock = SteppedClock(1_700_000_000.0, [])
    first = EventJournal("s", clock, 4)
    last = [first.stamp(Notice("s", None, text="x")).seq for _ in range(100)][-1]
    clock.now += 0.001  # a lane rebuilt a millisecond later
    second = EventJournal("s", clock, 4)
    assert second.stamp(Notice("s", None, text="y")).seq > last
    with pytest.raises(ReplayGapError) as gap:  # what the earlier life published is gone
        second.since(last)
    assert "reload the history" in str(gap.value)


async def test_a_subscription_from_a_number_gets_the_rest_then_live_events() -> None:
    clock = SteppedClock(1_700_000_000.0, [])
    publisher = LanePublisher("s", buffer=16, clock=clock, replay=8)
    publisher.publish(TextChunk("s", "t1", text="a"))
    seen = publisher.last_seq
    publisher.publish(TextChunk("s", "t1", text="b"))
    publisher.publish(TextChunk("s", "t1", text="c"))
    sub = publisher.subscribe(after_seq=seen)
    publisher.publish(TextChunk("s", "t1", text="d"))
    sub.close()
    got = [e async for e in sub]
    assert [e.text for e in got if isinstance(e, TextChunk)] == ["b", "c", "d"]
    assert [e.seq for e in got] == sorted({e.seq for e in got})


def test_the_replay_ring_fits_in_a_subscribers_buffer() -> None:
    """A whole replay never overflows the subscription it is written into."""
    publisher = LanePublisher("s", buffer=4, clock=SteppedClock(1.0, []), replay=100)
    start = publisher.last_seq
    for n in range(10):
        publisher.publish(TextChunk("s", "t", text=str(n)))
    with pytest.raises(ReplayGapError):
        publisher.subscribe(after_seq=start)
    sub = publisher.subscribe(after_seq=publisher.journal.floor)
    assert not sub.lagging


def test_a_relayed_event_keeps_its_owners_number_once() -> None:
    owner = EventJournal("s", SteppedClock(1_700_000_000.0, []), 8)
    watcher = EventJournal("s", SteppedClock(1_699_999_999.0, []), 8)  # loaded earlier
    relayed = [owner.stamp(TextChunk("s", "t", text=str(n))) for n in range(3)]
    adopted = [watcher.adopt(e) for e in relayed]
    assert adopted == relayed and [e.seq for e in adopted if e] == [e.seq for e in relayed]
    assert watcher.adopt(relayed[1]) is None  # read twice: kept once
    assert watcher.since(relayed[0].seq) == relayed[1:]


def test_a_relayed_number_this_journal_passed_is_renumbered_not_lost() -> None:
    owner = EventJournal("s", SteppedClock(1_700_000_000.0, []), 8)
    early = owner.stamp(Notice("s", "t", text="early"))
    watcher = EventJournal("s", SteppedClock(1_700_000_100.0, []), 8)  # a clock ahead
    kept = watcher.adopt(early)
    assert kept is not None and kept.seq > early.seq and watcher.since(watcher.floor) == [kept]


def test_a_backfill_from_the_stream_lets_a_client_resume_with_the_owners_numbers() -> None:
    owner = EventJournal("s", SteppedClock(1_700_000_000.0, []), 8)
    relayed = [owner.stamp(TextChunk("s", "t", text=str(n))) for n in range(5)]
    other = EventJournal("s", SteppedClock(1_700_000_100.0, []), 8)  # loaded after them
    with pytest.raises(ReplayGapError):
        other.since(relayed[1].seq)
    other.backfill(relayed, complete=True)
    assert other.since(relayed[1].seq) == relayed[2:]
    assert other.since(relayed[0].seq - 1) == relayed
    later = owner.stamp(TextChunk("s", "t", text="later"))
    assert other.adopt(later) == later  # live ones follow, numbered the same


def test_a_partial_backfill_answers_only_from_its_first_number() -> None:
    owner = EventJournal("s", SteppedClock(1_700_000_000.0, []), 3)
    relayed = [owner.stamp(TextChunk("s", "t", text=str(n))) for n in range(6)]
    other = EventJournal("s", SteppedClock(1_700_000_100.0, []), 3)
    other.backfill(relayed[3:], complete=False)
    assert other.since(relayed[3].seq) == relayed[4:]
    with pytest.raises(ReplayGapError):
        other.since(relayed[2].seq)
    other.advance(relayed[-1].seq + 10)
    assert other.stamp(Notice("s", "t", text="n")).seq > relayed[-1].seq + 10

"""Where the leader's records must land for a write decided without reading to the end to be
committed (registry.store.kafka_frontier): pure rules, no broker."""

import pytest

from registry.store.base import WriteConflict
from registry.store.kafka_frontier import Frontier, check_landing, unread_before
from registry.store.kafka_reader import TopicReader


def test_records_right_after_the_read_end_follow_it() -> None:
    assert unread_before(Frontier(10), [10, 11, 12]) == range(0)


def test_records_right_after_our_own_commit_marker_follow_it() -> None:
    frontier = Frontier(10).committed()  # our records at 7, 8, 9, then the commit
    assert frontier == Frontier(10, marker=True)
    assert unread_before(frontier, [11]) == range(0)


def test_a_gap_names_the_offsets_to_read_before_committing() -> None:
    # offset 10 is our marker or someone's record: not known without reading it
    assert unread_before(Frontier(10, marker=True), [12]) == range(10, 12)
    assert unread_before(Frontier(10), [11, 12]) == range(10, 11)


def test_records_that_are_not_contiguous_or_below_the_frontier_never_follow_it() -> None:
    assert unread_before(Frontier(10), [10, 12]) is None  # someone wrote between ours
    assert unread_before(Frontier(10, marker=True), [9]) is None  # the log is not ours


def _no_reader(topic: str) -> TopicReader:
    raise AssertionError(f"the reader of {topic} was asked: it cannot pass our open transaction")


def test_records_apart_from_our_open_transaction_conflict_without_reading() -> None:
    # answered records end at 9 in an open transaction: the next write's must land at 10
    open_end = {"t": Frontier(10)}
    check_landing(open_end, {"t": [10, 11]}, {}, _no_reader, 0.0, open_topics={"t"})
    with pytest.raises(WriteConflict, match="open transaction"):
        check_landing(open_end, {"t": [11]}, {}, _no_reader, 0.0, open_topics={"t"})

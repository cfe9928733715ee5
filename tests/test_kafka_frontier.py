"""Where the leader's records must land for a write decided without reading to the end to be
committed (registry.store.kafka_frontier): pure rules, no broker."""

from registry.store.kafka_frontier import Frontier, after_commit, unread_before


def test_records_right_after_the_read_end_follow_it() -> None:
    assert unread_before(Frontier(10), [10, 11, 12]) == range(0)


def test_records_right_after_our_own_commit_marker_follow_it() -> None:
    frontier = after_commit([7, 8, 9])
    assert frontier == Frontier(10, marker=True)
    assert unread_before(frontier, [11]) == range(0)


def test_a_gap_names_the_offsets_to_read_before_committing() -> None:
    # offset 10 is our marker or someone's record: not known without reading it
    assert unread_before(Frontier(10, marker=True), [12]) == range(10, 12)
    assert unread_before(Frontier(10), [11, 12]) == range(10, 11)


def test_records_that_are_not_contiguous_or_below_the_frontier_never_follow_it() -> None:
    assert unread_before(Frontier(10), [10, 12]) is None  # someone wrote between ours
    assert unread_before(Frontier(10, marker=True), [9]) is None  # the log is not ours

"""Where the leader's next records must land for its decision to have seen everything before them.

A write on the Kafka store is decided on the state, then produced in a transaction. It may be
committed only if every record that is (or will be) committed at an offset below the write's
own records was applied to the state it was decided on: otherwise an id or a version can be
given twice, and applying our records first would skip the earlier ones for good (the state
ignores offsets at or below the last one it applied).

The leader used to make sure of it *before* deciding: a ListOffsets round trip for the high
watermark and a wait for the reader to get there; and *after* committing it waited for its own
records to come back through the reader (a read_committed fetch that waits for the commit
marker). Instead, the store checks *where its records landed* (the delivery reports give their
offsets before the commit is sent) against a :class:`Frontier`:

* ``end``: every committed data record below ``end`` has been applied to the state (the
  leader read the topic to its high watermark, or its own last commit ended there);
* ``marker``: the leader's last transaction wrote to this topic, so its commit marker (one
  control record, one offset) lies at or after ``end``.

If our records are contiguous and the first lands at ``end`` (``end + 1`` with a marker
pending), then nothing but our own marker lies between what the state holds and our records:
the decision saw every record before them, whoever else writes to the topic. This is an
argument from log positions, not from fencing. The facts of Kafka it rests on: offsets of a
partition are assigned in append order; a transaction marker takes exactly one offset; and a
producer's next transaction cannot add a partition (AddPartitionsToTxn answers
CONCURRENT_TRANSACTIONS) until the coordinator has written the previous transaction's markers,
so our marker precedes our next records. Otherwise :func:`unread_before` names the offsets to
look at: the store waits until its reader has read up to our first record (every transaction
before it decided) and commits only if none of those offsets held a committed data record the
decision did not see; if one did, it aborts and the registry decides the write again
(:class:`registry.store.base.WriteConflict`).

After a commit, our records are applied from the delivery reports (they directly follow what
the state holds), and the frontier moves to just after them with a marker pending.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaException

from registry import errors
from registry.store.base import WriteConflict
from registry.store.kafka_reader import TopicReader

#: longest wait for our last commit's markers before the next transaction (seconds)
MARKER_WAIT = 0.025


@dataclass(frozen=True)
class Frontier:
    """What the deciding state holds of one topic partition (see the module docstring)."""

    #: every committed data record below this offset has been applied to the state
    end: int
    #: the leader's last commit wrote here: its marker lies at or after ``end``
    marker: bool = False

    def expected(self) -> int:
        """Offset where our next record lands if nobody else wrote in between."""
        return self.end + 1 if self.marker else self.end

    def committed(self) -> Frontier:
        """This frontier once the transaction whose records end here is committed: the
        commit marker takes the next offset."""
        return Frontier(self.end, marker=True)


def unread_before(frontier: Frontier, offsets: Sequence[int]) -> range | None:
    """Offsets that may hold records the decision did not see, given where our records landed
    (``offsets``, ascending): an empty range when the records follow the frontier directly,
    the offsets between the frontier and our first record when something may lie in between,
    None when the records cannot follow a decision on this frontier (not contiguous, or below
    the frontier: the log is not what the state was built from)."""
    if not offsets:
        return range(0)
    first = offsets[0]
    if offsets[-1] - first != len(offsets) - 1:
        return None
    if first < frontier.end:
        return None
    if first == frontier.expected():
        return range(0)
    return range(frontier.end, first)


def check_landing(
    frontiers: Mapping[str, Frontier],
    landed: Mapping[str, Sequence[int]],
    applied_through: Mapping[str, int],
    reader_of: Callable[[str], TopicReader],
    deadline: float,
    *,
    open_topics: Collection[str] = (),
) -> None:
    """Raise :class:`WriteConflict` unless the decision saw every record committed before our
    records (``landed``: their offsets by topic, in the log, not committed yet).
    ``applied_through``: the last offset of each topic the decision's state was handed.
    ``open_topics``: topics where our records follow answered records of our own open
    transaction; the reader cannot read past that transaction's first record there, so
    records that do not follow the frontier directly are a conflict at once
    (``registry.store.kafka_txn``)."""
    for topic, offsets in landed.items():
        frontier = frontiers[topic]
        unread = unread_before(frontier, offsets)
        if unread is None:
            raise WriteConflict(
                f"records of this write landed at offsets {list(offsets[:10])} of {topic}, "
                f"not after offset {frontier.end}: another writer is writing to the topic"
            )
        if not unread:
            continue
        if topic in open_topics:
            raise WriteConflict(
                f"records of this write landed at offset {offsets[0]} of {topic}, not directly "
                f"after the open transaction's last record at {frontier.end - 1}: another "
                "writer is writing to the topic"
            )
        # every transaction before our first record decided and read (ours, still open, holds
        # the reader's last stable offset at our first record)
        reader = reader_of(topic)
        if not reader.wait_position(unread.stop, deadline, unbounded=True):
            raise errors.operation_timeout(
                f"Timed out reading {topic} up to offset {unread.stop} before committing"
            )
        seen = applied_through.get(topic, frontier.end - 1)
        missed = reader.offsets_between(max(unread.start, seen + 1), unread.stop)
        if missed:
            raise WriteConflict(
                f"records at offsets {missed[:10]} of {topic} were committed before this "
                f"write's records at {offsets[0]} and not read when it was decided"
            )


def await_markers(
    frontiers: Mapping[str, Frontier],
    topics: set[str],
    reader_of: Callable[[str], TopicReader],
    stop: float,
) -> None:
    """Right after a commit: let the coordinator finish writing its markers before the next
    transaction adds the partitions ``topics``. Until then AddPartitionsToTxn answers
    CONCURRENT_TRANSACTIONS and librdkafka waits a fixed 20 ms before asking again (back to
    back transactions, as group commit makes them, took 30 ms instead of 7 on this machine).
    The last stable offset passes our marker once it is written; asked until ``stop`` at most
    (then librdkafka's retry takes over). Speed only: nothing depends on it for safety."""
    for topic in topics:
        frontier = frontiers.get(topic)
        if frontier is None or not frontier.marker:
            continue
        reader = reader_of(topic)
        while reader.position <= frontier.end and time.monotonic() < stop:
            try:
                if reader.stable_end(max(0.1, stop - time.monotonic())) > frontier.end:
                    break
            except KafkaException:
                break
            time.sleep(0.0005)

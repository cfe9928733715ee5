"""A write whose transaction failed, settled within its deadline instead of answered 500.

The leader's transaction can fail on a transient fault: a produce or a commit that times out
while a broker stops or the transaction coordinator moves, a fencing after a (false) election.
The leader then drops its producer, and the next claim, its own or another instance's,
re-commits whatever of the failed transaction reached the log (``KafkaLogStore._aborted_tail``)
before anything else is written. So once that claim has committed, reading the topic to its end
tells for good whether the write took effect (:func:`outcome`):

* every record of it is committed after what the decision had seen: it did. The records read
  are handed to the registry as the write's own (it applies them and answers as it decided):
  a DELETE is answered once, never 404 for its own re-committed records;
* none is, and this instance leads again: :class:`WriteConflict`, the registry decides the
  write again on the new producer (within the first attempt's deadline);
* none is, and another instance leads: 50004 (nothing was written), which the forwarding
  sends on to the new leader, from a follower or from this instance;
* the claim did not come before the deadline, or only part of the records is there: the
  error the transaction failed with.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from registry import errors
from registry.records import Record
from registry.store.base import WriteConflict

if TYPE_CHECKING:
    from registry.store.kafka import KafkaLogStore, _KafkaTransaction

log = logging.getLogger(__name__)

#: a write whose transaction failed with one of these (its producer dropped) is settled:
#: a store error, a timeout, a fencing
SETTLED = frozenset({50001, 50002, 50004})

Item = tuple[str, bytes, bytes | None]


def outcome(staged: Sequence[Item], committed: Iterable[Item]) -> Literal["all", "none", "part"]:
    """Whether every one of ``staged`` (topic, key, value) is among ``committed`` (the
    records committed after what the write's decision had seen), none is, or only part."""
    wanted = Counter(staged)
    found = Counter(item for item in committed if item in wanted)
    if found >= wanted:
        return "all"
    return "part" if found else "none"


def settle_failed_write(
    store: KafkaLogStore,
    producer: Any,
    claim: int,
    txn: _KafkaTransaction,
    deadline: float,
    error: errors.RegistryError,
) -> list[Record]:
    """The records the write ``txn`` appended after all, or the error to answer (see the
    module docstring), once the transaction of ``producer`` (leading by the claim at
    ``claim``) failed and the producer was dropped. Called under the store's write lock,
    which it lets go while it waits for the next claim (a claim takes it)."""
    store._write_lock.release()
    try:
        mine = store._leadership.await_successor(producer, claim, deadline)
    finally:
        store._write_lock.acquire()
    topics = store.topics()
    if error.error_code == 50004:
        # whether the write's records will be committed is not known when this gives up: not
        # "not the leader", which a follower takes as "nothing written" and sends on
        error = errors.store_error(f"Error while writing to the store: {error.message}")
    if mine is None or any(topic not in txn.applied_through for topic in topics):
        raise error
    try:
        store._read_to_end(store._reader_of(topics[0]), deadline)
    except errors.RegistryError:
        raise error from None
    committed: list[Record] = []
    for topic in topics:
        committed.extend(store._reader_of(topic).read_after(txn.applied_through[topic]))
    staged = [(store._topic_of(key), key, value) for key, value in txn.staged]
    found = outcome(staged, ((store._topic_of(r.key), r.key, r.value) for r in committed))
    if found == "all":
        log.warning("a failed write's records were committed by the next claim: answered")
        return sorted(committed, key=lambda r: (not r.log, r.offset))
    if found == "part":
        raise error
    if not mine:
        raise errors.unknown_leader(
            f"This instance is no longer the leader (the write was not committed: {error})"
        )
    log.warning("a failed write was not committed: deciding it again (%s)", error.message)
    store.carry_deadline(deadline)
    raise WriteConflict(f"the write's transaction failed ({error.message}); deciding it again")

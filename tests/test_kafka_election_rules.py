"""The election's rules as pure functions (``registry.store.kafka_election``): when a member
claims, and when it must not (a broker outage, a claim under way, a live leader)."""

from __future__ import annotations

from registry.store.kafka_election import (
    CLAIM_KEY,
    HEARTBEAT_PREFIX,
    RESIGN_KEY,
    ElectionView,
    apply,
    encode,
    heartbeat_stalled,
    should_claim,
    successor,
)
from registry.store.kafka_settle import outcome

LEASE, BEAT = 1.5, 0.25
RULES = {"lease": LEASE, "heartbeat": BEAT, "rank_step": 2 * BEAT}


def feed(
    view: ElectionView, kind: bytes, member: str, at: float, offset: int, **kw: object
) -> None:
    key, value = encode(kind, member, f"http://{member}", **kw)  # type: ignore[arg-type]
    apply(view, key, value, offset, at, history=False, gap=3 * BEAT)


def beats(view: ElectionView, members: list[str], start: float, end: float, offset: int) -> int:
    t = start
    while t <= end:
        for member in members:
            feed(view, HEARTBEAT_PREFIX, member, t, offset)
            offset += 1
        t += BEAT
    return offset


def led_by_a(me: str = "b") -> tuple[ElectionView, int]:
    view = ElectionView(me, 0.0)
    feed(view, CLAIM_KEY, "a", 0.0, 0)
    return view, beats(view, ["a", "b", "c"], 0.0, 5.0, 1)


def test_a_live_leader_is_kept() -> None:
    view, _ = led_by_a()
    assert view.leader() == "a"
    assert not should_claim(view, 5.1, **RULES)


def test_a_silent_leader_is_replaced_by_rank() -> None:
    view, offset = led_by_a("b")
    beats(view, ["b", "c"], 5.25, 7.0, offset)  # a stopped at 5.0
    assert not should_claim(view, 6.4, **RULES)  # within the lease
    assert should_claim(view, 6.6, **RULES)  # b ranks first among b and c
    other, offset = led_by_a("c")
    beats(other, ["b", "c"], 5.25, 7.0, offset)
    assert not should_claim(other, 6.6, **RULES)  # c waits one rank step for b
    assert should_claim(other, 7.2, **RULES)


def test_no_election_during_a_broker_outage() -> None:
    view, offset = led_by_a()
    # nothing arrives from 5.0 to 20.0; then our own heartbeats come back before the leader's
    assert not should_claim(view, 20.0, **RULES)
    offset = beats(view, ["b", "c"], 20.0, 20.5, offset)
    assert not should_claim(view, 20.5, **RULES)  # the leader gets a lease to show up
    beats(view, ["a", "b", "c"], 20.75, 23.0, offset)
    assert not should_claim(view, 23.0, **RULES)


def test_after_a_broker_transition_the_leader_gets_two_leases() -> None:
    # every member's heartbeats stall at 5.0 (the election partition's leader stops); ours
    # come back at 6.0, the leader's producer is still looking for the new partition leader
    view, offset = led_by_a("b")
    offset = beats(view, ["b", "c"], 6.0, 9.0, offset)
    assert not should_claim(view, 7.6, **RULES)  # one lease: a kill -9 would be replaced now
    assert not should_claim(view, 7.9, **RULES)
    beats(view, ["a"], 7.9, 8.0, offset)  # it found it: no false election
    assert not should_claim(view, 9.0, **RULES)
    # a leader that does not come back is replaced after two leases of silence
    view, offset = led_by_a("b")
    beats(view, ["b", "c"], 6.0, 9.0, offset)
    assert should_claim(view, 8.1, **RULES)
    # a kill -9 without a broker transition: one lease (test_a_silent_leader_is_replaced_...)


def test_nobody_claims_over_a_claim_under_way() -> None:
    view, offset = led_by_a("c")
    offset = beats(view, ["b", "c"], 5.25, 6.5, offset)
    feed(view, HEARTBEAT_PREFIX, "b", 6.6, offset, claiming=True)
    beats(view, ["c"], 6.75, 8.0, offset + 1)
    assert not should_claim(view, 6.7, **RULES)  # (without b's claim: c's rank delay starts)
    assert not should_claim(view, 8.0, **RULES)  # and would be over by now


def test_a_resignation_lets_the_first_rank_claim_at_once() -> None:
    view, offset = led_by_a("b")
    feed(view, RESIGN_KEY, "a", 5.1, offset)
    assert view.leader() is None
    assert should_claim(view, 5.1, **RULES)


def test_a_newer_claim_names_the_leader_and_heartbeats_name_it_to_newcomers() -> None:
    view = ElectionView("n", 0.0)
    key, value = encode(HEARTBEAT_PREFIX, "a", "http://a", claim=7)
    apply(view, key, value, 40, 0.1, history=True, gap=3 * BEAT)
    assert (view.leader(), view.leader_url()) == ("a", "http://a")
    feed(view, CLAIM_KEY, "b", 0.2, 41)
    assert view.leader() == "b"
    feed(view, HEARTBEAT_PREFIX, "a", 0.3, 42, claim=7)  # an old leader's stale heartbeat
    assert view.leader() == "b"


def test_a_stalled_heartbeat_producer_looks_again_well_within_the_lease() -> None:
    # heartbeats every 0.25 s, the last delivered at 10.0: a producer stuck on a partition
    # leader that stopped answering asks for metadata again after three periods (0.75 s), long
    # before the lease (1.5 s) would let the followers elect another leader
    assert not heartbeat_stalled(10.5, 10.0, 0.0, BEAT)  # a slow answer is not a stall
    assert heartbeat_stalled(10.8, 10.0, 0.0, BEAT)
    # and again a period later while still stalled, not on every heartbeat
    assert not heartbeat_stalled(11.0, 10.0, 10.8, BEAT)
    assert heartbeat_stalled(11.6, 10.0, 10.8, BEAT)
    # a very short heartbeat does not make it ask on every loaded broker's slow answer
    assert not heartbeat_stalled(10.25, 10.0, 0.0, 0.02)


def test_a_failed_write_waits_for_the_next_claim_to_be_committed() -> None:
    view, offset = led_by_a("a")  # we are a, leading by the claim at offset 0
    assert successor(view, 0) is None
    feed(view, CLAIM_KEY, "b", 5.1, offset)  # b's claim record: its transaction may be open
    assert successor(view, 0) is None
    feed(view, HEARTBEAT_PREFIX, "b", 5.2, offset + 1, claim=offset)  # b names it: committed
    assert successor(view, 0) == "b"


def test_a_failed_write_took_effect_only_if_all_its_records_were_committed() -> None:
    staged = [("t", b"k1", b"v1"), ("t", b"k2", None)]
    assert outcome(staged, [("t", b"k0", b"x"), ("t", b"k1", b"v1"), ("t", b"k2", None)]) == "all"
    assert outcome(staged, [("t", b"k1", b"v1")]) == "part"
    assert outcome(staged, [("t", b"k1", b"other"), ("k", b"k2", None)]) == "none"
    assert outcome(staged * 2, staged) == "part"  # the same record twice is two records

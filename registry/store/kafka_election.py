"""The election topic: who leads, as every instance reads it (the rules as pure functions).

Every instance reads partition 0 of ``election.topic`` (``read_uncommitted``: a heartbeat must
never wait behind a transaction a dead leader left open) and writes three kinds of records to
it, JSON values keyed by kind:

* ``hb:<member>``: a heartbeat, every ``election.heartbeat.ms`` from a small plain producer:
  ``{"member", "url", "claim", "claiming"}``, ``claim`` the offset of the claim this member
  leads by (-1 when it follows). A newcomer therefore learns the leader from its heartbeats
  without reading the topic's history. ``claiming`` is true (sent at once) while a member is
  claiming: the others hold back instead of fencing it mid-claim.
* ``claim``: ``{"member", "url"}``, committed by a new leader in the first transaction of its
  transactional producer, right after ``init_transactions`` (shared ``transactional.id``)
  fenced every earlier producer. The latest claim names the leader.
* ``resign``: ``{"member"}``, committed by a leader that stops (SIGTERM): followers claim at
  once instead of waiting for the lease.

Safety does not depend on this topic: only the holder of the newest producer epoch of the shared
``transactional.id`` can commit, so two instances that both believe they lead cannot both
write. The topic gives liveness: a follower claims when the leader's heartbeats stopped for
``election.lease.ms`` *while its own heartbeats kept coming back* for as long (so a broker
outage, in which nobody's heartbeats arrive, elects nobody), after a delay by its rank among
the live members (so two followers do not claim at once). A claim record of a claimant fenced
before it committed is followed in the log by the claim of the instance that fenced it (its
``init_transactions`` came after our produce), so the latest claim in the log is the newest
epoch's, aborted or not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

HEARTBEAT_PREFIX = b"hb:"
CLAIM_KEY = b"claim"
RESIGN_KEY = b"resign"


@dataclass
class Claim:
    """The newest claim seen: its offset in the election topic, its member and URL."""

    offset: int
    member: str
    url: str | None


@dataclass
class ElectionView:
    """What one instance has read from the election topic. Times are ``time.monotonic()``
    of arrival here (never the writers' clocks)."""

    me: str
    started: float
    claim: Claim | None = None
    resigned: bool = False  # the latest claim's member resigned since
    #: member -> (arrival of its latest heartbeat, its URL)
    members: dict[str, tuple[float, str | None]] = field(default_factory=dict)
    #: arrival of our own latest heartbeat, and since when they arrive without a gap
    own_last: float = -1.0
    own_since: float = -1.0
    #: since when the condition to claim holds (for the rank delay)
    claimable_since: float | None = None
    #: member -> arrival of the first heartbeat of its current claim attempt
    claiming: dict[str, float] = field(default_factory=dict)
    #: the newest claim a live heartbeat named: a member names its claim in its heartbeats
    #: only once the claim's transaction committed (re-committed records included)
    confirmed: int = -1

    def leader(self) -> str | None:
        """The member the topic names as the leader (None: nobody, or it resigned)."""
        if self.claim is None or self.resigned:
            return None
        return self.claim.member

    def leader_url(self) -> str | None:
        if self.claim is None or self.resigned:
            return None
        return self.claim.url


def encode(
    kind: bytes, member: str, url: str | None, claim: int = -1, claiming: bool = False
) -> tuple[bytes, bytes]:
    """The key and value of one election record."""
    key = HEARTBEAT_PREFIX + member.encode() if kind == HEARTBEAT_PREFIX else kind
    body = {"member": member, "url": url, "claim": claim}
    if claiming:
        body["claiming"] = True
    return key, orjson.dumps(body)


def apply(
    view: ElectionView,
    key: bytes,
    value: bytes | None,
    offset: int,
    now: float,
    *,
    history: bool,
    gap: float,
) -> None:
    """Take one election record into ``view``. ``history``: read at start-up from before the
    end the topic had then (it names claims, but says nothing of who is alive now). ``gap``:
    own heartbeats further apart than this start a new run (``own_since``)."""
    try:
        body: dict[str, Any] = orjson.loads(value) if value else {}
    except orjson.JSONDecodeError:
        return
    member = str(body.get("member", ""))
    if not member:
        return
    url = body.get("url") if isinstance(body.get("url"), str) else None
    if key == CLAIM_KEY:
        _see_claim(view, Claim(offset, member, url))
    elif key == RESIGN_KEY:
        if view.claim is not None and view.claim.member == member and offset > view.claim.offset:
            view.resigned = True
        view.members.pop(member, None)
    elif key.startswith(HEARTBEAT_PREFIX):
        claim = body.get("claim", -1)
        if isinstance(claim, int) and claim >= 0:
            _see_claim(view, Claim(claim, member, url))
        if history:
            return
        if isinstance(claim, int) and claim > view.confirmed:
            view.confirmed = claim
        view.members[member] = (now, url)
        if body.get("claiming") is True:
            view.claiming.setdefault(member, now)
        else:
            view.claiming.pop(member, None)
        if member == view.me:
            if view.own_last < 0 or now - view.own_last > gap:
                view.own_since = now
            view.own_last = now


def _see_claim(view: ElectionView, claim: Claim) -> None:
    if view.claim is None or claim.offset > view.claim.offset:
        view.claim = claim
        view.resigned = False


def successor(view: ElectionView, failed_claim: int) -> str | None:
    """After this member's transaction failed (leading by the claim at ``failed_claim``): the
    member whose claim came after it and has committed (its heartbeats name it), or None
    while there is none. Once there is, every record the failed transaction left in the log
    has been re-committed by that claim or will never be committed."""
    claim = view.claim
    if claim is None or claim.offset <= failed_claim or view.confirmed < claim.offset:
        return None
    return claim.member


def live_members(view: ElectionView, now: float, lease: float) -> list[str]:
    """Members whose heartbeat arrived within ``lease``, sorted (the rank order)."""
    return sorted(m for m, (at, _) in view.members.items() if now - at <= lease)


def should_claim(
    view: ElectionView,
    now: float,
    *,
    lease: float,
    heartbeat: float,
    rank_step: float,
    patience: float = 10.0,
) -> bool:
    """Whether this instance claims leadership now (the rule in the module docstring).

    * Our own heartbeats must be arriving now, and have been for ``lease`` when a leader is
      named (after a broker outage the leader's heartbeats come back too; it gets a lease to
      show them) or for two heartbeats when none is (to have heard the other members).
    * A named leader counts as gone when its last heartbeat arrived ``lease`` ago (or none did
      since we started reading); two leases while our own heartbeats are back from a gap for
      less than four leases (a broker transition, in which another member's producer may take
      longer than ours to find the partition's new leader: no false election for that).
    * Nobody else live is claiming (for at most ``patience``: a claim that takes longer is
      taken to be stuck).
    * Then wait ``rank * rank_step``, rank our place among the live members other than the
      leader.
    """
    if view.own_last < 0 or now - view.own_last > 3 * heartbeat:
        view.claimable_since = None
        return False
    leader = view.leader()
    if leader == view.me:
        view.claimable_since = None
        return False
    flowing = now - view.own_since
    if leader is None:
        ready = flowing >= 2 * heartbeat
    else:
        seen = view.members.get(leader)
        last = seen[0] if seen is not None else view.started
        # our own heartbeats came back from a gap less than four leases ago (a broker
        # stopping, a partition leader moving: another member's producer may be seconds
        # behind ours in finding the new one): the leader gets two leases of silence
        recovering = view.own_since > view.started + lease and flowing < 4 * lease
        ready = flowing >= lease and now - last > (2 * lease if recovering else lease)
    live = live_members(view, now, lease)
    busy = any(
        m != view.me and m in live and now - since < patience for m, since in view.claiming.items()
    )
    if not ready or busy:
        view.claimable_since = None
        return False
    if view.claimable_since is None:
        view.claimable_since = now
    others = [m for m in live if m != leader]
    rank = others.index(view.me) if view.me in others else len(others)
    return now - view.claimable_since >= rank * rank_step


def heartbeat_stalled(now: float, delivered: float, refreshed: float, heartbeat: float) -> bool:
    """Whether a member's heartbeat producer looks stuck on a partition leader that no longer
    answers, so that it should ask for the election topic's metadata again: no heartbeat was
    delivered for three heartbeat periods (at least 0.3 s: a loaded broker is allowed a slow
    answer), and it did not ask during the last such period. Well before the lease (at least
    three heartbeats), so the followers never see a leader's heartbeats stop for a lease
    while theirs flow, just because its producer kept sending to the old partition leader."""
    patience = max(3 * heartbeat, 0.3)
    return now - delivered > patience and now - refreshed > patience


def monotonic() -> float:
    return time.monotonic()

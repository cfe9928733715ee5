"""Throttling of failed HTTP Basic attempts: the pure counter logic with an injected clock, and
a live ``serve`` process locking out a (user, address) pair with 429 + ``Retry-After`` without
hashing, bounding concurrent scrypt computations, and answering unknown users as slowly as
known ones.

Client addresses come from ``X-Forwarded-For``: uvicorn trusts it from 127.0.0.1 (its
``FORWARDED_ALLOW_IPS`` default), so one test client can act as many addresses.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from registry.auth.passwords import _shape, decoy, hash_password
from registry.auth.throttle import Throttle, hash_gate
from registry.settings import Settings
from tests.production_helpers import Server, running

MAX_FAILURES = 3
ENTRIES = 40


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def throttle(clock: Clock, **overrides: float) -> Throttle:
    options: dict[str, float] = {
        "max_failures": 3,
        "window": 60.0,
        "lockout": 10.0,
        "max_lockout": 35.0,
        "max_entries": 100,
        **overrides,
    }
    return Throttle(
        max_failures=int(options["max_failures"]),
        window=options["window"],
        lockout=options["lockout"],
        max_lockout=options["max_lockout"],
        max_entries=int(options["max_entries"]),
        clock=clock,
    )


# ---- the pure logic ---------------------------------------------------------------------------


def test_locks_out_after_max_failures_and_counts_down() -> None:
    clock = Clock()
    t = throttle(clock)
    assert t.failed("alice", "10.0.0.1") == 0
    clock.now += 1
    assert t.failed("alice", "10.0.0.1") == 0
    assert t.retry_after("alice", "10.0.0.1") == 0
    assert t.failed("alice", "10.0.0.1") == 10.0
    assert t.retry_after("alice", "10.0.0.1") == 10
    clock.now += 9.2
    assert t.retry_after("alice", "10.0.0.1") == 1  # rounded up, never 0 while locked
    clock.now += 0.8
    assert t.retry_after("alice", "10.0.0.1") == 0


def test_other_users_and_addresses_are_not_locked_out() -> None:
    clock = Clock()
    t = throttle(clock)
    for _ in range(3):
        t.failed("alice", "10.0.0.1")
    assert t.retry_after("alice", "10.0.0.1") == 10
    assert t.retry_after("bob", "10.0.0.1") == 0
    assert t.retry_after("alice", "10.0.0.2") == 0
    assert t.retry_after("alice ", "10.0.0.1") == 0


def test_a_success_resets_the_pair() -> None:
    clock = Clock()
    t = throttle(clock)
    t.failed("alice", "a")
    t.failed("alice", "a")
    t.succeeded("alice", "a")
    assert len(t) == 0
    assert t.failed("alice", "a") == 0
    assert t.failed("alice", "a") == 0
    assert t.failed("alice", "a") == 10.0


def test_failures_older_than_the_window_are_forgotten() -> None:
    clock = Clock()
    t = throttle(clock)
    t.failed("alice", "a")
    t.failed("alice", "a")
    clock.now += 60
    assert t.retry_after("alice", "a") == 0
    assert len(t) == 0  # the stale entry is dropped when looked at
    assert t.failed("alice", "a") == 0
    assert t.failed("alice", "a") == 0
    clock.now += 59
    assert t.failed("alice", "a") == 10.0


def test_repeated_lockouts_double_up_to_the_maximum() -> None:
    clock = Clock()
    t = throttle(clock)
    durations = []
    for _ in range(4):
        for _ in range(3):
            duration = t.failed("alice", "a")
        durations.append(duration)
        clock.now += duration + 1  # failing again soon after the lock-out ends
    assert durations == [10.0, 20.0, 35.0, 35.0]
    # a pair that stays quiet for a window after its lock-out starts again from the first
    clock.now += 60
    for _ in range(3):
        duration = t.failed("alice", "a")
    assert duration == 10.0


def test_counters_are_bounded_least_recently_used_first() -> None:
    clock = Clock()
    t = throttle(clock, max_entries=5)
    for i in range(5):
        t.failed(f"user{i}", "a")
    t.failed("user0", "a")  # user0 is now the most recent
    t.failed("x" * 100_000, "a")  # a huge name costs a 16-byte digest
    assert len(t) == 5
    t.failed("user0", "a")
    assert t.retry_after("user0", "a") == 10  # kept: 3 failures
    # user1 was the least recently used when the huge name came: its first failure is gone,
    # so two more make 2, not 3
    assert t.failed("user1", "a") == 0
    assert t.failed("user1", "a") == 0
    assert t.retry_after("user1", "a") == 0
    assert t.failed("user1", "a") == 10.0


def test_a_stale_pair_failing_again_counts_as_recently_used() -> None:
    clock = Clock()
    t = throttle(clock, max_entries=2)
    t.failed("old", "a")
    clock.now += 30
    t.failed("newer", "a")
    clock.now += 31  # "old" is stale now, "newer" is not
    t.failed("old", "a")  # starts again from one failure, and is the most recent
    t.failed("third", "a")  # evicts "newer", the least recently used
    t.failed("old", "a")
    assert t.failed("old", "a") == 10.0
    t.failed("newer", "a")
    assert t.failed("newer", "a") == 0  # forgotten: two failures, not three


def test_zero_max_failures_turns_throttling_off() -> None:
    clock = Clock()
    t = throttle(clock, max_failures=0)
    assert not t.enabled
    for _ in range(50):
        assert t.failed("alice", "a") == 0
    assert t.retry_after("alice", "a") == 0
    assert len(t) == 0


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"max_failures": -1}, "auth_max_failures must be >= 0"),
        ({"window": 0}, "auth_failure_window must be > 0"),
        ({"lockout": -5}, "auth_lockout must be > 0"),
        ({"max_lockout": 5}, r"auth_lockout_max \(5\) must be >= auth_lockout \(10.0\)"),
        ({"max_entries": 0}, "auth_throttle_entries must be >= 1"),
    ],
)
def test_unusable_settings_are_refused(overrides: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        throttle(Clock(), **overrides)


def test_hash_concurrency_must_be_positive() -> None:
    async def take_three() -> list[bool]:
        gate = hash_gate(Settings(auth_hash_concurrency=3))
        states = []
        for _ in range(3):
            states.append(gate.locked())
            await gate.acquire()
        return [*states, gate.locked()]

    assert asyncio.run(take_three()) == [False, False, False, True]
    with pytest.raises(ValueError, match="auth_hash_concurrency must be >= 1, not 0"):
        hash_gate(Settings(auth_hash_concurrency=0))


def test_decoy_has_the_cost_parameters_most_users_have() -> None:
    cheap = hash_password("x", n=2**10)
    users = {"a": cheap, "b": hash_password("y", n=2**10), "c": hash_password("z", n=2**11)}
    assert _shape(decoy(users)) == (2**10, 8, 1, 32) == _shape(cheap)
    assert _shape(decoy({})) == (2**14, 8, 1, 32)
    assert decoy(users) != decoy(users)  # a fresh salt and digest each time


# ---- a live server ----------------------------------------------------------------------------
#
# Two servers, so that no assertion depends on how fast a loaded machine answers: ``server``
# keeps failures for a minute and locks out for 30 s (nothing expires while its tests run), and
# ``quick`` locks out for 1-3 s, for the tests that wait for a lock-out or a window to end
# (waiting longer than planned only makes those ends more certain).

USERS = {"alice": "wonderland", "bob": "builder", "carol": "singer"}
HEAVY = ("dave", "diver")  # a costly hash (N=2^15, ~0.1 s)
LONG_LOCKOUT = 30.0
QUICK_WINDOW = 6.0  # long enough for three failed attempts on a loaded machine
QUICK_LOCKOUT = 1.0
QUICK_LOCKOUT_MAX = 3.0


def throttled_server(tmp: Path, window: float, lockout: float, lockout_max: float) -> Server:
    users = tmp / "users"
    lines = [f"{name}:{hash_password(pw, n=2**12)}\n" for name, pw in USERS.items()]
    lines.append(f"{HEAVY[0]}:{hash_password(HEAVY[1], n=2**15)}\n")
    users.write_text("".join(lines))
    env = {
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users),
        "SCHEMA_REGISTRY_AUTH_MAX_FAILURES": str(MAX_FAILURES),
        "SCHEMA_REGISTRY_AUTH_FAILURE_WINDOW": str(window),
        "SCHEMA_REGISTRY_AUTH_LOCKOUT": str(lockout),
        "SCHEMA_REGISTRY_AUTH_LOCKOUT_MAX": str(lockout_max),
        "SCHEMA_REGISTRY_AUTH_THROTTLE_ENTRIES": str(ENTRIES),
        "SCHEMA_REGISTRY_AUTH_HASH_CONCURRENCY": "1",
    }
    return Server(tmp, env)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("throttle")
    with running(throttled_server(tmp, window=60, lockout=LONG_LOCKOUT, lockout_max=60)) as srv:
        yield srv


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("throttle-quick")
    with running(throttled_server(tmp, QUICK_WINDOW, QUICK_LOCKOUT, QUICK_LOCKOUT_MAX)) as srv:
        yield srv


def attempt(client: httpx.Client, user: str, password: str, address: str) -> httpx.Response:
    return client.get("/subjects", auth=(user, password), headers={"X-Forwarded-For": address})


def fail_until_locked(client: httpx.Client, user: str, address: str) -> None:
    for _ in range(MAX_FAILURES):
        response = attempt(client, user, "wrong", address)
        assert response.status_code == 401, response.text


def test_lockout_after_max_failures_answers_429_with_retry_after(server: Server) -> None:
    with server.client() as client:
        fail_until_locked(client, "alice", "10.1.0.1")
        # the right password is refused too: a lock-out must not answer guesses
        locked = attempt(client, "alice", USERS["alice"], "10.1.0.1")
    assert locked.status_code == 429
    # whole seconds left of the 30 s lock-out (fewer if this machine took seconds to answer)
    retry_after = int(locked.headers["retry-after"])
    assert LONG_LOCKOUT - 10 <= retry_after <= LONG_LOCKOUT
    assert locked.json() == {
        "error_code": 429,
        "message": f"Too many failed authentication attempts: retry after {retry_after} seconds",
    }
    assert locked.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    assert "www-authenticate" not in locked.headers
    assert lockouts_logged(server, "alice", "10.1.0.1") == [30]


def test_lockout_is_per_user_and_address(server: Server) -> None:
    with server.client() as client:
        fail_until_locked(client, "bob", "10.2.0.1")
        assert attempt(client, "bob", USERS["bob"], "10.2.0.1").status_code == 429
        assert attempt(client, "bob", USERS["bob"], "10.2.0.2").status_code == 200
        assert attempt(client, "carol", USERS["carol"], "10.2.0.1").status_code == 200
        assert attempt(client, "bob", USERS["bob"], "10.2.0.1").status_code == 429


def lockouts_logged(server: Server, user: str, address: str) -> list[int]:
    """The lock-outs (in seconds) the server logged for ``user`` from ``address``."""
    prefix = f"HTTP Basic user '{user}' from {address} locked out for "
    return [
        int(line.split(prefix, 1)[1].split(" s ", 1)[0])
        for line in server.log().splitlines()
        if prefix in line
    ]


def test_a_lockout_ends(quick: Server) -> None:
    with quick.client() as client:
        fail_until_locked(client, "bob", "10.2.0.1")
        assert lockouts_logged(quick, "bob", "10.2.0.1") == [1]
        time.sleep(QUICK_LOCKOUT + 0.05)
        assert attempt(client, "bob", USERS["bob"], "10.2.0.1").status_code == 200


def test_live_lockouts_double_up_to_the_maximum(quick: Server) -> None:
    """Each lock-out is read from the server's log (a ``Retry-After`` read later on a loaded
    machine would show less than the lock-out)."""
    with quick.client() as client:
        for expected in (1, 2, 3):
            fail_until_locked(client, "carol", "10.3.0.1")
            assert lockouts_logged(quick, "carol", "10.3.0.1")[-1] == expected
            time.sleep(expected + 0.05)
        assert attempt(client, "carol", USERS["carol"], "10.3.0.1").status_code == 200
    assert lockouts_logged(quick, "carol", "10.3.0.1") == [1, 2, 3]


def test_success_resets_and_failures_expire_after_the_window(quick: Server) -> None:
    with quick.client() as client:
        for _ in range(2):
            for _ in range(MAX_FAILURES - 1):
                assert attempt(client, "alice", "wrong", "10.4.0.1").status_code == 401
            assert attempt(client, "alice", USERS["alice"], "10.4.0.1").status_code == 200
        for _ in range(MAX_FAILURES - 1):
            assert attempt(client, "alice", "wrong", "10.4.0.2").status_code == 401
        time.sleep(QUICK_WINDOW + 0.05)
        # the earlier failures are forgotten: MAX_FAILURES - 1 more do not lock
        for _ in range(MAX_FAILURES - 1):
            assert attempt(client, "alice", "wrong", "10.4.0.2").status_code == 401
        assert attempt(client, "alice", USERS["alice"], "10.4.0.2").status_code == 200
    assert lockouts_logged(quick, "alice", "10.4.0.1") == []
    assert lockouts_logged(quick, "alice", "10.4.0.2") == []


def auth_counts(client: httpx.Client) -> dict[str, float]:
    """The authentication counters on /metrics (which needs no credentials)."""
    out = {}
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("schema_registry_auth_"):
            name, value = line.split(" ")
            out[name] = float(value)
    return out


def test_locked_out_attempts_cost_no_hash(server: Server) -> None:
    with server.client() as client:
        before = auth_counts(client)
        for _ in range(MAX_FAILURES):
            assert attempt(client, HEAVY[0], "wrong", "10.5.0.1").status_code == 401
        locked = auth_counts(client)
        for _ in range(5):
            assert attempt(client, HEAVY[0], "wrong", "10.5.0.1").status_code == 429
        after = auth_counts(client)
    hashes = "schema_registry_auth_password_hashes_total"
    assert locked[hashes] - before[hashes] == MAX_FAILURES
    assert after[hashes] == locked[hashes]  # the refusals hashed nothing
    assert (
        after["schema_registry_auth_lockouts_total"] - before["schema_registry_auth_lockouts_total"]
        == 1
    )
    refusals = "schema_registry_auth_locked_out_refusals_total"
    assert after[refusals] - locked[refusals] == 5


def test_counters_are_bounded(server: Server) -> None:
    with server.client() as client:
        fail_until_locked(client, "bob", "10.6.0.1")
        assert attempt(client, "bob", USERS["bob"], "10.6.0.1").status_code == 429
        # ENTRIES other pairs push the oldest counters out (the bound's price: a client able
        # to fail from that many pairs within the lock-out lifts its own lock-out); the 30 s
        # lock-out has not ended, so only that can answer 200
        for i in range(ENTRIES):
            assert attempt(client, f"nobody{i}", "x", "10.6.0.2").status_code == 401
        assert attempt(client, "bob", USERS["bob"], "10.6.0.1").status_code == 200


def test_unknown_users_cost_a_hash_as_known_users_do(server: Server) -> None:
    """An unknown user is hashed against the decoy (whose cost parameters are those most users
    in the file have: test_decoy_has_the_cost_parameters_most_users_have), so a wrong name costs
    what a wrong password costs and answers the same."""
    hashes = "schema_registry_auth_password_hashes_total"
    with server.client() as client:
        start = auth_counts(client)[hashes]
        for i in range(3):  # a fresh address each time: no lock-out
            known = attempt(client, "alice", "wrong", f"10.7.1.{i}")
            unknown = attempt(client, f"mallory{i}", "wrong", f"10.7.2.{i}")
            assert known.status_code == unknown.status_code == 401
            assert unknown.json() == known.json()
            assert unknown.headers["www-authenticate"] == known.headers["www-authenticate"]
        assert auth_counts(client)[hashes] - start == 6


def test_concurrent_hashes_are_bounded(server: Server) -> None:
    """A flood of attempts waits for the one hashing slot in the event loop: the server's
    worker threads do not grow (without the bound each concurrent scrypt takes a thread, up to
    the executor's maximum). The clients wait as long as the queue takes on a loaded machine
    (twelve ~0.1 s hashes one after another)."""
    assert server.proc is not None
    tasks = Path(f"/proc/{server.proc.pid}/task")
    clients = [server.client(timeout=120) for _ in range(12)]
    answers: list[int] = []
    barrier = threading.Barrier(len(clients))

    def one(i: int) -> None:
        barrier.wait()
        answers.append(attempt(clients[i], HEAVY[0], "wrong", f"10.8.1.{i}").status_code)

    try:
        attempt(clients[0], HEAVY[0], "wrong", "10.8.0.1")  # one hash: one worker thread
        before = len(list(tasks.iterdir()))
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(clients))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after = len(list(tasks.iterdir()))
    finally:
        for client in clients:
            client.close()
    assert answers == [401] * len(clients)
    assert after - before <= 1, (before, after)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SCHEMA_REGISTRY_AUTH_MAX_FAILURES": "-1"}, "auth_max_failures must be >= 0"),
        ({"SCHEMA_REGISTRY_AUTH_HASH_CONCURRENCY": "0"}, "auth_hash_concurrency must be >= 1"),
    ],
)
def test_unusable_throttle_settings_stop_the_server(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    users = tmp_path / "users"
    users.write_text(f"alice:{hash_password('x', n=2**10)}\n")
    server = Server(tmp_path, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users), **env})
    with pytest.raises(RuntimeError, match="server exited"):
        server.start()
    assert server.proc is not None and server.proc.returncode == 2
    assert f"authentication is misconfigured: {message}" in server.log()

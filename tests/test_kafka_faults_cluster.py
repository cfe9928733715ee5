"""Three registry instances on a three-broker cluster under broker faults (issue 24, items 2-4).

One cluster and one set of three ``schema-registry serve`` processes (store defaults) serve the
whole module; client threads register new subjects and new versions through all three while:

* a broker (the one leading ``_schemas``) is killed with ``kill -9`` and restarted: no client of
  a live instance sees a failed write, no instance exits, no election happens;
* all three brokers are restarted one at a time, and during the second restart the leading
  instance is killed with ``kill -9``: writes fail only while there is no leader (50003/50004),
  resume through a survivor within the failover bound, no instance exits, and the only
  election is the one the kill causes (none when a broker stops: no false election).

After each: every acknowledged write is on every instance with its id and version, no id is used
twice, no version gaps, the instances converge, and a ``read_uncommitted`` and a
``read_committed`` reader of the topic rebuild the same state.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.kafka_fault_load import (
    Brokers,
    Instances,
    Writers,
    check,
    claims,
    failure_samples,
    failures_by_kind,
)
from tests.fixtures.kafka_cluster import kafka_cluster  # noqa: F401  (the module's cluster)

#: writes resume through a surviving instance within this many seconds of the leader's
#: ``kill -9`` (the issue asks a 3 s median; one sample on a shared 2-core machine gets margin)
FAILOVER_BOUND = 5.0
WRITERS = 6
#: broker restarts take 10-20 s on a quiet machine, a minute with the machine's 2 cores shared
pytestmark = [pytest.mark.timeout(900), pytest.mark.timing_sensitive]


@pytest.fixture(scope="module")
def topic() -> str:
    return f"_schemas_faults_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def instances(
    kafka_cluster: Brokers,  # noqa: F811
    topic: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Instances]:
    logs: Path = tmp_path_factory.mktemp("fault-logs")
    group = Instances(f"kafka://{kafka_cluster.bootstrap}/?topic={topic}", logs)
    try:
        group.start()
        group.leader(timeout=60)
        yield group
    finally:
        group.close()


def _no_crash(instances: Instances) -> None:
    crashes = instances.crashes()
    assert not crashes, "\n\n".join(f"{url} exited {code}:\n{log}" for url, code, log in crashes)


def _all_live_again(instances: Instances) -> None:
    for instance in instances.all:
        if not instance.running():
            instances.restart(instance)


def _elections(brokers: Brokers, topic: str, start: int = 0) -> list[tuple[float, str]]:
    """Claims from the ``start``-th on that changed the leader (not a leader's own claim again
    after a failed transaction): (wall-clock time, member)."""
    every = claims(brokers.bootstrap, topic)
    return [c for i, c in enumerate(every) if i >= max(start, 1) and c[1] != every[i - 1][1]]


def _check_state(
    instances: Instances, brokers: Brokers, topic: str, writers: Writers, prefix: str
) -> None:
    acked = writers.acked()
    result = check([i.url for i in instances.all], brokers.bootstrap, topic, acked, prefix)
    assert not result.problems(), result.problems()


def test_a_broker_killed_with_kill_9_fails_no_write(
    kafka_cluster: Brokers,  # noqa: F811
    instances: Instances,
    topic: str,
) -> None:
    prefix = "kill9"
    victim = kafka_cluster.partition_leader(topic) or 1
    before = len(claims(kafka_cluster.bootstrap, topic))
    with Writers(instances, WRITERS, prefix=prefix) as writers:
        time.sleep(3)
        kafka_cluster.kill(victim)
        time.sleep(6)  # past the broker's fencing (3 s) and the producer's retries
        kafka_cluster.restart(victim)
        time.sleep(6)  # the broker back: where today's clients abort
    print(
        f"\nbroker {victim} killed and restarted: {len(writers.acked())} writes acknowledged, "
        f"failures {failures_by_kind(writers.failed())}"
    )
    _no_crash(instances)
    failed = writers.failed()
    assert not failed, (failures_by_kind(failed), failure_samples(failed))
    assert len(writers.acked()) > 50
    # no election: every instance's heartbeats stopped and came back with the broker's
    assert _elections(kafka_cluster, topic, before) == []
    _check_state(instances, kafka_cluster, topic, writers, prefix)


def test_rolling_restart_with_the_leader_instance_killed(
    kafka_cluster: Brokers,  # noqa: F811
    instances: Instances,
    topic: str,
) -> None:
    _all_live_again(instances)
    prefix = "rolling"
    killed_at = killed_wall = 0.0
    leader_window = (0.0, 0.0)
    began = time.time()
    with Writers(instances, WRITERS, prefix=prefix) as writers:
        time.sleep(2)
        for node in (1, 2, 3):
            kafka_cluster.stop_node(node)
            if node == 2:
                leader = instances.leader()
                killed_at, killed_wall = time.monotonic(), time.time()
                instances.kill(leader)
                time.sleep(FAILOVER_BOUND + 1)
                leader_window = (killed_at, time.monotonic())
                instances.restart(leader)
            kafka_cluster.restart(node)
            # as an operator does: the next broker goes once this one is back in every ISR
            assert kafka_cluster.wait_in_sync(), f"broker {node} did not rejoin the ISRs"
            time.sleep(1)
    failover = writers.resumed_after(killed_at)
    print(
        f"\nrolling restart: {len(writers.acked())} writes acknowledged, failover "
        f"{failover if failover is None else round(failover, 2)}s, failures "
        f"{failures_by_kind(writers.failed())}"
    )
    _no_crash(instances)
    # outside the leader's kill (and its failover bound) no client sees a failed write
    start, end = leader_window
    outside = [a for a in writers.failed() if a.ended < start or a.started > end]
    assert not outside, (failures_by_kind(outside), failure_samples(outside))
    # while there is no leader: Confluent's 50003/50004, never a hang
    inside = writers.failed_between(start, end)
    assert {a.error_code for a in inside} <= {50003, 50004}, failure_samples(inside)
    assert all(a.ended - a.started < 30 for a in writers.answers)
    assert failover is not None and failover <= FAILOVER_BOUND, failover
    assert len(writers.acked()) > 50
    # one election, the kill's: a broker stopping never made the followers replace a live
    # leader whose heartbeat producer waited on it (a false election)
    elections = [c for c in _elections(kafka_cluster, topic) if c[0] >= began]
    false = [c for c in elections if not killed_wall <= c[0] <= killed_wall + FAILOVER_BOUND]
    assert elections and not false, (killed_wall, elections)
    _check_state(instances, kafka_cluster, topic, writers, prefix)

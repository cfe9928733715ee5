"""The Kafka store under faults (issue 24): three registry instances on one topic, client threads
registering new subjects and new versions through all three, the leading instance killed with
``kill -9`` (and restarted) several times, a broker killed with ``kill -9`` and restarted, and
with three brokers a rolling restart of all of them; on one broker and on three.

    .venv/bin/python bench/kafka_faults.py                      # one broker, then three
    .venv/bin/python bench/kafka_faults.py --brokers 3 --runs 2 --leader-kills 4 --json out.json

Every run starts its own brokers (``scripts/kafka start`` / ``cluster-start`` in a temporary
directory, free loopback ports) and a fresh topic, with the store's default settings, and stops
everything it started. Bounded: each step has a time-out and ``--max-seconds`` caps a run's
fault schedule. It prints, per run: acknowledged writes, lost, ids given to two schemas (read
committed and uncommitted), instance crashes (exits nobody asked for; a crashed instance is
restarted, as a supervisor would), failover after each leader kill (first acknowledged write
sent after the kill, through any instance), the longest stretch an instance failed every write,
failed requests by status and error code (during leader kills, during broker faults, elsewhere;
requests to an instance being killed are not counted), and write latency p50/p99 outside the
fault windows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.kafka_fault_load import (  # noqa: E402
    Answer,
    Brokers,
    Instances,
    Writers,
    check,
    claims,
    failures_by_kind,
    fault_window,
    latency_ms,
)

SCRIPT = REPO / "scripts" / "kafka"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def longest_failing_stretch(answers: list[Answer]) -> tuple[float, str]:
    """The longest time one instance answered every write sent to it with a failure."""
    best, where = 0.0, ""
    by_target: dict[str, list[Answer]] = {}
    for a in answers:
        by_target.setdefault(a.target, []).append(a)
    for target, mine in by_target.items():
        first: float | None = None
        for a in sorted(mine, key=lambda a: a.started):
            if a.ok or a.target_killed:
                first = None
                continue
            first = a.started if first is None else first
            if a.ended - first > best:
                best, where = a.ended - first, target
    return round(best, 2), where


def revive(instances: Instances) -> None:
    """Restart instances that exited on their own (counted as crashes already)."""
    for instance in instances.all:
        if not instance.running():
            try:
                instances.restart(instance)
            except RuntimeError as exc:
                log(f"restart of {instance.url} failed: {exc}")


def one_run(args: argparse.Namespace, nodes: int, run: int, work: Path) -> dict[str, Any]:
    topic = f"_schemas_faults_{uuid.uuid4().hex[:10]}"
    brokers = Brokers(SCRIPT, work / f"kafka-{nodes}-{run}", nodes)
    begun = time.monotonic()
    log(f"run {run}: starting {nodes} broker(s)")
    brokers.start()
    log(f"run {run}: brokers {brokers.bootstrap} up in {time.monotonic() - begun:.1f}s")
    logs = work / f"logs-{nodes}-{run}"
    logs.mkdir(parents=True, exist_ok=True)
    instances = Instances(f"kafka://{brokers.bootstrap}/?topic={topic}", logs)
    leader_windows: list[tuple[float, float]] = []
    broker_windows: list[tuple[float, float]] = []
    kills: list[float] = []
    broker_events: list[tuple[str, float]] = []
    no_leader: list[str] = []
    slow_starts: list[str] = []
    deadline = time.monotonic() + args.max_seconds
    try:
        instances.start()
        instances.leader(timeout=60)
        with Writers(instances, args.clients, prefix="bench") as writers:
            time.sleep(args.warmup)
            for k in range(args.leader_kills):
                if time.monotonic() > deadline:
                    log("time cap reached: fewer leader kills")
                    break
                revive(instances)
                try:
                    leader = instances.leader(timeout=30)
                except RuntimeError as exc:
                    no_leader.append(str(exc)[:300])
                    continue
                with fault_window(leader_windows):
                    kills.append(time.monotonic())
                    instances.kill(leader)
                    log(f"run {run}: leader {leader.url} killed ({k + 1})")
                    time.sleep(args.down)
                    try:
                        instances.restart(leader)
                    except RuntimeError as exc:  # slow start on a busy machine: go on
                        slow_starts.append(str(exc)[:300])
                        log(f"run {run}: {leader.url} did not come back: {exc!s:.300}")
                time.sleep(args.between)
            revive(instances)
            victim = brokers.partition_leader(topic) or 1
            with fault_window(broker_windows, settle=3):
                broker_events.append(("kill -9", time.monotonic()))
                brokers.kill(victim)
                log(f"run {run}: broker {victim} killed")
                time.sleep(args.down)
                brokers.restart(victim)
                broker_events.append(("restarted", time.monotonic()))
                log(f"run {run}: broker {victim} restarted")
                time.sleep(args.between)
            if nodes > 1 and time.monotonic() < deadline:
                with fault_window(broker_windows, settle=3):
                    for node in range(1, nodes + 1):
                        broker_events.append((f"rolling {node}", time.monotonic()))
                        brokers.stop_node(node)
                        brokers.restart(node)
                        # as an operator does: the next broker goes once this one is back in
                        # every ISR (else min.insync.replicas=2 cannot be met)
                        in_sync = brokers.wait_in_sync()
                        log(f"run {run}: broker {node} restarted (rolling), in sync: {in_sync}")
                        time.sleep(2)
            time.sleep(args.between)
            revive(instances)
        answers = list(writers.answers)
        acked = writers.acked()
        failovers = [writers.resumed_after(t) for t in kills]
        recovered = [writers.resumed_after(t) for _, t in broker_events]
        result = check([i.url for i in instances.all], brokers.bootstrap, topic, acked, "bench")
        # a claim by another member than the previous claim's outside the leader kills'
        # windows is a false election (a leader's own claim again after a failed
        # transaction is not: it leads on)
        wall = time.time() - time.monotonic()
        every = claims(brokers.bootstrap, topic)
        elections = [c for c, before in zip(every[1:], every, strict=False) if c[1] != before[1]]
        false_elections = [
            round(at - wall - begun, 1)
            for at, _ in elections
            if not any(s <= at - wall <= e for s, e in leader_windows)
        ]

        def failed_in(windows: list[tuple[float, float]]) -> list[Answer]:
            return [
                a
                for a in writers.failed()
                if any(a.ended >= s and a.started <= e for s, e in windows)
            ]

        in_leader = failed_in(leader_windows)
        in_broker = failed_in(broker_windows)
        counted = {id(a) for a in in_leader + in_broker}
        elsewhere = [a for a in writers.failed() if id(a) not in counted]
        measured = [f for f in failovers if f is not None]
        stretch, stretch_at = longest_failing_stretch(answers)
        return {
            "brokers": nodes,
            "run": run,
            "topic": topic,
            "seconds": round(time.monotonic() - begun, 1),
            "requests": len(answers),
            "acked": len(acked),
            "lost": len(result.lost),
            "lost_examples": result.lost[:3],
            "acked_duplicate_ids": result.acked_duplicate_ids,
            "duplicate_ids": result.duplicate_ids,
            "duplicate_versions": result.duplicate_versions,
            "readers_agree": result.readers_agree,
            "reader_differences": result.reader_differences[:5],
            "version_gaps": len(result.version_gaps),
            "converged": result.converged,
            "crashes": [(url, code) for url, code, _ in instances.crashes()],
            "crash_logs": [log_[-800:] for _, _, log_ in instances.crashes()][:3],
            "no_leader": no_leader,
            "slow_starts": slow_starts,
            "startup_failures": instances.startup_failures,
            "failover_s": [None if f is None else round(f, 2) for f in failovers],
            "failover_min_median_max": (
                [
                    round(min(measured), 2),
                    round(statistics.median(measured), 2),
                    round(max(measured), 2),
                ]
                if measured
                else None
            ),
            "broker_recovery_s": {
                name: None if r is None else round(r, 2)
                for (name, _), r in zip(broker_events, recovered, strict=True)
            },
            "elections": len(elections),
            "false_elections_at_s": false_elections,
            "longest_failing_stretch_s": stretch,
            "longest_failing_stretch_at": stretch_at,
            "failed_leader_kills": failures_by_kind(in_leader),
            "failed_broker_faults": failures_by_kind(in_broker),
            "failed_elsewhere": failures_by_kind(elsewhere),
            "failed_samples": [a.detail[:200] for a in writers.failed()[:3]],
            "to_killed_instance": sum(1 for a in answers if a.target_killed and not a.ok),
            "latency_outside_faults": latency_ms(answers, leader_windows + broker_windows),
        }
    finally:
        instances.close()
        brokers.close()


def row(r: dict[str, Any]) -> str:
    fo = r["failover_min_median_max"]
    lat = r["latency_outside_faults"]

    def kinds(d: dict[str, int]) -> str:
        return ", ".join(f"{k}: {v}" for k, v in d.items()) or "0"

    return (
        f"| {r['brokers']} | {r['run']} | {r['acked']} | {r['lost']} | "
        f"{r['duplicate_ids']['read_committed']} / {r['duplicate_ids']['read_uncommitted']} | "
        f"{'yes' if r['readers_agree'] else '**no**'} | {len(r['crashes'])} | "
        f"{'/'.join(str(x) for x in fo) if fo else 'none'} | "
        f"{', '.join(f'{k} {v}' for k, v in r['broker_recovery_s'].items())} | "
        f"{r['elections']} / {len(r['false_elections_at_s'])} | "
        f"{r['longest_failing_stretch_s']} | {kinds(r['failed_leader_kills'])} | "
        f"{kinds(r['failed_broker_faults'])} | {kinds(r['failed_elsewhere'])} | "
        f"{lat.get('p50_ms', '-')} / {lat.get('p99_ms', '-')} | {len(r['startup_failures'])} |"
    )


HEADER = (
    "| brokers | run | acked | lost | dup ids rc / ru | readers agree | crashes | "
    "failover min/med/max s | first ack after broker event, s | elections / false | "
    "longest failing stretch s | "
    "failed in leader kills | failed in broker faults | failed elsewhere | p50 / p99 ms | "
    "startup failures |\n"
    "|--:|--:|--:|--:|--:|:-:|--:|--:|---|--:|--:|---|---|---|--:|--:|"
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--brokers", type=int, nargs="+", default=[1, 3], choices=[1, 3])
    p.add_argument("--runs", type=int, default=1, help="runs per broker count (1)")
    p.add_argument("--clients", type=int, default=8, help="client threads (8)")
    p.add_argument("--leader-kills", type=int, default=4, help="leader kills per run (4)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds before the first fault (5)")
    p.add_argument("--down", type=float, default=4.0, help="seconds a killed thing stays down (4)")
    p.add_argument("--between", type=float, default=4.0, help="seconds between faults (4)")
    p.add_argument(
        "--max-seconds", type=float, default=240, help="cap on a run's fault schedule (240)"
    )
    p.add_argument("--json", metavar="FILE", help="write every run's results as JSON")
    args = p.parse_args(argv)
    results: list[dict[str, Any]] = []
    printer: Callable[[str], None] = print
    with tempfile.TemporaryDirectory(prefix="kafka-faults-") as tmp:
        for nodes in args.brokers:
            for run in range(1, args.runs + 1):
                r = one_run(args, nodes, run, Path(tmp))
                results.append(r)
                log(json.dumps({k: v for k, v in r.items() if k != "crash_logs"}))
                for text in r["crash_logs"]:
                    log(f"crash log tail:\n{text}")
    printer(f"command: {' '.join(sys.argv)}")
    printer(HEADER)
    for r in results:
        printer(row(r))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    bad = any(r["lost"] or r["crashes"] or not r["readers_agree"] for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

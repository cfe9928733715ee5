"""The load and the checks of a Kafka fault run, shared by ``bench/kafka_faults.py`` and the
three-broker fault tests (``tests/test_kafka_faults_cluster.py``).

* ``Instances``: ``schema-registry serve`` processes on one topic, killed (``kill -9``) and
  restarted by the caller; an exit the caller did not cause is a crash.
* ``Writers``: client threads registering new subjects and new versions (each schema a superset
  of the subject's earlier ones, so BACKWARD-compatible) round robin through the live instances,
  recording every answer with its client-side timing.
* ``check``: after the run, every acknowledged write is on every instance with one id and one
  version, no id given to two schemas, no version gaps, every instance holds the same state, and
  a ``read_uncommitted`` and a ``read_committed`` reader of the topic rebuild the same state.

Only the standard library, httpx and confluent-kafka: nothing of ``registry`` is imported.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
HEADERS = {"Content-Type": CONTENT_TYPE}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------------------------------------
# Registry instances


@dataclass
class Instance:
    """One ``schema-registry serve`` process on a fixed port (kept across restarts)."""

    store: str
    log_dir: Path
    python: str = sys.executable
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    #: bumped by every kill: a request in flight across a kill was sent to a dead instance
    epoch: int = 0
    #: exits nobody asked for: (return code, tail of the log)
    crashes: list[tuple[int, str]] = field(default_factory=list)
    starts: int = 0
    #: ready since its last start: clients send to it (as a load balancer checking /ready
    #: would); a process that is still starting gets no traffic
    serving: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"registry-{self.port}.log"

    def start(self) -> None:
        self.serving = False
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start {self.starts} at {time.time():.3f}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                [self.python, "-m", "registry.cli", "serve", "--port", str(self.port),
                 "--store", self.store],
                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
            )  # fmt: skip

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ready(self, timeout: float = 2) -> dict[str, Any] | None:
        """``/ready``'s body when it answers 200, else None."""
        try:
            reply = httpx.get(self.url + "/ready", timeout=timeout)
        except httpx.HTTPError:
            return None
        return dict(reply.json()) if reply.status_code == 200 else None

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise RuntimeError(f"{self.url} exited: {self.tail()}")
            if self.ready() is not None:
                self.serving = True
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.url} not ready after {timeout}s: {self.tail()}")

    def kill(self) -> None:
        """``kill -9``: not a crash."""
        assert self.proc is not None
        self.serving = False
        self.epoch += 1
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None  # gone on purpose: the crash watcher must not count it

    def stop(self) -> None:
        if self.running():
            assert self.proc is not None
            self.epoch += 1
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self.proc = None

    def note_crash(self) -> bool:
        """Record an exit nobody asked for (once); True when there is one."""
        if self.proc is None or self.proc.poll() is None:
            return False
        code = self.proc.returncode
        self.serving = False
        self.crashes.append((code, self.tail()))
        self.proc = None
        return True

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


class Instances:
    """The registry instances of a run, with a watcher that notices crashes."""

    def __init__(self, store: str, log_dir: Path, count: int = 3) -> None:
        self.all = [Instance(store, log_dir) for _ in range(count)]
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self.lock = threading.Lock()
        #: instances that exited while starting (and were started again)
        self.startup_failures: list[str] = []

    def start(self, timeout: float = 180, attempts: int = 3) -> None:
        """Start the first (it creates the topics), then the others; wait until all are ready.
        An instance that exits while starting is started again (as a supervisor would), at most
        ``attempts`` times; each such exit is kept in ``startup_failures``."""
        first, *others = self.all
        self._start_ready([first], timeout, attempts)
        self._start_ready(others, timeout, attempts)
        self._watcher.start()

    def _start_ready(self, group: list[Instance], timeout: float, attempts: int) -> None:
        for instance in group:
            instance.start()
        for instance in group:
            for attempt in range(attempts):
                try:
                    instance.wait_ready(timeout)
                    break
                except RuntimeError as exc:
                    if instance.running() or attempt == attempts - 1:
                        raise
                    self.startup_failures.append(f"{instance.url}: {exc!s:.400}")
                    instance.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            with self.lock:
                for instance in self.all:
                    instance.note_crash()

    def live(self) -> list[Instance]:
        """Instances that run and have been ready since their start: where clients send."""
        return [i for i in self.all if i.running() and i.serving]

    def crashes(self) -> list[tuple[str, int, str]]:
        return [(i.url, code, log) for i in self.all for code, log in i.crashes]

    def leader(self, timeout: float = 30) -> Instance:
        """The live instance that says it leads, once every live instance names it."""
        deadline = time.monotonic() + timeout
        views: list[Any] = []
        while time.monotonic() < deadline:
            live = self.live()
            views = [i.ready() for i in live]
            leaders = [i for i, v in zip(live, views, strict=True) if v and v.get("is_leader")]
            if len(leaders) == 1 and all(v and v.get("leader") == leaders[0].url for v in views):
                return leaders[0]
            time.sleep(0.1)
        raise RuntimeError(f"no agreed leader after {timeout}s: {views}")

    def kill(self, instance: Instance) -> None:
        with self.lock:
            instance.kill()

    def restart(self, instance: Instance, timeout: float = 180) -> None:
        with self.lock:
            if instance.running():
                instance.kill()
            instance.start()
        instance.wait_ready(timeout)

    def close(self) -> None:
        self._stop.set()
        if self._watcher.is_alive():
            self._watcher.join(timeout=5)
        for instance in self.all:
            instance.note_crash()
            instance.stop()


# ---------------------------------------------------------------------------------------------
# The writers


def schema_text(worker: int, subject_no: int, fields: int) -> str:
    """A record whose optional fields ``g1..g<fields>`` grow with each new version."""
    body: list[dict[str, Any]] = [{"name": "id", "type": "long"}]
    body += [{"name": f"g{k}", "type": ["null", "string"], "default": None} for k in range(fields)]
    record = {"type": "record", "name": f"W{worker}S{subject_no}", "fields": body}
    return json.dumps(record, separators=(",", ":"))


@dataclass(frozen=True)
class Answer:
    """One registration as its client saw it."""

    worker: int
    target: str
    subject: str
    schema: str
    started: float  # time.monotonic()
    ended: float
    status: int | None  # None: no HTTP answer (connection refused/reset, timeout)
    error_code: int | None = None
    schema_id: int | None = None
    #: the target was killed while the request was in flight (or refused it because it was
    #: being killed): its client's failure, not the registry's
    target_killed: bool = False
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 200 and self.schema_id is not None


class Writers:
    """``count`` client threads registering through the live instances until ``stop()``."""

    def __init__(
        self,
        instances: Instances,
        count: int = 8,
        prefix: str = "fault",
        versions_per_subject: int = 5,
        timeout: float = 30,
    ) -> None:
        self.instances = instances
        self.count = count
        self.prefix = prefix
        self.versions_per_subject = versions_per_subject
        self.timeout = timeout
        self.answers: list[Answer] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(w,), daemon=True) for w in range(count)
        ]

    def __enter__(self) -> Writers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.timeout + 10)

    def _run(self, worker: int) -> None:
        n = 0
        subject_no = 0
        fields = 0
        # idle connections dropped before the server's keep-alive (uvicorn's 5 s) ends them:
        # otherwise a request sent on a connection the server is closing fails (a reset),
        # whatever the store does
        limits = httpx.Limits(keepalive_expiry=2.0)
        with httpx.Client(timeout=self.timeout, limits=limits) as http:
            while not self._stop.is_set():
                live = self.instances.live()
                if not live:
                    time.sleep(0.05)
                    continue
                target = live[(worker + n) % len(live)]
                if n % self.versions_per_subject == 0:
                    subject_no += 1
                    fields = 0
                n += 1
                subject = f"{self.prefix}-w{worker}-s{subject_no}"
                schema = schema_text(worker, subject_no, fields)
                fields += 1
                epoch = target.epoch
                began = time.monotonic()
                try:
                    reply = http.post(
                        f"{target.url}/subjects/{subject}/versions",
                        json={"schema": schema},
                        headers=HEADERS,
                    )
                except httpx.HTTPError as exc:
                    ended = time.monotonic()
                    answer = Answer(worker, target.url, subject, schema, began, ended, None,
                                    target_killed=target.epoch != epoch,
                                    detail=f"{type(exc).__name__}: {exc}")  # fmt: skip
                    self._keep(answer)
                    time.sleep(0.02)
                    continue
                ended = time.monotonic()
                try:
                    body = reply.json()
                except ValueError:
                    body = {}
                code = body.get("error_code") if isinstance(body, dict) else None
                answer = Answer(
                    worker, target.url, subject, schema, began, ended, reply.status_code,
                    error_code=code if isinstance(code, int) else None,
                    schema_id=body.get("id") if reply.status_code == 200 else None,
                    target_killed=target.epoch != epoch,
                    detail="" if reply.status_code == 200 else reply.text[:300],
                )  # fmt: skip
                self._keep(answer)
                if not answer.ok:
                    time.sleep(0.02)

    def _keep(self, answer: Answer) -> None:
        with self._lock:
            self.answers.append(answer)

    def acked(self) -> list[Answer]:
        return [a for a in self.answers if a.ok]

    def failed(self) -> list[Answer]:
        """Failures a client of a live instance saw (not those sent to a killed instance)."""
        return [a for a in self.answers if not a.ok and not a.target_killed]

    def failed_between(self, start: float, end: float) -> list[Answer]:
        return [a for a in self.failed() if a.ended >= start and a.started <= end]

    def resumed_after(self, moment: float, within: float = 120) -> float | None:
        """Seconds from ``moment`` until the first acknowledged write sent at or after it."""
        ends = [a.ended for a in self.acked() if moment <= a.started <= moment + within]
        return min(ends) - moment if ends else None


def failure_samples(answers: list[Answer], per_kind: int = 2) -> dict[str, list[str]]:
    """A few answers of each kind of failure, for diagnosis."""
    out: dict[str, list[str]] = {}
    for a in answers:
        kind = "no answer" if a.status is None else f"{a.status} {a.error_code or ''}".strip()
        if len(out.setdefault(kind, [])) < per_kind:
            out[kind].append(f"{a.target} after {a.ended - a.started:.1f}s: {a.detail[:200]}")
    return out


def failures_by_kind(answers: list[Answer]) -> dict[str, int]:
    """``"500 50003": 12``, ``"no answer": 3`` ..."""
    kinds = Counter(
        "no answer" if a.status is None else f"{a.status} {a.error_code or ''}".strip()
        for a in answers
    )
    return dict(kinds.most_common())


def latency_ms(answers: list[Answer], windows: list[tuple[float, float]]) -> dict[str, float]:
    """p50/p99 of acknowledged writes that overlap none of the fault ``windows``."""
    quiet = sorted(
        1000 * (a.ended - a.started)
        for a in answers
        if a.ok and not any(a.ended >= s and a.started <= e for s, e in windows)
    )
    if not quiet:
        return {"count": 0}
    return {
        "count": len(quiet),
        "p50_ms": round(statistics.median(quiet), 2),
        "p99_ms": round(quiet[min(len(quiet) - 1, int(0.99 * len(quiet)))], 2),
    }


# ---------------------------------------------------------------------------------------------
# The checks


def _messages(
    bootstrap: str, tp: Any, isolation: str, group: str, timeout: float, stop_at: int | None = None
) -> Iterator[Any]:
    """The messages of ``tp`` from its offset on, as a reader with ``isolation.level``
    ``isolation`` sees them, until the partition's end (or offset ``stop_at``, included)."""
    from confluent_kafka import Consumer, KafkaError

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    try:
        consumer.assign([tp])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    return
                raise RuntimeError(f"reading {tp.topic}: {err}")
            yield msg
            if stop_at is not None and msg.offset() >= stop_at:
                return
        raise RuntimeError(f"reading {tp.topic} ({isolation}) did not reach the end in {timeout}s")
    finally:
        consumer.close()


def topic_records(
    bootstrap: str, topic: str, isolation: str, timeout: float = 60
) -> list[tuple[bytes | None, bytes | None]]:
    """Every (key, value) of partition 0 up to its end, as a reader with ``isolation.level``
    ``isolation`` (``read_committed`` or ``read_uncommitted``) sees them."""
    from confluent_kafka import TopicPartition

    tp = TopicPartition(topic, 0, 0)
    return [
        (m.key(), m.value())
        for m in _messages(bootstrap, tp, isolation, f"fault-check-{isolation}", timeout)
    ]


def claims(bootstrap: str, topic: str, timeout: float = 60) -> list[tuple[float, str]]:
    """(wall-clock time in seconds, member) of every ``claim`` record of the store's election
    topic (``<topic>-election``), attempts that were fenced included: one per election."""
    from confluent_kafka import Consumer, TopicPartition

    tp = TopicPartition(f"{topic}-election", 0, 0)
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "fault-check-claims"})
    try:
        # up to the end it has now: live members keep heartbeating, so the end moves on
        low, high = probe.get_watermark_offsets(tp, timeout=10)
    finally:
        probe.close()
    if high <= low:
        return []
    return [
        (m.timestamp()[1] / 1000, str(json.loads(m.value() or b"{}").get("member", "")))
        for m in _messages(
            bootstrap, tp, "read_uncommitted", "fault-check-claims", timeout, stop_at=high - 1
        )
        if m.key() == b"claim"
    ]


@dataclass
class TopicState:
    """What a reader of Confluent's format concludes from the topic's SCHEMA records."""

    #: (subject, version) -> (id, schema text) after the last record of each key
    versions: dict[tuple[str, int], tuple[int, str]]
    #: ids that some record gave to two different schema texts
    duplicate_ids: dict[int, set[str]]
    #: subject-versions that some record gave to two different schema texts
    duplicate_versions: dict[tuple[str, int], set[str]]
    records: int


def topic_state(records: list[tuple[bytes | None, bytes | None]]) -> TopicState:
    versions: dict[tuple[str, int], tuple[int, str]] = {}
    by_id: dict[int, set[str]] = {}
    by_version: dict[tuple[str, int], set[str]] = {}
    for key, value in records:
        if key is None:
            continue
        try:
            k = json.loads(key)
        except ValueError:
            continue
        if not isinstance(k, dict) or k.get("keytype") != "SCHEMA":
            continue
        where = (str(k["subject"]), int(k["version"]))
        if value is None:
            versions.pop(where, None)
            continue
        v = json.loads(value)
        versions[where] = (int(v["id"]), str(v["schema"]))
        by_id.setdefault(int(v["id"]), set()).add(str(v["schema"]))
        by_version.setdefault(where, set()).add(str(v["schema"]))
    return TopicState(
        versions=versions,
        duplicate_ids={i: s for i, s in by_id.items() if len(s) > 1},
        duplicate_versions={k: s for k, s in by_version.items() if len(s) > 1},
        records=len(records),
    )


@dataclass
class Check:
    acked: int = 0
    #: acknowledged writes missing (or under another id) on at least one instance
    lost: list[str] = field(default_factory=list)
    #: acknowledged ids given to two different schemas
    acked_duplicate_ids: int = 0
    #: subjects whose versions are not 1..n on some instance
    version_gaps: list[str] = field(default_factory=list)
    converged: bool = False
    #: read_committed / read_uncommitted: ids and subject-versions given to two schemas
    duplicate_ids: dict[str, int] = field(default_factory=dict)
    duplicate_versions: dict[str, int] = field(default_factory=dict)
    #: the two readers rebuild the same subject-version -> (id, schema) state
    readers_agree: bool = False
    reader_differences: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        out = []
        if self.lost:
            out.append(f"{len(self.lost)} acknowledged writes lost, e.g. {self.lost[:3]}")
        if self.acked_duplicate_ids:
            out.append(f"{self.acked_duplicate_ids} acknowledged ids given to two schemas")
        if self.version_gaps:
            out.append(f"version gaps: {self.version_gaps[:3]}")
        if not self.converged:
            out.append("instances did not converge")
        for isolation, n in self.duplicate_ids.items():
            if n:
                out.append(f"{isolation}: {n} ids given to two schemas")
        for isolation, n in self.duplicate_versions.items():
            if n:
                out.append(f"{isolation}: {n} subject-versions given to two schemas")
        if not self.readers_agree:
            out.append(f"readers disagree: {self.reader_differences[:3]}")
        return out


def _instance_view(http: httpx.Client, url: str, prefix: str) -> dict[str, list[int]]:
    subjects = http.get(f"{url}/subjects").json()
    return {
        s: sorted(http.get(f"{url}/subjects/{s}/versions").json())
        for s in subjects
        if s.startswith(prefix)
    }


def check(
    urls: list[str],
    bootstrap: str,
    topic: str,
    acked: list[Answer],
    prefix: str,
    converge_within: float = 30,
) -> Check:
    result = Check(acked=len(acked))
    ids = Counter(a.schema_id for a in acked)
    result.acked_duplicate_ids = sum(1 for n in ids.values() if n > 1)
    with httpx.Client(timeout=30) as http:
        # every instance holds the same subjects and versions (waiting for the followers)
        deadline = time.monotonic() + converge_within
        while True:
            views = [_instance_view(http, url, prefix) for url in urls]
            result.converged = all(v == views[0] for v in views)
            if result.converged or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        for url, view in zip(urls, views, strict=True):
            for subject, versions in view.items():
                if versions != list(range(1, len(versions) + 1)):
                    result.version_gaps.append(f"{url} {subject}: {versions}")
        # every acknowledged write, on every instance, with its id and one version
        for a in acked:
            seen = set()
            for url in urls:
                reply = http.post(
                    f"{url}/subjects/{a.subject}", json={"schema": a.schema}, headers=HEADERS
                )
                body = reply.json() if reply.status_code == 200 else {}
                seen.add((reply.status_code, body.get("id"), body.get("version")))
            if len(seen) != 1 or next(iter(seen))[:2] != (200, a.schema_id):
                result.lost.append(f"{a.subject} id {a.schema_id}: {sorted(seen, key=str)}")
    states = {}
    for isolation in ("read_committed", "read_uncommitted"):
        state = topic_state(topic_records(bootstrap, topic, isolation))
        states[isolation] = state
        result.duplicate_ids[isolation] = len(state.duplicate_ids)
        result.duplicate_versions[isolation] = len(state.duplicate_versions)
    committed, uncommitted = states["read_committed"], states["read_uncommitted"]
    result.readers_agree = committed.versions == uncommitted.versions
    for key in sorted(set(committed.versions) | set(uncommitted.versions), key=str):
        if committed.versions.get(key) != uncommitted.versions.get(key):
            result.reader_differences.append(
                f"{key}: committed {committed.versions.get(key, (None,))[0]}, "
                f"uncommitted {uncommitted.versions.get(key, (None,))[0]}"
            )
    return result


# ---------------------------------------------------------------------------------------------
# Brokers


@dataclass
class Brokers:
    """A broker set started by ``scripts/kafka``: one node (``start``) or three
    (``cluster-start``), killed and restarted by node number (1 for the single broker)."""

    script: Path
    directory: Path
    nodes: int
    bootstrap: str = ""

    def _run(self, *args: str, timeout: float = 240) -> str:
        done = subprocess.run(
            ["bash", str(self.script), *args],
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"scripts/kafka {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""

    def start(self) -> str:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.nodes == 1:
            self.bootstrap = self._run(
                "start", "--dir", str(self.directory), "--port", str(free_port()),
                "--controller-port", str(free_port()),
            )  # fmt: skip
        else:
            ports = ",".join(str(free_port()) for _ in range(3))
            controllers = ",".join(str(free_port()) for _ in range(3))
            self.bootstrap = self._run(
                "cluster-start", "--dir", str(self.directory), "--ports", ports,
                "--controller-ports", controllers,
            )  # fmt: skip
        return self.bootstrap

    def kill(self, node: int) -> None:
        if self.nodes == 1:
            pid = int((self.directory / "broker.pid").read_text())
            os.kill(pid, signal.SIGKILL)
            _wait_gone(pid)
        else:
            self._run("node-kill", "--dir", str(self.directory), "--node", str(node))

    def stop_node(self, node: int) -> None:
        if self.nodes == 1:
            self._run("stop", "--dir", str(self.directory))
        else:
            self._run("node-stop", "--dir", str(self.directory), "--node", str(node))

    def restart(self, node: int) -> None:
        if self.nodes == 1:
            port = (self.directory / "port").read_text().strip()
            props = (self.directory / "server.properties").read_text()
            cport = props.split("CONTROLLER://127.0.0.1:")[1].split()[0]
            self._run(
                "start", "--dir", str(self.directory), "--port", port, "--controller-port", cport
            )
        else:
            self._run("node-start", "--dir", str(self.directory), "--node", str(node))

    def close(self) -> None:
        if self.nodes == 1:
            if (self.directory / "broker.pid").exists():
                self._run("stop", "--dir", str(self.directory), timeout=60)
        else:
            self._run("cluster-stop", "--dir", str(self.directory), timeout=120)

    def partition_leader(self, topic: str) -> int | None:
        """The node id leading partition 0 of ``topic`` (None when unknown)."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        meta = admin.list_topics(topic, timeout=10)
        part = meta.topics[topic].partitions.get(0) if topic in meta.topics else None
        return None if part is None or part.leader < 0 else int(part.leader)

    def wait_in_sync(self, timeout: float = 120) -> bool:
        """Wait until every partition of every topic has all its replicas in sync (what an
        operator waits for between two broker restarts); False when ``timeout`` passes."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                meta = admin.list_topics(timeout=10)
            except KafkaException:  # a broker restarting: ask again
                time.sleep(0.5)
                continue
            parts = [p for t in meta.topics.values() for p in t.partitions.values()]
            if parts and all(len(p.isrs) == len(p.replicas) for p in parts):
                return True
            time.sleep(0.5)
        return False


def _wait_gone(pid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


@contextmanager
def fault_window(windows: list[tuple[float, float]], settle: float = 2.0) -> Iterator[None]:
    """Record the time the body takes (plus ``settle`` seconds after) as a fault window."""
    began = time.monotonic()
    try:
        yield
    finally:
        windows.append((began, time.monotonic() + settle))

"""Registry REST API benchmark: req/s and latency percentiles against any Confluent-compatible
Schema Registry, with a bare-FastAPI ceiling for reference.

    python bench/registry_bench.py --start-ours                  # our server, fresh SQLite file
    python bench/registry_bench.py http://127.0.0.1:8081 --compare karapace=http://127.0.0.1:8082
    python bench/registry_bench.py --start-ours --store kafka --bootstrap 127.0.0.1:19092 \
        --subjects 4000 --clients 1 16 --compare karapace=http://127.0.0.1:18081

``--store kafka`` starts ours on a fresh topic of the broker at ``--bootstrap``. ``--clients``
runs each registration scenario once per client count (``register_subject@16``: 16 connections);
the read scenarios keep ``--concurrency``. After the pre-fill every target's server process
(found by its port, or ``--compare-pid LABEL=PID``) has its resident memory read from /proc.

Scenarios (each for ``--seconds`` after ``--warmup`` seconds, ``--concurrency`` keep-alive
connections, targets interleaved per scenario so machine noise hits all of them):

* ``get_by_id``       GET  /schemas/ids/{id}              random existing ids
* ``lookup``          POST /subjects/{subject}            random subjects, their existing schema
* ``get_version``     GET  /subjects/{subject}/versions/1 random subjects
* ``register_version`` POST /subjects/{subject}/versions  the subject's schema plus one field
  with a default (BACKWARD compatible), one new version per request
* ``register_subject`` POST /subjects/{subject}/versions  a new subject per request
* ``register_new``     POST /subjects/{subject}/versions  what a fresh registry's clients do:
  one request in five a new subject, the other four new versions of the subjects this run
  created (each version adds an optional field: compatible in every mode); needs no pre-fill,
  so ``--subjects 0 --scenarios register_new`` measures a fresh topic (not in the default set)

The registry is pre-filled with ``--subjects`` subjects (``bench-00000-value``...; only missing
ones are registered); when the pre-fill registers them all, its batches show whether
registration slows down as the registry grows. The ceiling is a FastAPI app served by uvicorn
exactly as ``schema-registry serve`` serves ours (one worker, access log off, uvloop/httptools
when installed), answering GET with a JSON body the size of ours and POST with a small one.

The load generator is a minimal HTTP/1.1 client on ``asyncio.open_connection`` (uvloop when
installed): requests are pre-built bytes, responses are parsed only for status, Content-Length
(or chunked framing) and ``Connection: close``. Loopback targets only.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import ipaddress
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SUBJECT_PREFIX = "bench-"
SCENARIOS = (
    "get_by_id",
    "lookup",
    "get_version",
    "register_version",
    "register_subject",
    "register_new",
)
#: what runs without --scenarios (register_new is for fresh registries: --subjects 0)
DEFAULT_SCENARIOS = SCENARIOS[:5]
#: scenarios the bare-FastAPI ceiling also answers (GET with a same-size body; POST echo)
CEILING_SCENARIOS = ("get_by_id", "lookup", "get_version")
SCENARIO_TITLES = {
    "get_by_id": "GET /schemas/ids/{id}",
    "lookup": "POST /subjects/{s} (lookup)",
    "get_version": "GET /subjects/{s}/versions/1",
    "register_version": "POST /subjects/{s}/versions (new version)",
    "register_subject": "POST /subjects/{s}/versions (new subject)",
    "register_new": "POST /subjects/{s}/versions (new subjects and versions)",
}
#: scenarios that write; ``--clients`` runs each of them once per client count
WRITE_SCENARIOS = ("register_version", "register_subject", "register_new")
#: scenarios that need the pre-filled subjects
PREFILLED_SCENARIOS = ("get_by_id", "lookup", "get_version", "register_version")


def scenario_key(name: str, clients: int | None) -> str:
    """``register_subject@16``: a scenario run with its own client count."""
    return name if clients is None else f"{name}@{clients}"


def scenario_title(key: str) -> str:
    base, _, clients = key.partition("@")
    title = SCENARIO_TITLES[base]
    if clients:
        title += f", {clients} client" + ("" if clients == "1" else "s")
    return title


#: a hard ceiling on requests per scenario, so every loop is bounded even with --seconds huge
MAX_REQUESTS = 10_000_000


# ---------------------------------------------------------------------------------------------
# The HTTP/1.1 client


class HttpError(Exception):
    pass


@dataclass(frozen=True)
class Endpoint:
    label: str
    url: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, spec: str, default_label: str) -> Endpoint:
        label, sep, url = spec.partition("=")
        if not sep or "://" in label:
            label, url = default_label, spec
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise SystemExit(f"{url}: only http://HOST:PORT URLs are supported")
        host = parsed.hostname
        if not _is_loopback(host):
            raise SystemExit(f"{url}: refusing a non-loopback target (this bench is local only)")
        return cls(label, url, host, parsed.port or 80, parsed.path.rstrip("/"))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listening_pid(port: int) -> int | None:
    """The process listening on loopback ``port`` (Linux /proc; None if not visible)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            # local address "ADDR:PORT" in hex, state 0A = LISTEN
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{cols[9]}]")
    if not inodes:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(proc.name)
        except OSError:
            continue
    return None


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds used so far by process ``pid`` (all its threads)."""
    if pid is None:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid: int | None) -> tuple[float, float] | None:
    """(resident memory, its peak) of process ``pid`` in MiB (VmRSS, VmHWM of /proc)."""
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kib = {}
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            kib[name] = int(value.split()[0])
    if len(kib) != 2:
        return None
    return round(kib["VmRSS"] / 1024, 1), round(kib["VmHWM"] / 1024, 1)


def build_request(ep: Endpoint, method: str, path: str, body: bytes | None = None) -> bytes:
    lines = [
        f"{method} {ep.base_path}{path} HTTP/1.1",
        f"Host: {ep.host}:{ep.port}",
        f"Accept: {CONTENT_TYPE}",
    ]
    if body is not None:
        lines.append(f"Content-Type: {CONTENT_TYPE}")
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    return head + body if body is not None else head


class Connection:
    """One keep-alive connection; ``request`` sends pre-built bytes, returns (status, body)."""

    def __init__(self, ep: Endpoint) -> None:
        self.ep = ep
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        self.reader, self.writer = await asyncio.open_connection(self.ep.host, self.ep.port)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.reader, self.writer

    async def request(self, data: bytes) -> tuple[int, bytes]:
        reader, writer = self.reader, self.writer
        if reader is None or writer is None:
            reader, writer = await self._open()
        try:
            writer.write(data)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = -1
            chunked = close = False
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding":
                    chunked = b"chunked" in value.lower()
                elif name == b"connection":
                    close = b"close" in value.lower()
            if chunked:
                body = await self._read_chunked(reader)
            elif length >= 0:
                body = await reader.readexactly(length)
            elif status in (204, 304) or 100 <= status < 200:
                body = b""
            else:  # no framing: the body runs to the end of the connection
                body = await reader.read()
                close = True
        except (
            OSError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            self.close()
            raise
        if close:
            self.close()
        return status, body

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        for _ in range(1_000_000):
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0], 16)
            if size == 0:
                # trailers, then the blank line
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        raise HttpError("too many chunks")

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def call(
    ep: Endpoint,
    method: str,
    path: str,
    body: Any = None,
    conn: Connection | None = None,
) -> tuple[int, Any]:
    """One request with a JSON body/answer (set-up traffic, not measured)."""
    own = conn is None
    conn = conn or Connection(ep)
    data = None if body is None else json.dumps(body).encode()
    try:
        status, raw = await conn.request(build_request(ep, method, path, data))
    finally:
        if own:
            conn.close()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


# ---------------------------------------------------------------------------------------------
# Measurement


@dataclass
class Result:
    target: str
    scenario: str
    seconds: float
    requests: int
    errors: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    #: CPU the load generator itself used, in % of one core (the server shares the machine)
    client_cpu_pct: float = 0.0
    #: CPU the server process used per successful request (when its process is visible)
    server_cpu_ms: float | None = None
    #: CPU the server process used, in % of one core
    server_cpu_pct: float | None = None
    error_samples: list[str] = field(default_factory=list)
    per_second: list[int] = field(default_factory=list)
    #: connections that sent requests
    clients: int = 0
    #: wall-clock time (epoch seconds) when the measured part started
    started: float = 0.0
    #: CPU the Kafka broker (``--broker-pid``) used per successful request
    broker_cpu_ms: float | None = None


def percentile(sorted_values: Sequence[int], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values)) - 1))
    return sorted_values[index] / 1e6


def summarize(
    target: str,
    scenario: str,
    latencies_ns: list[int],
    errors: int,
    elapsed: float,
    samples: list[str],
    per_second: list[int],
) -> Result:
    lat = sorted(latencies_ns)
    ok = len(lat)
    return Result(
        target=target,
        scenario=scenario,
        seconds=round(elapsed, 3),
        requests=ok + errors,
        errors=errors,
        rps=round(ok / elapsed, 1) if elapsed > 0 else 0.0,
        p50_ms=round(percentile(lat, 0.50), 3),
        p90_ms=round(percentile(lat, 0.90), 3),
        p99_ms=round(percentile(lat, 0.99), 3),
        max_ms=round(lat[-1] / 1e6, 3) if lat else float("nan"),
        error_samples=samples[:5],
        per_second=per_second,
    )


async def drive(
    ep: Endpoint,
    next_request: Callable[[], bytes],
    *,
    concurrency: int,
    seconds: float,
    max_requests: int = MAX_REQUESTS,
    ok: Callable[[int], bool] = lambda s: 200 <= s < 300,
    pid: int | None = None,
) -> tuple[list[int], int, float, float, float | None, list[str], list[int]]:
    """``concurrency`` connections sending ``next_request()`` back to back for ``seconds``.

    Returns (latencies of successful requests in ns, error count, elapsed s, client CPU % of
    one core, server CPU seconds (process ``pid``), error samples, successful requests per
    second of the run)."""
    latencies: list[int] = []
    samples: list[str] = []
    errors = 0
    issued = 0
    clock = time.perf_counter_ns
    cpu0 = time.process_time()
    server0 = cpu_seconds(pid)
    start = clock()
    deadline = start + int(seconds * 1e9)
    buckets = [0] * (int(seconds) + 2)

    async def worker() -> None:
        nonlocal errors, issued
        conn = Connection(ep)
        try:
            while issued < max_requests:
                t0 = clock()
                if t0 >= deadline:
                    break
                issued += 1
                data = next_request()
                try:
                    status, body = await conn.request(data)
                except (
                    OSError,
                    asyncio.IncompleteReadError,
                    ValueError,
                    HttpError,
                ) as exc:
                    errors += 1
                    if len(samples) < 5:
                        samples.append(f"{type(exc).__name__}: {exc}")
                    await asyncio.sleep(0.01)
                    continue
                t1 = clock()
                if ok(status):
                    latencies.append(t1 - t0)
                    buckets[min(len(buckets) - 1, (t1 - start) // 1_000_000_000)] += 1
                else:
                    errors += 1
                    if len(samples) < 5:
                        samples.append(f"HTTP {status}: {body[:200].decode(errors='replace')}")
        finally:
            conn.close()

    tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
    # a watchdog: a wedged server must not hang the bench
    _, pending = await asyncio.wait(tasks, timeout=seconds + 60)
    for task in pending:
        task.cancel()
        errors += 1
        if len(samples) < 5:
            samples.append("timeout: connection still waiting 60 s after the end")
    await asyncio.gather(*pending, return_exceptions=True)
    # workers stop issuing at the deadline; the last answers arrive just after it
    elapsed = (clock() - start) / 1e9
    cpu = 100 * (time.process_time() - cpu0) / elapsed
    server1 = cpu_seconds(pid)
    server = None if server0 is None or server1 is None else server1 - server0
    return (
        latencies,
        errors,
        elapsed,
        cpu,
        server,
        samples,
        buckets[: max(1, int(seconds))],
    )


# ---------------------------------------------------------------------------------------------
# The data set


def subject_name(i: int) -> str:
    return f"{SUBJECT_PREFIX}{i:05d}-value"


def base_schema(i: int) -> dict[str, Any]:
    """Subject i's first schema: a record with a few fields, distinct per subject."""
    return {
        "type": "record",
        "name": f"Bench{i}",
        "namespace": "bench.registry",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": "string"},
            {"name": "amount", "type": "double"},
            {"name": "tags", "type": {"type": "array", "items": "string"}},
            {"name": f"f{i}", "type": ["null", "int"], "default": None},
        ],
    }


def schema_body(schema: dict[str, Any]) -> bytes:
    return json.dumps({"schema": json.dumps(schema, separators=(",", ":"))}).encode()


@dataclass
class Prefill:
    target: str
    subjects: int
    existing: int
    registered: int
    seconds: float
    errors: int
    #: batches of the registration of missing subjects: (subjects before, after, req/s, p50, p99)
    batches: list[dict[str, float]] = field(default_factory=list)
    #: the server process's resident memory (VmRSS) and its peak (VmHWM) once every target's
    #: pre-fill is done, MiB
    rss_mib: float | None = None
    peak_rss_mib: float | None = None
    #: the same at the end of the run (after the registration scenarios)
    rss_end_mib: float | None = None


async def prefill(
    ep: Endpoint,
    count: int,
    concurrency: int,
    log: Callable[[str], None],
    pid: int | None,
) -> tuple[Prefill, dict[int, int]]:
    """Registers the missing ``bench-*`` subjects; returns the stats and {subject index: id}."""
    status, listed = await call(ep, "GET", "/subjects")
    if status != 200 or not isinstance(listed, list):
        raise SystemExit(f"{ep.label}: GET /subjects answered {status}: {listed!r}")
    present = set(listed)
    missing = [i for i in range(count) if subject_name(i) not in present]
    existing = [i for i in range(count) if subject_name(i) in present]
    ids: dict[int, int] = {}
    batch = max(1000, count // 10)
    stats = Prefill(ep.label, count, len(existing), 0, 0.0, 0)
    log(f"{ep.label}: {len(existing)} of {count} subjects present, registering {len(missing)}")

    async def run(
        indexes: list[int], path_of: Callable[[int], str], record_batches: bool
    ) -> tuple[int, float]:
        position = 0
        done = 0
        errors = 0
        start = time.perf_counter()
        batch_start = start
        batch_cpu = cpu_seconds(pid)
        batch_lat: list[int] = []

        async def worker() -> None:
            nonlocal position, done, errors, batch_start, batch_lat, batch_cpu
            conn = Connection(ep)
            try:
                while position < len(indexes):
                    i = indexes[position]
                    position += 1
                    data = build_request(ep, "POST", path_of(i), schema_body(base_schema(i)))
                    t0 = time.perf_counter_ns()
                    try:
                        status, body = await conn.request(data)
                    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                        errors += 1
                        log(f"{ep.label}: {subject_name(i)}: {exc!r}")
                        continue
                    if status != 200:
                        errors += 1
                        if errors <= 5:
                            log(f"{ep.label}: {subject_name(i)}: HTTP {status} {body[:200]!r}")
                        continue
                    batch_lat.append(time.perf_counter_ns() - t0)
                    ids[i] = int(json.loads(body)["id"])
                    done += 1
                    if record_batches and done % batch == 0:
                        now = time.perf_counter()
                        cpu = cpu_seconds(pid)
                        lat = sorted(batch_lat)
                        before = len(existing) + done - batch
                        row: dict[str, float] = {
                            "subjects_before": before,
                            "subjects_after": before + batch,
                            "rps": round(batch / (now - batch_start), 1),
                            "p50_ms": round(percentile(lat, 0.5), 3),
                            "p99_ms": round(percentile(lat, 0.99), 3),
                        }
                        if cpu is not None and batch_cpu is not None:
                            row["server_cpu_ms"] = round(1000 * (cpu - batch_cpu) / batch, 3)
                        stats.batches.append(row)
                        log(
                            f"{ep.label}: {before + batch} subjects, last {batch} at "
                            f"{row['rps']} req/s, server CPU/req {row.get('server_cpu_ms')} ms"
                        )
                        batch_start, batch_lat, batch_cpu = now, [], cpu
            finally:
                conn.close()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return errors, time.perf_counter() - start

    errors, seconds = await run(missing, lambda i: f"/subjects/{subject_name(i)}/versions", True)
    stats.registered = len(missing) - errors
    stats.seconds = round(seconds, 2)
    # ids of subjects registered by an earlier run: a lookup of their first schema
    lookup_errors, _ = await run(existing, lambda i: f"/subjects/{subject_name(i)}", False)
    stats.errors = errors + lookup_errors
    if stats.errors:
        log(f"{ep.label}: WARNING: {stats.errors} pre-fill requests failed")
    return stats, ids


# ---------------------------------------------------------------------------------------------
# Scenarios


class Workload:
    """Request generators for one target, over its pre-filled subjects."""

    def __init__(self, ep: Endpoint, ids: dict[int, int], seed: int) -> None:
        self.ep = ep
        self.rng = random.Random(seed)
        self.indexes = sorted(ids)
        self.by_id = [build_request(ep, "GET", f"/schemas/ids/{ids[i]}") for i in self.indexes]
        self.lookups = [
            build_request(ep, "POST", f"/subjects/{subject_name(i)}", schema_body(base_schema(i)))
            for i in self.indexes
        ]
        self.versions = [
            build_request(ep, "GET", f"/subjects/{subject_name(i)}/versions/1")
            for i in self.indexes
        ]
        # new versions: subject k % n gets the base schema plus fields x<token>_0..x<token>_r
        # (r = k // n), every one with a default, so each is BACKWARD compatible with the
        # subject's latest version (this run's previous one, or an earlier run's)
        self.token = uuid.uuid4().hex[:8]
        order = list(self.indexes)
        self.rng.shuffle(order)
        self.version_order = order
        self.version_count = 0
        self.subject_count = 0
        self.new_count = 0

    def scenario(self, name: str) -> Callable[[], bytes]:
        if name == "get_by_id":
            return lambda: self.rng.choice(self.by_id)
        if name == "lookup":
            return lambda: self.rng.choice(self.lookups)
        if name == "get_version":
            return lambda: self.rng.choice(self.versions)
        if name == "register_version":
            return self._new_version
        if name == "register_subject":
            return self._new_subject
        if name == "register_new":
            return self._new_subject_or_version
        raise ValueError(name)

    def _new_subject_or_version(self) -> bytes:
        k = self.new_count
        self.new_count += 1
        subject, fields = divmod(k, 5)
        schema = base_schema(subject)
        schema["name"] = f"Fresh{self.token}_{subject}"
        schema["fields"] += [
            {"name": f"v{r}", "type": ["null", "string"], "default": None} for r in range(fields)
        ]
        path = f"/subjects/{SUBJECT_PREFIX}fresh-{self.token}-{subject}-value/versions"
        return build_request(self.ep, "POST", path, schema_body(schema))

    def _new_version(self) -> bytes:
        k = self.version_count
        self.version_count += 1
        n = len(self.version_order)
        i = self.version_order[k % n]
        schema = base_schema(i)
        for r in range(k // n + 1):
            schema["fields"].append(
                {
                    "name": f"x{self.token}_{r}",
                    "type": ["null", "string"],
                    "default": None,
                }
            )
        path = f"/subjects/{subject_name(i)}/versions"
        return build_request(self.ep, "POST", path, schema_body(schema))

    def _new_subject(self) -> bytes:
        k = self.subject_count
        self.subject_count += 1
        schema = base_schema(k)
        schema["name"] = f"New{self.token}_{k}"
        path = f"/subjects/{SUBJECT_PREFIX}new-{self.token}-{k}-value/versions"
        return build_request(self.ep, "POST", path, schema_body(schema))


class CeilingWorkload:
    """The same request shapes against the bare-FastAPI app."""

    def __init__(self, ep: Endpoint, seed: int) -> None:
        rng = random.Random(seed)
        self.rng = rng
        self.gets = [build_request(ep, "GET", f"/schemas/ids/{n}") for n in range(1, 1001)]
        self.posts = [
            build_request(ep, "POST", f"/subjects/{subject_name(i)}", schema_body(base_schema(i)))
            for i in range(1000)
        ]
        self.versions = [
            build_request(ep, "GET", f"/subjects/{subject_name(i)}/versions/1") for i in range(1000)
        ]

    def scenario(self, name: str) -> Callable[[], bytes]:
        if name == "get_by_id":
            return lambda: self.rng.choice(self.gets)
        if name == "lookup":
            return lambda: self.rng.choice(self.posts)
        if name == "get_version":
            return lambda: self.rng.choice(self.versions)
        raise ValueError(name)


# ---------------------------------------------------------------------------------------------
# The bare-FastAPI ceiling (run in a subprocess: ``registry_bench.py --serve-ceiling PORT SIZE``)


def serve_ceiling(port: int, body_size: int) -> None:
    # FastAPI resolves the handlers' (string) annotations in this module's globals
    global Request, Response
    import orjson
    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.responses import Response

    # {"schema": "..."} with the string padded so the rendered body is body_size bytes
    text = "x" * max(0, body_size - len(orjson.dumps({"schema": ""})))
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/schemas/ids/{schema_id}")
    async def by_id(schema_id: str) -> Response:
        return Response(orjson.dumps({"schema": text}), media_type=CONTENT_TYPE)

    @app.get("/subjects/{subject}/versions/{version}")
    async def version(subject: str, version: str) -> Response:
        answer = {"subject": subject, "version": 1, "id": 1, "schema": text}
        return Response(orjson.dumps(answer), media_type=CONTENT_TYPE)

    @app.post("/subjects/{subject}")
    async def lookup(request: Request, subject: str) -> Response:
        body = orjson.loads(await request.body())
        answer = {"subject": subject, "version": 1, "id": 1, "schema": body["schema"]}
        return Response(orjson.dumps(answer), media_type=CONTENT_TYPE)

    # the settings of registry.cli.serve_forever
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        server_header=False,
    )
    uvicorn.Server(config).run()


# ---------------------------------------------------------------------------------------------
# Subprocesses: our server and the ceiling


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def venv_bin(name: str) -> str:
    """``name`` from the project's virtualenv, else next to this interpreter."""
    for candidate in (
        REPO / ".venv" / "bin" / name,
        Path(sys.executable).parent / name,
    ):
        if candidate.exists():
            return str(candidate)
    raise SystemExit(f"{name} not found in {REPO / '.venv'} nor next to {sys.executable}")


async def wait_ready(
    ep: Endpoint,
    proc: subprocess.Popen[bytes],
    timeout: float = 180,  # a Kafka store's start on a busy 2-core machine
    path: str = "/",
    ready: Callable[[int], bool] = lambda status: status < 500,
) -> None:
    """Until ``GET path`` answers a status that ``ready`` accepts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{ep.label} exited with {proc.returncode} while starting")
        try:
            status, _ = await call(ep, "GET", path)
            if ready(status):
                return
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        await asyncio.sleep(0.2)
    raise SystemExit(f"{ep.label} did not answer within {timeout:.0f} s")


@contextmanager
def child(argv: list[str], log: Callable[[str], None]) -> Iterator[subprocess.Popen[bytes]]:
    log("starting: " + " ".join(argv))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)


# ---------------------------------------------------------------------------------------------
# Reporting


def fmt_ms(v: float) -> str:
    return f"{v:.2f}"


def _opt(v: float | None, spec: str, suffix: str = "") -> str:
    return "" if v is None else f"{v:{spec}}{suffix}"


def markdown(
    results: list[Result],
    prefills: list[Prefill],
    ours: str,
    ceiling: str | None,
    targets: list[str],
    rounds: list[Result] | None = None,
) -> str:
    """Tables of ``results`` (one per target and scenario); ``rounds``, when given, every
    round's result, for the per-round req/s ratios."""
    out: list[str] = []
    # scenario keys in the order they ran (register_subject@1, register_subject@16, ...)
    keys = list(dict.fromkeys(r.scenario for r in results))
    broker = any(r.broker_cpu_ms is not None for r in results)
    out.append(
        "| Scenario | Target | req/s | p50 ms | p90 ms | p99 ms | max ms | requests | errors "
        "| server CPU ms/req | server CPU | client CPU |"
        + (" broker CPU ms/req |" if broker else "")
    )
    out.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|" + ("--:|" if broker else ""))
    for scenario in keys:
        for r in results:
            if r.scenario != scenario:
                continue
            out.append(
                f"| {scenario_title(scenario)} | {r.target} | {r.rps:,.0f} | {fmt_ms(r.p50_ms)}"
                f" | {fmt_ms(r.p90_ms)} | {fmt_ms(r.p99_ms)} | {fmt_ms(r.max_ms)} | {r.requests:,}"
                f" | {r.errors}{' ⚠' if r.errors else ''} | {_opt(r.server_cpu_ms, '.3f')}"
                f" | {_opt(r.server_cpu_pct, '.0f', '%')} | {r.client_cpu_pct:.0f}% |"
                + (f" {_opt(r.broker_cpu_ms, '.3f')} |" if broker else "")
            )
    others = [t for t in targets if t != ours]
    if others:
        out.append("")
        per_round = rounds is not None
        out.append(
            "| Scenario | "
            + " | ".join(
                f"{ours}/{t} req/s | {ours}/{t} p50 | {ours}/{t} server CPU/req"
                + (f" | {ours}/{t} req/s per round" if per_round else "")
                for t in others
            )
            + " |"
        )
        out.append("|---|" + ("--:|--:|--:|--:|" if per_round else "--:|--:|--:|") * len(others))
        by = {(r.target, r.scenario): r for r in results}
        for scenario in keys:
            mine = by.get((ours, scenario))
            if mine is None:
                continue
            if not any((t, scenario) in by for t in others):
                continue
            cells = []
            for t in others:
                peer = by.get((t, scenario))
                if peer is None or not peer.rps or not peer.p50_ms:
                    cells += ["", "", ""] + ([""] if per_round else [])
                    continue
                cells += [
                    f"{mine.rps / peer.rps:.2f}",
                    f"{mine.p50_ms / peer.p50_ms:.2f}",
                ]
                if mine.server_cpu_ms and peer.server_cpu_ms:
                    cells.append(f"{mine.server_cpu_ms / peer.server_cpu_ms:.2f}")
                else:
                    cells.append("")
                if rounds is not None:
                    cells.append(", ".join(_round_ratios(rounds, scenario, ours, t)))
            out.append(f"| {scenario_title(scenario)} | " + " | ".join(cells) + " |")
    growth = [p for p in prefills if p.batches]
    if growth:
        out.append("")
        out.append("Registration while the registry grows (the pre-fill, new subjects):")
        out.append("")
        out.append("| Target | subjects | req/s | p50 ms | p99 ms | server CPU ms/req |")
        out.append("|---|--:|--:|--:|--:|--:|")
        for p in growth:
            for b in p.batches:
                out.append(
                    f"| {p.target} | {int(b['subjects_before']):,}→{int(b['subjects_after']):,}"
                    f" | {b['rps']:,.0f} | {fmt_ms(b['p50_ms'])} | {fmt_ms(b['p99_ms'])}"
                    f" | {_opt(b.get('server_cpu_ms'), '.3f')} |"
                )
        out.append("")
        for p in growth:
            if len(p.batches) < 2:
                continue
            first, last = p.batches[0], p.batches[-1]
            middle = p.batches[(len(p.batches) - 1) // 2]
            out.append(
                f"- {p.target}: req/s at {int(last['subjects_after']):,} / at "
                f"{int(first['subjects_after']):,} subjects = {last['rps'] / first['rps']:.2f}, "
                f"at {int(last['subjects_after']):,} / at {int(middle['subjects_after']):,} = "
                f"{last['rps'] / middle['rps']:.2f}; p50 latency last/first = "
                f"{last['p50_ms'] / first['p50_ms']:.2f}"
                + (
                    f"; server CPU/req last/first = "
                    f"{last['server_cpu_ms'] / first['server_cpu_ms']:.2f}, last/middle = "
                    f"{last['server_cpu_ms'] / middle['server_cpu_ms']:.2f}"
                    if first.get("server_cpu_ms")
                    and middle.get("server_cpu_ms")
                    and "server_cpu_ms" in last
                    else ""
                )
            )
    memory = [p for p in prefills if p.rss_mib is not None]
    if memory:
        out.append("")
        out.append(
            f"Server memory (one process each) after the pre-fill, every target holding the same "
            f"{memory[0].subjects:,} schemas, and at the end of the run:"
        )
        out.append("")
        out.append("| Target | RSS MiB | peak RSS MiB | RSS at the end MiB | RSS / ours |")
        out.append("|---|--:|--:|--:|--:|")
        base = next((p.rss_mib for p in memory if p.target == ours), None)
        for p in memory:
            ratio = f"{p.rss_mib / base:.2f}" if base and p.rss_mib else ""
            out.append(
                f"| {p.target} | {p.rss_mib:,.1f} | {_opt(p.peak_rss_mib, ',.1f')}"
                f" | {_opt(p.rss_end_mib, ',.1f')} | {ratio} |"
            )
    for p in prefills:
        if not p.batches:
            out.append(
                f"- {p.target}: registry already held {p.existing:,} of {p.subjects:,} "
                "subjects; growth not measured (use a fresh registry)"
            )
    bad = [r for r in results if r.errors]
    if bad or any(p.errors for p in prefills):
        out.append("")
        out.append("**WARNING: some requests failed:**")
        for r in bad:
            out.append(f"- {r.target} {r.scenario}: {r.errors} errors, e.g. {r.error_samples[:2]}")
        for p in prefills:
            if p.errors:
                out.append(f"- {p.target} pre-fill: {p.errors} errors")
    return "\n".join(out)


def _round_ratios(rounds: list[Result], scenario: str, ours: str, peer: str) -> list[str]:
    """``ours`` / ``peer`` req/s of each round (the n-th result of each, in run order)."""
    mine = [r.rps for r in rounds if r.target == ours and r.scenario == scenario]
    theirs = [r.rps for r in rounds if r.target == peer and r.scenario == scenario]
    return [f"{a / b:.2f}" if b else "" for a, b in zip(mine, theirs, strict=False)]


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    loop = "asyncio"
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "client_loop": loop,
    }


# ---------------------------------------------------------------------------------------------
# Main


async def bench(args: argparse.Namespace) -> int:
    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    load_at_start = _loadavg()
    log(f"load average at start: {load_at_start}")

    # (key, scenario, connections): the write scenarios once per --clients count
    plan: list[tuple[str, str, int]] = []
    for name in SCENARIOS:
        if name not in args.scenarios:
            continue
        if args.clients and name in WRITE_SCENARIOS:
            plan += [(scenario_key(name, c), name, c) for c in args.clients]
        else:
            plan.append((name, name, args.concurrency))
    async with _our_server(args, log) as ours_url:
        ours = Endpoint.parse(ours_url, "ours")
        peers = [Endpoint.parse(spec, f"peer{n + 1}") for n, spec in enumerate(args.compare)]
        targets = [ours, *peers]
        if len({t.label for t in targets}) != len(targets):
            raise SystemExit("target labels must be distinct (use LABEL=URL)")

        given = dict(_label_pid(spec) for spec in args.compare_pid)
        pids: dict[str, int | None] = {
            t.label: given.get(t.label) or listening_pid(t.port) for t in targets
        }
        for label, pid in pids.items():
            log(f"{label}: server process {pid if pid else 'not visible'}")
        prefills: list[Prefill] = []
        workloads: dict[str, Workload | CeilingWorkload] = {}
        for n, ep in enumerate(targets):
            stats, ids = await prefill(ep, args.subjects, args.concurrency, log, pids.get(ep.label))
            prefills.append(stats)
            workloads[ep.label] = Workload(ep, ids, args.seed + n)
        # every target now holds the same --subjects schemas (and is idle)
        for stats in prefills:
            memory = memory_mib(pids.get(stats.target))
            if memory is not None:
                stats.rss_mib, stats.peak_rss_mib = memory
                log(
                    f"{stats.target}: RSS {memory[0]:,.1f} MiB (peak {memory[1]:,.1f} MiB) "
                    f"at {args.subjects:,} subjects"
                )

        ceiling_ep: Endpoint | None = None
        body_size = 0
        with ExitStack() as stack:
            if not args.no_ceiling and set(args.scenarios) & set(CEILING_SCENARIOS):
                body_size = await answer_size(ours, workloads[ours.label])
                port = free_port()
                ceiling_ep = Endpoint.parse(f"ceiling=http://127.0.0.1:{port}", "ceiling")
                argv = [
                    venv_bin("python"),
                    str(Path(__file__).resolve()),
                    "--serve-ceiling",
                    str(port),
                    str(body_size),
                ]
                proc = stack.enter_context(child(argv, log))
                await wait_ready(ceiling_ep, proc)
                pids["ceiling"] = proc.pid
                workloads["ceiling"] = CeilingWorkload(ceiling_ep, args.seed)
            results: list[Result] = []
            for rnd in range(args.rounds):
                for key, scenario, clients in plan:
                    order = list(targets)
                    if ceiling_ep is not None and scenario in CEILING_SCENARIOS:
                        order.append(ceiling_ep)
                    if rnd % 2:
                        order.reverse()
                    for ep in order:
                        gen = workloads[ep.label].scenario(scenario)
                        if args.warmup > 0:
                            await drive(
                                ep,
                                gen,
                                concurrency=clients,
                                seconds=args.warmup,
                            )
                        started = time.time()
                        broker0 = cpu_seconds(args.broker_pid)
                        lat, errors, elapsed, cpu, server, samples, per_s = await drive(
                            ep,
                            gen,
                            concurrency=clients,
                            seconds=args.seconds,
                            pid=pids.get(ep.label),
                        )
                        r = summarize(ep.label, key, lat, errors, elapsed, samples, per_s)
                        r.clients = clients
                        r.started = round(started, 3)
                        broker1 = cpu_seconds(args.broker_pid)
                        if broker0 is not None and broker1 is not None and lat:
                            r.broker_cpu_ms = round(1000 * (broker1 - broker0) / len(lat), 3)
                        r.client_cpu_pct = round(cpu, 1)
                        if server is not None and lat:
                            r.server_cpu_ms = round(1000 * server / len(lat), 3)
                            r.server_cpu_pct = round(100 * server / elapsed, 1)
                        log(
                            f"round {rnd + 1} {key:<20} {ep.label:<10} {r.rps:>9,.0f} req/s"
                            f"  p50 {r.p50_ms:.2f} ms  p99 {r.p99_ms:.2f} ms  errors {r.errors}"
                            f"  client CPU {r.client_cpu_pct:.0f}%"
                            f"  server CPU/req {r.server_cpu_ms} ms"
                            + (f"  broker CPU/req {r.broker_cpu_ms} ms" if args.broker_pid else "")
                        )
                        results.append(r)
        for stats in prefills:
            memory = memory_mib(pids.get(stats.target))
            if memory is not None:
                stats.rss_end_mib = memory[0]

    merged = merge_rounds(results) if args.rounds > 1 else results
    labels = [t.label for t in targets] + (["ceiling"] if ceiling_ep else [])
    table = markdown(
        merged,
        prefills,
        ours.label,
        "ceiling" if ceiling_ep else None,
        labels,
        rounds=results if args.rounds > 1 else None,
    )
    header = (
        f"{dt.datetime.now().isoformat(timespec='seconds')}  subjects={args.subjects}  "
        f"concurrency={args.concurrency}  clients={args.clients}  seconds={args.seconds}  "
        f"warmup={args.warmup}  rounds={args.rounds}  load average={_loadavg()}  "
        f"machine={machine()}"
    )
    print(header)
    print()
    print(table)
    if args.json:
        payload = {
            "date": dt.datetime.now().isoformat(timespec="seconds"),
            "command": " ".join(sys.argv),
            "options": {k: v for k, v in vars(args).items() if k != "serve_ceiling"},
            "machine": machine(),
            "load_average_at_start": load_at_start,
            "load_average_at_end": _loadavg(),
            "targets": {t.label: t.url for t in targets},
            "pids": pids,
            "ceiling_body_bytes": body_size,
            "prefill": [asdict(p) for p in prefills],
            "results": [asdict(r) for r in results],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
        log(f"raw results written to {args.json}")
    failed = any(r.errors for r in results) or any(p.errors for p in prefills)
    return 1 if failed else 0


async def answer_size(ep: Endpoint, workload: Workload | CeilingWorkload) -> int:
    """The median size of ``ep``'s ``/schemas/ids/{id}`` answer body."""
    assert isinstance(workload, Workload)
    conn = Connection(ep)
    sizes = []
    try:
        for data in workload.by_id[:51]:
            status, body = await conn.request(data)
            if status == 200:
                sizes.append(len(body))
    finally:
        conn.close()
    return sorted(sizes)[len(sizes) // 2] if sizes else 300


def report(payload: dict[str, Any]) -> str:
    """The tables of a ``--json`` file."""
    results = [Result(**r) for r in payload["results"]]
    prefills = [Prefill(**p) for p in payload["prefill"]]
    labels = list(payload["targets"])
    ceiling = "ceiling" if any(r.target == "ceiling" for r in results) else None
    several = payload["options"].get("rounds", 1) > 1
    merged = merge_rounds(results) if several else results
    table = markdown(
        merged,
        prefills,
        labels[0],
        ceiling,
        labels + ([ceiling] if ceiling else []),
        rounds=results if several else None,
    )
    load = payload.get("load_average_at_start"), payload.get("load_average_at_end")
    return (
        f"{payload['date']}  {payload['command']}\nload average at start {load[0]}, at end "
        f"{load[1]}; machine {payload['machine']}\n\n{table}"
    )


def merge_rounds(results: list[Result]) -> list[Result]:
    """Rounds of one (target, scenario): the round with the median req/s."""
    groups: dict[tuple[str, str], list[Result]] = {}
    for r in results:
        groups.setdefault((r.target, r.scenario), []).append(r)
    merged = []
    for rs in groups.values():
        ordered = sorted(rs, key=lambda r: r.rps)
        pick = ordered[len(ordered) // 2]
        pick = Result(**{**asdict(pick), "errors": sum(r.errors for r in rs)})
        merged.append(pick)
    return merged


def _label_pid(spec: str) -> tuple[str, int]:
    label, sep, pid = spec.partition("=")
    if not sep or not pid.isdigit():
        raise SystemExit(f"--compare-pid {spec}: expected LABEL=PID")
    return label, int(pid)


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _our_store(args: argparse.Namespace, tmp: str) -> str:
    if args.store == "sqlite":
        return f"sqlite:///{tmp}/bench.db"
    # a topic of its own (and so its own election topic, group and transactional id)
    topic = args.topic or f"bench_ours_{uuid.uuid4().hex[:8]}"
    return f"kafka://{args.bootstrap}/?topic={topic}"


@asynccontextmanager
async def _our_server(args: argparse.Namespace, log: Callable[[str], None]) -> AsyncIterator[str]:
    if not args.start_ours:
        yield args.url
        return
    tmp = tempfile.mkdtemp(prefix="registry-bench-")
    port = free_port()
    argv = [
        args.ours_bin or venv_bin("schema-registry"),
        "serve",
        "--port",
        str(port),
        "--store",
        _our_store(args, tmp),
        "--log-level",
        "WARNING",
    ]
    url = f"http://127.0.0.1:{port}"
    try:
        with child(argv, log) as proc:
            # /ready: on the Kafka store, replay done and a leader elected
            ep = Endpoint.parse(url, "ours")
            await wait_ready(ep, proc, path="/ready", ready=lambda status: status == 200)
            yield url
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Schema Registry REST benchmark (see the module docstring)."
    )
    p.add_argument("url", nargs="?", help="registry to measure, e.g. http://127.0.0.1:8081")
    p.add_argument(
        "--start-ours",
        action="store_true",
        help="start our schema-registry (this virtualenv, fresh temp SQLite) on a free port",
    )
    p.add_argument(
        "--store",
        choices=("sqlite", "kafka"),
        default="sqlite",
        help="with --start-ours: its store, a fresh SQLite file or a fresh Kafka topic (sqlite)",
    )
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="with --store kafka: the broker")
    p.add_argument(
        "--topic", help="with --store kafka: the topic (default bench_ours_<random>, new)"
    )
    p.add_argument(
        "--ours-bin",
        metavar="PATH",
        help="with --start-ours: the schema-registry executable (default: this virtualenv's), "
        "e.g. another checkout's .venv/bin/schema-registry",
    )
    p.add_argument(
        "--compare",
        nargs="+",
        default=[],
        metavar="[LABEL=]URL",
        help="peers measured in the same run (scenarios interleaved); ratios are first/peer",
    )
    p.add_argument(
        "--subjects",
        type=int,
        default=10_000,
        help="pre-filled subjects (10000; 0: none, a fresh registry)",
    )
    p.add_argument("--concurrency", type=int, default=8, help="connections (8)")
    p.add_argument(
        "--clients",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="run each registration scenario once per count of connections, e.g. 1 16 "
        "(default: --concurrency)",
    )
    p.add_argument(
        "--broker-pid",
        type=int,
        metavar="PID",
        help="a Kafka broker's process: its CPU per request is reported for every run",
    )
    p.add_argument(
        "--compare-pid",
        nargs="+",
        default=[],
        metavar="LABEL=PID",
        help="a target's server process, for CPU and memory (default: found by its port)",
    )
    p.add_argument("--seconds", type=float, default=10.0, help="measured seconds per run (10)")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per run (2)")
    p.add_argument("--rounds", type=int, default=1, help="repeat the interleaved runs (1)")
    p.add_argument(
        "--scenarios",
        nargs="+",
        default=list(DEFAULT_SCENARIOS),
        choices=SCENARIOS,
        help="scenarios to run (all but register_new)",
    )
    p.add_argument("--no-ceiling", action="store_true", help="skip the bare-FastAPI ceiling")
    p.add_argument("--seed", type=int, default=1, help="random seed (1)")
    p.add_argument("--json", metavar="FILE", help="write raw results as JSON")
    p.add_argument(
        "--report",
        metavar="JSON",
        help="print the tables of an earlier run's --json file again (measures nothing)",
    )
    p.add_argument(
        "--serve-ceiling",
        nargs=2,
        type=int,
        metavar=("PORT", "BYTES"),
        help=argparse.SUPPRESS,
    )
    args = p.parse_args(argv)
    if args.serve_ceiling is None and args.report is None:
        if bool(args.url) == bool(args.start_ours):
            p.error("give a registry URL or --start-ours (not both)")
        if args.subjects < 0 or args.concurrency < 1 or args.seconds <= 0 or args.rounds < 1:
            p.error("--concurrency, --seconds and --rounds must be positive")
        if args.subjects == 0 and set(args.scenarios) & set(PREFILLED_SCENARIOS):
            p.error(
                "--subjects 0 runs only register_subject and register_new (the others need "
                "pre-filled subjects)"
            )
        if any(c < 1 for c in args.clients):
            p.error("--clients must be positive")
        if args.start_ours and args.store == "kafka" and not args.bootstrap:
            p.error("--store kafka needs --bootstrap HOST:PORT")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve_ceiling is not None:
        serve_ceiling(*args.serve_ceiling)
        return 0
    if args.report is not None:
        print(report(json.loads(Path(args.report).read_text())))
        return 0
    try:
        import uvloop

        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(bench(args))


if __name__ == "__main__":
    sys.exit(main())

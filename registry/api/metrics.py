"""Operations endpoints and request metrics, in the outermost middleware:

* ``GET /live``: 200 while the process serves HTTP (a liveness probe; no authentication, and
  answered even while the store is still being replayed, when ``/ready`` says 503);
* ``GET /metrics``: Prometheus text: requests by method, route template and status, latency
  histograms by route, schemas, subjects and versions, applied store offset, store lag
  (records committed to a SQL store and not yet applied here), readiness and leadership;
* every request gets an ``X-Request-ID`` (the caller's or a new UUID) that the protocol
  middleware echoes and every log record written while serving it carries; with
  ``access_log`` one log line per request.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Iterator, MutableMapping
from typing import Any

import orjson
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

from registry.core import Registry
from registry.exporters.metrics import ExporterCollector
from registry.logging_setup import request_id

log = logging.getLogger("registry.access")

Scope = MutableMapping[str, Any]

#: the variant nibble of a version 4 UUID for each random one (``10xx``)
_VARIANT = {f"{n:x}": "89ab"[n & 3] for n in range(16)}


def new_request_id() -> str:
    """A random (version 4) UUID in its text form, as ``str(uuid.uuid4())`` writes it (which
    Confluent's ``UUID.randomUUID()`` also is), in half the time."""
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
#: records counted at most when measuring a SQL store's lag
LAG_CAP = 10_000


class StateCollector(Collector):
    """Counts read from the in-memory state at scrape time."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        from registry.api.forwarding import readiness

        state = self.registry.state
        schemas = subjects = versions = 0
        for ctx in list(state.contexts.values()):
            schemas += len(ctx.ids)
            for subject_versions in list(ctx.subjects.values()):
                live = sum(1 for sv in list(subject_versions.values()) if not sv.deleted)
                versions += live
                subjects += 1 if live else 0
        yield _gauge("schema_registry_schemas", "Schema ids (in every context)", schemas)
        yield _gauge("schema_registry_subjects", "Subjects with a live version", subjects)
        yield _gauge("schema_registry_schema_versions", "Live subject versions", versions)
        yield _gauge(
            "schema_registry_store_applied_offset",
            "Offset of the last store record applied to this instance's state",
            state.offset,
        )
        ready, _ = readiness(self.registry)
        yield _gauge("schema_registry_ready", "1 when /ready answers 200", int(ready))
        store: Any = self.registry.store
        if hasattr(store, "is_leader"):
            yield _gauge(
                "schema_registry_is_leader", "1 on the instance that writes", int(store.is_leader)
            )
        # records other instances wrote (SQL) or the topic holds (Kafka) not applied here yet
        try:
            lag = store.lag(state.offset, LAG_CAP)
        except Exception:  # the store is down: say so with -1 rather than fail the scrape
            lag = -1
        yield _gauge(
            "schema_registry_store_lag_records",
            f"Store records not yet applied here (at most {LAG_CAP}; -1 = store unreachable)",
            lag,
        )


class AuthCollector(Collector):
    """Authentication's costs: scrypt computations, lock-outs, refusals while locked out."""

    def __init__(self, counts: Any) -> None:
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        c = self.counts
        yield CounterMetricFamily(
            "schema_registry_auth_password_hashes",
            "HTTP Basic password hashes computed (unknown users hash a decoy)",
            value=c.password_hashes,
        )
        yield CounterMetricFamily(
            "schema_registry_auth_lockouts",
            "(user, client address) pairs locked out after repeated failed Basic attempts",
            value=c.lockouts,
        )
        yield CounterMetricFamily(
            "schema_registry_auth_locked_out_refusals",
            "Basic attempts refused with 429 while locked out (no hash computed)",
            value=c.locked_out_refusals,
        )


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


class Metrics:
    def __init__(self, registry: Registry, auth_counts: Any = None, exporters: Any = None) -> None:
        self.prometheus = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "schema_registry_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=self.prometheus,
        )
        self.latency = Histogram(
            "schema_registry_http_request_duration_seconds",
            "HTTP request latency by method and route template",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=self.prometheus,
        )
        #: the label children by their labels (``labels()`` costs more than the update)
        self._counted: dict[tuple[str, str, int], Any] = {}
        self._timed: dict[tuple[str, str], Any] = {}
        self.prometheus.register(StateCollector(registry))
        self.prometheus.register(ExporterCollector(registry, exporters))
        if auth_counts is not None:
            self.prometheus.register(AuthCollector(auth_counts))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one request and its latency."""
        key = (method, route, status)
        counter = self._counted.get(key)
        if counter is None:
            counter = self._counted[key] = self.requests.labels(method, route, str(status))
        counter.inc()
        timer = self._timed.get(key[:2])
        if timer is None:
            timer = self._timed[key[:2]] = self.latency.labels(method, route)
        timer.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.prometheus)


class ObservabilityMiddleware:
    def __init__(self, app: Any, registry: Registry, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = registry.settings.access_log

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == "/live" and scope["method"] in ("GET", "HEAD"):
            await _plain(send, 200, orjson.dumps({"live": True}), b"application/json")
            return
        if path == "/metrics" and scope["method"] in ("GET", "HEAD"):
            body = await asyncio.to_thread(self.metrics.exposition)
            await _plain(send, 200, body, CONTENT_TYPE_LATEST.encode())
            return
        rid = None
        for k, v in scope["headers"]:
            if k == b"x-request-id":
                rid = v.decode("latin-1")
                break
        if not rid:
            rid = new_request_id()
            scope["headers"] = [*scope["headers"], (b"x-request-id", rid.encode())]
        token = request_id.set(rid)
        status = 500
        started = time.perf_counter()

        async def send_status(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            elapsed = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"]
            self.metrics.observe(method, route, status, elapsed)
            if self.access_log:
                log.info(
                    "%s %s %d %.1f ms",
                    method,
                    path,
                    status,
                    elapsed * 1000,
                    extra={
                        "method": method,
                        "path": path,
                        "route": route,
                        "status": status,
                        "duration_ms": round(elapsed * 1000, 3),
                        "principal": scope.get("state", {}).get("principal"),
                    },
                )
            request_id.reset(token)


async def _plain(send: Any, status: int, body: bytes, media: bytes) -> None:
    headers = [
        (b"content-type", media),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-cache, no-store, must-revalidate"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def install(app: Any, registry: Registry, auth_counts: Any = None) -> Metrics:
    """Add the middleware last (outermost): it sees every request and every answer.
    ``auth_counts``: the authenticator's :class:`registry.auth.middleware.AuthCounts`."""
    disable_created_metrics()  # no *_created series: they double the output for nothing
    metrics = Metrics(registry, auth_counts, getattr(app.state, "exporter_engine", None))
    app.add_middleware(ObservabilityMiddleware, registry=registry, metrics=metrics)
    return metrics

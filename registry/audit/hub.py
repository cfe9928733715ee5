"""The auditor: the sinks turned on, how a failure to write counts, and the metrics."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from registry.audit.sinks import Sink, SinkError, open_sinks
from registry.settings import Settings

log = logging.getLogger(__name__)


class Auditor:
    """Writes each event to every sink. Fail open (the default): an event a sink cannot take
    is counted as dropped and the request served; fail closed: changes are refused while a
    sink is unhealthy, and :meth:`emit` says whether every sink took (and, for those that
    confirm, acknowledged) the event."""

    def __init__(
        self,
        sinks: Sequence[Sink],
        *,
        source: str,
        fail_closed: bool = False,
        reads: bool = False,
    ) -> None:
        self.sinks = list(sinks)
        self.source = source
        self.fail_closed = fail_closed
        self.reads = reads
        for sink in self.sinks:
            if not hasattr(sink, "written"):
                sink.written = 0  # type: ignore[attr-defined]
                sink.dropped = 0  # type: ignore[attr-defined]
            if fail_closed and hasattr(sink, "confirming"):
                sink.confirming = True  # type: ignore[attr-defined]
        #: sinks counting their own written events (on acknowledgement: Kafka)
        self._self_counting = {id(s) for s in self.sinks if hasattr(s, "confirming")}
        #: changes refused because a sink was unavailable (fail closed)
        self.refused = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> Auditor | None:
        """The auditor the settings ask for, None when no sink is on."""
        sinks = open_sinks(settings)
        if not sinks:
            return None
        return cls(
            sinks,
            source=f"crn://schema-registry/group={settings.group_id}",
            fail_closed=settings.audit_fail_closed,
            reads=settings.audit_reads,
        )

    def start(self) -> None:
        for sink in self.sinks:
            start = getattr(sink, "start", None)
            if start is None:
                continue
            try:
                start()
            except Exception as exc:  # the sink says it is unhealthy until it recovers
                log.warning("audit sink %s could not start: %s", sink.name, exc)

    def close(self) -> None:
        for sink in self.sinks:
            try:
                sink.close()
            except Exception:
                log.exception("closing audit sink %s failed", sink.name)

    def healthy(self) -> bool:
        return all(sink.healthy() for sink in self.sinks)

    async def emit(self, event: dict[str, Any]) -> bool:
        """Write ``event`` to every sink; whether all of them took it."""
        line = orjson.dumps(event)
        ok = True
        for sink in self.sinks:
            try:
                sink.write(line, event)
            except SinkError as exc:
                ok = False
                sink.dropped += 1  # type: ignore[attr-defined]
                log.error("audit event %s dropped by sink %s: %s", event["id"], sink.name, exc)
                continue
            if id(sink) not in self._self_counting:
                sink.written += 1  # type: ignore[attr-defined]
        if self.fail_closed and ok:
            for sink in self.sinks:
                try:
                    await sink.confirm()
                except SinkError as exc:
                    log.error("audit event %s not confirmed by %s: %s", event["id"], sink.name, exc)
                    ok = False
        return ok


class AuditCollector(Collector):
    """``schema_registry_audit_events_written`` and ``..._dropped``, per sink."""

    def __init__(self, auditor: Auditor) -> None:
        self.auditor = auditor

    def collect(self) -> Iterator[Metric]:
        written = CounterMetricFamily(
            "schema_registry_audit_events_written",
            "Audit events written (Kafka: acknowledged by the broker), per sink",
            labels=["sink"],
        )
        dropped = CounterMetricFamily(
            "schema_registry_audit_events_dropped",
            "Audit events a sink could not take or deliver, per sink",
            labels=["sink"],
        )
        for sink in self.auditor.sinks:
            written.add_metric([sink.name], getattr(sink, "written", 0))
            dropped.add_metric([sink.name], getattr(sink, "dropped", 0))
        yield written
        yield dropped
        yield CounterMetricFamily(
            "schema_registry_audit_refused_changes",
            "Changes refused (503) because an audit sink was unavailable (fail closed)",
            value=self.auditor.refused,
        )

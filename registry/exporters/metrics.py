"""Per-exporter Prometheus metrics, read at scrape time from the state (what every instance
knows: state, stored offset, records exported) and from this instance's engine (lag in
seconds and errors, where the exporter runs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from registry.exporters.model import STATES

if TYPE_CHECKING:
    from registry.core import Registry
    from registry.exporters.engine import Engine


class ExporterCollector(Collector):
    def __init__(self, registry: Registry, engine: Engine | None) -> None:
        self.registry = registry
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        index = self.registry.state.exporters
        applied = self.registry.state.offset
        running = self.engine.stats() if self.engine is not None else {}
        state = GaugeMetricFamily(
            "schema_registry_exporter_state",
            "1 for the state each exporter is in (STARTING, RUNNING, PAUSED, ERROR)",
            labels=["exporter", "state"],
        )
        exported = CounterMetricFamily(
            "schema_registry_exporter_records_exported",
            "Log records an exporter has sent to its destination since its last reset",
            labels=["exporter"],
        )
        lag = GaugeMetricFamily(
            "schema_registry_exporter_lag_records",
            "Log records after the last one an exporter has handled",
            labels=["exporter"],
        )
        lag_seconds = GaugeMetricFamily(
            "schema_registry_exporter_lag_seconds",
            "Age of the oldest record an exporter has still to handle (where it runs)",
            labels=["exporter"],
        )
        errors = CounterMetricFamily(
            "schema_registry_exporter_errors",
            "Destination failures of an exporter on this instance",
            labels=["exporter"],
        )
        for name in sorted(index.definitions):
            progress = index.progress.get(name)
            current = progress.state if progress is not None else "STARTING"
            for each in STATES:
                state.add_metric([name, each], 1 if each == current else 0)
            stats = running.get(name)
            exported.add_metric([name], progress.exported if progress is not None else 0)
            stored = progress.offset if progress is not None else -1
            lag.add_metric([name], stats.lag_records if stats else max(0, applied - stored))
            lag_seconds.add_metric([name], stats.lag_seconds if stats else 0.0)
            errors.add_metric([name], stats.errors if stats else 0)
        yield from (state, exported, lag, lag_seconds, errors)

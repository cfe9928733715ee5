"""The store-lag gauge with a Kafka store: entries in the topic this instance has not applied."""

from __future__ import annotations

import time

from registry.store.kafka import KafkaLogStore
from tests.kafka_helpers import kafka_client

AVRO = '{"type":"record","name":"L","fields":[{"name":"a","type":"int"}]}'


def lag_gauge(text: str) -> float:
    for line in text.splitlines():
        if line.startswith("schema_registry_store_lag_records "):
            return float(line.split()[1])
    raise AssertionError("no schema_registry_store_lag_records sample")


def test_caught_up_instance_reports_no_lag(kafka_url: str) -> None:
    with kafka_client(kafka_url) as client:
        assert client.post("/subjects/lag/versions", json={"schema": AVRO}).status_code == 200
        deadline = time.monotonic() + 10
        while lag_gauge(client.get("/metrics").text) != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lag_gauge(client.get("/metrics").text) == 0


def test_lag_counts_what_the_topic_holds_beyond_the_applied_offset(kafka_url: str) -> None:
    with kafka_client(kafka_url) as client:
        for n in range(3):
            schema = AVRO.replace('"a"', f'"a{n}"')
            assert (
                client.post(f"/subjects/s{n}/versions", json={"schema": schema}).status_code == 200
            )
        store = client.app.state.registry.store  # type: ignore[attr-defined]
        assert isinstance(store, KafkaLogStore)
        applied = client.app.state.registry.state.offset  # type: ignore[attr-defined]
        # the reader passes the last transaction's commit marker within a poll or two
        deadline = time.monotonic() + 10
        while store.lag(applied) != 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.lag(applied) == 0
        # as if this instance had applied nothing: every record and marker so far is lag
        assert store.lag(-1) >= 3
        assert store.lag(-1, cap=2) == 2

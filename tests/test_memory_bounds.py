"""Memory that must not grow with the log: the Kafka reader's buffer while the registry replays
(the state is the only full copy of the records), the state's per-version layout, the parse
cache's bound in bytes."""

from __future__ import annotations

import json
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from registry import records
from registry.core import Registry, parsed_cost
from registry.records import Record
from registry.settings import Settings
from registry.state import State
from registry.store import kafka as kafka_store
from registry.store.kafka import KafkaLogStore
from registry.store.sql import SqlLogStore
from registry.subjects import DEFAULT_CONTEXT
from tests.kafka_helpers import produce_raw

RECORDS = 60_000


def _schema_records(count: int) -> list[tuple[bytes, bytes]]:
    out = []
    for n in range(count):
        schema = json.dumps(
            {"type": "record", "name": f"R{n}", "fields": [{"name": "f", "type": "string"}]}
        )
        value = {"subject": f"s{n}", "version": 1, "id": n + 1, "schema": schema, "deleted": False}
        out.append((records.schema_key(f"s{n}", 1).to_bytes(), records.encode_value(value)))
    return out


def test_the_kafka_reader_buffers_at_most_its_bound_while_the_registry_replays(
    kafka_url: str, kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry applies slower than the reader reads: unbounded, the reader held the whole
    topic ahead of the replay (a second copy of every record: 3.2 GiB at a million)."""
    setup = KafkaLogStore(kafka_url, elect=False)
    setup.open()  # creates the compacted topic
    setup.close()
    batch = _schema_records(RECORDS)
    topic_bytes = sum(len(k) + len(v) for k, v in batch)
    produce_raw(kafka_bootstrap, kafka_url.split("topic=")[1], batch)
    bound = 64 * 1024
    monkeypatch.setattr(kafka_store, "MAX_BUFFERED_BYTES", bound)
    store = KafkaLogStore(kafka_url, elect=False)
    registry = Registry(store, Settings(poll_interval=0))
    store.set_listener(registry.refresh)  # as the server does (registry.api.forwarding)
    applying = threading.Event()
    original_apply = registry.state.apply

    def slow_apply(record: Record) -> None:
        if not applying.is_set():
            applying.set()
            time.sleep(1.5)  # the reader is well ahead now, unless it is held
        original_apply(record)

    registry.state.apply = slow_apply  # type: ignore[method-assign]
    original_iter_keys = store.iter_keys

    def slow_iter_keys() -> Any:
        time.sleep(1.0)  # the reader starts at open, before the replay takes anything
        return original_iter_keys()

    store.iter_keys = slow_iter_keys  # type: ignore[method-assign]
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            reader = store._reader
            if reader is not None:
                peak = max(peak, reader.buffered_bytes())
            time.sleep(0.002)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        registry.start()
        assert store.wait_caught_up(60)
        deadline = time.monotonic() + 60
        while registry.state.offset < RECORDS - 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert registry.state.offset == RECORDS - 1
        assert len(registry.state.contexts[DEFAULT_CONTEXT].subjects) == RECORDS
        done.set()
        sampler.join()
        # records not yet handed out: at most the bound plus one fetched batch (10,000
        # messages); as much again handed out and not yet dropped. Far below the topic (the
        # reader read it all ahead of the slow replay before it was bounded)
        per_record = topic_bytes / RECORDS
        assert peak <= 2 * (bound + 10_000 * per_record) + 1
        assert peak < topic_bytes / 2
        # applied records leave the buffer once the registry asks for what follows them
        registry.refresh()
        reader = store._reader
        assert reader is not None
        assert reader.buffered_bytes() == 0
    finally:
        done.set()
        registry.stop()


# ---- per-version layout of the state -----------------------------------------------------


def _schema_record(subject: str, version: int, schema_id: int, key: bytes, offset: int) -> Record:
    schema = json.dumps({"type": "record", "name": "V", "fields": [{"name": "f", "type": "int"}]})
    value = {"subject": subject, "version": version, "id": schema_id, "schema": schema}
    return Record(key, records.encode_value(value), offset, 0)


def test_versions_share_their_subject_and_keep_only_a_key_confluent_would_not_write() -> None:
    state = State()
    canonical = records.schema_key("s", 1).to_bytes()
    # the same key with its fields in another order (another writer's bytes): compaction
    # needs a tombstone with exactly these bytes, so they are kept
    other = b'{"magic":1,"subject":"s","version":2,"keytype":"SCHEMA"}'
    state.apply(_schema_record("s", 1, 1, canonical, 0))
    state.apply(_schema_record("s", 2, 1, other, 1))
    versions = state.contexts[DEFAULT_CONTEXT].subjects["s"]
    first, second = versions[1], versions[2]
    assert first.raw_key is None  # not stored: rebuilt
    assert first.key == canonical
    assert second.raw_key == other
    assert second.key == other
    assert first.subject is second.subject  # one string for every version of a subject
    assert first.schema_type is second.schema_type
    assert first.references == () and first.references is second.references


# ---- the parse cache ------------------------------------------------------------------------


def _avro(name: str, padding: int) -> str:
    fields = [{"name": "f", "type": "int"}]
    return json.dumps({"type": "record", "name": name, "doc": "x" * padding, "fields": fields})


def test_the_parse_cache_is_bounded_by_bytes_and_drops_the_least_recently_used(
    tmp_path: Path,
) -> None:
    texts = [_avro(f"S{n}", 10) for n in range(3)]
    large = _avro("Large", 20_000)
    budget = parsed_cost(large) + parsed_cost(texts[0]) + 100  # room for one small one
    registry = Registry(
        SqlLogStore(f"sqlite:///{tmp_path}/p.db"),
        Settings(poll_interval=0, parse_cache_bytes=budget, parse_cache_size=1000),
    )
    registry.start()
    try:
        parse = partial(registry.parse, "s", "AVRO", references=[], strict=False,
                        include_deleted_refs=False)  # fmt: skip
        for text in texts:
            parse(text=text)
        assert all(registry.has_parsed("AVRO", t) for t in texts)  # far below the budget
        parse(text=texts[0])  # used again: the most recent
        parse(text=large)  # 240 KB estimated: the two least recently used must go
        assert registry.has_parsed("AVRO", large)
        assert registry.has_parsed("AVRO", texts[0])
        assert not registry.has_parsed("AVRO", texts[1])
        assert not registry.has_parsed("AVRO", texts[2])
        assert registry._parse_cache_bytes <= budget
        assert registry._parse_cache_bytes == sum(c for _, c in registry._parse_cache.values())
        # a count bound alone (the old setting) would have kept all four
        assert len(registry._parse_cache) == 2
    finally:
        registry.stop()

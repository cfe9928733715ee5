"""Group commit on the write path (``Registry.write``): writes queued while a commit is in flight
are decided one after another against the state plus the batch's earlier drafts, stored in one
transaction and answered as if they had run serially; a failed transaction stores and applies
nothing. Batches are made deterministic by holding the write lock until every writer queued."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from registry import budget, dek_records, errors, records
from registry.configs import put_config
from registry.core import Registry, SchemaRequest
from registry.deletion import delete_subject
from registry.records import Record
from registry.registration import Registered, register
from registry.state import State
from registry.store.base import StoreTransaction


def avro(name: str, *fields: str) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": name,
            "fields": [{"name": "id", "type": "long"}]
            + [{"name": f, "type": "string", "default": ""} for f in fields],
        }
    )


def count_transactions(reg: Registry) -> list[int]:
    """Count the store transactions (the real store still runs them)."""
    calls: list[int] = []
    real = reg.store.exclusive

    @contextmanager
    def counting() -> Iterator[StoreTransaction]:
        calls.append(1)
        with real() as txn:
            yield txn

    reg.store.exclusive = counting  # type: ignore[method-assign]
    return calls


def run_batch(reg: Registry, jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run ``jobs`` in threads so that all of them queue behind one held write lock, then
    release it: the first thread through commits them all as one batch."""
    results: list[Any] = [None] * len(jobs)

    def work(i: int) -> None:
        try:
            results[i] = jobs[i]()
        except errors.RegistryError as exc:
            results[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    with reg._write_lock:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while len(reg._group.queue) < len(jobs):
            assert time.monotonic() < deadline, "writers did not queue"
            time.sleep(0.005)
    for t in threads:
        t.join(timeout=30)
    return results


def reg_job(reg: Registry, subject: str, schema: str) -> Callable[[], Registered]:
    return lambda: register(reg, subject, SchemaRequest(schema=schema), normalize=False)


def test_same_schema_same_subject_in_one_batch_gets_one_id_and_version(
    registry: Registry,
) -> None:
    calls = count_transactions(registry)
    schema = avro("Same")
    results = run_batch(registry, [reg_job(registry, "s", schema) for _ in range(12)])
    assert len(calls) == 1  # one store transaction for the whole batch
    assert {r.id for r in results} == {1}
    versions = registry.state.versions("s")
    assert list(versions) == [1]
    assert len(registry.store.read_after(-1)) == 1  # one SCHEMA record stored


def test_different_subjects_in_one_batch_get_distinct_ids_as_if_serial(
    registry: Registry,
) -> None:
    calls = count_transactions(registry)
    jobs = [reg_job(registry, f"subj-{i}", avro(f"R{i}")) for i in range(10)]
    results = run_batch(registry, jobs)
    assert len(calls) == 1
    assert sorted(r.id for r in results) == list(range(1, 11))
    stored = registry.store.read_after(-1)
    assert len(stored) == 10
    # the log's order is the order the ids were given in: replaying it gives the same state
    replayed = State()
    replayed.apply_all(stored)
    for i, result in enumerate(results):
        assert replayed.versions(f"subj-{i}")[1].id == result.id
        assert registry.state.versions(f"subj-{i}")[1].ts == stored[0].timestamp


def test_later_writes_in_a_batch_see_earlier_drafts_and_errors_stay_their_own(
    registry: Registry,
) -> None:
    put_config(registry, "s", {"compatibility": "BACKWARD"})
    calls = count_transactions(registry)
    v1 = avro("R")
    v2 = avro("R", "a")  # compatible with v1 (default given)
    bad = json.dumps({"type": "record", "name": "R", "fields": [{"name": "x", "type": "int"}]})
    jobs = [
        reg_job(registry, "s", v1),
        reg_job(registry, "s", v2),
        reg_job(registry, "s", bad),  # incompatible with v2, only known from the batch itself
        reg_job(registry, "s", v1),  # already registered earlier in this batch
        lambda: delete_subject(registry, "gone", False),  # 40401 alone
        reg_job(registry, "other", avro("O")),
    ]
    # the threads queue in start order only roughly: run them one by one into the queue
    results = run_batch_ordered(registry, jobs)
    assert len(calls) == 1
    assert results[0].id == 1
    assert results[1].id == 2
    assert isinstance(results[2], errors.RegistryError) and results[2].error_code == 409
    assert results[3].id == 1
    assert isinstance(results[4], errors.RegistryError) and results[4].error_code == 40401
    assert results[5].id == 3
    assert sorted(registry.state.versions("s")) == [1, 2]


def run_batch_ordered(reg: Registry, jobs: list[Callable[[], Any]]) -> list[Any]:
    """Like :func:`run_batch`, but each writer is queued before the next one starts."""
    results: list[Any] = [None] * len(jobs)

    def work(i: int) -> None:
        try:
            results[i] = jobs[i]()
        except errors.RegistryError as exc:
            results[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    with reg._write_lock:
        for i, t in enumerate(threads):
            t.start()
            deadline = time.monotonic() + 10
            while len(reg._group.queue) < i + 1:
                assert time.monotonic() < deadline, "writer did not queue"
                time.sleep(0.002)
    for t in threads:
        t.join(timeout=30)
    return results


def snapshot(state: State) -> Any:
    ctxs = {
        name: (
            {s: {v: sv.value() for v, sv in vs.items()} for s, vs in ctx.subjects.items()},
            {i: dict(h) for i, h in ctx.ids.items()},
            dict(ctx.hashes),
            {k: set(v) for k, v in ctx.referrers.items()},
            ctx.max_id,
        )
        for name, ctx in state.contexts.items()
        if ctx.subjects or ctx.max_id
    }
    return (
        state.offset,
        ctxs,
        dict(state.context_records),
        {k: s.value for k, s in state.configs.items()},
        {k: s.value for k, s in state.modes.items()},
    )


def test_a_failed_transaction_stores_and_applies_nothing(registry: Registry) -> None:
    register(registry, "s", SchemaRequest(schema=avro("R")), normalize=False)
    put_config(registry, None, {"compatibility": "NONE"})
    before = snapshot(registry.state)
    stored_before = len(registry.store.read_after(-1))
    real = registry.store.exclusive

    @contextmanager
    def failing_commit() -> Iterator[StoreTransaction]:
        with real() as txn:
            yield txn
            # raised inside the real transaction after the records were staged: it rolls back
            raise OSError("the disk went away")

    registry.store.exclusive = failing_commit  # type: ignore[method-assign]
    jobs: list[Callable[[], Any]] = [
        reg_job(registry, "s", avro("R", "b")),
        reg_job(registry, ":.ctx:t", avro("T")),
        lambda: delete_subject(registry, "s", False),
        lambda: put_config(registry, "s", {"compatibility": "FULL"}),
    ]
    results = run_batch_ordered(registry, jobs)
    assert all(isinstance(r, errors.RegistryError) and r.error_code == 50001 for r in results), (
        results
    )
    assert len(registry.store.read_after(-1)) == stored_before
    assert snapshot(registry.state) == before
    registry.store.exclusive = real  # type: ignore[method-assign]
    # the next write gets what it would have got had the failed batch never happened
    again = register(registry, ":.ctx:t", SchemaRequest(schema=avro("T")), normalize=False)
    assert again.id == 1  # first id of the new context
    assert registry.state.versions("s")[1].deleted is False


def test_state_rollback_undoes_every_record_kind() -> None:
    state = State()
    key = records.schema_key("s", 1).to_bytes()
    value = {"subject": "s", "version": 1, "id": 1, "schema": '"string"', "deleted": False}
    state.apply(Record(key, records.encode_value(value), 0, 1))
    before = snapshot(state)
    state.begin_tentative()
    tentative: list[tuple[Any, Any]] = [
        (records.schema_key("s", 2), {**value, "version": 2, "id": 2, "schema": '"int"'}),
        (
            records.schema_key("r", 1),
            {
                **value,
                "subject": "r",
                "id": 3,
                "schema": '"long"',
                "references": [{"name": "n", "subject": "s", "version": 1}],
            },
        ),
        (records.delete_subject_key("s"), {"subject": "s", "version": 2}),
        (records.clear_subject_key("s"), {"subject": "s"}),
        (records.config_key("s"), {"compatibilityLevel": "NONE"}),
        (records.mode_key(None), {"mode": "READONLY"}),
        (records.context_key(".c"), {"tenant": "default", "context": ".c"}),
        (records.schema_key(":.c:x", 1), {**value, "subject": ":.c:x", "id": 9}),
    ]
    for k, v in tentative:
        state.apply(Record(k.to_bytes(), records.encode_value(v), -1, -1))
    assert snapshot(state) != before
    state.rollback()
    assert snapshot(state) == before
    assert state.versions("s")[1].deleted is False


@pytest.mark.parametrize("writers", [16])
def test_concurrent_writers_through_http_serial_answers(registry: Registry, writers: int) -> None:
    """Many threads registering at once without a held lock: every answer is consistent with
    the log (no id for two schemas, versions contiguous)."""
    put_config(registry, None, {"compatibility": "NONE"})
    jobs = [reg_job(registry, f"s{i % 3}", avro(f"N{i}")) for i in range(writers * 4)]
    out: list[Any] = []
    lock = threading.Lock()

    def work(chunk: list[Callable[[], Any]]) -> None:
        for job in chunk:
            r = job()
            with lock:
                out.append(r)

    threads = [threading.Thread(target=work, args=(jobs[i::writers],)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len({r.id for r in out}) == len(jobs)
    replayed = State()
    replayed.apply_all(registry.store.read_after(-1))
    for s in ("s0", "s1", "s2"):
        assert sorted(replayed.versions(s)) == list(range(1, len(replayed.versions(s)) + 1))
        assert snapshot(replayed)[1] == snapshot(registry.state)[1]


# ---- every record kind goes through the undo journal -------------------------------------------


def full_snapshot(obj: Any) -> Any:
    """Everything ``obj`` holds, by value: dicts, sets, lists, dataclasses and other objects
    walked down to their fields (the undo journal itself left out, and the change counter of
    the read caches, which a rollback moves on rather than back, and what a version caches of
    its text's re-printed forms, which is no state: ``SchemaVersion.forms``)."""
    if obj is None or isinstance(obj, str | bytes | int | float | bool):
        return obj
    if isinstance(obj, dict):
        return ("dict", {k: full_snapshot(v) for k, v in obj.items()})
    if isinstance(obj, set | frozenset):
        return ("set", frozenset(full_snapshot(v) for v in obj))
    if isinstance(obj, list | tuple):
        return (type(obj).__name__, tuple(full_snapshot(v) for v in obj))
    names = getattr(obj, "__dataclass_fields__", None) or vars(obj)
    return (
        type(obj).__name__,
        tuple(
            (n, full_snapshot(getattr(obj, n)))
            for n in names
            if n not in ("journal", "changes", "forms")
        ),
    )


ASSOC_RESOURCE = ("orders", "lkc-1", "topic", "value")


def assoc_value(subject: str, resource_id: str = "r-1") -> dict[str, Any]:
    return {
        "guid": "g",
        "tenant": "default",
        "resourceName": "orders",
        "resourceNamespace": "lkc-1",
        "resourceId": resource_id,
        "resourceType": "topic",
        "associationType": "value",
        "subject": subject,
        "lifecycle": "WEAK",
        "frozen": False,
    }


def kek_value(name: str, doc: str) -> dict[str, Any]:
    return {
        "name": name,
        "kmsType": "local-kms",
        "kmsKeyId": "k",
        "kmsProps": {},
        "doc": doc,
        "shared": False,
        "deleted": False,
        "type": "KEK",
        "ts": 5,
    }


def dek_value(kek: str, subject: str, material: str) -> dict[str, Any]:
    return {
        "kekName": kek,
        "subject": subject,
        "algorithm": "AES256_GCM",
        "version": 1,
        "encryptedKeyMaterial": material,
        "deleted": False,
        "type": "DEK",
        "ts": 5,
    }


def every_kind_of_change(value: dict[str, Any]) -> list[tuple[Any, dict[str, Any] | None]]:
    """Records of every kind, changing what :func:`committed_records` stored and adding more."""
    return [
        (records.schema_key("s", 2), {**value, "version": 2, "id": 2, "schema": '"int"'}),
        (
            records.schema_key("r", 1),
            {
                **value,
                "subject": "r",
                "id": 3,
                "schema": '"long"',
                "references": [{"name": "n", "subject": "s", "version": 1}],
            },
        ),
        (records.delete_subject_key("s"), {"subject": "s", "version": 2}),
        (records.clear_subject_key("s"), {"subject": "s"}),
        (records.config_key("s"), {"compatibilityLevel": "NONE"}),
        (records.config_key(None), None),
        (records.mode_key(None), {"mode": "READONLY"}),
        (records.mode_key("s"), None),
        (records.context_key(".c"), {"tenant": "default", "context": ".c"}),
        (records.schema_key(":.c:x", 1), {**value, "subject": ":.c:x", "id": 9}),
        (records.association_key(ASSOC_RESOURCE, "s"), assoc_value("s", "r-2")),
        (records.association_key(ASSOC_RESOURCE, "old"), None),
        (records.association_key(ASSOC_RESOURCE, "r"), assoc_value("r")),
        (records.association_key(ASSOC_RESOURCE, "bad"), {"lifecycle": "WEAK"}),  # skipped
        (dek_records.kek_key("k1"), kek_value("k1", "changed")),
        (dek_records.kek_key("k2"), kek_value("k2", "new")),
        (dek_records.kek_key("gone"), None),
        (dek_records.dek_key("k1", "s", "AES256_GCM", 1), dek_value("k1", "s", "changed")),
        (dek_records.dek_key("k1", "t", "AES256_GCM", 1), dek_value("k1", "t", "new")),
        (dek_records.dek_key("k1", "u", "AES256_GCM", 1), None),
        (dek_records.kek_key("bad"), {"name": "bad"}),  # malformed: skipped
        (records.exporter_key(records.EXPORTER, "e1"), exporter_value("e1", "http://b:1")),
        (records.exporter_key(records.EXPORTER, "e2"), exporter_value("e2", "http://c:1")),
        (records.exporter_key(records.EXPORTER, "gone"), None),
        (records.exporter_key(records.EXPORTER_STATE, "e1"), {"state": "PAUSED", "offset": 7}),
        (records.exporter_key(records.EXPORTER_STATE, "gone"), None),
        (records.exporter_key(records.EXPORTER_LEASE, ""), {"owner": "b", "expires": 9}),
        (records.exporter_key(records.EXPORTER_STATE, "bad"), {"offset": 1}),  # skipped
    ]


def exporter_value(name: str, url: str) -> dict[str, Any]:
    return {"name": name, "subjects": ["*"], "config": {"schema.registry.url": url}}


def committed_records(value: dict[str, Any]) -> list[tuple[Any, dict[str, Any] | None]]:
    return [
        (records.schema_key("s", 1), value),
        (records.config_key(None), {"compatibilityLevel": "FULL"}),
        (records.mode_key("s"), {"mode": "READWRITE"}),
        (records.association_key(ASSOC_RESOURCE, "s"), assoc_value("s")),
        (records.association_key(ASSOC_RESOURCE, "old"), assoc_value("old")),
        (dek_records.kek_key("k1"), kek_value("k1", "first")),
        (dek_records.kek_key("gone"), kek_value("gone", "first")),
        (dek_records.dek_key("k1", "s", "AES256_GCM", 1), dek_value("k1", "s", "first")),
        (dek_records.dek_key("k1", "u", "AES256_GCM", 1), dek_value("k1", "u", "first")),
        (records.exporter_key(records.EXPORTER, "e1"), exporter_value("e1", "http://a:1")),
        (records.exporter_key(records.EXPORTER, "gone"), exporter_value("gone", "http://a:1")),
        (records.exporter_key(records.EXPORTER_STATE, "gone"), {"state": "RUNNING"}),
        (records.exporter_key(records.EXPORTER_LEASE, ""), {"owner": "a", "expires": 1}),
    ]


SCHEMA_VALUE = {"subject": "s", "version": 1, "id": 1, "schema": '"string"', "deleted": False}


def test_state_rollback_restores_a_full_snapshot_after_every_record_kind() -> None:
    state = State()
    for offset, (k, v) in enumerate(committed_records(SCHEMA_VALUE)):
        state.apply(Record(k.to_bytes(), records.encode_value(v), offset, 100 + offset))
    parts = (
        "associations",
        "encryption_keys",
        "exporters",
        "configs",
        "modes",
        "contexts",
        "skipped",
    )
    before = full_snapshot(state)
    parts_before = {p: full_snapshot(getattr(state, p)) for p in parts}
    state.begin_tentative()
    for k, v in every_kind_of_change(SCHEMA_VALUE):
        state.apply(Record(k.to_bytes(), records.encode_value(v), -1, -1))
    # each part changed, so each part's rollback is checked
    assert [p for p in parts if full_snapshot(getattr(state, p)) == parts_before[p]] == []
    state.rollback()
    assert full_snapshot(state) == before


def test_a_failed_batch_of_every_record_kind_leaves_the_state_exactly_as_before(
    registry: Registry,
) -> None:
    """ASSOC, KEK/DEK, CONFIG/MODE, DELETE_SUBJECT and SCHEMA writes decided in one batch whose
    store transaction fails: the full state (associations and the DEK registry included) is
    what it was before the batch."""
    put_config(registry, None, {"compatibility": "NONE"})
    register(registry, "s", SchemaRequest(schema=avro("R")), normalize=False)
    for k, v in committed_records(SCHEMA_VALUE)[1:]:
        registry.write(lambda k=k, v=v: ([(k, v)], None))
    before = full_snapshot(registry.state)
    stored_before = len(registry.store.read_after(-1))
    real = registry.store.exclusive

    @contextmanager
    def failing_commit() -> Iterator[StoreTransaction]:
        with real() as txn:
            yield txn
            raise OSError("the disk went away")

    registry.store.exclusive = failing_commit  # type: ignore[method-assign]
    changes = every_kind_of_change(SCHEMA_VALUE)
    jobs: list[Callable[[], Any]] = [
        reg_job(registry, "s", avro("R", "b")),
        reg_job(registry, ":.ctx:t", avro("T")),
        lambda: put_config(registry, "s", {"compatibility": "FULL"}),
        *[(lambda k=k, v=v: registry.write(lambda: ([(k, v)], "ok"))) for k, v in changes[10:]],
        lambda: delete_subject(registry, "s", False),
    ]
    results = run_batch_ordered(registry, jobs)
    assert all(isinstance(r, errors.RegistryError) and r.error_code == 50001 for r in results), (
        results
    )
    assert len(registry.store.read_after(-1)) == stored_before
    assert full_snapshot(registry.state) == before


def test_readers_never_see_a_batch_while_its_commit_is_in_flight(registry: Registry) -> None:
    """The tentative records are undone before the store transaction does any I/O: during the
    commit a reader sees the state as it was; after it, the committed records."""
    seen_during_commit: list[Any] = []
    real = registry.store.exclusive

    @contextmanager
    def watching() -> Iterator[StoreTransaction]:
        with real() as txn:
            yield txn
            seen_during_commit.append(
                (dict(registry.state.versions("s")), dict(registry.state.configs))
            )

    registry.store.exclusive = watching  # type: ignore[method-assign]
    results = run_batch_ordered(
        registry,
        [
            reg_job(registry, "s", avro("R")),
            lambda: put_config(registry, "s", {"compatibility": "FULL"}),
        ],
    )
    assert results[0].id == 1
    assert seen_during_commit == [({}, {})]
    assert list(registry.state.versions("s")) == [1]
    assert registry.state.versions("s")[1].ts >= 0
    assert "s" in registry.state.configs


def test_each_write_is_decided_under_its_own_work_allowance(registry: Registry) -> None:
    """The thread that commits a batch decides the others' writes in their own contexts, so
    schema work is charged to (and limited by) the request that asked for it."""
    allowances = [budget.Allowance(10.0 + i) for i in range(4)]

    def job(i: int) -> Callable[[], Any]:
        def run() -> Any:
            with budget.allowed(allowances[i]):
                return registry.write(lambda: ([], budget.current()))

        return run

    results = run_batch_ordered(registry, [job(i) for i in range(4)])
    assert results == allowances


def test_time_queued_for_the_write_lock_is_not_charged_to_the_allowance(
    registry: Registry,
) -> None:
    """The allowance bounds a request's schema work: a write that waited behind other batches
    is decided (and may check its allowance) without that wait counted."""
    allowance = budget.Allowance(0.3)

    def job() -> Any:
        with budget.allowed(allowance):
            allowance.check()  # the wall clock starts (as the check before the lock does)

            def decide() -> tuple[list[Any], str]:
                allowance.check()
                return [], "decided"

            return registry.write(decide)

    thread_result: list[Any] = []
    with registry._write_lock:
        worker = threading.Thread(target=lambda: thread_result.append(run_guarded(job)))
        worker.start()
        time.sleep(0.6)  # another batch's commit, say
    worker.join(timeout=30)
    assert thread_result == ["decided"]


def run_guarded(job: Callable[[], Any]) -> Any:
    try:
        return job()
    except errors.RegistryError as exc:
        return exc

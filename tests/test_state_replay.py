"""The in-memory state is built only by applying records in log order (DESIGN.md)."""

from __future__ import annotations

import orjson

from registry.records import Record
from registry.state import State

SCHEMA_A = '{"type":"record","name":"A","fields":[{"name":"f","type":"int"}]}'
SCHEMA_B = '{"type":"record","name":"B","fields":[{"name":"g","type":"string"}]}'


def rec(offset: int, key: dict | bytes, value: dict | None) -> Record:
    raw_key = key if isinstance(key, bytes) else orjson.dumps(key)
    return Record(raw_key, None if value is None else orjson.dumps(value), offset, 1000 + offset)


def schema(subject: str, version: int, schema_id: int, text: str, **extra: object) -> dict:
    return {
        "subject": subject,
        "version": version,
        "id": schema_id,
        "schema": text,
        "deleted": False,
        **extra,
    }


def skey(subject: str, version: int) -> dict:
    return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}


def test_confluent_records_without_schema_type_replay_as_avro() -> None:
    state = State()
    # a record as Confluent 7.x wrote it: old key field order, no schemaType
    state.apply(
        rec(
            0,
            b'{"subject":"s","version":1,"magic":0,"keytype":"SCHEMA"}',
            {"subject": "s", "version": 1, "id": 7, "schema": SCHEMA_A, "deleted": False},
        )
    )
    sv = state.versions("s")[1]
    assert (sv.id, sv.schema_type, sv.ts) == (7, "AVRO", 1000)
    ctx = state.context_of("s")
    assert ctx.max_id == 7
    assert ctx.ids[7] == {"s": 1}
    assert ctx.hashes[sv.digest] == 7


def test_same_id_with_different_schema_is_skipped() -> None:
    state = State()
    state.apply(rec(0, skey("s", 1), schema("s", 1, 1, SCHEMA_A)))
    state.apply(rec(1, skey("t", 1), schema("t", 1, 1, SCHEMA_B)))
    assert state.versions("t") == {}
    assert state.skipped == 1


def test_soft_delete_rewrite_and_delete_subject_and_tombstone() -> None:
    state = State()
    state.apply(rec(0, skey("s", 1), schema("s", 1, 1, SCHEMA_A)))
    state.apply(rec(1, skey("s", 2), schema("s", 2, 2, SCHEMA_B)))
    state.apply(rec(2, skey("s", 1), schema("s", 1, 1, SCHEMA_A, deleted=True)))
    assert state.versions("s")[1].deleted and not state.versions("s")[2].deleted
    state.apply(
        rec(
            3,
            {"keytype": "DELETE_SUBJECT", "subject": "s", "magic": 0},
            {"subject": "s", "version": 2},
        )
    )
    assert all(v.deleted for v in state.versions("s").values())
    state.apply(rec(4, skey("s", 1), None))
    assert list(state.versions("s")) == [2]
    ctx = state.context_of("s")
    assert 1 not in ctx.ids
    assert ctx.max_id == 2  # the id counter never goes back


def test_references_are_indexed_and_unindexed() -> None:
    state = State()
    state.apply(rec(0, skey("base", 1), schema("base", 1, 1, SCHEMA_A)))
    refs = [{"name": "A", "subject": "base", "version": 1}]
    state.apply(rec(1, skey("user", 1), schema("user", 1, 2, SCHEMA_B, references=refs)))
    ctx = state.context_of("base")
    assert ctx.referrers[("base", 1)] == {("user", 1)}
    state.apply(rec(2, skey("user", 1), None))
    assert ("base", 1) not in ctx.referrers


def test_config_mode_context_and_tombstones() -> None:
    state = State()
    state.apply(rec(0, {"keytype": "CONFIG", "magic": 0}, {"compatibilityLevel": "FULL"}))
    state.apply(
        rec(
            1,
            {"keytype": "CONFIG", "subject": "s", "magic": 0},
            {"subject": "s", "compatibilityLevel": "NONE"},
        )
    )
    state.apply(
        rec(
            2, {"keytype": "MODE", "subject": "s", "magic": 0}, {"subject": "s", "mode": "READONLY"}
        )
    )
    state.apply(
        rec(
            3,
            {"keytype": "CONTEXT", "tenant": "default", "context": ".c", "magic": 0},
            {"tenant": "default", "context": ".c"},
        )
    )
    assert state.configs[None].value == {"compatibilityLevel": "FULL"}
    assert state.configs["s"].value == {"compatibilityLevel": "NONE"}
    assert state.modes["s"].value == {"mode": "READONLY"}
    assert state.context_names() == [".", ".c"]
    state.apply(rec(4, {"keytype": "CONFIG", "subject": "s", "magic": 0}, None))
    assert "s" not in state.configs


def test_contexts_have_their_own_ids() -> None:
    state = State()
    state.apply(rec(0, skey("s", 1), schema("s", 1, 1, SCHEMA_A)))
    state.apply(rec(1, skey(":.c:s", 1), schema(":.c:s", 1, 1, SCHEMA_B)))
    assert state.context_of(":.c:s").ids[1] == {":.c:s": 1}
    assert state.context_of("s").ids[1] == {"s": 1}
    assert state.skipped == 0


def test_clear_subject_drops_soft_deleted_versions_only() -> None:
    state = State()
    state.apply(rec(0, skey("s", 1), schema("s", 1, 1, SCHEMA_A, deleted=True)))
    state.apply(rec(1, skey("s", 2), schema("s", 2, 2, SCHEMA_B)))
    state.apply(rec(2, {"keytype": "CLEAR_SUBJECT", "subject": "s", "magic": 0}, {"subject": "s"}))
    assert list(state.versions("s")) == [2]


def test_undecodable_records_are_skipped_and_offsets_advance() -> None:
    state = State()
    state.apply(Record(b"garbage", b"{}", 0, 0))
    state.apply(Record(orjson.dumps(skey("s", 1)), b"not json", 1, 0))
    state.apply(rec(2, skey("s", 1), {"subject": "s"}))  # no schema, no id
    state.apply(rec(3, {"keytype": "NOOP", "magic": 0}, None))
    assert state.offset == 3
    assert state.skipped == 3
    assert state.versions("s") == {}


def test_already_applied_offsets_are_ignored() -> None:
    state = State()
    state.apply(rec(5, skey("s", 1), schema("s", 1, 1, SCHEMA_A)))
    state.apply(rec(5, skey("s", 1), None))
    assert 1 in state.versions("s")

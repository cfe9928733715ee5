"""The fast path's cache (``registry.api.fast_reads``) is emptied by every kind of write, by an
undone tentative batch and by records another instance wrote; an answer computed while the state
changed is not kept; the cache is bounded by bytes; authentication and the subject rules apply
to cached answers. Each read is compared with an app without the fast path (``same``)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry import records
from registry.api.app import create_app
from registry.api.fast_reads import FastReads, ReadCache
from registry.records import Record, RecordKey
from tests.fast_reads_helpers import (
    CT,
    MONEY,
    ORDER,
    ORDER2,
    PAY,
    Pair,
    lookup_body,
    opened,
    pair_over,
    record,
    registered,
    same,
)
from tests.production_helpers import write_users

# ---- invalidation -----------------------------------------------------------------------------


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    reg = opened(tmp_path / "r.db")
    try:
        with pair_over(reg) as made:
            registered(made.fast, "orders-value", ORDER)
            registered(made.fast, ":.ctx:pay-value", PAY)
            yield made
    finally:
        reg.stop()


V8 = {"Confluent-Accept-Unknown-Properties": "true"}
#: (method, path, body, headers): reads that some write below changes
READS: list[tuple[str, str, bytes | None, dict[str, str]]] = [
    ("GET", "/schemas/ids/1", None, {}),
    ("GET", "/schemas/ids/1", None, V8),
    ("GET", "/schemas/ids/1?fetchMaxId=true", None, {}),
    ("GET", "/schemas/ids/2?subject=pay-value", None, {}),
    ("GET", "/subjects/orders-value/versions/1", None, {}),
    ("GET", "/subjects/orders-value/versions/latest", None, V8),
    ("GET", "/subjects/pay-value/versions/1", None, {}),
    ("GET", "/subjects/:.other:pay-value/versions/1", None, {}),
    ("GET", "/subjects/alias/versions/1", None, {}),
    ("POST", "/subjects/orders-value", lookup_body(ORDER), {}),
    ("POST", "/subjects/orders-value", lookup_body(ORDER2), {}),
    ("POST", "/subjects/alias", lookup_body(ORDER), {}),
    ("POST", "/subjects/pay-value", lookup_body(PAY), {}),
]


def _read_all(pair: Pair) -> list[tuple[int, bytes]]:
    """Every read through the fast path twice (the second from the cache when it is a 200)."""
    out = []
    for method, path, content, headers in READS:
        answer = same(pair, method, path, content=content, headers=headers)
        out.append((answer.status_code, answer.content))
    return out


def _tag(client: TestClient) -> Any:
    tag = {
        "tagsToAdd": [
            {
                "schemaEntity": {"entityPath": "fast.Order.a", "entityType": "sr_field"},
                "tags": ["PII"],
            }
        ]
    }
    return client.post("/subjects/orders-value/versions/1/tags", json=tag)


WRITES = {
    "new version": lambda c: c.post("/subjects/orders-value/versions", json={"schema": ORDER2}),
    "new version with tags": _tag,
    "soft-delete a version": lambda c: c.delete("/subjects/orders-value/versions/1"),
    "soft-delete the subject": lambda c: c.delete("/subjects/orders-value"),
    "alias config": lambda c: c.put("/config/alias", json={"alias": "orders-value"}),
    "subject in another context": lambda c: c.post(
        "/subjects/:.other:pay-value/versions", json={"schema": ORDER}
    ),
    "mode": lambda c: c.put("/mode/orders-value", json={"mode": "READONLY"}),
    "config": lambda c: c.put("/config/orders-value", json={"compatibility": "NONE"}),
}


@pytest.mark.parametrize("write", list(WRITES))
def test_every_kind_of_write_empties_the_cache(pair: Pair, write: str) -> None:
    before = _read_all(pair)
    invalidations = pair.cache.invalidations
    answer = WRITES[write](pair.fast)
    assert answer.status_code == 200, answer.text
    after = _read_all(pair)  # each equal to the normal path's answer after the write
    assert pair.cache.invalidations == invalidations + 1
    if write not in ("mode", "config"):  # these change no read
        assert after != before


def test_a_permanent_delete_empties_the_cache(pair: Pair) -> None:
    _read_all(pair)
    assert pair.fast.delete("/subjects/orders-value/versions/1").status_code == 200
    _read_all(pair)
    assert pair.fast.delete("/subjects/orders-value/versions/1?permanent=true").status_code == 200
    gone = same(pair, "GET", "/schemas/ids/1")
    assert gone.status_code == 404


def test_an_undone_tentative_batch_empties_the_cache(pair: Pair) -> None:
    """Group commit applies a batch tentatively and undoes it when the store fails: an answer
    read from the tentative state is not kept after it."""
    state = pair.reg.state
    latest = "/subjects/orders-value/versions/latest"
    committed = pair.fast.get(latest).content
    key = RecordKey(keytype=records.SCHEMA, subject="orders-value", version=2)
    value = {
        "subject": "orders-value",
        "version": 2,
        "id": 7,
        "schemaType": "AVRO",
        "schema": ORDER2,
        "deleted": False,
    }
    state.begin_tentative()
    state.apply(Record(key.to_bytes(), records.encode_value(value), offset=-1, timestamp=-1))
    tentative = same(pair, "GET", latest).content
    assert tentative != committed
    state.rollback()
    assert same(pair, "GET", latest).content == committed


def test_an_answer_computed_while_the_state_changes_is_not_kept(pair: Pair) -> None:
    """A write applied while the normal path computes an answer: the answer is passed on, not
    kept (it may mix the two states)."""
    reg = pair.reg
    inner_app = pair.fast.app

    class WritingApp:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            registered(pair.plain, f"other-{uuid.uuid4().hex}", record("W", "w"))
            await inner_app(scope, receive, send)  # type: ignore[operator]

    cache = ReadCache(1 << 20)
    writing = FastReads(WritingApp(), reg, cache)
    scope_state = {"media_type": CT}

    async def run() -> list[Any]:
        sent: list[Any] = []

        async def receive() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "GET",
            "path": "/schemas/ids/1",
            "raw_path": b"/schemas/ids/1",
            "query_string": b"",
            "headers": [(b"accept", CT.encode())],
            "state": dict(scope_state),
            "app": pair.fast.app,
        }
        await writing(scope, receive, send)
        return sent

    import anyio

    sent = anyio.run(run)
    assert cache.misses == 1 and cache.stored == 0 and not cache.entries
    assert [m["type"] for m in sent][:1] == ["http.response.start"]


def test_another_instance_reading_the_store_empties_its_cache(tmp_path: Path) -> None:
    """A second instance on the same store applies the first one's writes when it polls."""
    writer = opened(tmp_path / "r.db")
    reader = opened(tmp_path / "r.db")
    try:
        with pair_over(reader) as pair:
            registered(TestClient(create_app(writer, manage_lifecycle=False)), "s", ORDER)
            reader.refresh()
            assert same(pair, "GET", "/subjects/s/versions/latest").json()["version"] == 1
            writer_client = TestClient(create_app(writer, manage_lifecycle=False))
            registered(writer_client, "s", ORDER2)
            assert same(pair, "GET", "/subjects/s/versions/latest").json()["version"] == 1
            reader.refresh()
            assert same(pair, "GET", "/subjects/s/versions/latest").json()["version"] == 2
    finally:
        reader.stop()
        writer.stop()


def test_the_cache_is_bounded_by_bytes(tmp_path: Path) -> None:
    reg = opened(tmp_path / "r.db", read_cache_bytes=32 * 1024)
    try:
        with pair_over(reg) as pair:
            for n in range(40):
                registered(pair.fast, f"s{n}", record(f"R{n}", *[f"f{i}" for i in range(20)]))
            for n in range(1, 41):
                assert pair.fast.get(f"/schemas/ids/{n}").status_code == 200
            cache = pair.cache
            assert cache.stored == 40
            assert 0 < len(cache.entries) < 40
            assert cache.size <= 32 * 1024
            assert cache.size == sum(e.size for e in cache.entries.values())
            # the most recent ones are kept
            assert same(pair, "GET", "/schemas/ids/40").status_code == 200
    finally:
        reg.stop()


# ---- authentication -----------------------------------------------------------------------------

RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
"""
USERS = {"admin": "a", "dev": "d"}


def basic(name: str, password: str | None = None) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{password or USERS[name]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_authentication_and_rules_apply_to_cached_answers(tmp_path: Path) -> None:
    write_users(tmp_path / "users", USERS)
    (tmp_path / "rules.yaml").write_text(RULES)
    reg = opened(
        tmp_path / "r.db",
        auth_users_file=str(tmp_path / "users"),
        auth_rules_file=str(tmp_path / "rules.yaml"),
    )
    try:
        with pair_over(reg) as pair:
            admin, dev = basic("admin"), basic("dev")
            registered_with = {"headers": admin}
            for subject, schema in (("orders-value", ORDER), ("secret-value", MONEY)):
                made = pair.fast.post(
                    f"/subjects/{subject}/versions", json={"schema": schema}, **registered_with
                )
                assert made.status_code == 200
            reads = [
                ("GET", "/schemas/ids/1", None),
                ("GET", "/schemas/ids/2", None),
                ("GET", "/subjects/orders-value/versions/1", None),
                ("GET", "/subjects/secret-value/versions/1", None),
                ("POST", "/subjects/orders-value", lookup_body(ORDER)),
                ("POST", "/subjects/secret-value", lookup_body(MONEY)),
            ]
            outcomes = {}
            # admin first: every answer is cached before dev and strangers ask
            for who, headers in (
                ("admin", admin),
                ("dev", dev),
                ("wrong password", basic("dev", "nope")),
                ("nobody", {}),
            ):
                # two failed attempts a request (both apps): under the lock-out's five
                for method, path, content in reads if who != "wrong password" else reads[:2]:
                    answer = same(pair, method, path, content=content, headers=headers)
                    outcomes[(who, method, path)] = answer.status_code
            assert outcomes[("admin", "GET", "/schemas/ids/2")] == 200
            assert outcomes[("dev", "GET", "/schemas/ids/1")] == 200
            assert outcomes[("dev", "GET", "/schemas/ids/2")] == 404
            assert outcomes[("dev", "GET", "/subjects/secret-value/versions/1")] == 404
            assert outcomes[("dev", "POST", "/subjects/secret-value")] == 404
            assert {s for (who, _, _), s in outcomes.items() if who == "nobody"} == {401}
            assert {s for (w, _, _), s in outcomes.items() if w == "wrong password"} == {401}
    finally:
        reg.stop()

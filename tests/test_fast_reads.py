"""The hot reads' fast path (``registry.api.fast_reads``) answers exactly what the normal path
answers: for many variants of ``GET /schemas/ids/{id}``, ``GET /subjects/{s}/versions/{v}`` and
the lookup ``POST /subjects/{s}`` (query parameters, contexts, aliases, deleted versions,
references, formats, tags, 8.x headers, media types, errors, authentication on and off), the
first answer (the cache is filled) and the second (sent from the cache) carry the same status,
headers and body bytes as an app without the fast path over the same registry. After every kind
of write the cached answers are gone."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from registry import records
from registry.api.app import create_app
from registry.api.fast_reads import FastReads, ReadCache
from registry.core import Registry
from registry.records import Record, RecordKey
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import write_users

CT = "application/vnd.schemaregistry.v1+json"


def record(name: str, *fields: str, namespace: str = "fast") -> str:
    return json.dumps(
        {
            "type": "record",
            "name": name,
            "namespace": namespace,
            "fields": [{"name": f, "type": "long"} for f in fields],
        }
    )


ORDER = record("Order", "a")
ORDER2 = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "fast",
        "fields": [
            {"name": "a", "type": "long"},
            {"name": "b", "type": ["null", "string"], "default": None},
        ],
    }
)
PAY, MONEY, HALF_A, HALF_B, META = (
    record("Pay", "p"),
    record("Money", "m"),
    record("HalfA", "x"),
    record("HalfB", "y"),
    record("Meta", "z"),
)
USES_MONEY = json.dumps(
    {
        "type": "record",
        "name": "UsesMoney",
        "namespace": "fast",
        "fields": [{"name": "money", "type": "fast.Money"}],
    }
)
PROTO = 'syntax = "proto3";\npackage fast;\n\nmessage Ping {\n  string text = 1;\n}\n'
JSON_SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}})
METADATA = {"properties": {"owner": "team-a"}}


@dataclass
class Pair:
    """Two apps over one registry: with the fast path and without it."""

    reg: Registry
    fast: TestClient
    plain: TestClient

    @property
    def cache(self) -> ReadCache:
        cache: ReadCache = self.fast.app.state.read_cache  # type: ignore[attr-defined]
        return cache


def apps(reg: Registry) -> tuple[FastAPI, FastAPI]:
    """The app with the fast path and the same app without it (``read_cache_bytes=0``)."""
    settings = reg.settings
    reg.settings = replace(settings, read_cache_bytes=0)
    try:
        plain = create_app(reg, manage_lifecycle=False)
    finally:
        reg.settings = settings
    fast = create_app(reg, manage_lifecycle=False)
    assert fast.state.read_cache is not None and plain.state.read_cache is None
    return fast, plain


@contextmanager
def pair_over(reg: Registry) -> Iterator[Pair]:
    fast_app, plain_app = apps(reg)
    headers = {"Content-Type": CT}
    with (
        TestClient(fast_app, headers=headers) as fast,
        TestClient(plain_app, headers=headers) as plain,
    ):
        yield Pair(reg, fast, plain)


def opened(path: Path, **settings: Any) -> Registry:
    reg = Registry(open_store(f"sqlite:///{path}"), Settings(poll_interval=0, **settings))
    reg.start()
    return reg


def registered(client: TestClient, subject: str, schema: str, **extra: Any) -> int:
    answer = client.post(f"/subjects/{subject}/versions", json={"schema": schema, **extra})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["id"])


#: headers that must be equal, in order, between the two paths (all of them but the date)
def _head(answer: Any) -> list[tuple[bytes, bytes]]:
    return [(k.lower(), v) for k, v in answer.headers.raw if k.lower() != b"date"]


def same(
    pair: Pair,
    method: str,
    path: str,
    *,
    content: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """Ask the plain app once and the fast one twice; every answer must be byte-identical.
    A 200 must be sent from the cache the second time. Returns the plain answer."""
    sent = {"X-Request-ID": "req-" + uuid.uuid4().hex, **(headers or {})}
    plain = pair.plain.request(method, path, content=content, headers=sent)
    hits = pair.cache.hits
    answers = [pair.fast.request(method, path, content=content, headers=sent) for _ in range(2)]
    for answer in answers:
        assert answer.status_code == plain.status_code, (path, answer.text, plain.text)
        assert answer.content == plain.content, path
        assert _head(answer) == _head(plain), path
    if plain.status_code == 200 and method in ("GET", "POST"):
        assert pair.cache.hits > hits, f"{method} {path} was not answered from the cache"
    return plain


# ---- a registry with one of everything --------------------------------------------------------


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Pair, dict[str, int]]]:
    reg = opened(tmp_path_factory.mktemp("fast") / "r.db")
    try:
        with pair_over(reg) as pair:
            c = pair.fast
            assert c.put("/config", json={"compatibility": "NONE"}).status_code == 200
            ids = {
                "orders1": registered(c, "orders-value", ORDER),
                "orders2": registered(c, "orders-value", ORDER2),
                "ctx": registered(c, ":.ctx:pay-value", PAY),
                "money": registered(c, "money-value", MONEY),
                "proto": registered(c, "proto-value", PROTO, schemaType="PROTOBUF"),
                "json": registered(c, "json-value", JSON_SCHEMA, schemaType="JSON"),
                "half1": registered(c, "half-value", HALF_A),
                "half2": registered(c, "half-value", HALF_B),
                "meta": registered(c, "meta-value", META, metadata=METADATA),
                "slash": registered(c, "a%2Fb-value", record("Slash", "s")),
            }
            ids["refs"] = registered(
                c,
                "refs-value",
                USES_MONEY,
                references=[{"name": "fast.Money", "subject": "money-value", "version": 1}],
            )
            tag = {
                "tagsToAdd": [
                    {
                        "schemaEntity": {"entityPath": "fast.Order.a", "entityType": "sr_field"},
                        "tags": ["PII"],
                    }
                ]
            }
            assert c.post("/subjects/orders-value/versions/2/tags", json=tag).status_code == 200
            ids["tagged"] = int(c.get("/subjects/orders-value/versions/3").json()["id"])
            assert c.delete("/subjects/half-value/versions/1").status_code == 200
            assert (
                c.put("/config/alias-of-orders", json={"alias": "orders-value"}).status_code == 200
            )
            yield pair, ids
    finally:
        reg.stop()


GETS = [
    "/schemas/ids/{orders1}",
    "/schemas/ids/{orders2}",
    "/schemas/ids/{tagged}",
    "/schemas/ids/{tagged}?findTags=PII",
    "/schemas/ids/{tagged}?findTags=*&findTags=NONE",
    "/schemas/ids/{orders1}?fetchMaxId=true",
    "/schemas/ids/{orders1}?subject=orders-value",
    "/schemas/ids/{orders1}?subject=alias-of-orders",
    "/schemas/ids/{ctx}",
    "/schemas/ids/{ctx}?subject=:.ctx:pay-value",
    "/schemas/ids/{ctx}?subject=pay-value",
    "/contexts/.ctx/schemas/ids/{ctx}",
    "/schemas/ids/{refs}",
    "/schemas/ids/{refs}?format=resolved",
    "/schemas/ids/{proto}",
    "/schemas/ids/{proto}?format=serialized",
    "/schemas/ids/{json}",
    "/schemas/ids/{half1}",
    "/schemas/ids/{meta}",
    "/schemas/ids/{orders1}/",
    "/schemas/ids/{orders1}?format=",
    "/schemas/ids/99999",
    "/schemas/ids/abc",
    "/schemas/ids/+{orders1}",
    "/subjects/orders-value/versions/1",
    "/subjects/orders-value/versions/2",
    "/subjects/orders-value/versions/3?findTags=PII",
    "/subjects/orders-value/versions/latest",
    "/subjects/orders-value/versions/LATEST",
    "/subjects/orders-value/versions/-1",
    "/subjects/orders-value/versions/1/",
    "/subjects/orders-value/versions/9",
    "/subjects/orders-value/versions/0",
    "/subjects/orders-value/versions/x",
    "/subjects/missing-value/versions/1",
    "/subjects/half-value/versions/1",
    "/subjects/half-value/versions/1?deleted=true",
    "/subjects/half-value/versions/latest",
    "/subjects/:.ctx:pay-value/versions/1",
    "/subjects/pay-value/versions/1",
    "/contexts/.ctx/subjects/pay-value/versions/1",
    "/subjects/alias-of-orders/versions/1",
    "/subjects/refs-value/versions/1?format=resolved",
    "/subjects/proto-value/versions/1?format=serialized",
    "/subjects/a%2Fb-value/versions/1",
    "/subjects/meta-value/versions/latest",
]

HEADERS: dict[str, dict[str, str]] = {
    "default": {},
    "accept-unknown": {"Confluent-Accept-Unknown-Properties": "true"},
    "accept-unknown-spaced": {"Confluent-Accept-Unknown-Properties": " TRUE "},
    "accept-unknown-false": {"Confluent-Accept-Unknown-Properties": "false"},
    "client-version": {"Confluent-Client-Version": "python/2.16.0"},
    "json": {"Accept": "application/json"},
    "sr-json": {"Accept": "application/vnd.schemaregistry+json"},
    "any": {"Accept": "*/*"},
    "q-values": {"Accept": "application/json;q=0.9, application/vnd.schemaregistry.v1+json;q=0.1"},
    "unacceptable": {"Accept": "text/plain"},
}


@pytest.mark.parametrize("variant", list(HEADERS))
def test_gets_answer_as_the_normal_path(full: tuple[Pair, dict[str, int]], variant: str) -> None:
    pair, ids = full
    statuses = set()
    for template in GETS:
        statuses.add(
            same(pair, "GET", template.format(**ids), headers=HEADERS[variant]).status_code
        )
    expected = {406} if variant == "unacceptable" else {200, 404, 422}
    assert statuses == expected


def _body(schema: str, **extra: Any) -> bytes:
    return json.dumps({"schema": schema, **extra}).encode()


LOOKUPS: list[tuple[str, bytes]] = [
    ("/subjects/orders-value", _body(ORDER)),
    ("/subjects/orders-value", _body(ORDER2)),
    ("/subjects/orders-value", json.dumps({"schema": ORDER}, indent=2).encode()),
    ("/subjects/orders-value", _body(ORDER, schemaType="AVRO")),
    ("/subjects/orders-value?normalize=true", _body(ORDER)),
    ("/subjects/orders-value?format=", _body(ORDER)),
    ("/subjects/orders-value", _body(json.dumps(json.loads(ORDER), indent=1))),
    ("/subjects/orders-value", _body(record("Other", "q"))),
    ("/subjects/orders-value", _body("{not a schema")),
    ("/subjects/orders-value", b"{broken"),
    ("/subjects/orders-value", b""),
    ("/subjects/orders-value", b"[]"),
    ("/subjects/missing-value", _body(ORDER)),
    ("/subjects/half-value", _body(HALF_A)),
    ("/subjects/half-value?deleted=true", _body(HALF_A)),
    ("/subjects/:.ctx:pay-value", _body(PAY)),
    ("/subjects/pay-value", _body(PAY)),
    ("/contexts/.ctx/subjects/pay-value", _body(PAY)),
    ("/subjects/alias-of-orders", _body(ORDER)),
    (
        "/subjects/refs-value",
        _body(
            USES_MONEY,
            references=[{"name": "fast.Money", "subject": "money-value", "version": 1}],
        ),
    ),
    ("/subjects/refs-value", _body(USES_MONEY)),
    ("/subjects/proto-value", _body(PROTO, schemaType="PROTOBUF")),
    ("/subjects/json-value", _body(JSON_SCHEMA, schemaType="JSON")),
    ("/subjects/meta-value", _body(META)),
    ("/subjects/meta-value", _body(META, metadata=METADATA)),
    ("/subjects/a%2Fb-value", _body(record("Slash", "s"))),
    ("/subjects/orders-value/", _body(ORDER)),
]

LOOKUP_HEADERS: dict[str, dict[str, str]] = {
    "default": {},
    "accept-unknown": {"Confluent-Accept-Unknown-Properties": "true"},
    "client-version": {"Confluent-Client-Version": "java/8.0.0"},
    "json": {"Accept": "application/json", "Content-Type": "application/json"},
    "octet-stream": {"Content-Type": "application/octet-stream"},
    "text-plain": {"Content-Type": "text/plain"},
    "unacceptable": {"Accept": "text/html"},
}


@pytest.mark.parametrize("variant", list(LOOKUP_HEADERS))
def test_lookups_answer_as_the_normal_path(full: tuple[Pair, dict[str, int]], variant: str) -> None:
    pair, _ = full
    statuses = set()
    for path, content in LOOKUPS:
        answer = same(pair, "POST", path, content=content, headers=LOOKUP_HEADERS[variant])
        statuses.add(answer.status_code)
    expected = {"unacceptable": {406}, "text-plain": {415}}.get(variant, {200, 400, 404, 422})
    assert statuses == expected


def test_a_lookup_body_in_another_charset(full: tuple[Pair, dict[str, int]]) -> None:
    pair, _ = full
    utf16 = {"Content-Type": CT + "; charset=UTF-16"}
    content = json.dumps({"schema": ORDER}).encode("utf-16-be")
    assert (
        same(pair, "POST", "/subjects/orders-value", content=content, headers=utf16).status_code
        == 200
    )


def test_requests_the_fast_path_passes_on(full: tuple[Pair, dict[str, int]]) -> None:
    """HEAD, a chunked lookup body, other routes: the normal path answers, nothing is kept."""
    pair, ids = full
    stored = pair.cache.stored
    for path in (f"/schemas/ids/{ids['orders1']}", "/subjects/orders-value/versions/1"):
        head = pair.fast.head(path, headers={"X-Request-ID": "h"})
        plain = pair.plain.head(path, headers={"X-Request-ID": "h"})
        assert (head.status_code, _head(head), head.content) == (
            plain.status_code,
            _head(plain),
            plain.content,
        )
    chunks = [json.dumps({"schema": ORDER}).encode()]
    chunked = pair.fast.post("/subjects/orders-value", content=iter(chunks))
    assert chunked.status_code == 200
    assert chunked.json() == pair.plain.post("/subjects/orders-value", content=iter(chunks)).json()
    for path in ("/subjects/orders-value/versions", "/schemas/ids/1/versions", "/subjects"):
        assert pair.fast.get(path).content == pair.plain.get(path).content
    assert pair.cache.stored == stored


def test_request_ids_metrics_and_routes_on_a_cached_answer(
    full: tuple[Pair, dict[str, int]],
) -> None:
    pair, ids = full
    path = f"/schemas/ids/{ids['orders2']}"
    pair.fast.get(path)  # kept

    def count() -> float:
        text = pair.fast.get("/metrics").text
        line = next(
            (
                x
                for x in text.splitlines()
                if x.startswith("schema_registry_http_requests_total{")
                and 'route="/schemas/ids/{schema_id}"' in x
                and 'status="200"' in x
                and 'method="GET"' in x
            ),
            None,
        )
        return float(line.rsplit(" ", 1)[1]) if line else 0.0

    before, hits = count(), pair.cache.hits
    generated = {pair.fast.get(path).headers["x-request-id"] for _ in range(3)}
    echoed = pair.fast.get(path, headers={"X-Request-ID": "mine-1"})
    assert pair.cache.hits == hits + 4
    assert echoed.headers["x-request-id"] == "mine-1"
    assert len(generated) == 3 and all(uuid.UUID(g) for g in generated)
    assert count() == before + 4


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
    ("POST", "/subjects/orders-value", _body(ORDER), {}),
    ("POST", "/subjects/orders-value", _body(ORDER2), {}),
    ("POST", "/subjects/alias", _body(ORDER), {}),
    ("POST", "/subjects/pay-value", _body(PAY), {}),
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
                ("POST", "/subjects/orders-value", _body(ORDER)),
                ("POST", "/subjects/secret-value", _body(MONEY)),
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

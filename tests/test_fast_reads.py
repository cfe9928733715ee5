"""The hot reads' fast path (``registry.api.fast_reads``) answers exactly what the normal path
answers: for many variants of ``GET /schemas/ids/{id}``, ``GET /subjects/{s}/versions/{v}`` and
the lookup ``POST /subjects/{s}`` (query parameters, contexts, aliases, deleted versions,
references, formats, tags, 8.x headers, media types, content types, errors), the first answer
(the cache is filled) and the second (sent from the cache) carry the same status, headers and
body bytes as an app without the fast path over the same registry. Invalidation and
authentication: ``test_fast_reads_invalidation.py``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from tests.fast_reads_helpers import (
    CT,
    HALF_A,
    HALF_B,
    JSON_SCHEMA,
    META,
    METADATA,
    MONEY,
    ORDER,
    ORDER2,
    PAY,
    PROTO,
    USES_MONEY,
    Pair,
    answer_head,
    lookup_body,
    opened,
    pair_over,
    record,
    registered,
    same,
)

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


LOOKUPS: list[tuple[str, bytes]] = [
    ("/subjects/orders-value", lookup_body(ORDER)),
    ("/subjects/orders-value", lookup_body(ORDER2)),
    ("/subjects/orders-value", json.dumps({"schema": ORDER}, indent=2).encode()),
    ("/subjects/orders-value", lookup_body(ORDER, schemaType="AVRO")),
    ("/subjects/orders-value?normalize=true", lookup_body(ORDER)),
    ("/subjects/orders-value?format=", lookup_body(ORDER)),
    ("/subjects/orders-value", lookup_body(json.dumps(json.loads(ORDER), indent=1))),
    ("/subjects/orders-value", lookup_body(record("Other", "q"))),
    ("/subjects/orders-value", lookup_body("{not a schema")),
    ("/subjects/orders-value", b"{broken"),
    ("/subjects/orders-value", b""),
    ("/subjects/orders-value", b"[]"),
    ("/subjects/missing-value", lookup_body(ORDER)),
    ("/subjects/half-value", lookup_body(HALF_A)),
    ("/subjects/half-value?deleted=true", lookup_body(HALF_A)),
    ("/subjects/:.ctx:pay-value", lookup_body(PAY)),
    ("/subjects/pay-value", lookup_body(PAY)),
    ("/contexts/.ctx/subjects/pay-value", lookup_body(PAY)),
    ("/subjects/alias-of-orders", lookup_body(ORDER)),
    (
        "/subjects/refs-value",
        lookup_body(
            USES_MONEY,
            references=[{"name": "fast.Money", "subject": "money-value", "version": 1}],
        ),
    ),
    ("/subjects/refs-value", lookup_body(USES_MONEY)),
    ("/subjects/proto-value", lookup_body(PROTO, schemaType="PROTOBUF")),
    ("/subjects/json-value", lookup_body(JSON_SCHEMA, schemaType="JSON")),
    ("/subjects/meta-value", lookup_body(META)),
    ("/subjects/meta-value", lookup_body(META, metadata=METADATA)),
    ("/subjects/a%2Fb-value", lookup_body(record("Slash", "s"))),
    ("/subjects/orders-value/", lookup_body(ORDER)),
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
        assert (head.status_code, answer_head(head), head.content) == (
            plain.status_code,
            answer_head(plain),
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

"""The registration route without FastAPI's routing (``registry.api.fast_writes``) answers
exactly what the routed path answers: two registries on their own SQLite files get the same
sequence of ``POST /subjects/{s}/versions`` requests (new subjects and versions, the same
schema again, incompatible and invalid schemas, malformed and empty bodies, media and content
types, query parameters, 8.x headers, modes, contexts, encoded slashes, references, every
schema type, metadata and rule sets, limits), one through an app with the fast path and one
through the same app without it; every answer must carry the same status, headers and body
bytes, and the fast path must have answered the registrations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.api.fast_writes import FastWrites
from registry.core import Registry
from tests.fast_reads_helpers import (
    CT,
    JSON_SCHEMA,
    ORDER,
    ORDER2,
    PROTO,
    answer_head,
    opened,
    record,
)


def without_fast_writes(reg: Registry) -> FastAPI:
    app = create_app(reg, manage_lifecycle=False)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FastWrites]
    return app


class Twins:
    def __init__(self, fast: TestClient, plain: TestClient, fast_app: FastAPI) -> None:
        self.fast, self.plain, self.fast_app = fast, plain, fast_app

    def same(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        if body is not None:
            content = json.dumps(body).encode()
        sent = {"X-Request-ID": "fixed-request-id", **(headers or {})}
        plain = self.plain.request(method, path, content=content, headers=sent)
        fast = self.fast.request(method, path, content=content, headers=sent)
        assert fast.status_code == plain.status_code, (path, fast.text, plain.text)
        assert fast.content == plain.content, (path, fast.text, plain.text)
        assert answer_head(fast) == answer_head(plain), path
        return plain

    @property
    def handled(self) -> int:
        return int(self.fast_app.state.fast_writes.count)


@pytest.fixture
def twins(tmp_path: Path) -> Iterator[Twins]:
    fast_reg = opened(tmp_path / "fast.db", max_schema_bytes=4096)
    plain_reg = opened(tmp_path / "plain.db", max_schema_bytes=4096)
    fast_app = create_app(fast_reg, manage_lifecycle=False)
    plain_app = without_fast_writes(plain_reg)
    headers = {"Content-Type": CT}
    try:
        with (
            TestClient(fast_app, headers=headers) as fast,
            TestClient(plain_app, headers=headers) as plain,
        ):
            yield Twins(fast, plain, fast_app)
    finally:
        fast_reg.stop()
        plain_reg.stop()


ORDER_B = ORDER2  # ORDER plus an optional field: a compatible next version
ALIASED = json.dumps(
    {
        "type": "record",
        "name": "N",
        "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["B", "A"]}}],
        "aliases": ["z", "y"],
    }
)
ORDER_BAD = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "fast",
        "fields": [{"name": "c", "type": "int"}],
    }
)


def test_registrations_answer_byte_for_byte_as_the_routed_path(twins: Twins) -> None:
    post = "POST"
    twins.same(post, "/subjects/orders-value/versions", {"schema": ORDER})
    twins.same(post, "/subjects/orders-value/versions", {"schema": ORDER})  # the same again
    twins.same(post, "/subjects/orders-value/versions", {"schema": ORDER_B})
    assert (
        twins.same(post, "/subjects/orders-value/versions", {"schema": ORDER_BAD}).status_code
        == 409
    )
    assert twins.same(post, "/subjects/x/versions", {"schema": "{not avro"}).status_code == 422
    assert twins.same(post, "/subjects/x/versions", content=b"{oops").status_code == 400
    assert twins.same(post, "/subjects/x/versions", content=b"").status_code == 422
    twins.same(post, "/subjects/x/versions", content=b"null")
    twins.same(post, "/subjects/x/versions", content=b"[1]")
    twins.same(post, "/subjects/x/versions", {"schema": 5})
    twins.same(post, "/subjects/x/versions", {"schema": ORDER, "schemaType": "XML"})
    twins.same(
        post, "/subjects/x/versions", {"schema": ORDER}, headers={"Content-Type": "text/plain"}
    )
    twins.same(post, "/subjects/x/versions", {"schema": ORDER}, headers={"Accept": "text/html"})
    twins.same(
        post, "/subjects/x/versions", {"schema": ORDER}, headers={"Accept": "application/json"}
    )
    twins.same(post, "/subjects/y/versions?normalize=true", {"schema": record("Y", "b", "a")})
    twins.same(
        post, "/subjects/y2/versions?normalize=false&normalize=true", {"schema": record("Y", "c")}
    )
    twins.same(post, "/subjects/norm/versions?normalize=true", {"schema": ALIASED})
    twins.same(post, "/subjects/norm2/versions?normalize=true&normalize=false", {"schema": ALIASED})
    twins.same(post, "/subjects/y3/versions?format=resolved", {"schema": record("Y3", "c")})
    v8 = {"Confluent-Accept-Unknown-Properties": "true"}
    twins.same(post, "/subjects/v8/versions", {"schema": record("V", "a")}, headers=v8)
    twins.same(post, "/subjects/v8/versions", {"schema": record("V", "a")}, headers=v8)
    twins.same(
        post,
        "/subjects/v8c/versions",
        {"schema": record("V", "z")},
        headers={"Confluent-Client-Version": "python/2.16"},
    )
    meta = {"properties": {"owner": "team"}}
    rules = {"domainRules": [{"name": "r", "kind": "CONDITION", "type": "CEL", "expr": "true"}]}
    twins.same(post, "/subjects/m/versions", {"schema": record("M", "a"), "metadata": meta})
    twins.same(post, "/subjects/m/versions", {"schema": record("M", "a"), "ruleSet": rules})
    twins.same(post, "/subjects/a%2Fb/versions", {"schema": record("Slash", "a")})
    twins.same(post, "/contexts/.ctx/subjects/c/versions", {"schema": record("Ctx", "a")})
    twins.same(post, "/subjects/:.ctx2:d/versions", {"schema": record("Ctx2", "a")})
    twins.same(post, "/subjects/:*:bad/versions", {"schema": record("Bad", "a")})
    twins.same(post, "/subjects/trailing/versions/", {"schema": record("T", "a")})
    twins.same(post, "/subjects/p/versions", {"schema": PROTO, "schemaType": "PROTOBUF"})
    twins.same(post, "/subjects/j/versions", {"schema": JSON_SCHEMA, "schemaType": "JSON"})
    twins.same(
        post, "/subjects/lower/versions", {"schema": record("Low", "a"), "schemaType": "avro"}
    )
    twins.same(post, "/subjects/money/versions", {"schema": record("Money", "m")})
    uses = json.dumps(
        {
            "type": "record",
            "name": "Uses",
            "namespace": "fast",
            "fields": [{"name": "m", "type": "fast.Money"}],
        }
    )
    refs = [{"name": "fast.Money", "subject": "money", "version": 1}]
    twins.same(post, "/subjects/uses/versions", {"schema": uses, "references": refs})
    twins.same(
        post,
        "/subjects/uses/versions",
        {"schema": uses, "references": [{"name": "x", "subject": "none", "version": 1}]},
    )
    big = record("Big", *[f"f{i}" for i in range(200)])
    assert twins.same(post, "/subjects/big/versions", {"schema": big}).status_code == 422
    # a version and an id given, in IMPORT mode and not
    twins.same(post, "/subjects/imp/versions", {"schema": record("I", "a"), "id": 77, "version": 1})
    twins.same("PUT", "/mode/imp", {"mode": "IMPORT"})
    twins.same(post, "/subjects/imp/versions", {"schema": record("I", "a"), "id": 77, "version": 1})
    twins.same(post, "/subjects/imp/versions", {"schema": record("I", "b"), "id": 77, "version": 2})
    twins.same("PUT", "/mode/ro", {"mode": "READONLY"})
    twins.same(post, "/subjects/ro/versions", {"schema": record("R", "a")})
    twins.same("PUT", "/config/orders-value", {"compatibility": "NONE"})
    twins.same(post, "/subjects/orders-value/versions", {"schema": ORDER_BAD})
    twins.same(post, "/subjects/orders-value/versions", {"schema": ""})
    # every answer above that reached the route went through the fast path
    assert twins.handled >= 35
    # and the state is the same: every subject's versions read back the same
    for subject in (
        "norm",
        "norm2",
        "y2",
        "orders-value",
        "y",
        "v8",
        "m",
        "a%2Fb",
        "p",
        "j",
        "uses",
        "imp",
    ):
        twins.same("GET", f"/subjects/{subject}/versions")
        twins.same("GET", f"/subjects/{subject}/versions/latest")


def test_other_requests_are_not_taken(twins: Twins) -> None:
    twins.same("POST", "/subjects/s/versions", {"schema": ORDER})
    before = twins.handled
    twins.same("POST", "/subjects/s", {"schema": ORDER})  # a lookup
    twins.same("GET", "/subjects/s/versions")
    twins.same("DELETE", "/subjects/s/versions/1")
    twins.same("PUT", "/subjects/s/versions", {"schema": ORDER})  # not an allowed method
    twins.same("POST", "/subjects/s/versions/extra", {"schema": ORDER})
    twins.same("POST", "/subjects//versions", {"schema": ORDER})
    assert twins.handled == before

"""Shared by the fast-path tests: two apps over one registry (with the fast path and without
it), and asking both for the same request (``same``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.api.fast_reads import ReadCache
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

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
    """A registry on ``path``; with Confluent Cloud's response shapes unless ``settings`` say
    otherwise (as the ``registry`` fixture: twin registries' 8.x answers differ in ``ts``)."""
    settings = {"v8_fields_by_header": True, **settings}
    reg = Registry(open_store(f"sqlite:///{path}"), Settings(poll_interval=0, **settings))
    reg.start()
    return reg


def registered(client: TestClient, subject: str, schema: str, **extra: Any) -> int:
    answer = client.post(f"/subjects/{subject}/versions", json={"schema": schema, **extra})
    assert answer.status_code == 200, answer.text
    return int(answer.json()["id"])


#: headers that must be equal, in order, between the two paths (all of them but the date)
def answer_head(answer: Any) -> list[tuple[bytes, bytes]]:
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
        assert answer_head(answer) == answer_head(plain), path
    if plain.status_code == 200 and method in ("GET", "POST"):
        assert pair.cache.hits > hits, f"{method} {path} was not answered from the cache"
    return plain


def lookup_body(schema: str, **extra: Any) -> bytes:
    return json.dumps({"schema": schema, **extra}).encode()

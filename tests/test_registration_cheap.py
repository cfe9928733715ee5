"""Which registrations are looked up on the event loop and decided only inside the group
commit (``registration.cheap``): small reference-free Avro texts for subjects with few, small
versions; everything else is prepared in a worker thread first, so that its work neither holds
the event loop nor the write lock (issue 15)."""

from __future__ import annotations

import json

from registry.core import Registry, SchemaRequest
from registry.registration import (
    INLINE_SCHEMA_CHARS,
    INLINE_STORED_CHARS,
    INLINE_VERSIONS,
    cheap,
    register,
)


def avro(name: str, doc: str = "", fields: int = 1) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": name,
            "doc": doc,
            "fields": [{"name": f"f{i}", "type": "long", "default": 0} for i in range(fields)],
        }
    )


def test_small_avro_for_a_small_subject_is_cheap(registry: Registry) -> None:
    assert cheap(registry, "new", SchemaRequest(schema=avro("A")))
    assert cheap(registry, "new", SchemaRequest(schema=avro("A"), schema_type="avro"))


def test_references_other_formats_and_large_texts_are_not(registry: Registry) -> None:
    refs = [{"name": "x", "subject": "y", "version": 1}]
    assert not cheap(registry, "s", SchemaRequest(schema=avro("A"), references=refs))
    assert not cheap(registry, "s", SchemaRequest(schema="{}", schema_type="JSON"))
    proto = 'syntax = "proto3"; message M {}'
    assert not cheap(registry, "s", SchemaRequest(schema=proto, schema_type="PROTOBUF"))
    big = avro("A", doc="d" * INLINE_SCHEMA_CHARS)
    assert not cheap(registry, "s", SchemaRequest(schema=big))


def test_a_subject_with_many_or_large_versions_is_not(registry: Registry) -> None:
    for i in range(INLINE_VERSIONS + 1):
        register(registry, "many", SchemaRequest(schema=avro("M", fields=i + 1)), normalize=False)
    assert not cheap(registry, "many", SchemaRequest(schema=avro("M", fields=99)))
    half = INLINE_STORED_CHARS // 2 + 1
    for i in range(2):
        text = avro("L", doc="d" * half, fields=i + 1)
        register(registry, "large", SchemaRequest(schema=text), normalize=False)
    assert not cheap(registry, "large", SchemaRequest(schema=avro("L", fields=3)))
    register(registry, "small", SchemaRequest(schema=avro("S")), normalize=False)
    assert cheap(registry, "small", SchemaRequest(schema=avro("S", fields=2)))

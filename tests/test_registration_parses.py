"""How often a registration parses: the request's text once (its strict parse stands for the
look-up's lenient one), and a stored version's text at most once in the registry's life to
compare it with candidates (``SchemaVersion.forms`` remembers whether the stored text is its
own canonical form), while look-ups still find a stored text that is not canonical."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from registry import errors, records
from registry.core import Registry, SchemaRequest
from registry.lookups import lookup_in_subject
from registry.registration import register


class CountingFormat:
    """The registry's Avro format, counting the texts it parses."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.parsed: Counter[str] = Counter()

    def parse(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self.parsed[text] += 1
        return self.real.parse(text, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def counting(reg: Registry) -> CountingFormat:
    fmt = CountingFormat(reg.formats["AVRO"])
    reg.formats["AVRO"] = fmt  # type: ignore[assignment]
    return fmt


def version(n: int, spaced: bool = False) -> str:
    fields = [{"name": "id", "type": "long"}] + [
        {"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(n)
    ]
    schema = {"type": "record", "name": "R", "fields": fields}
    return json.dumps(schema) if spaced else json.dumps(schema, separators=(",", ":"))


def reg_schema(reg: Registry, subject: str, text: str) -> int:
    return register(reg, subject, SchemaRequest(schema=text), normalize=False).id


def test_a_new_version_parses_its_text_once(registry: Registry) -> None:
    for n in range(3):
        reg_schema(registry, "s", version(n))
    fmt = counting(registry)
    text = version(3, spaced=True)
    reg_schema(registry, "s", text)
    assert fmt.parsed[text] == 1  # the look-up's lenient parse is the strict one


def test_stored_versions_are_parsed_at_most_once_to_compare(registry: Registry) -> None:
    for n in range(5):
        reg_schema(registry, "s", version(n))
    fmt = counting(registry)
    for n in (5, 6):
        registry._parse_cache.clear()  # as if evicted: comparing used to parse them all again
        before = sum(fmt.parsed.values())
        reg_schema(registry, "s", version(n, spaced=True))
        # its own text and the latest version's (the compatibility check), not the older ones
        assert sum(fmt.parsed.values()) - before == 2
    stored = registry.state.versions("s")
    assert all(sv.forms for v, sv in stored.items() if v < 6)


def test_a_stored_text_that_is_not_canonical_is_still_found(registry: Registry) -> None:
    # a record another registry wrote, its text not in our canonical form (spaced JSON)
    spaced = version(2, spaced=True)
    value = {"subject": "imp", "version": 1, "id": 42, "schema": spaced, "deleted": False}
    registry.write(lambda: ([(records.schema_key("imp", 1), value)], None))
    sv = registry.state.versions("imp")[1]
    assert sv.schema == spaced
    for _ in range(2):  # the first look-up learns the form, the second uses what it learnt
        found = lookup_in_subject(
            registry, "imp", SchemaRequest(schema=version(2)), normalize=False
        )
        assert found is not None and found.id == 42
    assert registry.state.versions("imp")[1].forms


def test_a_stored_canonical_text_is_found_without_parsing_it_again(registry: Registry) -> None:
    """A look-up (or a re-registration, which looks up first) of exactly the text a version
    stores, known to be its own canonical form, needs no parse: the text is the candidate.
    Whether it is canonical is learnt by the first such look-up, once per version."""
    first = version(2)
    reg_schema(registry, "s", first)
    reg_schema(registry, "s", version(3))
    fmt = counting(registry)
    registry._parse_cache.clear()  # as if evicted by other traffic
    found = lookup_in_subject(registry, "s", SchemaRequest(schema=first), normalize=False)
    assert found is not None and found.version == 1
    assert found.forms & 1  # CANONICAL_SAME, learnt (here already by the registrations)
    learnt = fmt.parsed[first]
    assert learnt <= 1  # at most the stored version's parse
    for _ in range(3):
        registry._parse_cache.clear()
        again = lookup_in_subject(registry, "s", SchemaRequest(schema=first), normalize=False)
        assert again is found
        assert register(registry, "s", SchemaRequest(schema=first), normalize=False).id == 1
    assert fmt.parsed[first] == learnt
    # another subject registering the same text is looked up in the subject first (none
    # there), then parsed strictly as a new registration: the same id
    assert reg_schema(registry, "t", first) == found.id


def test_the_shortcut_needs_the_same_references_metadata_and_type(registry: Registry) -> None:
    first = version(1)
    schema_id = reg_schema(registry, "s", first)
    fmt = counting(registry)
    registry._parse_cache.clear()
    # metadata that the stored version lacks: a different identity, so the full path runs
    with_md = SchemaRequest(schema=first, metadata={"properties": {"owner": "x"}})
    assert lookup_in_subject(registry, "s", with_md, normalize=False) is None
    assert fmt.parsed[first] >= 1
    # a JSON Schema request with an Avro text is parsed as JSON Schema, not taken as stored
    as_json = SchemaRequest(schema=first, schema_type="JSON")
    with pytest.raises(errors.RegistryError, match="schemaType=JSON"):
        lookup_in_subject(registry, "s", as_json, normalize=False)
    found = lookup_in_subject(registry, "s", SchemaRequest(schema=first), normalize=False)
    assert found is not None and found.id == schema_id


def test_a_stored_text_that_is_not_canonical_is_not_taken_as_its_candidate(
    registry: Registry,
) -> None:
    # stored by another registry in a non-canonical form: looking its exact text up must still
    # canonicalise it (as Confluent does), and the canonical text of a spaced record differs
    spaced = version(1, spaced=True)
    value = {"subject": "imp", "version": 1, "id": 7, "schema": spaced, "deleted": False}
    registry.write(lambda: ([(records.schema_key("imp", 1), value)], None))
    fmt = counting(registry)
    found = lookup_in_subject(registry, "imp", SchemaRequest(schema=spaced), normalize=False)
    assert found is not None and found.id == 7
    assert registry.state.versions("imp")[1].forms & 2  # CANONICAL_DIFFERS learnt
    before = fmt.parsed[spaced]
    found = lookup_in_subject(registry, "imp", SchemaRequest(schema=spaced), normalize=False)
    assert found is not None and found.id == 7
    assert fmt.parsed[spaced] >= before  # parsed as a request, not short-cut


def test_a_lookup_of_a_known_canonical_text_needs_no_worker_thread(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``POST /subjects/{subject}`` answers on the event loop when the text is a version's
    stored canonical form, known without parsing (as when its parse is cached); an unknown
    form, a normalising look-up and a text never stored still go to a worker thread. (No
    read cache, which would answer repeated look-ups before the route.)"""
    from fastapi.testclient import TestClient

    from registry.api import subjects as routes
    from registry.api.app import create_app
    from registry.settings import Settings
    from registry.store.factory import open_store

    registry = Registry(open_store(sqlite_url), Settings(poll_interval=0, read_cache_bytes=0))
    registry.start()
    client = TestClient(create_app(registry, manage_lifecycle=False))

    hops: list[Any] = []
    real = routes.run_in_threadpool

    async def counting(fn: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(fn)
        return await real(fn, *args, **kwargs)

    monkeypatch.setattr(routes, "run_in_threadpool", counting)
    first, second = version(1), version(2)
    reg_schema(registry, "s", first)
    reg_schema(registry, "s", second)

    def look(text: str, query: str = "") -> Any:
        registry._parse_cache.clear()
        answer = client.post(f"/subjects/s{query}", json={"schema": text})
        assert answer.status_code == 200, answer.text
        return answer.json()["version"]

    try:
        for sv in registry.state.versions("s").values():
            sv.forms = 0  # their forms not known yet: learnt in a worker thread
        assert look(first) == 1 and len(hops) == 1
        assert look(first) == 1 and len(hops) == 1  # known now: on the loop
        assert look(first) == 1 and len(hops) == 1
        assert look(second) == 2 and len(hops) == 2  # not known yet
        assert look(second) == 2 and len(hops) == 2
        assert look(first, "?normalize=true") == 1 and len(hops) == 3
        assert look(version(1, spaced=True)) == 1 and len(hops) == 4  # not the stored text
        # stored (form known) under another subject only: the look-up in this one goes on to
        # compare versions and other contexts, which may parse: a worker thread
        other = version(5)
        reg_schema(registry, "t", other)
        assert lookup_in_subject(registry, "t", SchemaRequest(schema=other), normalize=False)
        assert client.post("/subjects/s", json={"schema": other}).status_code == 404
        assert len(hops) == 5
    finally:
        client.close()
        registry.stop()

"""How often a registration parses: the request's text once (its strict parse stands for the
look-up's lenient one), and a stored version's text at most once in the registry's life to
compare it with candidates (``SchemaVersion.forms`` remembers whether the stored text is its
own canonical form), while look-ups still find a stored text that is not canonical."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from registry import records
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

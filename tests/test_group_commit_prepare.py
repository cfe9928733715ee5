"""A registration does its expensive work (parsing with references, canonical text,
compatibility) before the write lock, in its own thread; inside the lock it is decided again
against the state as it then is, from the parse and verdict caches (issue 15: an unrelated
registration waited 1.4 s behind a large Protobuf registration's parse)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from registry import errors, registration
from registry.configs import put_config
from registry.core import Registry, SchemaRequest
from registry.registration import register


def avro(*fields: tuple[str, str, Any]) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": "id", "type": "long"}]
            + [{"name": n, "type": t, "default": d} for n, t, d in fields],
        }
    )


def count_locked_work(reg: Registry) -> dict[str, int]:
    """Count the parses and compatibility comparisons run while the write lock is held."""
    counts = {"parse": 0, "compare": 0}
    fmt = reg.formats["AVRO"]
    real_parse, real_compare = fmt.parse, fmt.compatibility_errors

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if reg._write_lock._is_owned():  # type: ignore[attr-defined]
                counts[name] += 1
            return real(*args, **kwargs)

        return counted

    fmt.parse = wrap("parse", real_parse)  # type: ignore[method-assign]
    fmt.compatibility_errors = wrap("compare", real_compare)  # type: ignore[method-assign]
    return counts


def test_parse_and_compatibility_run_before_the_write_lock(registry: Registry) -> None:
    put_config(registry, None, {"compatibility": "FULL_TRANSITIVE"})
    register(registry, "s", SchemaRequest(schema=avro()), normalize=False)
    register(registry, "s", SchemaRequest(schema=avro(("a", "string", ""))), normalize=False)
    counts = count_locked_work(registry)
    third = avro(("a", "string", ""), ("b", "int", 0))
    assert register(registry, "s", SchemaRequest(schema=third), normalize=False).id == 3
    bad = avro(("a", "int", 0))
    with pytest.raises(errors.RegistryError) as incompatible:
        register(registry, "s", SchemaRequest(schema=bad), normalize=False)
    assert incompatible.value.error_code == 409
    with pytest.raises(errors.RegistryError) as invalid:
        register(registry, "s", SchemaRequest(schema='{"type": "nope"}'), normalize=False)
    assert invalid.value.error_code == 42201
    assert counts == {"parse": 0, "compare": 0}
    assert registry.verdicts.hits >= 2


def test_the_decision_inside_the_lock_sees_what_changed_after_the_check(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check before the lock compared with v1; v2 landed before the lock was ours: the
    registration is refused against v2, as a serial registry would."""
    put_config(registry, None, {"compatibility": "BACKWARD"})
    register(registry, "s", SchemaRequest(schema=avro()), normalize=False)
    real_prepare = registration._prepare

    def prepare_then_race(reg: Registry, subject: str, req: SchemaRequest, norm: bool) -> None:
        real_prepare(reg, subject, req, norm)
        monkeypatch.setattr(registration, "_prepare", real_prepare)
        v2 = SchemaRequest(schema=avro(("a", "string", "")))
        assert register(reg, subject, v2, normalize=False).id == 2

    monkeypatch.setattr(registration, "_prepare", prepare_then_race)
    # compatible with v1 (a new field with a default), not with v2 (a: string -> int)
    candidate = SchemaRequest(schema=avro(("a", "int", 0)))
    with pytest.raises(errors.RegistryError) as refused:
        register(registry, "s", candidate, normalize=False)
    assert refused.value.error_code == 409
    assert "oldSchemaVersion: 2" in refused.value.message
    assert sorted(registry.state.versions("s")) == [1, 2]


def test_a_spent_allowance_is_answered_before_the_write_lock(
    registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from registry import budget

    writes: list[int] = []
    real_write = registry.write
    monkeypatch.setattr(registry, "write", lambda decide: writes.append(1) or real_write(decide))
    gone = budget.Allowance(5.0)
    gone.cancelled.set()
    wide = avro(*[(f"f{i}", "string", "") for i in range(300)])
    with budget.allowed(gone), pytest.raises(budget.WorkLimitExceeded):
        register(registry, "fresh", SchemaRequest(schema=wide), normalize=False)
    assert writes == []


def test_a_verdict_is_found_only_for_the_same_parsed_schemas_and_versions() -> None:
    import gc

    from registry.compatibility import PreviousSchema
    from registry.formats.avro import AvroFormat
    from registry.verdict_cache import VerdictCache

    fmt = AvroFormat()
    cache = VerdictCache(max_entries=8)
    new = fmt.parse(avro(("a", "string", "")), (), strict=True)
    old = fmt.parse(avro(), (), strict=False)
    previous = [PreviousSchema(old, 1, avro())]
    cache.put(new, previous, ("BACKWARD", False, None), ["a message"])
    assert cache.get(new, previous, ("BACKWARD", False, None)) == ["a message"]
    assert cache.get(new, previous, ("FULL", False, None)) is None
    assert cache.get(new, [PreviousSchema(old, 2, avro())], ("BACKWARD", False, None)) is None
    # an equal schema parsed again is another object: not the one the verdict was reached on
    again = fmt.parse(avro(), (), strict=False)
    assert cache.get(new, [PreviousSchema(again, 1, avro())], ("BACKWARD", False, None)) is None
    # a collected schema's entry never matches whatever object later takes its address
    del previous, old
    gc.collect()
    for _ in range(20):
        other = fmt.parse(avro(("z", "int", 0)), (), strict=False)
        assert cache.get(new, [PreviousSchema(other, 1, "")], ("BACKWARD", False, None)) is None

"""JSON Schema parse and compatibility-check times for large schemas.

    .venv/bin/python bench/json_schema_bench.py [--repeat N]

Cases: an object with 500 properties (nullable strings with bounds, integers, a tenth of them
required, closed content model) and a schema whose 50 properties each ``$ref`` another
subject's schema (50 references). A parse is the registry's strict parse of a new schema
(JSON reading, meta-schema validation with jsonschema-rs, model with references resolved; the
registry's parse cache bypassed); a check is a BACKWARD diff between two versions (the second
adds a property). The pure-Python ``jsonschema`` meta-schema check of the same 500-property
document is measured alongside as the yardstick jsonschema-rs replaced.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.formats.base import Dependency
from registry.formats.json_schema import JsonSchemaFormat, jsontext

FMT = JsonSchemaFormat()


def big_object(properties: int, extra: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for i in range(properties):
        if i % 3:
            props[f"field_{i}"] = {
                "type": ["string", "null"],
                "maxLength": 64,
                "description": f"f{i}",
            }
        else:
            props[f"field_{i}"] = {"type": "integer", "minimum": 0}
    if extra:
        props["extra"] = {"type": "string"}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Big",
        "type": "object",
        "properties": props,
        "required": [f"field_{i}" for i in range(0, properties, 10)],
        "additionalProperties": False,
    }


def many_refs(count: int, extra: bool = False) -> tuple[str, list[Dependency]]:
    deps = [
        Dependency(
            f"dep{i}.json",
            json.dumps(
                {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "value": {"type": "integer"}},
                    "required": ["id"],
                }
            ),
        )
        for i in range(count)
    ]
    props: dict[str, Any] = {f"d{i}": {"$ref": d.name} for i, d in enumerate(deps)}
    if extra:
        props["extra"] = {"type": "string"}
    root = {"type": "object", "properties": props, "additionalProperties": False}
    return json.dumps(root), deps


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and minimum milliseconds of ``repeat`` calls (after one warm-up call)."""
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    rows: list[tuple[str, tuple[float, float]]] = []

    big_v1, big_v2 = json.dumps(big_object(500)), json.dumps(big_object(500, extra=True))
    rows.append(("500 properties: parse (strict)", timed(lambda: FMT.parse(big_v1), args.repeat)))
    rows.append(
        (
            "500 properties: parse (stored, no meta-schema)",
            timed(lambda: FMT.parse(big_v1, strict=False), args.repeat),
        )
    )
    old, new = FMT.parse(big_v1), FMT.parse(big_v2)
    rows.append(
        ("500 properties: canonical text", timed(lambda: jsontext.dumps(old.document), args.repeat))
    )
    rows.append(
        (
            "500 properties: normalized text",
            timed(lambda: jsontext.dumps(old.document, sort_keys=True), args.repeat),
        )
    )
    errors = FMT.compatibility_errors(new, old)
    assert errors == [], errors
    rows.append(
        (
            "500 properties: BACKWARD check",
            timed(lambda: FMT.compatibility_errors(new, old), args.repeat),
        )
    )

    refs_v1, deps = many_refs(50)
    refs_v2, _ = many_refs(50, extra=True)
    rows.append(
        ("50 references: parse (strict)", timed(lambda: FMT.parse(refs_v1, deps), args.repeat))
    )
    old_r, new_r = FMT.parse(refs_v1, deps), FMT.parse(refs_v2, deps)
    assert FMT.compatibility_errors(new_r, old_r) == []
    rows.append(
        (
            "50 references: BACKWARD check",
            timed(lambda: FMT.compatibility_errors(new_r, old_r), args.repeat),
        )
    )

    try:
        import jsonschema

        document = json.loads(big_v1)
        rows.append(
            (
                "yardstick: pure-Python jsonschema meta-schema check, 500 properties",
                timed(
                    lambda: jsonschema.Draft7Validator.check_schema(document),
                    max(3, args.repeat // 10),
                ),
            )
        )
    except ImportError:
        pass

    width = max(len(name) for name, _ in rows)
    print(f"{'case':<{width}}  median ms     min ms")
    for name, (median, low) in rows:
        print(f"{name:<{width}}  {median:9.2f}  {low:9.2f}")


if __name__ == "__main__":
    main()

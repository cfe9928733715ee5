"""Protobuf parse and compatibility-check times for large schemas.

    .venv/bin/python bench/protobuf_bench.py [--repeat N]

Cases: a message with 500 fields, and a schema importing 50 referenced files (each one message).
Each parse compiles the text with protoc in-process (no cache: the registry's parse cache is
bypassed on purpose); each check is a BACKWARD diff between two versions (the second adds a
field). An Avro record with 500 fields is measured alongside as a yardstick.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from registry.formats.avro import AvroFormat
from registry.formats.base import Dependency
from registry.formats.protobuf import ProtobufFormat, ProtobufSchema

PB = ProtobufFormat()
AVRO = AvroFormat()


def big_message(fields: int) -> str:
    body = "\n".join(
        f"  {'string' if i % 3 else 'int64'} field_{i} = {i};" for i in range(1, fields + 1)
    )
    return f'syntax = "proto3";\npackage bench;\n\nmessage Big {{\n{body}\n}}\n'


def many_imports(count: int, extra_field: bool = False) -> tuple[str, list[Dependency]]:
    deps = [
        Dependency(
            f"bench/dep{i}.proto",
            f'syntax = "proto3";\npackage bench.dep{i};\n\nmessage Dep{i} {{\n'
            f"  string id = 1;\n  int32 value = 2;\n}}\n",
        )
        for i in range(count)
    ]
    imports = "".join(f'import "{d.name}";\n' for d in deps)
    fields = "".join(f"  bench.dep{i}.Dep{i} d{i} = {i + 1};\n" for i in range(count))
    if extra_field:
        fields += f"  string extra = {count + 1};\n"
    text = f'syntax = "proto3";\npackage bench;\n\n{imports}\nmessage Root {{\n{fields}}}\n'
    return text, deps


def big_record(fields: int) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "Big",
            "fields": [
                {"name": f"field_{i}", "type": "string" if i % 3 else "long"}
                for i in range(1, fields + 1)
            ],
        }
    )


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    fn()  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    big_v1 = big_message(500)
    big_v2 = big_v1.replace("}\n", "  string added = 501;\n}\n")
    imp_v1, deps = many_imports(50)
    imp_v2, _ = many_imports(50, extra_field=True)
    rec_v1 = big_record(500)
    rec_v2 = json.dumps(
        {
            **json.loads(rec_v1),
            "fields": [
                *json.loads(rec_v1)["fields"],
                {"name": "added", "type": "string", "default": ""},
            ],
        }
    )

    p_big1, p_big2 = PB.parse(big_v1), PB.parse(big_v2)
    p_imp1, p_imp2 = PB.parse(imp_v1, deps), PB.parse(imp_v2, deps)
    a1, a2 = AVRO.parse(rec_v1), AVRO.parse(rec_v2)
    assert PB.compatibility_errors(p_big2, p_big1) == []
    assert PB.compatibility_errors(p_imp2, p_imp1) == []

    def fresh(schema: ProtobufSchema) -> ProtobufSchema:
        """The same compiled schema without its cached diff model."""
        return ProtobufSchema(schema.compiled, schema.dependencies, schema.hints)

    def check_big() -> None:
        fresh1, fresh2 = PB.parse(big_v1), PB.parse(big_v2)
        PB.compatibility_errors(fresh2, fresh1)

    rows = [
        ("protobuf 500-field message: parse", timed(lambda: PB.parse(big_v1), args.repeat)),
        (
            "protobuf 500-field message: parse + canonical text",
            timed(lambda: PB.parse(big_v1).canonical(), args.repeat),
        ),
        (
            "protobuf 500-field message: check (both parsed)",
            timed(lambda: PB.compatibility_errors(fresh(p_big2), fresh(p_big1)), args.repeat),
        ),
        ("protobuf 500-field message: parse both + check", timed(check_big, args.repeat)),
        ("protobuf 50 imports: parse", timed(lambda: PB.parse(imp_v1, deps), args.repeat)),
        (
            "protobuf 50 imports: check (both parsed)",
            timed(lambda: PB.compatibility_errors(fresh(p_imp2), fresh(p_imp1)), args.repeat),
        ),
        (
            "avro 500-field record: parse (yardstick)",
            timed(lambda: AVRO.parse(rec_v1), args.repeat),
        ),
        (
            "avro 500-field record: check (yardstick)",
            timed(lambda: AVRO.compatibility_errors(a2, a1), args.repeat),
        ),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'case':<{width}}  median ms    min ms")
    for name, (median, best) in rows:
        print(f"{name:<{width}}  {median:9.2f} {best:9.2f}")


if __name__ == "__main__":
    main()

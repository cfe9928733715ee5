"""What a pre-filled registry costs Karapace per registration: the CPU of its new-id search
(``InMemoryDatabase._get_schema_id_from_storage``, a comparison with every stored schema), with
0, 1,000, 4,000 and 16,000 stored schemas shaped like ``bench/registry_bench.py``'s.

    /work/karapace/venv/bin/python bench/peers/karapace_id_scan.py

Runs in Karapace's own virtualenv (``bench/peers/karapace-setup.sh``); no broker, no server.
"""

from __future__ import annotations

import json
import time

from karapace.core.in_memory_database import InMemoryDatabase
from karapace.core.schema_models import SchemaType, TypedSchema
from karapace.core.typing import SchemaId, Subject, Version


def schema(i: int) -> str:
    fields = [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": f"f{i}", "type": ["null", "int"], "default": None},
    ]
    return json.dumps(
        {"type": "record", "name": f"Bench{i}", "namespace": "bench.registry", "fields": fields}
    )


def main() -> None:
    for n in (0, 1000, 4000, 16000):
        db = InMemoryDatabase()
        for i in range(n):
            db.insert_schema_version(
                subject=Subject(f"s{i}"),
                schema_id=SchemaId(i + 1),
                version=Version(1),
                deleted=False,
                schema=TypedSchema(schema_type=SchemaType.AVRO, schema_str=schema(i)),
                references=None,
            )
        new = TypedSchema(schema_type=SchemaType.AVRO, schema_str=schema(10**6))
        repeats = 50
        began = time.process_time()
        for _ in range(repeats):
            db._get_schema_id_from_storage(new_schema=new)
        per = 1000 * (time.process_time() - began) / repeats
        print(f"{n:>6} stored schemas: new-id search {per:.3f} ms CPU per registration")


if __name__ == "__main__":
    main()

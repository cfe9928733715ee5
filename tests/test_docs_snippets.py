"""No Python snippet of the documentation goes stale: every ```python block of README.md and
docs/ is either an example file included by MkDocs (``--8<--``, run by tests/test_examples.py)
or run here, page by page, in order, against a real registry, Kafka broker and Spark session.

Host names in the snippets (``registry:8081``, ``localhost:9092``, ...) are pointed at the test's
services, and topic names made unique; names a page says the reader already has (``spark``,
``df``) are given. Each test then checks what the snippets built."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.conftest import LiveServer, sqlite_live_server

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # minutes: scheduled early under xdist (tests/fixtures/parallel.py)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
HEADERS = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def python_blocks(page: str) -> list[str]:
    return BLOCK.findall((ROOT / page).read_text())


def documentation_pages() -> list[str]:
    pages = ["README.md", *(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
    return sorted(pages)


#: pages whose Python blocks this module runs (each has a test below)
RUN: set[str] = {
    "README.md",
    "docs/run/security.md",
    "docs/code/async.md",
    "docs/code/rules.md",
    "docs/code/encryption.md",
    "docs/code/spark.md",
}


def test_every_python_block_is_included_or_run() -> None:
    for page in documentation_pages():
        blocks = [b for b in python_blocks(page) if not b.lstrip().startswith("--8<--")]
        if blocks:
            assert page in RUN, f"{page} has Python blocks that no test runs"
        for block in python_blocks(page):
            if block.lstrip().startswith("--8<--"):
                included = block.split('"')[1]
                assert (ROOT / included).is_file(), f"{page} includes a missing {included}"


@pytest.fixture(autouse=True)
def global_rules() -> Iterator[None]:
    """The snippets register rule executors globally and configure them with their registry,
    as an application does; the global rule registry is put back afterwards, or later tests'
    serdes would find an executor configured for a registry that is gone."""
    from serdes.rules.registry import RuleRegistry

    rules = RuleRegistry.get_global_instance()
    saved = (dict(rules._executors), dict(rules._actions), dict(rules._overrides))
    yield
    rules.clear()
    rules._executors.update(saved[0])
    rules._actions.update(saved[1])
    rules._overrides.update(saved[2])


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[LiveServer]:
    yield from sqlite_live_server(tmp_path, {"LOCAL_SECRET": "docs"})


def run_page(page: str, namespace: dict[str, Any], rewrite: Callable[[str], str]) -> None:
    """Run the page's blocks in order in ``namespace`` (top-level ``await`` allowed)."""
    for block in python_blocks(page):
        code = rewrite(block)
        if "await " in code:
            wrapped = "async def __snippet():\n" + textwrap.indent(code, "    ")
            wrapped += "\n    return locals()\n"
            exec(compile(wrapped, page, "exec"), namespace)
            namespace.update(asyncio.run(namespace.pop("__snippet")()))
        else:
            exec(compile(code, page, "exec"), namespace)


def hosts(registry: str, bootstrap: str = "127.0.0.1:1", topics: dict[str, str] | None = None):
    def rewrite(code: str) -> str:
        for url in ("http://127.0.0.1:8081", "http://localhost:8081", "http://registry:8081"):
            code = code.replace(url, registry)
        for broker in ("127.0.0.1:9092", "localhost:9092", "broker:9092"):
            code = code.replace(broker, bootstrap)
        for old, new in (topics or {}).items():
            code = code.replace(f'"{old}"', f'"{new}"').replace(f"{old}-value", f"{new}-value")
        return code

    return rewrite


def fresh_topic(bootstrap: str, prefix: str) -> str:
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the topic exists
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0


# ---- the pages -------------------------------------------------------------------------------


def test_readme_tour(registry: LiveServer, kafka_bootstrap: str, spark) -> None:  # type: ignore[no-untyped-def]
    topic = fresh_topic(kafka_bootstrap, "orders")
    order = {"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "amount", "type": "double"}]}  # fmt: skip
    evolved = {**order, "fields": [*order["fields"],
                                   {"name": "note", "type": "string", "default": ""}]}  # fmt: skip
    for schema, expected in ((order, 1), (evolved, 2)):  # the tour's curl commands
        answer = httpx.post(f"{registry.url}/subjects/{topic}-value/versions", headers=HEADERS,
                            json={"schema": json.dumps(schema)})  # fmt: skip
        assert answer.json()["id"] == expected
    refused = httpx.post(f"{registry.url}/subjects/{topic}-value/versions", headers=HEADERS,
                         json={"schema": json.dumps({**order, "fields": [
                             {"name": "id", "type": "string"}]})})  # fmt: skip
    assert refused.status_code == 409 and refused.json()["error_code"] == 409

    rewrite = hosts(registry.url, kafka_bootstrap, {"orders": topic})
    serdes_block, spark_block = python_blocks("README.md")
    namespace: dict[str, Any] = {}
    exec(compile(rewrite(serdes_block), "README.md", "exec"), namespace)
    assert namespace["frame"][1:5] == (2).to_bytes(4, "big")
    produce(kafka_bootstrap, topic, [namespace["frame"]])
    namespace["spark"] = spark
    exec(compile(rewrite(spark_block), "README.md", "exec"), namespace)
    assert [tuple(row) for row in namespace["orders"].collect()] == [(7, 9.5, "first")]


def test_security_clients(registry: LiveServer) -> None:
    namespace: dict[str, Any] = {}
    run_page("docs/run/security.md", namespace, hosts(registry.url))
    assert namespace["url"] == "https://registry:8081"


def test_async_page(registry: LiveServer) -> None:
    namespace: dict[str, Any] = {}
    run_page("docs/code/async.md", namespace, hosts(registry.url))
    versions = httpx.get(f"{registry.url}/subjects/orders-value/versions").json()
    assert versions == [1] and namespace["data"][0] == 0


def test_rules_page(registry: LiveServer, kafka_bootstrap: str) -> None:
    dlq = fresh_topic(kafka_bootstrap, "users-dlq")
    namespace: dict[str, Any] = {}
    run_page("docs/code/rules.md", namespace, hosts(registry.url, kafka_bootstrap,
                                                     {"users-dlq": dlq}))  # fmt: skip
    assert namespace["adult"][0] == 0
    assert "rule adult failed" in namespace["error"]
    ctx = namespace["shoes"]
    upgraded = namespace["AvroDeserializer"](
        namespace["client"], conf={"use.latest.version": True}
    )(namespace["v1_frame"], ctx)
    assert upgraded == {"name": "boot", "height": 43}


def test_encryption_page(registry: LiveServer) -> None:
    namespace: dict[str, Any] = {}
    run_page("docs/code/encryption.md", namespace, hosts(registry.url))
    keks = httpx.get(f"{registry.url}/dek-registry/v1/keks").json()
    assert "pii-kek" in keks
    frame, ctx = namespace["frame"], namespace["ctx"]
    assert b"123-45-6789" not in frame
    assert namespace["deserializer"](frame, ctx) == {"id": 1, "ssn": "123-45-6789"}


def test_spark_page(registry: LiveServer, kafka_bootstrap: str, spark) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from serdes import SchemaRegistryClient
    from serdes.avro import AvroSerializer

    topic = fresh_topic(kafka_bootstrap, "orders")
    order_avsc = json.dumps({"type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"}, {"name": "qty", "type": "int"}]})  # fmt: skip
    from confluent_kafka.serialization import MessageField, SerializationContext

    serializer = AvroSerializer(SchemaRegistryClient({"url": registry.url}), order_avsc)
    ctx = SerializationContext(topic, MessageField.VALUE)
    produce(kafka_bootstrap, topic, [serializer({"id": n, "qty": n * 2}, ctx) for n in range(3)])
    kafka_df = (
        spark.read.format("kafka").option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", topic).option("startingOffsets", "earliest")
        .option("includeHeaders", "true").load()
    )  # fmt: skip
    namespace: dict[str, Any] = {
        "spark": spark, "F": F, "order_avsc": order_avsc, "url": registry.url,
        "kafka_df": kafka_df, "df": spark.createDataFrame([(5, 10)], "id long, qty int"),
    }  # fmt: skip
    rewrite = hosts(registry.url, kafka_bootstrap, {"orders": topic})
    run_page("docs/code/spark.md", namespace, rewrite)
    # the topic is read by the first block whatever its offsets option: batch reads start at
    # the earliest offset
    assert sorted(tuple(r) for r in namespace["orders"].collect()) == [(0, 0), (1, 2), (2, 4)]
    (row,) = namespace["out"].collect()
    assert row["key"] == "5" and row["value"][0] == 0

"""Every project under ``examples/`` runs as its README says, against the real services: the
``serdes`` producers and consumers on the Kafka broker, the PySpark job on a Spark session, the
schema repository's CI commands, and the migration with ``schema-registry compare``."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import SchemaRegistryClient
from serdes.avro import AvroDeserializer, AvroSerializer
from tests.conftest import LiveServer
from tests.kafka_helpers import CONTENT_TYPE

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CLI = [sys.executable, "-m", "registry.cli"]
HEADERS = {"Content-Type": CONTENT_TYPE}


def _run(args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- serdes-kafka ----------------------------------------------------------------------------


def _example(script: str, bootstrap: str, registry: str) -> str:
    done = _run(
        [sys.executable, script, "--bootstrap", bootstrap, "--registry", registry],
        EXAMPLES / "serdes-kafka",
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_avro_example_produces_consumes_and_enforces_its_rule(
    kafka_bootstrap: str, spark_registry: LiveServer
) -> None:
    out = _example("avro_orders.py", kafka_bootstrap, spark_registry.url)
    topic = out.splitlines()[0].removeprefix("topic: ")
    assert "refused by the data contract" in out and "positive_qty" in out
    for n in (1, 2, 3):
        assert f"{{'id': {n}, 'item': 'item-{n}', 'qty': {n}}}" in out
    latest = httpx.get(f"{spark_registry.url}/subjects/{topic}-value/versions/latest").json()
    assert [rule["name"] for rule in latest["ruleSet"]["domainRules"]] == ["positive_qty"]


def test_protobuf_example_uses_generated_classes(
    kafka_bootstrap: str, spark_registry: LiveServer
) -> None:
    out = _example("protobuf_orders.py", kafka_bootstrap, spark_registry.url)
    topic = out.splitlines()[0].removeprefix("topic: ")
    for n in (1, 2, 3):
        assert f'item: "item-{n}"' in out
    assert out.count('key: "channel"') == 3
    latest = httpx.get(f"{spark_registry.url}/subjects/{topic}-value/versions/latest").json()
    assert latest["schemaType"] == "PROTOBUF" and "message Order" in latest["schema"]


def test_json_schema_example_validates(kafka_bootstrap: str, spark_registry: LiveServer) -> None:
    out = _example("json_orders.py", kafka_bootstrap, spark_registry.url)
    assert "refused by the schema" in out
    for n in (1, 2, 3):
        assert f"{{'id': {n}, 'item': 'item-{n}', 'qty': {n}}}" in out


# ---- spark-decode ----------------------------------------------------------------------------

ORDER = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"},
               {"name": "qty", "type": "int"}],
}  # fmt: skip


def test_spark_job_decodes_a_topic_and_writes_it_back_encoded(
    spark, kafka_bootstrap: str, spark_registry: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    source, target = (f"{name}-{uuid.uuid4().hex[:8]}" for name in ("orders", "large"))
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    for topic in (source, target):
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    client = SchemaRegistryClient({"url": spark_registry.url})
    serializer = AvroSerializer(client, json.dumps(ORDER))
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    ctx = SerializationContext(source, MessageField.VALUE)
    orders = [{"id": n, "item": f"item-{n}", "qty": n % 4} for n in range(12)]
    for order in orders:
        producer.produce(source, value=serializer(order, ctx))
    assert producer.flush(30) == 0

    job = _load(EXAMPLES / "spark-decode" / "job.py")
    written = job.run(spark, kafka_bootstrap, spark_registry.url, source, target)

    expected = [order for order in orders if order["qty"] >= 2]
    assert written == len(expected)
    consumed = _load(EXAMPLES / "serdes-kafka" / "common.py").consume(
        kafka_bootstrap, target, len(expected)
    )
    read = [
        AvroDeserializer(client)(value, SerializationContext(target, MessageField.VALUE))
        for value in consumed
    ]
    assert sorted(read, key=lambda order: order["id"]) == expected
    schema = httpx.get(f"{spark_registry.url}/subjects/{target}-value/versions/latest").json()
    assert json.loads(schema["schema"])["name"] == "LargeOrder"


# ---- schema-repo -----------------------------------------------------------------------------


@pytest.fixture
def schema_repo(tmp_path: Path) -> Iterator[Path]:
    repo = tmp_path / "schemas-repo"
    shutil.copytree(EXAMPLES / "schema-repo", repo)
    for args in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "schemas"],
    ):
        assert _run(args, repo).returncode == 0
    yield repo


def _edit_order(repo: Path, field: dict) -> None:
    path = repo / "schemas" / "order.avsc"
    order = json.loads(path.read_text())
    order["fields"] = [f for f in order["fields"] if f["name"] != field["name"]] + [field]
    path.write_text(json.dumps(order, indent=2))


def test_schema_repo_workflow_refuses_an_incompatible_change(
    schema_repo: Path, spark_registry: LiveServer
) -> None:
    url = ["--url", spark_registry.url]
    subjects = [f"{s}-{uuid.uuid4().hex[:6]}" for s in ("address-value", "order-value")]
    project = (schema_repo / "schema-registry.yaml").read_text()
    for name, fresh in zip(("address-value", "order-value"), subjects, strict=True):
        project = project.replace(f"subject: {name}", f"subject: {fresh}")
    (schema_repo / "schema-registry.yaml").write_text(project)
    # the push to main: apply registers both subjects, the referenced one first
    applied = _run([*CLI, "apply", *url, "schema-registry.yaml"], schema_repo)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    order = httpx.get(f"{spark_registry.url}/subjects/{subjects[1]}/versions/latest").json()
    assert order["references"][0]["subject"] == subjects[0]

    offline = [*CLI, "check", "--format", "github", "--project", "schema-registry.yaml",
               "--against", "git:main"]  # fmt: skip
    online = [*CLI, "check", *url, "--format", "github", "--project", "schema-registry.yaml"]
    plan = [*CLI, "plan", *url, "schema-registry.yaml"]

    # a pull request adding a field with a default: every job passes
    _edit_order(schema_repo, {"name": "note", "type": "string", "default": ""})
    for command in (offline, online, plan):
        done = _run(command, schema_repo)
        assert done.returncode == 0, done.stdout + done.stderr

    # a pull request changing a field's type: refused offline, online and by the plan
    _edit_order(schema_repo, {"name": "amount", "type": "string"})
    for command in (offline, online):
        done = _run(command, schema_repo)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "::error file=schemas/order.avsc" in done.stdout and "amount" in done.stdout
    assert _run(plan, schema_repo).returncode == 1
    versions = httpx.get(f"{spark_registry.url}/subjects/{subjects[1]}/versions").json()
    assert versions == [1]  # nothing was registered by the checks


# ---- migration -------------------------------------------------------------------------------


def test_migration_keeps_ids_and_verify_finds_differences(tmp_path: Path) -> None:
    source = LiveServer(f"sqlite:///{tmp_path / 'source.db'}", tmp_path)
    source.start()
    target = LiveServer(f"sqlite:///{tmp_path / 'target.db'}", tmp_path)
    try:
        http = httpx.Client(base_url=source.url, headers=HEADERS, timeout=30)
        address = {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"}]}  # fmt: skip
        http.post("/subjects/address-value/versions", json={"schema": json.dumps(address)})
        for n in range(3):  # ids that are not 1, 2, 3 in the copy unless preserved
            http.post(f"/subjects/filler-{n}/versions", json={"schema": f'"string"{" " * n}'})
        order = {"type": "record", "name": "Order", "fields": [
            {"name": "ship_to", "type": "Address"}]}  # fmt: skip
        answer = http.post("/subjects/order-value/versions", json={
            "schema": json.dumps(order),
            "references": [{"name": "Address", "subject": "address-value", "version": 1}],
        })  # fmt: skip
        order_id = answer.json()["id"]
        http.post("/subjects/filler-0/versions", json={"schema": '"int"'})
        http.delete("/subjects/filler-0/versions/1")
        http.put("/config/order-value", json={"compatibility": "FULL"})
        http.post("/subjects/:.team:orders-value/versions", json={"schema": '"long"'})

        copied = _run(
            [*CLI, "copy", "--from", source.store, "--to", target.store], tmp_path
        )  # fmt: skip
        assert copied.returncode == 0, copied.stderr
        target.start()
        compare = [*CLI, "compare", "--url", source.url, "--to-url", target.url]
        for context in (".", ".team"):
            same = _run([*compare, "--context", context], tmp_path)
            assert same.returncode == 0, same.stdout + same.stderr
        moved = httpx.get(f"{target.url}/subjects/order-value/versions/1").json()
        assert moved["id"] == order_id

        http.post("/subjects/address-value/versions", json={"schema": json.dumps(
            {**address, "fields": [*address["fields"], {"name": "city", "type": "string",
                                                        "default": ""}]})})  # fmt: skip
        differ = _run(compare, tmp_path)
        assert differ.returncode == 1 and "address-value" in differ.stdout, differ.stdout
    finally:
        for server in (source, target):
            if server.proc is not None and server.proc.poll() is None:
                server.stop()

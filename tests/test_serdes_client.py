"""serdes.SchemaRegistryClient against a live registry, side by side with confluent-kafka's
client: same answers, one error type with Confluent's codes, failover across URLs, caches that
spare HTTP calls and expire when told to."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import json
import threading
import time

import pytest
from confluent_kafka.schema_registry import Schema as CSchema

from serdes import Schema, SchemaRegistryClient, SchemaRegistryError
from tests.conftest import free_port
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401


def avro(name: str, *fields: str) -> Schema:
    doc = {"type": "record", "name": name, "fields": [{"name": f, "type": "int"} for f in fields]}
    return Schema(json.dumps(doc), "AVRO")


def requests_made(client: SchemaRegistryClient) -> int:
    return sum(p.num_requests for p in client._rest.pool.pools._container.values())


def test_answers_match_confluent_kafkas_client(ours, theirs) -> None:
    v1, v2 = avro("C", "a"), avro("C", "a", "b")
    assert ours.register_schema("c-value", v1) == theirs.register_schema(
        "c-value", CSchema(v1.schema_str, "AVRO")
    )
    theirs.set_compatibility("c-value", "NONE")
    second = ours.register_schema("c-value", v2)
    assert ours.get_schema(second).schema_str == theirs.get_schema(second).schema_str
    mine, their = ours.get_latest_version("c-value"), theirs.get_latest_version("c-value")
    assert (mine.schema_id, mine.version, mine.subject) == (
        their.schema_id,
        their.version,
        their.subject,
    )
    assert ours.get_version("c-value", 1).schema_id == theirs.get_version("c-value", 1).schema_id
    assert ours.get_versions("c-value") == theirs.get_versions("c-value") == [1, 2]
    assert ours.lookup_schema("c-value", v1).version == 1
    assert ours.get_subjects_by_schema_id(second) == theirs.get_subjects_by_schema_id(second)
    assert [(v.subject, v.version) for v in ours.get_schema_versions(second)] == [
        (v.subject, v.version) for v in theirs.get_schema_versions(second)
    ]
    assert ours.get_compatibility("c-value") == theirs.get_compatibility("c-value") == "NONE"
    assert ours.test_compatibility("c-value", v1) is True
    assert sorted(ours.get_schema_types()) == sorted(theirs.get_schema_types())
    assert ours.get_global_mode() == theirs.get_global_mode()
    assert "c-value" in ours.get_subjects()
    # confluent-kafka's Schema objects are accepted too
    assert (
        ours.register_schema("c-value", CSchema(v1.schema_str, "AVRO"))
        == ours.get_version("c-value", 1).schema_id
    )
    assert ours.delete_version("c-value", 2) == 2
    assert ours.get_versions("c-value") == [1]
    assert ours.delete_subject("c-value") == [1]
    assert "c-value" not in ours.get_subjects()


def test_errors_carry_status_and_confluent_code(ours) -> None:
    with pytest.raises(SchemaRegistryError) as missing_subject:
        ours.get_latest_version("no-such-subject")
    assert (missing_subject.value.http_status_code, missing_subject.value.error_code) == (
        404,
        40401,
    )
    with pytest.raises(SchemaRegistryError) as missing_id:
        ours.get_schema(987654)
    assert missing_id.value.error_code == 40403
    with pytest.raises(SchemaRegistryError) as invalid:
        ours.register_schema("bad-value", Schema("{not json", "AVRO"))
    assert invalid.value.http_status_code == 422 and invalid.value.error_code in (42201, 422)
    assert "SR code" in str(invalid.value)


def test_fails_over_to_the_next_url(registry_server) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    client = SchemaRegistryClient(
        {"url": f"{dead}, {registry_server.url}", "max.retries": 1, "retries.wait.ms": 10}
    )
    schema_id = client.register_schema("failover-value", avro("F", "x"))
    fetched = client.get_schema(schema_id).schema_str
    assert json.loads(fetched or "") == json.loads(avro("F", "x").schema_str or "")


def test_unreachable_registry_is_a_registry_error_after_retries() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    client = SchemaRegistryClient({"url": dead, "max.retries": 2, "retries.wait.ms": 20})
    started = time.monotonic()
    with pytest.raises(SchemaRegistryError, match="could not reach the Schema Registry"):
        client.get_subjects()
    assert time.monotonic() - started < 5


def test_steady_state_reads_come_from_the_cache(registry_server) -> None:
    client = SchemaRegistryClient({"url": registry_server.url})
    schema = avro("K", "k")
    schema_id = client.register_schema("cache-value", schema)
    client.get_schema(schema_id)
    client.lookup_schema("cache-value", schema)
    client.get_version("cache-value", 1)
    before = requests_made(client)
    for _ in range(20):
        assert client.register_schema("cache-value", schema) == schema_id
        assert client.get_schema(schema_id) == client.get_version("cache-value", 1).schema
        assert client.lookup_schema("cache-value", schema).schema_id == schema_id
    assert requests_made(client) == before
    client.clear_caches()
    client.get_schema(schema_id)
    assert requests_made(client) == before + 1


def test_latest_version_cache_expires_with_its_ttl(registry_server) -> None:
    client = SchemaRegistryClient({"url": registry_server.url, "cache.latest.ttl.sec": 0.3})
    client.set_compatibility("ttl-value", "NONE")
    client.register_schema("ttl-value", avro("T", "a"))
    assert client.get_latest_version("ttl-value").version == 1
    client.register_schema("ttl-value", avro("T", "a", "b"))
    assert client.get_latest_version("ttl-value").version == 1  # cached
    time.sleep(0.4)
    assert client.get_latest_version("ttl-value").version == 2


def test_one_client_shared_by_threads(registry_server) -> None:
    client = SchemaRegistryClient({"url": registry_server.url})
    ids = [client.register_schema(f"threads-{i}-value", avro(f"T{i}", "a")) for i in range(5)]
    fresh = SchemaRegistryClient({"url": registry_server.url})
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for schema_id in ids * 10:
                assert (
                    fresh.get_schema(schema_id).schema_str
                    == client.get_schema(schema_id).schema_str
                )
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize(
    ("conf", "error", "message"),
    [
        ({}, ValueError, "Missing required configuration property url"),
        ({"url": "ftp://x"}, ValueError, "Invalid url ftp://x"),
        ({"url": "http://x", "bogus": 1}, ValueError, "Unrecognized properties: bogus"),
        ({"url": "http://u:p@x", "basic.auth.user.info": "a:b"}, ValueError, "userinfo"),
        ({"url": "http://x", "basic.auth.user.info": "nocolon"}, ValueError, "username"),
        ({"url": "http://x", "max.retries": "3"}, TypeError, "max.retries must be a number"),
        ({"url": "http://x", "ssl.key.location": "k"}, ValueError, "ssl.certificate.location"),
        (
            {"url": "http://x", "bearer.auth.credentials.source": "STATIC_TOKEN"},
            ValueError,
            "bearer.auth.logical.cluster",
        ),
    ],
)
def test_bad_configuration_is_refused(conf: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        SchemaRegistryClient(conf)


def test_credentials_become_headers() -> None:
    basic = SchemaRegistryClient({"url": "http://x", "basic.auth.user.info": "ann:s3cret"})
    assert basic._rest.base_headers["Authorization"] == "Basic YW5uOnMzY3JldA=="
    from_url = SchemaRegistryClient({"url": "http://ann:s3cret@x:8081"})
    assert from_url._rest.base_headers["Authorization"] == "Basic YW5uOnMzY3JldA=="
    assert from_url._rest.base_urls == ["http://x:8081"]
    bearer = SchemaRegistryClient({
        "url": "http://x", "bearer.auth.credentials.source": "STATIC_TOKEN",
        "bearer.auth.token": "tok", "bearer.auth.logical.cluster": "lsrc-1",
        "bearer.auth.identity.pool.id": "pool-9",
    })  # fmt: skip
    assert bearer._rest.bearer is not None
    assert bearer._rest.bearer.headers() == {
        "Authorization": "Bearer tok",
        "target-sr-cluster": "lsrc-1",
        "Confluent-Identity-Pool-Id": "pool-9",
    }
    custom = SchemaRegistryClient({
        "url": "http://x", "bearer.auth.credentials.source": "CUSTOM",
        "bearer.auth.custom.provider.function": lambda conf: {
            "bearer.auth.token": conf["t"], "bearer.auth.logical.cluster": "c"},
        "bearer.auth.custom.provider.config": {"t": "from-fn"},
    })  # fmt: skip
    assert custom._rest.bearer is not None
    assert custom._rest.bearer.headers()["Authorization"] == "Bearer from-fn"


def test_metadata_takes_confluents_tags_and_properties_objects(ours) -> None:
    """confluent-kafka callers write ``Metadata(properties=MetadataProperties({...}))``."""
    from serdes import Metadata, MetadataProperties, MetadataTags

    meta = Metadata(
        tags=MetadataTags({"C.a": ["PII"]}),
        properties=MetadataProperties({"owner": "bob"}),
        sensitive=None,
    )
    schema = Schema(avro("Meta", "a").schema_str, "AVRO", metadata=meta)
    ours.register_schema("meta-props-value", schema)
    got = ours.get_latest_version("meta-props-value").schema.metadata
    assert got.properties == {"owner": "bob"}
    assert got.tags == {"C.a": ["PII"]}

"""The drop-in gaps confluent-kafka-python's own tests found (issue 18), each against the peer:
Avro top-level unions of named types, exceptions catchable as confluent-kafka's, bearer
configuration, the refusal of rule sets on write, Protobuf index paths (Java's) and GUID reads
(issue 14), associations, Azure IMDS tokens, Protobuf decimals and the wildcard matcher."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry import SchemaReference as CReference
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.schema_registry.protobuf import decimal_to_protobuf as c_to_proto
from confluent_kafka.schema_registry.protobuf import protobuf_to_decimal as c_from_proto
from confluent_kafka.schema_registry.wildcard_matcher import wildcard_match as c_wildcard
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from serdes import (
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    RuleSet,
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SerializationError,
)
from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.client import normalize_identity_pool
from serdes.json_schema import JSONDeserializer, JSONSerializer
from serdes.protobuf import (
    ProtobufDeserializer,
    ProtobufSerializer,
    decimal_to_protobuf,
    protobuf_to_decimal,
)
from serdes.wildcard_matcher import wildcard_match
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401

UNION_OF_NAMED = [
    "null",
    {
        "type": "record",
        "name": "A",
        "namespace": "test",
        "fields": [
            {
                "name": "First",
                "type": {"type": "record", "name": "B", "fields": [{"name": "x", "type": "int"}]},
            },
            {"name": "Second", "type": "B"},
        ],
    },
]


def ctx(topic: str, field: str = MessageField.VALUE, headers: Any = None) -> SerializationContext:
    return SerializationContext(topic, field, headers)


# -- 1. Avro: a top-level union whose record refers to a named type by name -------------------


def test_avro_top_level_union_with_named_types_writes_confluents_bytes(ours, theirs) -> None:
    value = {"First": {"x": 1}, "Second": {"x": 2}}
    text = json.dumps(UNION_OF_NAMED)
    mine = AvroSerializer(ours, text)(value, ctx("u-named"))
    assert mine == CAvroSerializer(theirs, text)(value, ctx("u-named"))
    assert AvroDeserializer(ours)(mine, ctx("u-named")) == value
    assert CAvroDeserializer(theirs)(mine, ctx("u-named")) == value
    assert AvroSerializer(ours, text)(None, ctx("u-named")) is None


def test_avro_top_level_union_of_referenced_types(ours, theirs) -> None:
    first = {"type": "record", "name": "RefOne", "fields": [{"name": "n", "type": "int"}]}
    second = {"type": "record", "name": "RefTwo", "fields": [{"name": "s", "type": "string"}]}
    ours.register_schema("u-ref-one", Schema(json.dumps(first)))
    ours.register_schema("u-ref-two", Schema(json.dumps(second)))
    refs = [SchemaReference("RefOne", "u-ref-one", 1), SchemaReference("RefTwo", "u-ref-two", 1)]
    ours.register_schema("u-refs-value", Schema(json.dumps(["RefOne", "RefTwo"]), "AVRO", refs))
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    c = ctx("u-refs")
    mine = AvroSerializer(ours, None, conf=conf)({"s": "hi"}, c)
    c_refs = [CReference("RefOne", "u-ref-one", 1), CReference("RefTwo", "u-ref-two", 1)]
    c_schema = CSchema(json.dumps(["RefOne", "RefTwo"]), "AVRO", c_refs)
    assert mine == CAvroSerializer(theirs, c_schema, conf=conf)({"s": "hi"}, c)
    assert AvroDeserializer(ours)(mine, c) == {"s": "hi"}
    assert CAvroDeserializer(theirs)(mine, c) == {"s": "hi"}


# -- 2. exceptions catchable as the class confluent-kafka raises ------------------------------


def test_strict_avro_validation_raises_a_value_error_as_confluent(ours, theirs) -> None:
    schema = json.dumps({"type": "record", "name": "S", "fields": [{"name": "n", "type": "int"}]})
    strict = {"validate.strict": True}
    with pytest.raises(ValueError):
        CAvroSerializer(theirs, schema, conf=strict)({"n": "x", "extra": 1}, ctx("strict"))
    with pytest.raises(ValueError) as caught:
        AvroSerializer(ours, schema, conf=strict)({"n": "x", "extra": 1}, ctx("strict"))
    assert isinstance(caught.value, SerializationError)
    # serdes' own checks (values confluent-kafka would write wrongly) are ValueErrors as well
    with pytest.raises(ValueError, match="truncated"):
        AvroSerializer(ours, schema)({"n": 1.5}, ctx("strict"))


def test_every_bad_input_raises_what_confluent_raises(ours, theirs) -> None:
    """For each bad input, ours is an instance of every class confluent-kafka's exception is."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError as CSRError
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer

    from serdes import SchemaRegistryError

    record = json.dumps(
        {
            "type": "record",
            "name": "Exc",
            "fields": [{"name": "n", "type": "int"}, {"name": "s", "type": "string"}],
        }
    )
    doc = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}})
    c, j = ctx("exc"), ctx("exc-json")
    avro_c = CAvroSerializer(theirs, record)({"n": 1, "s": "x"}, c)
    avro_o = AvroSerializer(ours, record)({"n": 1, "s": "x"}, c)
    json_c = CJSONSerializer(doc, theirs)({"n": 1}, j)
    json_o = JSONSerializer(doc, ours)({"n": 1}, j)
    unknown_id = b"\x00\x00\x0f\x42\x3f\x02"
    cases = {
        "avro wrong type": (
            lambda: CAvroSerializer(theirs, record)({"n": "x", "s": "x"}, c),
            lambda: AvroSerializer(ours, record)({"n": "x", "s": "x"}, c),
        ),
        "avro missing field": (
            lambda: CAvroSerializer(theirs, record)({"n": 1}, c),
            lambda: AvroSerializer(ours, record)({"n": 1}, c),
        ),
        "avro not a record": (
            lambda: CAvroSerializer(theirs, record)(5, c),
            lambda: AvroSerializer(ours, record)(5, c),
        ),
        "avro truncated": (
            lambda: CAvroDeserializer(theirs)(avro_c[:-2], c),
            lambda: AvroDeserializer(ours)(avro_o[:-2], c),
        ),
        "bad magic byte": (
            lambda: CAvroDeserializer(theirs)(b"\x07" + avro_c[1:], c),
            lambda: AvroDeserializer(ours)(b"\x07" + avro_o[1:], c),
        ),
        "unknown schema id": (
            lambda: CAvroDeserializer(theirs)(unknown_id, c),
            lambda: AvroDeserializer(ours)(unknown_id, c),
        ),
        "json value invalid": (
            lambda: CJSONSerializer(doc, theirs)({"n": "x"}, j),
            lambda: JSONSerializer(doc, ours)({"n": "x"}, j),
        ),
        "json payload not json": (
            lambda: CJSONDeserializer(doc)(json_c[:5] + b"{bad", j),
            lambda: JSONDeserializer(doc)(json_o[:5] + b"{bad", j),
        ),
        "json not serializable": (
            lambda: CJSONSerializer(doc, theirs)({"n": 1, "x": object()}, j),
            lambda: JSONSerializer(doc, ours)({"n": 1, "x": object()}, j),
        ),
        "no context": (
            lambda: CAvroSerializer(theirs, record)({"n": 1, "s": "x"}, None),
            lambda: AvroSerializer(ours, record)({"n": 1, "s": "x"}, None),
        ),
    }
    classes = [(ValueError, ValueError), (TypeError, TypeError), (EOFError, EOFError)]
    classes += [(SerializationError, SerializationError), (CSRError, SchemaRegistryError)]
    for name, (peer, mine) in cases.items():
        with pytest.raises(Exception) as expected:
            peer()
        with pytest.raises(Exception) as got:
            mine()
        for theirs_cls, ours_cls in classes:
            if isinstance(expected.value, theirs_cls):
                assert isinstance(got.value, ours_cls), (name, expected.value, got.value)


def test_a_frame_ending_inside_its_message_indexes_raises_eof_error_as_confluent() -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
    from google.protobuf import timestamp_pb2

    truncated = b"\x00\x00\x00\x00\x01\x04"  # id 1, two message indexes announced, none given
    peer = CProtoDeserializer(timestamp_pb2.Timestamp, {"use.deprecated.format": False})
    with pytest.raises(EOFError):
        peer(truncated, ctx("eof"))
    with pytest.raises(EOFError) as caught:
        ProtobufDeserializer(timestamp_pb2.Timestamp)(truncated, ctx("eof"))
    assert isinstance(caught.value, SerializationError)


def test_references_without_a_client_raise_value_error_as_confluent() -> None:
    with_refs = Schema('{"$ref": "other.json"}', "JSON", [SchemaReference("other.json", "o", 1)])
    with pytest.raises(
        ValueError, match='schema_registry_client must be provided if "schema_str" is a Schema'
    ):
        JSONDeserializer(with_refs)
    avro_refs = Schema('"Other"', "AVRO", [SchemaReference("Other", "o", 1)])
    with pytest.raises(ValueError):
        AvroDeserializer(None, avro_refs)


# -- 3. bearer configuration ------------------------------------------------------------------


class _Capture(BaseHTTPRequestHandler):
    """Answers every request with the canned reply of its path, and records what it got."""

    seen: list[dict[str, Any]]
    replies: dict[str, Any]

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        self.seen.append(
            {
                "method": self.command,
                "path": split.path,
                "query": parse_qs(split.query),
                "headers": dict(self.headers),
                "body": json.loads(body)
                if body and "json" in (self.headers.get("Content-Type") or "")
                else body.decode() or None,
            }
        )
        reply = self.replies.get(split.path, {})
        status = 200
        if isinstance(reply, tuple):
            status, reply = reply
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def capture() -> Iterator[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    replies: dict[str, Any] = {}
    handler = type("Handler", (_Capture,), {"seen": seen, "replies": replies})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen, replies
    finally:
        server.shutdown()
        server.server_close()


def test_bearer_settings_of_the_wrong_type_raise_type_error() -> None:
    base = {"url": "http://x", "bearer.auth.credentials.source": "STATIC_TOKEN"}
    good = {"bearer.auth.token": "t", "bearer.auth.logical.cluster": "c"}
    with pytest.raises(TypeError, match=r"bearer.auth.token must be a str"):
        SchemaRegistryClient({**base, **good, "bearer.auth.token": 42})
    with pytest.raises(TypeError, match="logical cluster must be a str"):
        SchemaRegistryClient({**base, **good, "bearer.auth.logical.cluster": 7})
    with pytest.raises(TypeError, match="identity pool id must be a str or list"):
        SchemaRegistryClient({**base, **good, "bearer.auth.identity.pool.id": 1})
    oauth = {
        "url": "http://x",
        "bearer.auth.credentials.source": "OAUTHBEARER",
        "bearer.auth.logical.cluster": "c",
        "bearer.auth.client.id": "id",
        "bearer.auth.client.secret": "s",
        "bearer.auth.scope": "sc",
        "bearer.auth.issuer.endpoint.url": "http://idp",
    }
    with pytest.raises(TypeError, match=r"bearer.auth.client.secret must be a str"):
        SchemaRegistryClient({**oauth, "bearer.auth.client.secret": b"s"})
    with pytest.raises(ValueError, match=r"Unrecognized bearer.auth.credentials.source"):
        SchemaRegistryClient({**base, "bearer.auth.credentials.source": "KERBEROS"})


def test_custom_bearer_source_needs_function_and_config_as_confluent() -> None:
    base = {"url": "http://x", "bearer.auth.credentials.source": "CUSTOM"}
    missing = (
        "Missing required custom OAuth configuration properties: "
        "bearer.auth.custom.provider.function"
    )
    with pytest.raises(ValueError, match=missing):
        SchemaRegistryClient({**base, "bearer.auth.custom.provider.config": {}})
    with pytest.raises(TypeError, match=r"bearer.auth.custom.provider.function must be a callable"):
        SchemaRegistryClient(
            {
                **base,
                "bearer.auth.custom.provider.function": "not callable",
                "bearer.auth.custom.provider.config": {},
            }
        )
    with pytest.raises(TypeError, match=r"bearer.auth.custom.provider.config must be a dict"):
        SchemaRegistryClient(
            {
                **base,
                "bearer.auth.custom.provider.function": lambda conf: conf,
                "bearer.auth.custom.provider.config": [],
            }
        )


def test_identity_pool_list_is_sent_comma_separated(capture) -> None:
    url, seen, replies = capture
    replies["/subjects"] = ["s"]
    client = SchemaRegistryClient(
        {
            "url": url,
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": "tok",
            "bearer.auth.logical.cluster": "lsrc-1",
            "bearer.auth.identity.pool.id": ["pool-a", "pool-b"],
        }
    )
    assert client.get_subjects() == ["s"]
    headers = seen[-1]["headers"]
    assert headers["Confluent-Identity-Pool-Id"] == "pool-a,pool-b"
    assert headers["Authorization"] == "Bearer tok"
    assert headers["target-sr-cluster"] == "lsrc-1"


def test_a_token_endpoint_that_fails_gives_oauth_token_error_after_retries(capture) -> None:
    from serdes.errors import OAuthTokenError

    url, seen, replies = capture
    replies["/token"] = (500, {"error": "down"})
    client = SchemaRegistryClient(
        {
            "url": url,
            "max.retries": 2,
            "retries.wait.ms": 1,
            "retries.max.wait.ms": 2,
            "bearer.auth.credentials.source": "OAUTHBEARER",
            "bearer.auth.logical.cluster": "c",
            "bearer.auth.client.id": "id",
            "bearer.auth.client.secret": "secret",
            "bearer.auth.scope": "sr",
            "bearer.auth.issuer.endpoint.url": f"{url}/token",
        }
    )
    with pytest.raises(OAuthTokenError, match="Failed to retrieve token after 2 attempts"):
        client.get_subjects()
    assert [r["path"] for r in seen] == ["/token"] * 3  # the first try and two retries
    assert seen[0]["method"] == "POST"
    assert seen[0]["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(seen[0]["body"]) == {"grant_type": ["client_credentials"], "scope": ["sr"]}


def test_normalize_identity_pool_as_confluent() -> None:
    from confluent_kafka.schema_registry.common.schema_registry_client import (
        normalize_identity_pool as theirs_normalize,
    )

    for value in (None, "p", "a,b", ["a", "b"], [], ["only"]):
        assert normalize_identity_pool(value) == theirs_normalize(value)
    for bad in (1, ["a", 2], ("a", "b")):
        with pytest.raises(TypeError):
            theirs_normalize(bad)
        with pytest.raises(TypeError):
            normalize_identity_pool(bad)


def test_azure_imds_token_is_fetched_with_the_metadata_header(capture) -> None:
    url, seen, replies = capture
    replies["/metadata/identity/oauth2/token"] = {
        "access_token": "imds-token",
        "expires_in": "3600",
        "expires_on": "9999999999",
    }
    replies["/subjects"] = []
    client = SchemaRegistryClient(
        {
            "url": url,
            "bearer.auth.credentials.source": "OAUTHBEARER_AZURE_IMDS",
            "bearer.auth.logical.cluster": "lsrc-2",
            "bearer.auth.identity.pool.id": "pool-1",
            "bearer.auth.issuer.endpoint.url": f"{url}/metadata/identity/oauth2/token",
            "bearer.auth.issuer.endpoint.query": "resource=api://sr&api-version=2018-02-01",
        }
    )
    assert client.get_subjects() == []
    assert client.get_subjects() == []
    token_calls = [r for r in seen if r["path"] == "/metadata/identity/oauth2/token"]
    assert len(token_calls) == 1  # cached until 80% of its lifetime has passed
    assert token_calls[0]["method"] == "GET"
    assert token_calls[0]["headers"]["Metadata"] == "true"
    assert token_calls[0]["query"] == {"resource": ["api://sr"], "api-version": ["2018-02-01"]}
    registry_call = seen[-1]
    assert registry_call["headers"]["Authorization"] == "Bearer imds-token"
    assert registry_call["headers"]["Confluent-Identity-Pool-Id"] == "pool-1"
    with pytest.raises(ValueError, match=r"bearer.auth.issuer.endpoint.query must be provided"):
        SchemaRegistryClient(
            {
                "url": url,
                "bearer.auth.credentials.source": "OAUTHBEARER_AZURE_IMDS",
                "bearer.auth.logical.cluster": "c",
            }
        )


# -- 4. a serializer given a schema with rules refuses, and registers nothing -----------------

CONDITION = {
    "domainRules": [
        {
            "name": "positive",
            "kind": "CONDITION",
            "mode": "WRITE",
            "type": "CEL",
            "expr": "message.n > 0",
        }
    ]
}


def test_a_schema_with_rules_given_to_the_serializer_is_registered_as_confluent(
    ours, theirs
) -> None:
    """As confluent-kafka: auto-registering a schema that carries rules registers it with its
    rule set and writes the same bytes (rules run on ``use.latest.*`` schemas, not on this
    one), where serdes once refused such a schema."""
    from confluent_kafka.schema_registry import RuleSet as CRuleSet

    avro = json.dumps({"type": "record", "name": "R", "fields": [{"name": "n", "type": "int"}]})
    mine = AvroSerializer(ours, Schema(avro, "AVRO", [], None, RuleSet.from_dict(CONDITION)))(
        {"n": -1}, ctx("rules-avro")
    )
    peer_schema = CSchema(avro, "AVRO", [], None, CRuleSet.from_dict(CONDITION))
    peer = CAvroSerializer(theirs, peer_schema)({"n": -1}, ctx("rules-avro"))
    assert mine == peer
    stored = ours.get_latest_version("rules-avro-value").schema.rule_set
    assert stored is not None and stored.to_dict()["domainRules"][0]["name"] == "positive"


# -- issue 14: Protobuf index paths as Java writes them; GUID frames --------------------------

PROTOS = Path(__file__).parent / "data" / "serdes"


@pytest.fixture(scope="module")
def basket(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("basket") / "set.pb"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTOS}",
            f"--descriptor_set_out={out}",
            "idx/basket.proto",
        ],
        check=True,
        capture_output=True,
    )
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    return {
        name: GetMessageClass(pool.FindMessageTypeByName(f"idx.{name}"))
        for name in ("Basket", "Basket.Line", "Basket.Note")
    }


def test_nested_message_after_a_map_field_gets_javas_index_path(ours, theirs, basket) -> None:
    Line, Note = basket["Basket.Line"], basket["Basket.Note"]
    c = ctx("idx-line")
    line = ProtobufSerializer(Line, ours)(Line(sku="s1", qty=2), c)
    assert line[5:8] == b"\x04\x02\x00"  # two indexes, [1, 0] (zig-zag): as the Java client
    assert ProtobufDeserializer(None, schema_registry_client=ours)(line, c) == {
        "sku": "s1",
        "qty": 2,
    }
    assert ProtobufDeserializer(Line, schema_registry_client=ours)(line, c) == Line(sku="s1", qty=2)
    n = ctx("idx-note")
    note = ProtobufSerializer(Note, ours)(Note(text="hi"), n)
    assert note[5:8] == b"\x04\x02\x02"  # [1, 1]
    # confluent-kafka-python counts the map entry: [1, 2] for Note, read here as it meant
    theirs_note = CProtoSerializer(Note, theirs, {"use.deprecated.format": False})(
        Note(text="hi"), n
    )
    assert theirs_note[5:8] == b"\x04\x02\x04"
    assert ProtobufDeserializer(None, schema_registry_client=ours)(theirs_note, n) == {"text": "hi"}


def test_protobuf_frame_with_a_guid_is_read_by_guid(ours, basket) -> None:
    Line = basket["Basket.Line"]
    framed = ProtobufSerializer(Line, ours)(Line(sku="g", qty=5), ctx("idx-guid"))
    schema_id = int.from_bytes(framed[1:5], "big")
    # the registry's GUID is the MD5 of the schema text it serves, as a UUID (as Confluent)
    text = ours.get_schema(schema_id).schema_str or ""
    guid = uuid.UUID(bytes=hashlib.md5(text.encode()).digest())
    header = b"\x01" + guid.bytes + framed[5:8]  # GUID, then the message index path [1, 0]
    c = ctx("idx-guid", headers=[("__value_schema_id", header)])
    fresh = SchemaRegistryClient(ours.config())  # nothing cached: the schema is fetched by GUID
    assert ProtobufDeserializer(None, schema_registry_client=fresh)(framed[8:], c) == {
        "sku": "g",
        "qty": 5,
    }


# -- associations, decimals, wildcards --------------------------------------------------------


def test_association_requests_are_confluents(capture) -> None:
    url, seen, replies = capture
    replies["/associations"] = {
        "resourceName": "orders",
        "resourceNamespace": "lkc-1",
        "resourceId": "rid-1",
        "resourceType": "topic",
        "associations": [
            {"subject": "orders-value", "associationType": "value", "lifecycle": "STRONG"}
        ],
    }
    client = SchemaRegistryClient({"url": url})
    request = AssociationCreateOrUpdateRequest(
        resource_name="orders",
        resource_namespace="lkc-1",
        resource_id="rid-1",
        resource_type="topic",
        associations=[
            AssociationCreateOrUpdateInfo(
                subject="orders-value",
                association_type="value",
                lifecycle="STRONG",
                schema=Schema('"string"'),
                normalize=True,
            )
        ],
    )
    answer = client.create_association(request)
    sent = seen[-1]
    assert (sent["method"], sent["path"]) == ("POST", "/associations")
    assert sent["body"] == {
        "resourceName": "orders",
        "resourceNamespace": "lkc-1",
        "resourceId": "rid-1",
        "resourceType": "topic",
        "associations": [
            {
                "subject": "orders-value",
                "associationType": "value",
                "lifecycle": "STRONG",
                "schema": {"schema": '"string"', "schemaType": "AVRO", "references": []},
                "normalize": True,
            }
        ],
    }
    assert answer.resource_id == "rid-1"
    assert answer.associations is not None
    assert answer.associations[0].subject == "orders-value"
    assert answer.associations[0].lifecycle == "STRONG"
    assert answer.associations[0].frozen is False

    client.delete_associations("rid/1", "topic", ["key", "value"], cascade_lifecycle=True)
    sent = seen[-1]
    assert (sent["method"], sent["path"]) == ("DELETE", "/associations/resources/rid%2F1")
    assert sent["query"] == {
        "cascadeLifecycle": ["true"],
        "resourceType": ["topic"],
        "associationType": ["key", "value"],
    }


def test_protobuf_decimals_are_confluents() -> None:
    rng = random.Random(7)
    values = ["0", "-0", "1.01", "-1234.56", "123456789123456789.56", "1E+3", "0.000"]
    values += [
        f"{rng.choice('-+')}{rng.randint(0, 10 ** rng.randint(0, 40))}.{rng.randint(0, 999)}"
        for _ in range(300)
    ]
    for text in values:
        for scale in (-3, 0, 2, 3, 9):
            value = Decimal(text)
            try:
                expected = c_to_proto(value, scale)
            except ValueError:
                with pytest.raises(ValueError):
                    decimal_to_protobuf(value, scale)
                continue
            mine = decimal_to_protobuf(value, scale)
            assert mine.SerializeToString() == expected.SerializeToString(), (text, scale)
            assert protobuf_to_decimal(mine) == c_from_proto(expected) == value


def test_wildcard_matcher_verdicts_are_confluents() -> None:
    assert wildcard_match("alice.bob.eve", "a*.bob.eve")
    assert not wildcard_match("alice.bob.eve", "a*")
    assert wildcard_match("alice.bob.eve", "a**")
    assert not wildcard_match("alice.bob.eve", "alice.bob*")
    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice("ab.") for _ in range(rng.randint(0, 6)))
        pattern = "".join(rng.choice("ab.*?") for _ in range(rng.randint(0, 6)))
        assert wildcard_match(text, pattern) == c_wildcard(text, pattern), (text, pattern)


# -- mock:// ----------------------------------------------------------------------------------


def test_mock_url_gives_the_in_memory_registry_as_confluents_mock() -> None:
    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient

    from serdes.mock_client import MockSchemaRegistryClient, drop_scope

    mine = SchemaRegistryClient({"url": "mock://"})
    assert isinstance(mine, MockSchemaRegistryClient)
    assert isinstance(SchemaRegistryClient.new_client({"url": "mock://"}), MockSchemaRegistryClient)
    peer = CClient.new_client({"url": "mock://"})
    a, b = '{"type": "string"}', '{"type": "int"}'
    # the same operations give the same ids, versions and answers
    for client, schema in ((mine, Schema), (peer, CSchema)):
        assert client.register_schema("s1", schema(a, "AVRO")) == 1
        assert client.register_schema("s1", schema(a, "AVRO")) == 1  # already there
        assert client.register_schema("s1", schema(b, "AVRO")) == 2
        assert client.register_schema("s2", schema(a, "AVRO")) == 3  # a new id per subject
        latest = client.get_latest_version("s1")
        assert (latest.schema_id, latest.version, latest.subject) == (2, 2, "s1")
        assert client.get_version("s1", 1).schema.schema_str == a
        assert client.lookup_schema("s2", schema(a, "AVRO")).schema_id == 3
        assert sorted(client.get_versions("s1")) == [1, 2]
        assert sorted(client.get_subjects()) == ["s1", "s2"]
        assert client.get_schema(2).schema_str == b
        assert client.get_schema_by_guid(latest.guid).schema_str == b
        assert sorted(client.delete_subject("s2")) == [1]
        assert client.get_subjects() == ["s1"]
    # not found: a SchemaRegistryError with HTTP 404 (with the registry's error codes)
    for call in (
        lambda: mine.get_schema(99),
        lambda: mine.get_latest_version("nope"),
        lambda: mine.get_version("s1", 7),
        lambda: mine.lookup_schema("s1", Schema('"bytes"')),
    ):
        with pytest.raises(Exception) as caught:
            call()
        assert caught.value.http_status_code == 404
    # a bare mock:// is one registry per client (as confluent-kafka's); a named scope is shared
    assert SchemaRegistryClient({"url": "mock://"}).get_subjects() == []
    one = SchemaRegistryClient({"url": "mock://dropin-scope"})
    one.register_schema("shared", Schema(a))
    assert SchemaRegistryClient({"url": "mock://dropin-scope"}).get_subjects() == ["shared"]
    assert SchemaRegistryClient({"url": "mock://other-scope"}).get_subjects() == []
    drop_scope("dropin-scope")
    assert SchemaRegistryClient({"url": "mock://dropin-scope"}).get_subjects() == []
    # config and compatibility level are kept
    mine.set_compatibility("s1", "FULL")
    assert mine.get_compatibility("s1") == "FULL"
    assert mine.get_compatibility() == "BACKWARD"


def test_serdes_and_associations_work_on_the_mock_registry() -> None:
    client = SchemaRegistryClient({"url": "mock://dropin-serdes"})
    try:
        schema = json.dumps(
            {"type": "record", "name": "M", "fields": [{"name": "n", "type": "int"}]}
        )
        c = ctx("mock-topic")
        data = AvroSerializer(client, schema)({"n": 5}, c)
        assert data[:5] == b"\x00\x00\x00\x00\x01"
        assert AvroDeserializer(client)(data, c) == {"n": 5}
        assert client.get_latest_version("mock-topic-value").version == 1
        latest = AvroSerializer(
            client, None, conf={"auto.register.schemas": False, "use.latest.version": True}
        )
        assert latest({"n": 6}, c)[:5] == data[:5]

        response = client.create_association(
            AssociationCreateOrUpdateRequest(
                resource_name="mock-topic",
                resource_namespace="lkc-9",
                resource_id="rid-9",
                resource_type="topic",
                associations=[
                    AssociationCreateOrUpdateInfo(
                        subject="mock-topic-value", association_type="value"
                    ),
                    AssociationCreateOrUpdateInfo(subject="mock-topic-key", association_type="key"),
                ],
            )
        )
        assert [a.subject for a in response.associations or []] == [
            "mock-topic-value",
            "mock-topic-key",
        ]
        found = client.get_associations_by_resource_name("mock-topic", "-")
        assert {(a.subject, a.association_type, a.resource_id) for a in found} == {
            ("mock-topic-value", "value", "rid-9"),
            ("mock-topic-key", "key", "rid-9"),
        }
        client.delete_associations("rid-9", association_types=["key"])
        left = client.get_associations_by_resource_name("mock-topic", "lkc-9")
        assert [a.subject for a in left] == ["mock-topic-value"]
        client.delete_associations("rid-9")
        assert client.get_associations_by_resource_name("mock-topic", "lkc-9") == []
    finally:
        from serdes.mock_client import drop_scope

        drop_scope("dropin-serdes")


@pytest.mark.parametrize("source", ["OAUTHBEARER", "OAUTHBEARER_AZURE_IMDS"])
def test_async_client_with_a_fetched_token(capture, source: str) -> None:
    """The async client builds with a fetched-token source and fetches it on the event loop."""
    import asyncio

    from serdes import AsyncSchemaRegistryClient

    url, seen, replies = capture
    replies["/token"] = {"access_token": "fetched", "expires_in": 3600}
    replies["/subjects"] = ["s"]
    conf: dict = {
        "url": url,
        "bearer.auth.credentials.source": source,
        "bearer.auth.logical.cluster": "lsrc-3",
        "bearer.auth.issuer.endpoint.url": f"{url}/token",
    }
    if source == "OAUTHBEARER":
        conf |= {
            "bearer.auth.client.id": "id",
            "bearer.auth.client.secret": "secret",
            "bearer.auth.scope": "sr",
        }

    async def scenario() -> list[str]:
        async with AsyncSchemaRegistryClient(conf) as client:
            return await client.get_subjects()

    assert asyncio.run(scenario()) == ["s"]
    assert [r["path"] for r in seen] == ["/token", "/subjects"]
    assert seen[-1]["headers"]["Authorization"] == "Bearer fetched"

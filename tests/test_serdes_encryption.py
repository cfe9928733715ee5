"""Field-level encryption (ENCRYPT, ENCRYPT_PAYLOAD) against confluent-kafka 2.16, both ways,
through our registry's DEK registry: what confluent-kafka's Avro serializer encrypted (local KMS)
serdes decrypts, and what serdes encrypted confluent-kafka's deserializer decrypts; AES-GCM and
deterministic AES-SIV (byte-identical ciphertexts), DEK rotation by expiry, shared KEKs."""

from __future__ import annotations

import base64
import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import (
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
    RuleSet,
    Schema,
    SchemaRegistryClient,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry as ConfluentRules
from confluent_kafka.schema_registry.rules.encryption import encrypt_executor as ck_encrypt
from confluent_kafka.schema_registry.rules.encryption.kms_driver_registry import (
    _kms_drivers,
    register_kms_driver,
)
from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import LocalKmsDriver
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes.avro import AvroDeserializer as SerdesAvroDeserializer
from serdes.avro import AvroSerializer as SerdesAvroSerializer
from serdes.client import SchemaRegistryClient as SerdesClient
from serdes.encryption import tink
from serdes.encryption.executor import Clock, EncryptionExecutor, FieldEncryptionExecutor
from serdes.rules import RuleRegistry, RuleRunner
from serdes.rules.model import RuleMode as Mode
from serdes.rules.model import RulePhase
from tests.conftest import LiveServer

SECRET = "a-local-kms-secret"
DAY_MS = 24 * 60 * 60 * 1000
SCHEMA = {
    "type": "record",
    "name": "Person",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "ssn", "type": "string", "confluent:tags": ["PII"]},
        {"name": "photo", "type": ["null", "bytes"], "default": None, "confluent:tags": ["PII"]},
        {"name": "city", "type": "string"},
    ],
}
PERSON = {"id": 7, "ssn": "123-45-6789", "photo": b"\x00\x01jpeg", "city": "Lyon"}


def person() -> dict[str, Any]:
    """A fresh copy: confluent-kafka's transforms rewrite the record they are given."""
    return dict(PERSON)


class FixedClock(ck_encrypt.Clock, Clock):
    def __init__(self, now: int) -> None:
        self.time = now

    def now(self) -> int:
        return self.time


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(
        f"sqlite:///{tmp_path_factory.mktemp('enc') / 'r.db'}",
        tmp_path_factory.mktemp("logs"),
        {"LOCAL_SECRET": SECRET},
    )
    live.start()
    try:
        yield live
    finally:
        live.stop()


def register(server: LiveServer, subject: str, rule: Rule, encoding: bool = False) -> int:
    client = SchemaRegistryClient({"url": server.url})
    rules = (
        RuleSet(migration_rules=[], domain_rules=[], encoding_rules=[rule])
        if encoding
        else RuleSet(migration_rules=[], domain_rules=[rule], encoding_rules=[])
    )
    schema = Schema(json.dumps(SCHEMA), "AVRO", rule_set=rules)
    return client.register_schema(subject, schema)


def encrypt_rule(kek: str, *, rule_type: str = "ENCRYPT", **params: str) -> Rule:
    return Rule(
        "encrypt",
        "",
        RuleKind.TRANSFORM,
        RuleMode.WRITEREAD,
        rule_type,
        ["PII"] if rule_type == "ENCRYPT" else None,
        RuleParams(
            {
                "encrypt.kek.name": kek,
                "encrypt.kms.type": "local-kms",
                "encrypt.kms.key.id": "mykey",
                **params,
            }
        ),
        None,
        None,
        None,
        False,
    )


# ---- the two sides --------------------------------------------------------------------------


_LOCAL_KMS = LocalKmsDriver()


def confluent_rules(clock: ck_encrypt.Clock | None = None) -> ConfluentRules:
    """confluent-kafka's encryption executors in a rule registry of their own (its global one
    belongs to the other rules tests of the process)."""
    if _LOCAL_KMS not in _kms_drivers:
        register_kms_driver(_LOCAL_KMS)
    rules = ConfluentRules()
    rules.register_executor(ck_encrypt.FieldEncryptionExecutor(clock or ck_encrypt.Clock()))
    rules.register_executor(ck_encrypt.EncryptionExecutor(clock or ck_encrypt.Clock()))
    return rules


def confluent_serde(
    server: LiveServer, clock: ck_encrypt.Clock | None = None
) -> tuple[AvroSerializer, AvroDeserializer]:
    rules = confluent_rules(clock)
    client = SchemaRegistryClient({"url": server.url})
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ser = AvroSerializer(client, None, conf=conf, rule_conf={"secret": SECRET}, rule_registry=rules)
    de = AvroDeserializer(client, rule_conf={"secret": SECRET}, rule_registry=rules)
    return ser, de


class Ours:
    """serdes' side: its Avro serializer and deserializer with our executors; ``fields`` reads
    a message without the ENCRYPT rule (fields still encrypted) to look at the ciphertexts."""

    def __init__(self, server: LiveServer, subject: str, clock: Clock | None = None) -> None:
        self.client = SerdesClient({"url": server.url})
        self.rules = RuleRegistry()
        self.rules.register_executor(FieldEncryptionExecutor(clock))
        self.rules.register_executor(EncryptionExecutor(clock))
        self.configure({"secret": SECRET})
        latest = self.client.get_latest_version(subject)
        self.subject = subject
        self.target = latest.schema
        self.parsed = fastavro.parse_schema(json.loads(self.target.schema_str))
        self.ctx = SerializationContext(subject[: -len("-value")], MessageField.VALUE)

    def configure(self, rule_conf: dict[str, Any]) -> None:
        conf = {"auto.register.schemas": False, "use.latest.version": True}
        self.serializer = SerdesAvroSerializer(
            self.client, None, conf=conf, rule_conf=rule_conf, rule_registry=self.rules
        )
        self.deserializer = SerdesAvroDeserializer(
            self.client, rule_conf=rule_conf, rule_registry=self.rules
        )
        self.runner = RuleRunner(self.client, rule_conf, self.rules)

    def serialize(self, value: dict[str, Any]) -> bytes:
        data: bytes = self.serializer(value, self.ctx)
        return data

    def fields(self, data: bytes) -> dict[str, Any]:
        payload = self.runner.execute(
            self.ctx,
            self.subject,
            Mode.READ,
            None,
            self.target,
            data[5:],
            None,
            None,
            phase=RulePhase.ENCODING,
        )
        record: dict[str, Any] = fastavro.schemaless_reader(io.BytesIO(payload), self.parsed)
        return record

    def deserialize(self, data: bytes) -> dict[str, Any]:
        decoded: dict[str, Any] = self.deserializer(data, self.ctx)
        return decoded


def subject() -> str:
    return f"enc-{uuid.uuid4().hex[:8]}-value"


# ---- tests ----------------------------------------------------------------------------------


def test_confluent_encrypts_serdes_decrypts_and_back(server: LiveServer) -> None:
    name = subject()
    register(server, name, encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}"))
    ser, de = confluent_serde(server)
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    theirs = ser(person(), ctx)
    ours = Ours(server, name)
    raw = ours.fields(theirs)
    assert raw["ssn"] != PERSON["ssn"] and raw["city"] == "Lyon"
    assert raw["photo"] != PERSON["photo"]
    assert ours.deserialize(theirs) == PERSON

    mine = ours.serialize(person())
    assert ours.fields(mine)["ssn"] != PERSON["ssn"]
    assert de(mine, ctx) == PERSON


def test_deterministic_siv_ciphertexts_are_byte_identical(server: LiveServer) -> None:
    name = subject()
    rule = encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}", **{"encrypt.dek.algorithm": "AES256_SIV"})
    register(server, name, rule)
    ser, de = confluent_serde(server)
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    theirs = ser(person(), ctx)
    ours = Ours(server, name)
    mine = ours.serialize(person())
    assert mine == theirs  # same DEK, deterministic AEAD: the same bytes
    assert ours.deserialize(theirs) == PERSON
    assert de(mine, ctx) == PERSON


def test_encrypt_payload_both_ways(server: LiveServer) -> None:
    name = subject()
    rule = encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}", rule_type="ENCRYPT_PAYLOAD")
    register(server, name, rule, encoding=True)
    ser, de = confluent_serde(server)
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    theirs = ser(person(), ctx)
    assert b"Lyon" not in theirs
    ours = Ours(server, name)
    assert ours.deserialize(theirs) == PERSON
    mine = ours.serialize(person())
    assert b"Lyon" not in mine
    assert de(mine, ctx) == PERSON


def test_dek_rotation_after_expiry_both_ways(server: LiveServer) -> None:
    name = subject()
    kek = f"kek_{uuid.uuid4().hex[:6]}"
    register(server, name, encrypt_rule(kek, **{"encrypt.dek.expiry.days": "1"}))
    now = FixedClock(ck_encrypt.Clock().now())
    ser, de = confluent_serde(server, now)
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    first = ser(person(), ctx)
    ours = Ours(server, name, FixedClock(now.time + 2 * DAY_MS))
    # the ciphertext names DEK version 1
    assert ours.fields(first)["photo"][:5] == b"\x00\x00\x00\x00\x01"
    # two days on (by serdes' clock; the registry stamps DEKs with its own), every DEK is
    # expired: each encrypted field makes a new version, ssn first, then photo
    second = ours.serialize(person())
    fields = ours.fields(second)
    assert base64.b64decode(fields["ssn"])[:5] == b"\x00\x00\x00\x00\x02"
    assert fields["photo"][:5] == b"\x00\x00\x00\x00\x03"
    dek_client = SchemaRegistryClient({"url": server.url})
    versions = dek_client._rest_client.get(f"dek-registry/v1/keks/{kek}/deks/{name}/versions")
    assert versions == [1, 2, 3]
    assert ours.deserialize(first) == PERSON
    assert de(second, ctx) == PERSON
    assert de(first, ctx) == PERSON


def test_shared_kek_dek_made_by_the_registry(server: LiveServer) -> None:
    name = subject()
    kek = f"kek_{uuid.uuid4().hex[:6]}"
    client = SchemaRegistryClient({"url": server.url})
    client._rest_client.post(
        "dek-registry/v1/keks",
        {"name": kek, "kmsType": "local-kms", "kmsKeyId": "mykey", "shared": True},
    )
    register(server, name, encrypt_rule(kek))
    ours = Ours(server, name)
    mine = ours.serialize(person())
    dek = client._rest_client.get(f"dek-registry/v1/keks/{kek}/deks/{name}")
    assert dek["keyMaterial"]  # generated by the registry with its LOCAL_SECRET
    ser, de = confluent_serde(server)
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    assert de(mine, ctx) == PERSON
    assert ours.deserialize(ser(person(), ctx)) == PERSON


def test_wrong_secret_fails_to_decrypt(server: LiveServer) -> None:
    name = subject()
    register(server, name, encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}"))
    ser, _ = confluent_serde(server)
    theirs = ser(person(), SerializationContext(name[: -len("-value")], MessageField.VALUE))
    ours = Ours(server, name)
    ours.rules = RuleRegistry()
    ours.rules.register_executor(FieldEncryptionExecutor())
    ours.configure({"secret": "not the secret"})
    from serdes.errors import SerializationError

    with pytest.raises(SerializationError, match="failed to decrypt with all KEKs"):
        ours.deserialize(theirs)


def test_tink_key_formats_match_tink() -> None:
    from tink import aead, daead
    from tink.core import Registry
    from tink.proto import tink_pb2

    aead.register()
    daead.register()
    for algorithm, url in (
        ("AES256_GCM", aead.aead_key_templates.AES256_GCM_RAW.type_url),
        ("AES128_GCM", aead.aead_key_templates.AES128_GCM_RAW.type_url),
        ("AES256_SIV", daead.deterministic_aead_key_templates.AES256_SIV.type_url),
    ):
        material = tink.new_key(algorithm)
        data = tink_pb2.KeyData(
            type_url=url, value=material, key_material_type=tink_pb2.KeyData.SYMMETRIC
        )
        ours = tink.cipher(algorithm, material)
        if algorithm == "AES256_SIV":
            theirs = Registry().primitive(data, daead.DeterministicAead)
            assert theirs.encrypt_deterministically(b"x", b"") == ours.encrypt(b"x")
            assert theirs.decrypt_deterministically(ours.encrypt(b"y"), b"") == b"y"
        else:
            theirs = Registry().primitive(data, aead.Aead)
            assert ours.decrypt(theirs.encrypt(b"x", b"")) == b"x"
            assert theirs.decrypt(ours.encrypt(b"y"), b"") == b"y"
    with pytest.raises(tink.CryptoError):
        tink.cipher("AES256_GCM", b"\x1a\x02ab")


def test_local_kms_matches_confluent_kafka() -> None:
    from confluent_kafka.schema_registry.rules.encryption.localkms.local_client import (
        LocalKmsClient,
    )

    from serdes.encryption.kms import aead_for

    theirs = LocalKmsClient(SECRET).get_aead("local-kms://k")
    ours = aead_for("local-kms", "k", {"secret": SECRET})
    assert ours.decrypt(theirs.encrypt(b"dek", b""), b"") == b"dek"
    assert theirs.decrypt(ours.encrypt(b"dek", b""), b"") == b"dek"


@pytest.mark.parametrize(
    ("kms_type", "module", "extra"),
    [("aws-kms", "boto3", "aws"), ("gcp-kms", "google.cloud", "gcp"), ("hcvault", "hvac", "vault")],
)
def test_cloud_kms_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, kms_type: str, module: str, extra: str
) -> None:
    import sys

    from serdes.encryption.kms import KmsError, aead_for

    monkeypatch.setitem(sys.modules, module, None)  # as if the SDK were not installed
    for name in [m for m in sys.modules if m.startswith("serdes.encryption.cloud.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(KmsError, match=rf"pip install 'pyschemaregistry\[{extra}\]'"):
        aead_for(kms_type, "arn:aws:kms:eu-west-1:1:key/x", {})


JSON_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "ssn": {"type": "string", "confluent:tags": ["PII"]},
        "city": {"type": "string"},
    },
}


def test_json_schema_field_encryption_both_ways(server: LiveServer) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJsonDe
    from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJsonSer

    from serdes.json_schema import JSONDeserializer, JSONSerializer

    name = subject()
    rules = RuleSet(
        migration_rules=[],
        domain_rules=[encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}")],
        encoding_rules=[],
    )
    client = SchemaRegistryClient({"url": server.url})
    client.register_schema(name, Schema(json.dumps(JSON_SCHEMA), "JSON", rule_set=rules))
    theirs_rules = confluent_rules()
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    theirs_ser = CJsonSer(
        None, client, conf=conf, rule_conf={"secret": SECRET}, rule_registry=theirs_rules
    )
    theirs_de = CJsonDe(
        None,
        schema_registry_client=client,
        rule_conf={"secret": SECRET},
        rule_registry=theirs_rules,
    )
    our_client = SerdesClient({"url": server.url})
    our_rules = RuleRegistry()
    our_rules.register_executor(FieldEncryptionExecutor())
    our_ser = JSONSerializer(
        None, our_client, conf=conf, rule_conf={"secret": SECRET}, rule_registry=our_rules
    )
    our_de = JSONDeserializer(
        None,
        schema_registry_client=our_client,
        rule_conf={"secret": SECRET},
        rule_registry=our_rules,
    )
    doc = {"id": 1, "ssn": "123-45-6789", "city": "Lyon"}
    theirs = theirs_ser(dict(doc), ctx)
    assert b"123-45-6789" not in theirs and b"Lyon" in theirs
    assert our_de(theirs, ctx) == doc
    mine = our_ser(dict(doc), ctx)
    assert b"123-45-6789" not in mine
    assert theirs_de(mine, ctx) == doc


def test_protobuf_field_encryption_both_ways(server: LiveServer) -> None:
    from confluent_kafka.schema_registry.confluent import meta_pb2
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDe
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSer
    from google.protobuf import descriptor_pb2, descriptor_pool
    from google.protobuf.message_factory import GetMessageClass

    from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer

    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name=f"enc/{uuid.uuid4().hex[:6]}.proto",
        package="enc",
        syntax="proto3",
        dependency=["confluent/meta.proto"],
    )
    person = proto.message_type.add(name="Person")
    for name, number, kind, tagged in (
        ("id", 1, field.TYPE_INT32, False),
        ("ssn", 2, field.TYPE_STRING, True),
        ("photo", 3, field.TYPE_BYTES, True),
        ("city", 4, field.TYPE_STRING, False),
    ):
        added = person.field.add(name=name, number=number, type=kind, label=field.LABEL_OPTIONAL)
        if tagged:
            added.options.Extensions[meta_pb2.field_meta].tags.append("PII")
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(descriptor_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(meta_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(proto)
    Person = GetMessageClass(pool.FindMessageTypeByName("enc.Person"))

    name = subject()
    rules = RuleSet(
        migration_rules=[],
        domain_rules=[encrypt_rule(f"kek_{uuid.uuid4().hex[:6]}")],
        encoding_rules=[],
    )
    text = base64.standard_b64encode(Person.DESCRIPTOR.file.serialized_pb).decode()
    client = SchemaRegistryClient({"url": server.url})
    client.register_schema(name, Schema(text, "PROTOBUF", rule_set=rules))
    theirs_rules = confluent_rules()
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ctx = SerializationContext(name[: -len("-value")], MessageField.VALUE)
    theirs_ser = CProtoSer(
        Person,
        client,
        conf={**conf, "use.deprecated.format": False},
        rule_conf={"secret": SECRET},
        rule_registry=theirs_rules,
    )
    # a client of its own: confluent-kafka caches a subject's latest version whatever the
    # format asked, and the deserializer needs it serialized
    theirs_de = CProtoDe(
        Person,
        {"use.deprecated.format": False},
        SchemaRegistryClient({"url": server.url}),
        rule_conf={"secret": SECRET},
        rule_registry=theirs_rules,
    )
    our_client = SerdesClient({"url": server.url})
    our_rules = RuleRegistry()
    our_rules.register_executor(FieldEncryptionExecutor())
    our_ser = ProtobufSerializer(
        Person, our_client, conf=conf, rule_conf={"secret": SECRET}, rule_registry=our_rules
    )
    our_de = ProtobufDeserializer(
        Person, None, our_client, rule_conf={"secret": SECRET}, rule_registry=our_rules
    )

    def person_msg() -> Any:
        return Person(id=1, ssn="123-45-6789", photo=b"\x00jpeg", city="Lyon")

    theirs = theirs_ser(person_msg(), ctx)
    assert b"123-45-6789" not in theirs and b"Lyon" in theirs
    assert our_de(theirs, ctx) == person_msg()
    mine = our_ser(person_msg(), ctx)
    assert b"123-45-6789" not in mine and b"\x00jpeg" not in mine
    assert theirs_de(mine, ctx) == person_msg()


def test_mock_dek_registry_in_memory_as_confluents() -> None:
    """``mock://``: the DEK registry is in memory (no server), as confluent-kafka's
    ``MockDekRegistryClient``; an ENCRYPT rule round-trips against a mock schema registry."""
    from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
        DekAlgorithm,
    )
    from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
        DekRegistryClient as CDekClient,
    )

    from serdes import SchemaRegistryError
    from serdes.encryption.dek_client import DekRegistryClient
    from serdes.encryption.mock_dek_client import MockDekRegistryClient

    theirs = CDekClient.new_client({"url": "mock://"})
    for mine in (
        DekRegistryClient.new_client({"url": "mock://"}),
        DekRegistryClient({"url": "mock://x"}),
    ):
        assert isinstance(mine, MockDekRegistryClient)
        for client in (mine, theirs):
            kek = client.register_kek("k1", "local-kms", "mykey", shared=False)
            assert (kek.name, kek.kms_type, kek.kms_key_id) == ("k1", "local-kms", "mykey")
            assert client.get_kek("k1") is kek
        with pytest.raises(SchemaRegistryError) as absent:
            mine.get_kek("nope")
        assert (absent.value.http_status_code, absent.value.error_code) == (404, 40470)
        for version in (1, 3, 2):
            mine.register_dek("k1", "s", f"m{version}", version=version)
            theirs.register_dek("k1", "s", f"m{version}", DekAlgorithm.AES256_GCM, version)
        latest = mine.get_dek("k1", "s", version=-1)
        assert latest.version == theirs.get_dek("k1", "s", DekAlgorithm.AES256_GCM, -1).version == 3
        assert latest.encrypted_key_material == "m3" and latest.ts is not None
        with pytest.raises(SchemaRegistryError):
            mine.get_dek("k1", "other", version=-1)
        theirs = CDekClient.new_client({"url": "mock://"})

    client = SerdesClient({"url": "mock://"})
    rules = RuleSet(migration_rules=[], domain_rules=[encrypt_rule("mock-kek")], encoding_rules=[])
    client.register_schema("m-value", Schema(json.dumps(SCHEMA), "AVRO", rule_set=rules))
    registry = RuleRegistry()
    executor = FieldEncryptionExecutor()
    registry.register_executor(executor)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    rule_conf = {"secret": SECRET}
    ser = SerdesAvroSerializer(client, None, conf=conf, rule_conf=rule_conf, rule_registry=registry)
    de = SerdesAvroDeserializer(client, rule_conf=rule_conf, rule_registry=registry)
    ctx = SerializationContext("m", MessageField.VALUE)
    data = ser(person(), ctx)
    assert b"123-45-6789" not in data
    assert de(data, ctx) == PERSON
    dek_client = executor.executor.client
    assert isinstance(dek_client, MockDekRegistryClient)
    assert dek_client.get_dek("mock-kek", "m-value", version=-1).encrypted_key_material


def test_dek_client_takes_an_algorithm_enum() -> None:
    """An algorithm given as an enum member is stored and found by its value: confluent-kafka's
    ``DekAlgorithm`` and a plain ``class Alg(str, Enum)`` (whose ``str()`` is ``Alg.X``)."""
    import enum

    from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
        DekAlgorithm,
    )

    from serdes.encryption.dek_client import DekRegistryClient

    class Alg(str, enum.Enum):  # noqa: UP042  (the pre-StrEnum idiom is the case)
        AES256_SIV = "AES256_SIV"

    for algorithm in (DekAlgorithm.AES256_SIV, Alg.AES256_SIV):
        client = DekRegistryClient({"url": "mock://"})
        client.register_dek("k", "s-value", "bWF0", algorithm=algorithm)
        dek = client.get_dek("k", "s-value", "AES256_SIV", version=-1)
        assert (dek.algorithm, dek.encrypted_key_material) == ("AES256_SIV", "bWF0")
        assert client.get_dek("k", "s-value", algorithm, version=1) is dek


def test_encrypt_a_field_inside_a_union_of_records() -> None:
    """A tagged field in one record branch of a union (whose fields are unions too): the branch
    is picked by fastavro's ``-type`` or by the value's shape, the field encrypted."""
    inner = [
        "null",
        {
            "type": "record",
            "name": "Data",
            "fields": [
                {"name": "code", "type": "int"},
                {"name": "secret", "type": ["null", "string"], "confluent:tags": ["PII"]},
            ],
        },
        {
            "type": "record",
            "name": "Error",
            "fields": [
                {"name": "code", "type": "int"},
                {"name": "reason", "type": ["null", "string"]},
            ],
        },
    ]
    schema = {
        "type": "record",
        "name": "Result",
        "namespace": "com.acme",
        "fields": [{"name": "id", "type": "int"}, {"name": "result", "type": inner}],
    }
    client = SerdesClient({"url": "mock://"})
    rules = RuleSet(migration_rules=[], domain_rules=[encrypt_rule("union-kek")], encoding_rules=[])
    client.register_schema("u-value", Schema(json.dumps(schema), "AVRO", rule_set=rules))
    registry = RuleRegistry()
    registry.register_executor(FieldEncryptionExecutor())
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    rule_conf = {"secret": SECRET}
    ser = SerdesAvroSerializer(client, None, conf=conf, rule_conf=rule_conf, rule_registry=registry)
    de = SerdesAvroDeserializer(client, rule_conf=rule_conf, rule_registry=registry)
    ctx = SerializationContext("u", MessageField.VALUE)
    for result in (
        {"-type": "com.acme.Data", "code": 456, "secret": "mypii"},
        {"code": 456, "secret": "mypii"},
    ):
        data = ser({"id": 1, "result": result}, ctx)
        assert b"mypii" not in data
        assert de(data, ctx) == {"id": 1, "result": {"code": 456, "secret": "mypii"}}


def test_dek_algorithm_enum_as_confluents(server: LiveServer) -> None:
    """``DekAlgorithm`` (what ``register_dek`` takes in confluent-kafka) is serdes' own: a
    ``str`` enum of the same members whose ``str()`` is the value; a DEK fetched from the
    registry carries the member."""
    from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
        DekAlgorithm as CDekAlgorithm,
    )

    from serdes.encryption import DekAlgorithm, DekRegistryClient
    from serdes.encryption.dek_client import DekAlgorithm as FromModule

    assert DekAlgorithm is FromModule
    assert [(m.name, m.value, str(m)) for m in DekAlgorithm] == [
        (m.name, m.value, str(m)) for m in CDekAlgorithm
    ]
    client = DekRegistryClient({"url": server.url})
    kek = f"kek-{uuid.uuid4().hex[:8]}"
    client.register_kek(kek, "local-kms", "mykey", shared=False)
    client.register_dek(kek, "alg-value", "bWF0", algorithm=DekAlgorithm.AES256_SIV)
    fresh = DekRegistryClient({"url": server.url})
    dek = fresh.get_dek(kek, "alg-value", DekAlgorithm.AES256_SIV, version=-1)
    assert dek.algorithm is DekAlgorithm.AES256_SIV
    assert dek.algorithm == "AES256_SIV" and f"{dek.algorithm}" == "AES256_SIV"

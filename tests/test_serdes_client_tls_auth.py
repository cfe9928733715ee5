"""serdes.SchemaRegistryClient's TLS files and HTTP Basic credentials against our server run
with HTTPS and a users file: the CA file verifies the server, credentials are sent, wrong or
missing ones are a SchemaRegistryError 401, and the serdes work through it."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import SchemaRegistryClient, SchemaRegistryError
from serdes.avro import AvroDeserializer, AvroSerializer
from tests.production_helpers import Pki, running

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("tls-auth")
    pki = Pki(tmp)
    users = tmp / "users"
    subprocess.run(
        [sys.executable, "-m", "registry.cli", "user", "add", "--file", str(users),
         "--password-stdin", "ann"],
        input=b"s3cret\n", check=True, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    server = pki.https_server(tmp, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users)})
    with running(server):
        yield server.url, pki.ca


def test_tls_and_basic_auth_credentials_work_end_to_end(secured) -> None:
    url, cert = secured
    client = SchemaRegistryClient(
        {"url": url, "ssl.ca.location": str(cert), "basic.auth.user.info": "ann:s3cret"}
    )
    schema = json.dumps({"type": "record", "name": "S", "fields": [{"name": "a", "type": "int"}]})
    ctx = SerializationContext("secure", MessageField.VALUE)
    with client:
        data = AvroSerializer(client, schema)({"a": 5}, ctx)
        assert AvroDeserializer(client)(data, ctx) == {"a": 5}
        assert client.get_subjects() == ["secure-value"]
    in_url = SchemaRegistryClient({"url": url.replace("https://", "https://ann:s3cret@"),
                                   "ssl.ca.location": str(cert)})  # fmt: skip
    with in_url:
        assert in_url.get_subjects() == ["secure-value"]


@pytest.mark.parametrize("userinfo", ["ann:wrong", None])
def test_wrong_or_missing_credentials_are_a_401(secured, userinfo: str | None) -> None:
    url, cert = secured
    conf = {"url": url, "ssl.ca.location": str(cert), "max.retries": 0}
    if userinfo is not None:
        conf["basic.auth.user.info"] = userinfo
    with SchemaRegistryClient(conf) as client, pytest.raises(SchemaRegistryError) as raised:
        client.get_subjects()
    assert raised.value.http_status_code == 401


def test_an_unverifiable_server_is_refused_unless_verification_is_off(secured) -> None:
    url, _ = secured
    creds = {"url": url, "basic.auth.user.info": "ann:s3cret", "max.retries": 0}
    with (
        SchemaRegistryClient(creds) as client,
        pytest.raises(SchemaRegistryError, match="could not reach the Schema Registry"),
    ):
        client.get_subjects()  # the system CAs do not know this certificate
    with (
        SchemaRegistryClient({**creds, "ssl.ca.location": False}) as unverified,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        assert isinstance(unverified.get_subjects(), list)

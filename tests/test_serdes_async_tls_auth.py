"""serdes' AsyncSchemaRegistryClient over HTTPS with HTTP Basic credentials (our server with a
users file and a certificate): the sync client's TLS settings carried to httpx.AsyncClient -
the CA file verifies the server, an unknown certificate is refused unless verification is off -
credentials sent, a wrong password a SchemaRegistryError 401, and the async serdes work."""

# ruff: noqa: F811  (the module-scoped fixture imported from the sync client's TLS tests)
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import AsyncSchemaRegistryClient, SchemaRegistryError
from serdes.avro import AsyncAvroDeserializer, AsyncAvroSerializer
from tests.test_serdes_client_tls_auth import secured  # noqa: F401

SCHEMA = json.dumps({"type": "record", "name": "S", "fields": [{"name": "a", "type": "int"}]})


def test_async_client_over_tls_with_basic_auth(secured: tuple[str, Path]) -> None:
    url, ca = secured
    ctx = SerializationContext("secure-async", MessageField.VALUE)

    async def scenario() -> None:
        conf = {"url": url, "ssl.ca.location": str(ca), "basic.auth.user.info": "ann:s3cret"}
        async with AsyncSchemaRegistryClient(conf) as client:
            ser = await AsyncAvroSerializer(client, SCHEMA)
            de = await AsyncAvroDeserializer(client)
            assert await de(await ser({"a": 7}, ctx), ctx) == {"a": 7}
            assert "secure-async-value" in await client.get_subjects()
        wrong = AsyncSchemaRegistryClient({**conf, "basic.auth.user.info": "ann:nope"})
        with pytest.raises(SchemaRegistryError) as refused:
            await wrong.get_subjects()
        assert refused.value.http_status_code == 401
        await wrong.aclose()

    asyncio.run(scenario())


def test_async_client_refuses_an_unverifiable_server_unless_told(
    secured: tuple[str, Path],
) -> None:
    url, _ = secured
    creds = {"url": url, "basic.auth.user.info": "ann:s3cret", "max.retries": 0}

    async def scenario() -> None:
        async with AsyncSchemaRegistryClient(creds) as client:
            with pytest.raises(SchemaRegistryError, match="could not reach the Schema Registry"):
                await client.get_subjects()  # the system CAs do not know this certificate
        async with AsyncSchemaRegistryClient({**creds, "ssl.ca.location": False}) as unverified:
            assert isinstance(await unverified.get_subjects(), list)

    asyncio.run(scenario())

"""The Confluent wire format: framing of a schema id (or GUID) around the encoded data.

    magic 0 | 4-byte big-endian schema id | [Protobuf message indexes] | data
    magic 1 | 16-byte schema GUID         | [Protobuf message indexes] | data

Protobuf message indexes are the path of the message in its ``.proto`` file: a zig-zag varint
count, then each index as a zig-zag varint; the path ``[0]`` is written as the single byte 0.
The GUID form normally travels in a ``__key_schema_id``/``__value_schema_id`` record header,
with the value holding the bare data.

The ``*_schema_id_serializer``/``*_schema_id_deserializer`` callables have confluent-kafka's
signatures, so either library's can be passed as ``schema.id.serializer`` /
``schema.id.deserializer``; the serdes recognise the defaults and take a direct path for them.
Every malformed frame raises ``SerializationError`` saying what was wrong and where.
"""

from __future__ import annotations

import io
import struct
import uuid
from collections.abc import Sequence
from typing import Any

from confluent_kafka.serialization import MessageField, SerializationContext

from serdes.errors import SerializationEOFError, SerializationError

__all__ = [
    "KEY_SCHEMA_ID_HEADER",
    "MAGIC_BYTE_V0",
    "MAGIC_BYTE_V1",
    "VALUE_SCHEMA_ID_HEADER",
    "Frame",
    "SchemaId",
    "decode_message_indexes",
    "dual_schema_id_deserializer",
    "encode_message_indexes",
    "header_schema_id_serializer",
    "id_prefix",
    "prefix_schema_id_deserializer",
    "prefix_schema_id_serializer",
    "read_frame",
    "schema_id_header",
]

MAGIC_BYTE_V0 = 0
MAGIC_BYTE_V1 = 1
KEY_SCHEMA_ID_HEADER = "__key_schema_id"
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"
MAX_INDEX_COUNT = 100_000

_V0 = struct.Struct(">bI")
_ID = struct.Struct(">I")


def id_prefix(schema_id: int) -> bytes:
    """Magic byte 0 and the 4-byte big-endian id."""
    if not 0 <= schema_id <= 0xFFFFFFFF:
        raise SerializationError(f"schema id {schema_id} does not fit the 4-byte wire format")
    return _V0.pack(MAGIC_BYTE_V0, schema_id)


def _write_varint(out: bytearray, value: int) -> None:
    value = (value << 1) ^ (value >> 63)  # zig-zag, as Kafka's ByteUtils.writeVarint
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def encode_message_indexes(indexes: Sequence[int]) -> bytes:
    """Zig-zag varint count and indexes; ``[0]`` is the single byte 0."""
    if not indexes:
        raise SerializationError("a Protobuf message index path cannot be empty")
    if len(indexes) == 1 and indexes[0] == 0:
        return b"\x00"
    out = bytearray()
    _write_varint(out, len(indexes))
    for index in indexes:
        _write_varint(out, index)
    return bytes(out)


def _read_varint(data: bytes, pos: int, what: str) -> tuple[int, int]:
    value = 0
    shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise SerializationEOFError(
                f"truncated frame: the payload ends at byte {pos} inside the Protobuf {what}"
            )
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift > 63:
            raise SerializationError(f"malformed Protobuf {what}: varint longer than 10 bytes")
    return (value >> 1) ^ -(value & 1), pos


def decode_message_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """The message index path starting at ``pos``, and the position after it."""
    count, pos = _read_varint(data, pos, "message index count")
    if count == 0:
        return [0], pos
    if count < 0 or count > MAX_INDEX_COUNT:
        raise SerializationError(
            f"Invalid msgidx array length {count}: the Protobuf message index count must be "
            f"between 0 and {MAX_INDEX_COUNT}"
        )
    indexes = []
    for _ in range(count):
        index, pos = _read_varint(data, pos, "message index")
        if index < 0:
            raise SerializationError(f"malformed Protobuf message index {index}: negative")
        indexes.append(index)
    return indexes, pos


class Frame:
    """What a frame said: an id or a GUID, the message indexes (Protobuf), where data starts."""

    __slots__ = ("guid", "message_indexes", "offset", "schema_id")

    def __init__(
        self,
        schema_id: int | None,
        guid: uuid.UUID | None,
        message_indexes: list[int] | None,
        offset: int,
    ) -> None:
        self.schema_id = schema_id
        self.guid = guid
        self.message_indexes = message_indexes
        self.offset = offset


def read_frame(data: bytes, with_indexes: bool = False, start: int = 0) -> Frame:
    """Parse magic byte, id or GUID, and (``with_indexes``) the Protobuf message indexes."""
    size = len(data) - start
    if size < 1:
        raise SerializationError(
            "truncated frame: empty payload, expected magic byte 0 or 1 and a schema id"
        )
    magic = data[start]
    if magic == MAGIC_BYTE_V0:
        if size < 5:
            raise SerializationError(
                f"truncated frame: {size} bytes, but magic byte 0 must be followed by a "
                f"4-byte schema id"
            )
        schema_id = _ID.unpack_from(data, start + 1)[0]
        guid = None
        pos = start + 5
    elif magic == MAGIC_BYTE_V1:
        if size < 17:
            raise SerializationError(
                f"truncated frame: {size} bytes, but magic byte 1 must be followed by a "
                f"16-byte schema GUID"
            )
        schema_id = None
        guid = uuid.UUID(bytes=bytes(data[start + 1 : start + 17]))
        pos = start + 17
    else:
        raise SerializationError(
            f"Unknown magic byte {magic} (0x{magic:02x}) at offset 0: expected 0 (schema id) "
            f"or 1 (schema GUID); the payload was not written by a Schema Registry serializer"
        )
    indexes = None
    if with_indexes:
        indexes, pos = decode_message_indexes(data, pos)
    return Frame(schema_id, guid, indexes, pos)


def schema_id_header(ctx: SerializationContext | None) -> bytes | None:
    """The ``__key_schema_id``/``__value_schema_id`` header of the message, if any."""
    if ctx is None:
        return None
    headers = ctx.headers
    if not headers:
        return None
    name = KEY_SCHEMA_ID_HEADER if ctx.field == MessageField.KEY else VALUE_SCHEMA_ID_HEADER
    if isinstance(headers, dict):
        return headers.get(name)
    for header in headers:
        if header[0] == name:
            return header[1]
    return None


class SchemaId:
    """A schema id or GUID with Protobuf message indexes, as confluent-kafka's ``SchemaId``.

    Handed to ``schema.id.serializer``/``schema.id.deserializer`` callables.
    """

    __slots__ = ("guid", "id", "message_indexes", "schema_type")

    def __init__(
        self,
        schema_type: str,
        schema_id: int | None = None,
        guid: str | uuid.UUID | None = None,
        message_indexes: list[int] | None = None,
    ) -> None:
        self.schema_type = schema_type
        self.id = schema_id
        self.guid = uuid.UUID(str(guid)) if guid is not None else None
        self.message_indexes = message_indexes

    def from_bytes(self, payload: io.BytesIO) -> io.BytesIO:
        """Read a frame from ``payload``; leaves it positioned at the data and returns it."""
        start = payload.tell()
        data = payload.getvalue()
        frame = read_frame(data, self.schema_type == "PROTOBUF", start)
        self.id = frame.schema_id
        self.guid = frame.guid
        self.message_indexes = frame.message_indexes
        payload.seek(frame.offset)
        return payload

    def _indexes(self) -> bytes:
        if self.message_indexes is None:
            return b""
        return encode_message_indexes(self.message_indexes)

    def id_to_bytes(self) -> bytes:
        if self.id is None:
            raise SerializationError("Schema ID is not set")
        return id_prefix(self.id) + self._indexes()

    def guid_to_bytes(self) -> bytes:
        if self.guid is None:
            raise SerializationError(
                "Schema GUID is not set: the registry did not return a guid for this schema"
            )
        return bytes((MAGIC_BYTE_V1,)) + self.guid.bytes + self._indexes()

    def __repr__(self) -> str:
        return (
            f"SchemaId({self.schema_type!r}, id={self.id}, guid={self.guid}, "
            f"message_indexes={self.message_indexes})"
        )


def prefix_schema_id_serializer(payload: bytes, ctx: Any, schema_id: Any) -> bytes:
    """Default: magic byte 0, the id (and indexes) in front of the data."""
    return schema_id.id_to_bytes() + payload


def header_schema_id_serializer(
    payload: bytes, ctx: SerializationContext | None, schema_id: Any
) -> bytes:
    """Magic byte 1 and the GUID (and indexes) in a ``__key/value_schema_id`` header."""
    if ctx is None:
        raise SerializationError("SerializationContext is required for header_schema_id_serializer")
    headers = ctx.headers
    if headers is None:
        raise SerializationError(
            "header_schema_id_serializer needs ctx.headers (a list or dict) to add the "
            "schema id header to"
        )
    name = KEY_SCHEMA_ID_HEADER if ctx.field == MessageField.KEY else VALUE_SCHEMA_ID_HEADER
    value = schema_id.guid_to_bytes()
    if isinstance(headers, list):
        headers.append((name, value))
    elif isinstance(headers, dict):
        headers[name] = value
    else:
        raise SerializationError(
            f"ctx.headers must be a list or dict, not {type(headers).__name__}"
        )
    return payload


def dual_schema_id_deserializer(
    payload: bytes, ctx: SerializationContext | None, schema_id: Any
) -> io.BytesIO:
    """Default: the id from the header when there is one, else from the payload prefix."""
    header = schema_id_header(ctx)
    if header is not None:
        schema_id.from_bytes(io.BytesIO(header))
        return io.BytesIO(payload)
    return schema_id.from_bytes(io.BytesIO(payload))


def prefix_schema_id_deserializer(payload: bytes, ctx: Any, schema_id: Any) -> io.BytesIO:
    """The id from the payload prefix only."""
    return schema_id.from_bytes(io.BytesIO(payload))

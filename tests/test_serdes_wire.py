"""The wire format alone: frames and Protobuf message indexes exactly as confluent-kafka writes
and reads them, the schema-id (de)serializer callables interchangeable between the libraries,
and the client package importable without the server package."""

from __future__ import annotations

import io
import subprocess
import sys
import uuid

import pytest
from confluent_kafka.schema_registry import (
    dual_schema_id_deserializer as c_dual,
)
from confluent_kafka.schema_registry import (
    header_schema_id_serializer as c_header,
)
from confluent_kafka.schema_registry.common.serde import SchemaId as CSchemaId
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import SerializationError
from serdes.wire import (
    SchemaId,
    decode_message_indexes,
    dual_schema_id_deserializer,
    encode_message_indexes,
    header_schema_id_serializer,
    prefix_schema_id_serializer,
    read_frame,
)

PATHS = [[0], [1], [0, 0], [0, 2], [3, 1, 4], [63], [64], [200, 0], list(range(130))]


@pytest.mark.parametrize("path", PATHS)
def test_message_indexes_are_confluents_bytes_and_read_back(path: list[int]) -> None:
    theirs = CSchemaId("PROTOBUF", 7, None, path).id_to_bytes()
    ours = SchemaId("PROTOBUF", 7, None, path).id_to_bytes()
    assert ours == theirs
    assert decode_message_indexes(ours, 5) == (path, len(ours))
    frame = read_frame(ours + b"data", with_indexes=True)
    assert (frame.schema_id, frame.message_indexes, frame.offset) == (7, path, len(ours))
    theirs_id = CSchemaId("PROTOBUF")
    assert theirs_id.from_bytes(io.BytesIO(ours + b"data")).read() == b"data"
    assert theirs_id.message_indexes == path


def test_known_encodings() -> None:
    assert encode_message_indexes([0]) == b"\x00"
    assert encode_message_indexes([1]) == b"\x02\x02"
    assert encode_message_indexes([0, 2]) == b"\x04\x00\x04"
    assert SchemaId("AVRO", 258).id_to_bytes() == b"\x00\x00\x00\x01\x02"


def test_guid_frames_in_headers_interoperate() -> None:
    guid = str(uuid.uuid4())
    headers: list = []
    ctx = SerializationContext("t", MessageField.VALUE, headers)
    assert header_schema_id_serializer(b"body", ctx, SchemaId("JSON", None, guid)) == b"body"
    their_headers: list = []
    c_header(b"body", SerializationContext("t", MessageField.VALUE, their_headers),
             CSchemaId("JSON", None, guid))  # fmt: skip
    assert headers == their_headers == [("__value_schema_id", b"\x01" + uuid.UUID(guid).bytes)]
    ours_id, theirs_id = SchemaId("JSON"), CSchemaId("JSON")
    assert dual_schema_id_deserializer(b"body", ctx, ours_id).read() == b"body"
    assert c_dual(b"body", ctx, theirs_id).read() == b"body"
    assert str(ours_id.guid) == str(theirs_id.guid) == guid
    # confluent-kafka's callables work on our SchemaId and the other way round
    assert c_dual(b"\x00\x00\x00\x00\x09rest", None, SchemaId("AVRO")).read() == b"rest"
    assert prefix_schema_id_serializer(b"x", None, CSchemaId("AVRO", 9)) == b"\x00\x00\x00\x00\x09x"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty payload"),
        (b"\x02abc", "Unknown magic byte 2"),
        (b"\x00\x00\x01", "3 bytes, but magic byte 0 must be followed by a 4-byte schema id"),
        (b"\x01" + b"\x00" * 10, "must be followed by a 16-byte schema GUID"),
        (b"\x00\x00\x00\x00\x01", "ends at byte 5 inside the Protobuf message index count"),
        (b"\x00\x00\x00\x00\x01\x04\x02", "ends at byte 7 inside the Protobuf message index"),
        (b"\x00\x00\x00\x00\x01\x03", "Invalid msgidx array length -2"),
        (b"\x00\x00\x00\x00\x01" + b"\xff" * 11, "varint longer than 10 bytes"),
    ],
)
def test_malformed_frames_say_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(SerializationError) as raised:
        read_frame(data, with_indexes=True)
    assert message in str(raised.value)


def test_schema_id_reads_from_a_stream_position() -> None:
    stream = io.BytesIO(b"\x00\x00\x00\x00\x05\x02\x02tail")
    sid = SchemaId("PROTOBUF")
    assert sid.from_bytes(stream).read() == b"tail"
    assert (sid.id, sid.message_indexes) == (5, [1])


def test_serdes_imports_without_the_server_package() -> None:
    code = (
        "import sys\n"
        "import serdes, serdes.avro, serdes.protobuf, serdes.json_schema\n"
        "bad = sorted(m for m in sys.modules if m == 'registry' or m.startswith('registry.'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)

"""What the three decoders share about one record's frame: the failure they raise, and reading
the schema id (GUID frames, magic byte 1, are refused: the Spark functions resolve ids)."""

from __future__ import annotations

from serdes import wire
from serdes.errors import SerializationError

__all__ = ["DecodeFailure", "read_id_frame"]


class DecodeFailure(SerializationError):
    """One record that cannot be decoded: says which schema id and why."""


def read_id_frame(data: bytes, with_indexes: bool = False) -> tuple[wire.Frame, int]:
    """The record's frame and its schema id; a GUID frame is a :class:`DecodeFailure`
    (a malformed frame raises ``SerializationError`` from :func:`serdes.wire.read_frame`)."""
    parsed = wire.read_frame(data, with_indexes=with_indexes)
    if parsed.schema_id is None:
        raise DecodeFailure(
            f"schema GUID {parsed.guid} in the payload: only schema ids (magic byte 0) "
            "are supported in the value"
        )
    return parsed, parsed.schema_id

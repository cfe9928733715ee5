"""What the three decoders share about one record's frame: the failure they raise, reading the
writer's schema id or GUID (magic byte 0 or 1; a GUID the plan knows was already rewritten to its
id on the JVM, see :mod:`spark_serdes._framing`), and the native engines' JVM expression saying
why a frame is not one their plan decodes."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from serdes import wire
from serdes.errors import SerializationError

__all__ = ["DecodeFailure", "frame_problem", "read_writer_frame"]


class DecodeFailure(SerializationError):
    """One record that cannot be decoded: says which schema id and why."""


def read_writer_frame(data: bytes, with_indexes: bool = False) -> tuple[wire.Frame, str]:
    """The record's frame and how failures name its writer (``schema id N`` or ``schema GUID
    G``); a malformed frame raises ``SerializationError`` from :func:`serdes.wire.read_frame`."""
    parsed = wire.read_frame(data, with_indexes=with_indexes)
    if parsed.schema_id is not None:
        return parsed, f"schema id {parsed.schema_id}"
    return parsed, f"schema GUID {parsed.guid}"


def frame_problem(column: Column, subject: str, ids: list[int], kind: str) -> Column:
    """Why a non-null frame is not one the plan decodes (its id is not among ``ids``, the
    subject's ``kind`` schema ids), in the words of the Python engine's frame reader, as a JVM
    expression."""
    size = F.length(column)
    magic = F.conv(F.hex(F.substring(column, 1, 1)), 16, 10)
    known = ", ".join(str(i) for i in sorted(ids))
    return (
        F.when(
            size == 0,
            F.lit("truncated frame: empty payload, expected magic byte 0 or 1 and a schema id"),
        )
        .when(
            (magic == F.lit("1")) & (size >= 17),
            F.concat(
                F.lit("schema GUID "),
                F.lower(F.hex(F.substring(column, 2, 16))),
                F.lit(
                    f" is not one of the {kind} schemas subject {subject!r} had when the query "
                    "was planned (or the registry gave no GUIDs for them): use options "
                    "unknownIds=python to decode it in Python"
                ),
            ),
        )
        .when(
            magic == F.lit("1"),
            F.concat(
                F.lit("truncated frame: "),
                size.cast("string"),
                F.lit(" bytes, but magic byte 1 must be followed by a 16-byte schema GUID"),
            ),
        )
        .when(
            magic != F.lit("0"),
            F.concat(
                F.lit("Unknown magic byte "),
                magic,
                F.lit(" at offset 0: expected 0 (schema id) or 1 (schema GUID)"),
            ),
        )
        .when(
            size < 5,
            F.concat(
                F.lit("truncated frame: "),
                size.cast("string"),
                F.lit(" bytes, but magic byte 0 must be followed by a 4-byte schema id"),
            ),
        )
        .otherwise(
            F.concat(
                F.lit("schema id "),
                F.conv(F.hex(F.substring(column, 2, 4)), 16, 10),
                F.lit(
                    f" is not one of the {kind} schema ids subject {subject!r} had when the query "
                    f"was planned ({known}): restart the query to decode the subject's new "
                    "versions, or use options unknownIds=python to decode other ids in Python"
                ),
            )
        )
    )

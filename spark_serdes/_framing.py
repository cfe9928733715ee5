"""Where a record's writer schema is named: the payload's frame or a Kafka header.

Confluent serializers write magic byte 0 and a 4-byte schema id before the data, or (with
``header.schema.id.serializer``) put magic byte 1 and the schema's 16-byte GUID (and, for
Protobuf, the message indexes) in a ``__key_schema_id`` / ``__value_schema_id`` header and leave
the bare data in the value. The decoders take both, on the JVM, before anything else:

* ``options={"schemaIdSource": "headers"}`` reads the header from the ``headers`` column of
  Spark's Kafka source (``headersColumn`` names another; ``schemaIdHeader`` another header:
  the default is ``__key_schema_id`` for a column named ``key``, else ``__value_schema_id``).
  A record with the header is the header's frame followed by the value; one without it is read
  from the value's own frame, as confluent-kafka's ``dual_schema_id_deserializer`` does.
  The default, ``"payload"``, reads the value alone (the query needs no ``headers`` column).
* A GUID frame of a schema the plan knows (the registry gave the subject's versions' GUIDs) is
  rewritten to its id frame, so the engines' plans see id frames only; any other GUID frame is
  resolved by the Python engine through ``/schemas/guids/{guid}`` (``unknownIds``; with
  ``schemaIdSource: headers`` and a registry that gives no GUIDs its default is ``python``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from serdes import wire

__all__ = [
    "FRAMING_OPTIONS",
    "Framing",
    "framed_column",
    "framing_options",
    "unknown_ids_for",
]

FRAMING_OPTIONS = ("schemaIdSource", "headersColumn", "schemaIdHeader")
_SOURCES = ("payload", "headers")
_REST = 2_147_483_647


@dataclass(frozen=True)
class Framing:
    source: str
    headers_column: str
    header: str


def framing_options(opts: dict[str, Any], col: Column | str) -> Framing:
    """Takes the framing options out of ``opts`` (the rest are the decoder's own)."""
    source = str(opts.pop("schemaIdSource", "payload")).lower()
    if source not in _SOURCES:
        raise ValueError(f"options schemaIdSource must be one of {_SOURCES}, not {source!r}")
    headers_column = str(opts.pop("headersColumn", "headers"))
    is_key = isinstance(col, str) and col == "key"
    default = wire.KEY_SCHEMA_ID_HEADER if is_key else wire.VALUE_SCHEMA_ID_HEADER
    header = str(opts.pop("schemaIdHeader", default))
    return Framing(source, headers_column, header)


def framed_column(column: Column, framing: Framing, guid_ids: dict[str, int]) -> Column:
    """``column`` as the frames the decoders read: the header's frame in front of the value
    (``schemaIdSource: headers``), and GUID frames of ``guid_ids`` rewritten to id frames."""
    if framing.source == "headers":
        name = F.lit(framing.header)
        matching = F.filter(F.col(framing.headers_column), lambda h: h["key"] == name)
        header = F.try_element_at(matching, F.lit(1))["value"]
        column = F.when(header.isNull(), column).otherwise(F.concat(header, column))
    if not guid_ids:
        return column
    prefix = F.substring(column, 1, 17)
    rewritten: Any = None
    for guid, schema_id in guid_ids.items():
        hit = prefix == F.lit(bytes((wire.MAGIC_BYTE_V1,)) + uuid.UUID(guid).bytes)
        as_id = F.concat(F.lit(wire.id_prefix(schema_id)), F.substring(column, 18, _REST))
        rewritten = F.when(hit, as_id) if rewritten is None else rewritten.when(hit, as_id)
    magic_1 = F.substring(column, 1, 1) == F.lit(bytes((wire.MAGIC_BYTE_V1,)))
    return F.when(magic_1, rewritten.otherwise(column)).otherwise(column)


def unknown_ids_for(
    framing: Framing, options: dict[str, Any] | None, unknown_ids: str, guids: int, ids: int
) -> str:
    """``unknownIds`` for a native plan: headers carry GUIDs, so when the registry gave no GUID
    for some of the subject's ``ids`` (``guids`` of them have one) and ``unknownIds`` was not
    given, records naming them go to the Python engine (which asks ``/schemas/guids/{guid}``)
    rather than failing."""
    given = options is not None and "unknownIds" in options
    if framing.source == "headers" and not given and guids < ids:
        return "python"
    return unknown_ids

"""Column functions: Confluent-framed Kafka payloads <-> typed Spark columns.

    from spark_serdes import from_confluent_avro
    df.select(from_confluent_avro("value", "http://registry:8081", subject="orders-value"))

The reader schema (the subject's latest or a given version, or ``reader_schema``) is resolved on
the driver when the function is called and fixes the column's Spark type, as spark-avro's
``from_avro`` would give it. Every record is decoded with its own writer schema (by the id in its
frame) and resolved to the reader schema.

Engines (``options={"engine": "auto" | "native" | "python"}``):

* **native** (``auto`` picks it when Spark's ``spark-avro`` data source is loaded in the
  session, see :func:`spark_serdes.engines.native_avro_available`): for every
  schema id registered under the subject, Spark's own ``from_avro(payload after the 5-byte
  frame, writer schema, {"avroSchema": reader schema})``, chosen by comparing the frame bytes.
  A PERMISSIVE ``from_avro`` probe (a reader keeping only the record's enums: Avro skips the
  rest) finds malformed records first, so failures name the schema id. What happens to records whose
  id the subject did not have when the query was planned (a version registered later, an id
  of another subject) and to malformed frames is ``options={"unknownIds": ...}``:

  - ``"error"`` (the default in FAILFAST): the plan stays on the JVM; such a record is a bad
    record, failing the query (FAILFAST) or null with the reason (PERMISSIVE), naming the id.
    A Spark plan is fixed when the query starts: restarting it picks up new versions.
  - ``"python"`` (the default in PERMISSIVE, so that a new version never turns records into
    nulls): they, and the records the probe finds malformed, go to the Python engine, which
    fetches the writer schema and decodes them, and gives the exact reason for a failure. The
    price: Spark evaluates a Python UDF on every row of the column, even where it answers null
    (about a third of the native engine's throughput in bench/spark_bench.py).
* **python**: a vectorised Arrow UDF (``arrow_udf``) decoding whole batches with fastavro in the
  Python workers; writer schemas the driver did not know are fetched once per worker process.

Modes (``options={"mode": ...}``): ``FAILFAST`` (default) fails the query on the first record
that cannot be decoded, saying its schema id and why; ``PERMISSIVE`` makes it a null struct
(and, as Spark does, every field nullable). ``options={"errorField": "error"}`` (PERMISSIVE)
returns ``struct<value: <decoded>, error: string>`` with the reason in ``error``.

Frames with a schema GUID (magic byte 1) and ids in Kafka headers (``schemaIdSource``,
``headersColumn``, ``schemaIdHeader``): :mod:`spark_serdes._framing`, for all three decoders.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from fastavro import parse_schema
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from spark_serdes import avro as _avro
from spark_serdes._frames import frame_problem
from spark_serdes._framing import (
    FRAMING_OPTIONS,
    framed_column,
    framing_options,
    unknown_ids_for,
)
from spark_serdes._registry import client_for, registry_conf, subject_versions
from spark_serdes.avro_probe import probe_reader
from spark_serdes.engines import native_avro_available
from spark_serdes.types import avro_to_spark, spark_nullable

__all__ = ["from_confluent_avro", "native_avro_available"]

_MODES = ("FAILFAST", "PERMISSIVE")
_ENGINES = ("auto", "native", "python")
_UNKNOWN_IDS = ("error", "python")
_DECODERS: dict[str, Any] = {}


def _options(options: dict[str, str] | None) -> tuple[str, str, str | None, str]:
    opts = dict(options or {})
    mode = str(opts.pop("mode", "FAILFAST")).upper()
    engine = str(opts.pop("engine", "auto")).lower()
    error_field = opts.pop("errorField", None)
    if mode not in _MODES:
        raise ValueError(f"options mode must be one of {_MODES}, not {mode!r}")
    default_unknown = "error" if mode == "FAILFAST" else "python"
    unknown_ids = str(opts.pop("unknownIds", default_unknown)).lower()
    if engine not in _ENGINES:
        raise ValueError(f"options engine must be one of {_ENGINES}, not {engine!r}")
    if unknown_ids not in _UNKNOWN_IDS:
        raise ValueError(f"options unknownIds must be one of {_UNKNOWN_IDS}, not {unknown_ids!r}")
    if error_field is not None and mode != "PERMISSIVE":
        raise ValueError("options errorField needs mode PERMISSIVE (FAILFAST fails instead)")
    if opts:
        known = ", ".join(["mode", "engine", "errorField", "unknownIds", *FRAMING_OPTIONS])
        raise ValueError(f"unknown options {sorted(opts)}; known: {known}")
    return mode, engine, error_field, unknown_ids


def _reader_text(reader_schema: str | dict[str, Any]) -> str:
    doc = json.loads(reader_schema) if isinstance(reader_schema, str) else reader_schema
    if isinstance(doc, str):
        doc = {"type": doc}
    return json.dumps(_avro.inline_schema(parse_schema(doc)))


def _python_decoder(spec_key: str, spec: tuple[Any, ...]) -> _avro.AvroBatchDecoder:
    """The worker process's decoder for one column function (built on first use)."""
    decoder = _DECODERS.get(spec_key)
    if decoder is None:
        from pyspark.sql.pandas.types import to_arrow_type

        conf, reader, writers, spark_type, permissive, with_error = spec
        target = to_arrow_type(T._parse_datatype_json_string(spark_type))
        decoder = _avro.AvroBatchDecoder(conf, reader, writers, target, permissive, with_error)
        _DECODERS[spec_key] = decoder
    return decoder


def _python_column(
    col: Column,
    conf: dict[str, Any] | None,
    reader: str,
    writers: dict[int, str],
    result_type: T.DataType,
    permissive: bool,
    with_error: bool,
) -> Column:
    spec = (conf, reader, writers, result_type.json(), permissive, with_error)
    spec_key = json.dumps(spec, sort_keys=True, default=str)

    def decode(values: pa.Array) -> pa.Array:
        return _python_decoder(spec_key, spec).decode(values)

    udf = F.arrow_udf(decode, result_type)
    return udf(col)


def from_confluent_avro(
    col: Column | str,
    registry: str | dict[str, Any] | None = None,
    *,
    subject: str | None = None,
    version: int | str = "latest",
    reader_schema: str | dict[str, Any] | None = None,
    options: dict[str, str] | None = None,
) -> Column:
    """Decode a column of Confluent-framed Avro (``0x00``, 4-byte schema id, Avro binary).

    ``registry``: the registry URL(s) or a ``serdes.SchemaRegistryClient`` configuration
    (``url``, ``basic.auth.user.info``, ``ssl.ca.location``, ...). ``subject`` (with
    ``version``, default the latest) gives the reader schema and the ids the native engine
    covers; ``reader_schema`` overrides the reader schema. See the module for ``options``.
    """
    opts = dict(options or {})
    framing = framing_options(opts, col)
    mode, engine, error_field, unknown_ids = _options(opts)
    if subject is None and reader_schema is None:
        raise ValueError("from_confluent_avro needs a subject or a reader_schema")
    column = F.col(col) if isinstance(col, str) else col
    conf = registry_conf(registry) if registry is not None else None
    writers: dict[int, str] = {}
    guid_ids: dict[str, int] = {}
    reader: str | None = _reader_text(reader_schema) if reader_schema is not None else None
    if subject is not None:
        if conf is None:
            raise ValueError("a subject needs a registry to read it from")
        client = client_for(conf)
        versions = subject_versions(client, subject)
        if not versions:
            raise ValueError(f"subject {subject!r} has no versions")
        for v in versions:
            if (v.schema.schema_type or "AVRO") == "AVRO":
                writers[v.schema_id] = _avro.schema_json(v.schema, client)
                if v.guid:
                    guid_ids[v.guid] = v.schema_id
        if reader is None:
            if version == "latest" or version == -1:
                chosen = versions[-1]
            else:
                match = [v for v in versions if v.version == int(version)]
                if not match:
                    raise ValueError(f"subject {subject!r} has no version {version}")
                chosen = match[0]
            if (chosen.schema.schema_type or "AVRO") != "AVRO":
                raise ValueError(
                    f"subject {subject!r} version {chosen.version} is "
                    f"{chosen.schema.schema_type}, not Avro"
                )
            reader = writers[chosen.schema_id]
    assert reader is not None
    column = framed_column(column, framing, guid_ids)
    unknown_ids = unknown_ids_for(framing, options, unknown_ids, len(guid_ids), len(writers))
    permissive = mode == "PERMISSIVE"
    strict_type = avro_to_spark(parse_schema(json.loads(reader)))
    value_type = spark_nullable(strict_type) if permissive else strict_type
    result_type: T.DataType = value_type
    if error_field is not None:
        result_type = T.StructType(
            [T.StructField("value", value_type, True), T.StructField(error_field, T.StringType())]
        )
    native = native_avro_available()
    use_native = engine == "native" or (engine == "auto" and native)
    if use_native and not native:
        raise RuntimeError(
            "engine native needs Spark's spark-avro data source loaded in the session (on the "
            "Spark Connect server): spark.jars.packages=org.apache.spark:spark-avro_2.13:<spark "
            "version>; engine auto uses the Python engine without it"
        )
    if not use_native or not writers:
        return _python_column(
            column, conf, reader, writers, result_type, permissive, error_field is not None
        )
    assert subject is not None  # the writers come from it
    if unknown_ids == "error":
        return _jvm_column(column, subject, reader, writers, strict_type, mode, error_field)
    return _native_column(
        column, conf, reader, writers, strict_type, result_type, mode, error_field
    )


def _frame(schema_id: int) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big")


def _branches(
    column: Column, reader: str, writers: dict[int, str], mode: str
) -> list[tuple[int, Column, Column, Column]]:
    """Per writer id of the plan: the id, whether the record's frame names it, Spark's
    ``from_avro`` of the payload (resolved to the reader, in ``mode``), and whether the payload
    does not decode (:func:`_undecodable`)."""
    from pyspark.sql.avro.functions import from_avro

    prefix = F.substring(column, 1, 5)
    payload = F.substring(column, 6, 2_147_483_647)
    reader_doc = json.loads(reader)
    out = []
    for schema_id, writer in writers.items():
        opts = {"mode": mode}
        if json.loads(writer) != reader_doc:
            opts["avroSchema"] = reader
        hit = prefix == F.lit(_frame(schema_id))
        out.append(
            (schema_id, hit, from_avro(payload, writer, opts), _undecodable(payload, writer, opts))
        )
    return out


def _undecodable(payload: Column, writer: str, opts: dict[str, str]) -> Column:
    """True where Spark's ``from_avro`` cannot decode the payload with the writer schema: the
    probe reader (:mod:`spark_serdes.avro_probe`) in PERMISSIVE mode, or for a writer that is
    not a record the full decode in PERMISSIVE mode (null is failure)."""
    from pyspark.sql.avro.functions import from_avro

    probe = probe_reader(writer)
    if probe is None:
        return from_avro(payload, writer, {**opts, "mode": "PERMISSIVE"}).isNull()
    text, flag = probe
    return from_avro(payload, writer, {"mode": "PERMISSIVE", "avroSchema": text})[flag].isNull()


def _sentinel(strict_type: T.DataType) -> str | None:
    """A field never null in a decoded record (non-nullable in the reader schema), if any.

    Spark's ``from_avro`` in PERMISSIVE mode answers a malformed record with a struct whose
    fields are all null, so that field is null exactly then.
    """
    if isinstance(strict_type, T.StructType):
        for field in strict_type.fields:
            if not field.nullable:
                return field.name
    return None


def _jvm_column(
    column: Column,
    subject: str,
    reader: str,
    writers: dict[int, str],
    strict_type: T.DataType,
    mode: str,
    error_field: str | None,
) -> Column:
    """The native engine with no Python in the plan (``unknownIds: "error"``): a CASE over the
    frame bytes, Spark's ``from_avro`` for each known id, and every other record a bad record.

    A PERMISSIVE ``from_avro`` probe (see :func:`_undecodable`) says which records do not
    decode; the query fails on the first (FAILFAST, through ``raise_error``) or answers null
    with the reason (PERMISSIVE), naming the schema id. In FAILFAST the value is Spark's FAILFAST
    ``from_avro``, with its strict type. A record the probe passes but the full decode does not
    (resolving to the reader fails, e.g. a symbol the reader's enum lacks) fails with Spark's
    own message (FAILFAST) or is null with a general reason (PERMISSIVE, when the reader has a
    non-nullable field to tell it by).
    """
    failfast = mode == "FAILFAST"
    sentinel = None if failfast else _sentinel(strict_type)
    problem: Column | None = None  # PERMISSIVE: why the record is not decoded; null when it is
    decoded: Column | None = None  # the value (FAILFAST: or the failure)
    for schema_id, hit, value, bad in _branches(column, reader, writers, mode):
        if sentinel is not None:
            bad = bad | value[sentinel].isNull()
        reason = F.lit(
            f"schema id {schema_id}: payload does not decode as Avro: the bytes are not a "
            "record of this writer schema (Spark's from_avro cannot read them)"
        )
        if failfast:  # one CASE: the frame bytes are compared once per record
            value = F.when(bad, F.raise_error(reason)).otherwise(value)
        else:
            why = F.when(bad, reason)
            problem = F.when(hit, why) if problem is None else problem.when(hit, why)
        decoded = F.when(hit, value) if decoded is None else decoded.when(hit, value)
    assert decoded is not None
    other = frame_problem(column, subject, list(writers), "Avro")
    if failfast:
        return decoded.when(column.isNotNull(), F.raise_error(other))
    assert problem is not None
    problem = F.when(column.isNotNull(), problem.otherwise(other))
    value = F.when(problem.isNull(), decoded)
    if error_field is None:
        return value
    return F.struct(value.alias("value"), problem.alias(error_field))


def _native_column(
    column: Column,
    conf: dict[str, Any] | None,
    reader: str,
    writers: dict[int, str],
    strict_type: T.DataType,
    result_type: T.DataType,
    mode: str,
    error_field: str | None,
) -> Column:
    """CASE over the frame bytes: Spark's from_avro for each known id, else the Python engine.

    Spark's FAILFAST error does not say the schema id, so the rows are first checked with
    ``from_avro`` in PERMISSIVE mode: a result only a malformed record gives sends the record to
    the Python engine, which decodes it again and fails the task naming the id and the reason
    (FAILFAST) or answers null and the reason (PERMISSIVE). Those rows never reach the value
    below (the task fails first), so in FAILFAST the value is Spark's FAILFAST ``from_avro``,
    with its strict type (non-nullable fields), exactly as ``from_avro`` gives it.
    """
    checked: Column | None = None  # true where Spark could not decode the record
    decoded: Column | None = None  # the value, in the query's mode
    known: Column | None = None
    for _, hit, value, check in _branches(column, reader, writers, mode):
        checked = F.when(hit, check) if checked is None else checked.when(hit, check)
        decoded = F.when(hit, value) if decoded is None else decoded.when(hit, value)
        known = hit if known is None else known | hit
    assert checked is not None and decoded is not None and known is not None
    known = F.coalesce(known, F.lit(False))
    native = known & ~(column.isNotNull() & checked)
    # Ids the subject did not have when the query was planned, malformed frames and records
    # Spark could not decode: the Python engine (it sees only those rows, the others as nulls).
    fallback = _python_column(
        F.when(~native, column),
        conf,
        reader,
        writers,
        result_type,
        mode == "PERMISSIVE",
        error_field is not None,
    )
    if mode == "FAILFAST":
        # a known id reaching the value decoded: a failure has already failed the task
        return F.when(known, decoded).otherwise(fallback)
    # PERMISSIVE: with a never-null field, the value's own null tells a failure (no second
    # probe of the payload here); a record Spark cannot decode that passed the probe (it does
    # not resolve to the reader, e.g. a symbol the reader's enum lacks) gets a reason here.
    sentinel = _sentinel(strict_type)
    ok = native if sentinel is None else known & decoded[sentinel].isNotNull()
    if error_field is None:
        return F.when(ok, decoded).otherwise(fallback)
    unexplained = (
        known & column.isNotNull() & fallback["value"].isNull() & fallback[error_field].isNull()
    )
    schema_id = F.conv(F.hex(F.substring(column, 2, 4)), 16, 10)
    reason = F.concat(
        F.lit("schema id "),
        schema_id,
        F.lit(": payload does not decode as Avro with its writer schema (Spark from_avro)"),
    )
    value = F.when(ok, decoded).otherwise(fallback["value"])
    error = (
        F.when(ok, F.lit(None).cast("string"))
        .when(unexplained, reason)
        .otherwise(fallback[error_field])
    )
    return F.struct(value.alias("value"), error.alias(error_field))

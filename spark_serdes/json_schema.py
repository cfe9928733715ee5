"""``from_confluent_json``: Confluent-framed JSON (``0x00``, 4-byte id, UTF-8 JSON) as Spark values.

    from spark_serdes import from_confluent_json
    df.select(from_confluent_json("value", "http://registry:8081", subject="orders-value"))

The reader schema (the subject's latest or a given version, or ``schema``) is resolved on the
driver when the function is called; :func:`spark_serdes.json_types.json_schema_to_spark` maps it
to a Spark type, made nullable as Spark's ``from_json`` makes its schema nullable. Records
written with any version (any schema id) are read into that one shape: fields are matched by
name, other fields ignored, missing ones null.

Options (``options={...}``, string values as Spark's):

* ``validate`` ``"false"`` (default) or ``"true"``: check every record against its writer schema
  (by the id in its frame, with its references) as Confluent's ``JSONDeserializer`` does by
  default. It is off by default because the producer's serializer validated the record already
  (Confluent's ``JSONSerializer`` does by default), it costs a JSON Schema evaluation per record,
  and it needs the Python engine; the reader type is enforced either way (a value that does
  not fit it is a malformed record).
* ``engine`` ``auto`` (default), ``native`` or ``python``:

  - **native** (``auto`` without validation): Spark's built-in ``from_json`` (no jar) on the
    payload after the 5-byte frame, for rows whose frame names one of the subject's JSON
    schema ids. Every other row (ids the subject did not have when the function was called,
    malformed frames) follows ``unknownIds``, as in :mod:`spark_serdes.functions`: ``"error"``
    (FAILFAST's default: the plan stays on the JVM and the row is a bad record naming its id)
    or ``"python"`` (PERMISSIVE's default: the Python engine decodes it, at the price of a
    Python UDF Spark evaluates on every row). A record of a known id that ``from_json``
    cannot read into the type fails (or is null) with its schema id and a general reason;
    ``engine: "python"`` gives the exact one (the JSON path of the value, the parser's
    message), at the cost of a second parse per record if it were done here. With ``schema``
    and no ``subject`` no id is known and every row goes to the Python engine.
  - **python** (``auto`` with validation): a vectorised Arrow UDF (``arrow_udf``) parsing with
    orjson in the Python workers and converting with ``from_json``'s rules (see
    :mod:`spark_serdes.json_decoder`); writer schemas of ids the driver did not know are
    fetched once per worker process.

* ``mode`` ``FAILFAST`` (default: the query fails naming the schema id and the reason) or
  ``PERMISSIVE`` (null value); ``errorField`` (PERMISSIVE) returns ``struct<value, <errorField>>``
  with the reason.

Dates and timestamps are read in the session time zone of the moment the function is called.
The native engine, like ``from_json``, ignores text after a complete JSON document when it
closes the brackets the engine wraps around the payload (``{"a":1}]} x``); the Python engine
rejects such a payload.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes.client import SchemaRegistryClient
from serdes.schema import Schema
from spark_serdes._frames import frame_problem
from spark_serdes._framing import (
    FRAMING_OPTIONS,
    framed_column,
    framing_options,
    unknown_ids_for,
)
from spark_serdes._registry import client_for, registry_conf, subject_versions
from spark_serdes.functions import _options
from spark_serdes.json_decoder import JsonBatchDecoder
from spark_serdes.json_types import json_schema_to_spark
from spark_serdes.types import spark_nullable

__all__ = ["from_confluent_json"]

_KNOWN_OPTIONS = ("mode", "engine", "errorField", "validate", "unknownIds", *FRAMING_OPTIONS)
_CORRUPT = "_corrupt_record"
_FROM_JSON_OPTIONS = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": _CORRUPT,
    "allowSingleQuotes": "false",
    "allowNonNumericNumbers": "false",
}
_DECODERS: dict[str, JsonBatchDecoder] = {}


def from_confluent_json(
    col: Column | str,
    registry: str | dict[str, Any],
    *,
    subject: str | None = None,
    version: int | str = "latest",
    schema: str | dict[str, Any] | bool | None = None,
    options: dict[str, str] | None = None,
) -> Column:
    """Decode a column of Confluent-framed JSON into the Spark type of its JSON Schema.

    ``registry``: the registry URL(s) or a ``serdes.SchemaRegistryClient`` configuration.
    ``subject`` (with ``version``, default the latest) gives the reader schema and the ids the
    native engine covers; ``schema`` (a JSON Schema text or parsed document) overrides the
    reader schema. See the module for ``options``.
    """
    opts = dict(options or {})
    unknown = sorted(set(opts) - set(_KNOWN_OPTIONS))
    if unknown:
        raise ValueError(f"unknown options {unknown}; known: {', '.join(_KNOWN_OPTIONS)}")
    validate = _flag(opts.pop("validate", "false"))
    framing = framing_options(opts, col)
    mode, engine, error_field, unknown_ids = _options(opts)
    if validate and engine == "native":
        raise ValueError(
            "options validate true needs the python engine (Spark's from_json does not validate)"
        )
    if subject is None and schema is None:
        raise ValueError("from_confluent_json needs a subject or a schema")
    if not (version == "latest" or (isinstance(version, int) and not isinstance(version, bool))):
        raise ValueError(f"version must be an integer or 'latest', not {version!r}")
    session = SparkSession.getActiveSession()
    if session is None:
        raise RuntimeError("from_confluent_json needs an active SparkSession")
    time_zone = str(session.conf.get("spark.sql.session.timeZone"))
    column = F.col(col) if isinstance(col, str) else col
    conf = registry_conf(registry)
    client = client_for(conf)
    writers: dict[int, dict[str, Any]] = {}
    guid_ids: dict[str, int] = {}
    reader: Any = _parsed(schema) if schema is not None else None
    references: dict[str, Any] = {}
    if subject is not None:
        versions = subject_versions(client, subject)
        if not versions:
            raise ValueError(f"subject {subject!r} has no versions")
        for v in versions:
            if v.schema.schema_type == "JSON":
                writers[v.schema_id] = v.schema.to_dict()
                if v.guid:
                    guid_ids[v.guid] = v.schema_id
        if reader is None:
            wanted = versions[-1].version if version in ("latest", -1) else version
            match = [v for v in versions if v.version == wanted]
            if not match:
                raise ValueError(f"subject {subject!r} has no version {version}")
            chosen = match[0]
            if chosen.schema.schema_type != "JSON":
                raise ValueError(
                    f"subject {subject!r} version {chosen.version} is "
                    f"{chosen.schema.schema_type or 'AVRO'}, not JSON"
                )
            reader = _parsed(chosen.schema.schema_str or "")
            references = _reference_documents(client, chosen.schema)
    column = framed_column(column, framing, guid_ids)
    unknown_ids = unknown_ids_for(framing, options, unknown_ids, len(guid_ids), len(writers))
    value_type = spark_nullable(json_schema_to_spark(reader, references))
    result_type: T.DataType = value_type
    if error_field is not None:
        result_type = T.StructType(
            [T.StructField("value", value_type, True), T.StructField(error_field, T.StringType())]
        )
    spec = (
        conf,
        {str(k): v for k, v in writers.items()},
        value_type.json(),
        result_type.json(),
        mode == "PERMISSIVE",
        error_field is not None,
        validate,
        time_zone,
    )
    python = _python_udf(spec, result_type)
    if validate or engine == "python" or not writers:
        return python(column)
    if unknown_ids == "error":
        python = None  # the plan stays on the JVM
    assert subject is not None  # the writers come from it
    return _native_column(column, subject, sorted(writers), value_type, python, mode, error_field)


def _flag(value: Any) -> bool:
    text = str(value).lower()
    if text not in ("true", "false"):
        raise ValueError(f"options validate must be 'true' or 'false', not {value!r}")
    return text == "true"


def _parsed(schema: str | dict[str, Any] | bool) -> Any:
    if isinstance(schema, str):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the JSON schema is not JSON: {exc}") from None
    if isinstance(schema, dict | bool):
        return schema
    raise TypeError(f"schema must be a JSON Schema text or a parsed document, not {schema!r}")


def _reference_documents(client: SchemaRegistryClient, schema: Schema) -> dict[str, Any]:
    """Every schema ``schema`` references (transitively), parsed, by reference name."""
    out: dict[str, Any] = {}

    def add(refs: Any) -> None:
        for ref in refs or ():
            if ref.name in out:
                continue
            registered = client.get_version(ref.subject, ref.version, True)
            out[ref.name] = json.loads(registered.schema.schema_str or "")
            add(registered.schema.references)

    add(schema.references)
    return out


def _decoder(spec_key: str, spec: tuple[Any, ...]) -> JsonBatchDecoder:
    """The worker process's decoder for one column function (built on first use)."""
    decoder = _DECODERS.get(spec_key)
    if decoder is None:
        from pyspark.sql.pandas.types import to_arrow_type

        conf, writers, value_type, result_type, permissive, with_error, validate, zone = spec
        target = to_arrow_type(T._parse_datatype_json_string(result_type))
        decoder = JsonBatchDecoder(
            conf,
            {int(k): v for k, v in writers.items()},
            T._parse_datatype_json_string(value_type),
            target,
            permissive,
            with_error,
            validate,
            zone,
        )
        _DECODERS[spec_key] = decoder
    return decoder


def _python_udf(spec: tuple[Any, ...], result_type: T.DataType) -> Any:
    spec_key = json.dumps(spec, sort_keys=True, default=str)

    def decode(values: pa.Array) -> pa.Array:
        return _decoder(spec_key, spec).decode(values)

    return F.arrow_udf(decode, result_type)


def _native_column(
    column: Column,
    subject: str,
    schema_ids: list[int],
    value_type: T.DataType,
    python: Any,
    mode: str,
    error_field: str | None,
) -> Column:
    """Spark's from_json for the subject's ids; every other row goes to the Python engine
    (``python``), or with ``python`` None (``unknownIds: "error"``) is a bad record.

    The payload is read as ``{"v":[<payload>]}`` with a corrupt-record column: a record that
    does not fit the type sets that column (Spark would otherwise keep a partial result), and
    a payload that is several comma-separated values gives an array of more than one. Such a
    record fails (FAILFAST) or is null (PERMISSIVE) with a reason naming its schema id.
    """
    frames = [b"\x00" + schema_id.to_bytes(4, "big") for schema_id in schema_ids]
    known = F.substring(column, 1, 5).isin(*frames)
    text = F.concat(
        F.lit('{"v":['), F.substring(column, 6, 2_147_483_647).cast("string"), F.lit("]}")
    )
    wrapped = T.StructType(
        [T.StructField("v", T.ArrayType(value_type)), T.StructField(_CORRUPT, T.StringType())]
    )
    parsed = F.from_json(text, wrapped, _FROM_JSON_OPTIONS)
    # array_min over an array rather than AND: every child of an array is always evaluated, so
    # Spark's subexpression elimination sees from_json twice and parses each payload once (the
    # branches below reuse it); the Python engine's input depends on the frame bytes only.
    ok = F.coalesce(
        F.array_min(
            F.array(
                F.coalesce(F.size(parsed["v"]) == 1, F.lit(False)),
                parsed[_CORRUPT].isNull(),
                known,
            )
        ),
        F.lit(False),
    )
    decoded = parsed["v"].getItem(0)
    reason = F.concat(
        F.lit("schema id "),
        F.conv(F.hex(F.substring(column, 2, 4)), 16, 10),
        F.lit(
            ": payload is not JSON of the reader type "
            f"{value_type.simpleString()[:200]} as Spark's from_json reads it "
            "(engine python says where)"
        ),
    )
    if python is None:  # the other rows: null input stays null, the rest are bad records
        other = frame_problem(column, subject, schema_ids, "JSON")
        if mode == "FAILFAST":
            bad = F.when(known, F.raise_error(reason))
            return F.when(ok, decoded).otherwise(bad.when(column.isNotNull(), F.raise_error(other)))
        problem = F.when(ok, F.lit(None).cast("string")).when(known, reason)
        problem = problem.when(column.isNotNull(), other)
        if error_field is None:
            return F.when(ok, decoded)
        return F.struct(F.when(ok, decoded).alias("value"), problem.alias(error_field))
    fallback = python(F.when(~known, column))
    if error_field is None:
        bad = F.raise_error(reason) if mode == "FAILFAST" else F.lit(None)
        return F.when(ok, decoded).when(known, bad).otherwise(fallback)
    value = F.when(ok, decoded).when(known, F.lit(None)).otherwise(fallback["value"])
    error = (
        F.when(ok, F.lit(None).cast("string")).when(known, reason).otherwise(fallback[error_field])
    )
    return F.struct(value.alias("value"), error.alias(error_field))

"""Column functions: typed Spark columns -> Confluent-framed Kafka payloads.

    from spark_serdes import to_confluent_avro
    df.select(to_confluent_avro(F.struct("*"), "http://registry:8081", subject="orders-value")
              .alias("value")).write.format("kafka")...

Each function turns a column (a struct, or a primitive for a primitive schema) into a binary
column of Confluent frames: magic byte 0, the 4-byte schema id, (Protobuf) the message index
path, the encoded record. A null value stays null (a Kafka tombstone).

The writer schema is resolved once, on the driver, when the function is called:

* ``schema`` given: registered under ``subject`` (``options={"auto.register.schemas":
  "false"}`` looks it up instead, and fails if the subject does not have it), as Confluent's
  serializers do;
* no ``schema``: the subject's ``version`` (``"latest"`` by default, or a number).

``dataframe=df`` (optional: the DataFrame the column is selected from) gives the column's
Spark type at call time; a PySpark column alone does not carry it. Fields are matched by name.
With it, what the Spark type shows cannot fit the schema (a field missing without default, an
extra field, a type the schema's type cannot hold) raises ``ValueError`` when the function is
called, earliest and clearest. Without it, the Python engines check and fit the Arrow type of
the batches they receive (once per worker process and input type) and the same messages fail
the query; Avro's ``auto`` engine is then the Python engine, and ``native`` is Spark's own
``to_avro(column, writer schema)`` (spark-avro's by-name matching and errors, no promotions,
defaults or union wrapping); native JSON (``to_json``) needs no type. What only the data shows
(a null in a non-null field, an unknown enum symbol, a record failing JSON Schema validation)
fails the query naming the subject, the schema id and the reason.

Engines (``options={"engine": "auto" | "native" | "python"}``):

* Avro: **native** when Spark's ``spark-avro`` data source is loaded in the session
  (:func:`spark_serdes.engines.native_avro_available`): the frame bytes
  concatenated to Spark's ``to_avro(column, writer schema)``, all in the JVM; **python**
  otherwise: an Arrow UDF writing whole batches with fastavro. Both give the bytes
  ``serdes.avro.AvroSerializer`` gives (see the README for the two documented exceptions).
* Protobuf: python only (spark-protobuf is not used): an Arrow UDF building messages by field
  name (enums from names, ``google.protobuf.Timestamp`` from timestamps, maps, repeated,
  nested messages), serialized deterministically (map entries by key).
* JSON: **native** is Spark's ``to_json`` (nulls kept as ``null``); **python** an Arrow UDF
  writing with orjson as ``serdes.json_schema.JSONSerializer`` does. ``validate`` (default
  ``true``, as Confluent's serializer) checks every record against the schema and needs the
  Python engine.

Framing (``options={"schema.id.serializer": ...}``, as confluent-kafka's): ``prefix`` (default)
writes the id frame; ``header`` answers ``struct<value, headers>`` with the bare data and a
``__value_schema_id`` header (``is.key``: ``__key_schema_id``), see :func:`framed_output`.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes import wire
from serdes._serde import check_no_rules
from serdes.client import SchemaRegistryClient
from serdes.errors import SchemaRegistryError
from serdes.schema import Schema
from spark_serdes import avro as _avro
from spark_serdes._registry import client_for, registry_conf
from spark_serdes.avro_encoder import AvroBatchEncoder
from spark_serdes.avro_fit import fit_column, is_raw_bytes, qualified_schema
from spark_serdes.encoder_udf import encoder_udf

__all__ = ["to_confluent_avro", "to_confluent_json", "to_confluent_protobuf"]

_ENGINES = ("auto", "native", "python")
_ID_SERIALIZERS = ("prefix", "header")
_ENCODERS: dict[str, Any] = {}


# -- shared: options, the writer schema, the frame ------------------------------------------------


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(f"option {name} must be true or false, not {value!r}")


def parse_options(
    options: dict[str, Any] | None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Known options with their defaults; unknown keys and bad values raise ``ValueError``."""
    known: dict[str, Any] = {
        "engine": "auto",
        "auto.register.schemas": True,
        "normalize.schemas": False,
        "schema.id.serializer": "prefix",
        "is.key": False,
        **(extra or {}),
    }
    given = dict(options or {})
    unknown = sorted(k for k in given if k not in known)
    if unknown:
        raise ValueError(f"unknown options {unknown}; known: {sorted(known)}")
    out = {**known, **given}
    out["engine"] = str(out["engine"]).lower()
    if out["engine"] not in _ENGINES:
        raise ValueError(f"options engine must be one of {_ENGINES}, not {given['engine']!r}")
    for key, default in known.items():
        if isinstance(default, bool):
            out[key] = _flag(out[key], key)
    out["schema.id.serializer"] = str(out["schema.id.serializer"]).lower()
    if out["schema.id.serializer"] not in _ID_SERIALIZERS:
        raise ValueError(
            f"options schema.id.serializer must be one of {_ID_SERIALIZERS}, not "
            f"{given['schema.id.serializer']!r}"
        )
    return out


def framed_output(
    encoded: Column, writer: Writer, indexes: bytes, opts: dict[str, Any], function: str
) -> Column:
    """The encoder's answer in the framing asked for. ``prefix`` (the default, confluent-kafka's
    ``prefix_schema_id_serializer``): the framed bytes. ``header`` (its
    ``header_schema_id_serializer``): ``struct<value: binary, headers: array<struct<key:
    string, value: binary>>>``, the bare data and one ``__value_schema_id`` header (with
    ``is.key``: ``__key_schema_id``) holding magic byte 1, the schema GUID and (Protobuf) the
    message indexes, as Spark's Kafka sink takes them (``select("out.*")``)."""
    if opts["schema.id.serializer"] == "prefix":
        return encoded
    if not writer.guid:
        raise ValueError(
            f"{function} ({writer.label}): schema.id.serializer header writes the schema's "
            "GUID, and the registry did not return one for it"
        )
    name = wire.KEY_SCHEMA_ID_HEADER if opts["is.key"] else wire.VALUE_SCHEMA_ID_HEADER
    header = bytes((wire.MAGIC_BYTE_V1,)) + uuid.UUID(writer.guid).bytes + indexes
    value = F.substring(encoded, 6 + len(indexes), 2_147_483_647)
    one = F.struct(F.lit(name).alias("key"), F.lit(header).alias("value"))
    headers = F.when(encoded.isNotNull(), F.array(one))
    return F.struct(value.alias("value"), headers.alias("headers"))


def _as_schema(schema: str | dict[str, Any] | Schema, schema_type: str) -> Schema:
    if isinstance(schema, Schema):
        if (schema.schema_type or "AVRO") != schema_type:
            raise ValueError(f"schema is {schema.schema_type}, expected {schema_type}")
        return schema
    if isinstance(schema, dict | list):
        return Schema(json.dumps(schema), schema_type)
    if isinstance(schema, str):
        text = schema.strip()
        if schema_type == "AVRO" and text and text[0] not in "{[":
            text = '{"type":' + text + "}"  # a bare primitive, as confluent-kafka registers it
        return Schema(text, schema_type)
    raise TypeError(f"schema must be a string, a dict or a serdes.Schema, not {type(schema)}")


class Writer:
    """The writer schema resolved on the driver: subject, id, schema (with references)."""

    def __init__(
        self,
        conf: dict[str, Any],
        subject: str,
        schema_id: int,
        schema: Schema,
        client: Any,
        guid: str | None = None,
    ) -> None:
        self.conf = conf
        self.subject = subject
        self.schema_id = schema_id
        self.guid = guid  # when the registry gives it (Confluent 8 does): header framing
        self.schema = schema
        self.client = client
        self.prefix = wire.id_prefix(schema_id)
        self.label = f"subject {subject!r}, schema id {schema_id}"


def resolve_writer(
    function: str,
    registry: str | dict[str, Any],
    subject: str,
    schema: str | dict[str, Any] | Schema | None,
    version: int | str,
    schema_type: str,
    opts: dict[str, Any],
) -> Writer:
    """Register or look up ``schema`` under ``subject``, or take the subject's ``version``."""
    if not isinstance(subject, str) or not subject:
        raise ValueError(f"{function} needs a subject")
    conf = registry_conf(registry)
    client: SchemaRegistryClient = client_for(conf)
    if schema is not None:
        wanted = _as_schema(schema, schema_type)
        try:
            if opts["auto.register.schemas"]:
                found = client.register_schema_full_response(
                    subject, wanted, normalize_schemas=opts["normalize.schemas"]
                )
            else:
                found = client.lookup_schema(
                    subject, wanted, normalize_schemas=opts["normalize.schemas"]
                )
        except SchemaRegistryError as exc:
            if exc.http_status_code == 404 and not opts["auto.register.schemas"]:
                raise ValueError(
                    f"{function}: the schema is not registered under subject {subject!r} "
                    f"(auto.register.schemas is false, so it is looked up, not registered): "
                    f"{exc}"
                ) from exc
            raise ValueError(
                f"{function}: registering the schema under subject {subject!r} failed: {exc}"
            ) from exc
        return Writer(conf, subject, int(found.schema_id), wanted, client, found.guid)
    try:
        if version in ("latest", -1, "-1"):
            found = client.get_latest_version(subject)
        else:
            found = client.get_version(subject, int(version))
    except SchemaRegistryError as exc:
        if exc.http_status_code == 404:
            raise ValueError(
                f"{function}: subject {subject!r} has no version {version} and no schema was "
                f"given: {exc}"
            ) from exc
        raise
    kind = found.schema.schema_type or "AVRO"
    if kind != schema_type:
        raise ValueError(
            f"{function}: subject {subject!r} version {found.version} is {kind}, not {schema_type}"
        )
    check_no_rules(found.schema, f"subject {subject!r} version {found.version}")
    return Writer(conf, subject, int(found.schema_id), found.schema, client, found.guid)


def _column(col: Column | str) -> Column:
    return F.col(col) if isinstance(col, str) else col


def column_type(column: Column, dataframe: DataFrame | None, function: str) -> T.DataType | None:
    """The Spark type of ``column``: from ``dataframe``, or of a column reading no input column;
    None when it is only known once the query runs (then the engines check it there)."""
    if dataframe is not None:
        return dataframe.select(column.alias("c")).schema["c"].dataType
    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError(f"{function} needs an active SparkSession")
    probe = f"__no_input_{uuid.uuid4().hex}"  # a star (struct("*")) would expand to it
    try:
        dtype = spark.range(0).toDF(probe).select(column.alias("c")).schema["c"].dataType
    except AnalysisException:
        return None
    return None if probe in dtype.json() else dtype


def encoder_for(key: str, build: Any) -> Any:
    """The worker process's encoder for one column function (built on first use)."""
    encoder = _ENCODERS.get(key)
    if encoder is None:
        encoder = build()
        _ENCODERS[key] = encoder
    return encoder


def guarded(encoded: Column, problem: Column | None, label: str, function: str) -> Column:
    """Fail the query with the row's problem (subject, id, reason) before it is written."""
    if problem is None:
        return encoded
    message = F.concat(F.lit(f"{function} ({label}): "), problem)
    return F.when(problem.isNotNull(), F.raise_error(message)).otherwise(encoded)


# -- Avro -----------------------------------------------------------------------------------------


def to_confluent_avro(
    col: Column | str,
    registry: str | dict[str, Any],
    *,
    subject: str,
    schema: str | dict[str, Any] | Schema | None = None,
    version: int | str = "latest",
    options: dict[str, Any] | None = None,
    dataframe: DataFrame | None = None,
) -> Column:
    """Encode a column as Confluent-framed Avro (``0x00``, 4-byte schema id, Avro binary).

    ``registry``: the registry URL or a ``serdes.SchemaRegistryClient`` configuration.
    ``dataframe``: optional, the DataFrame ``col`` is selected from: its Spark type is checked
    against the schema when the function is called; without it the check runs in the query
    (``auto`` then uses the Python engine; ``native`` is Spark's plain ``to_avro``).
    ``options``: ``engine`` (``auto``/``native``/``python``), ``auto.register.schemas``
    (default true), ``normalize.schemas`` (default false).
    """
    from spark_serdes.engines import native_avro_available

    opts = parse_options(options)
    writer = resolve_writer("to_confluent_avro", registry, subject, schema, version, "AVRO", opts)
    text = _avro.schema_json(writer.schema, writer.client)
    qualified = qualified_schema(text)
    column = _column(col)
    dtype = column_type(column, dataframe, "to_confluent_avro")
    engine = opts["engine"]
    native = native_avro_available()
    if engine == "native" and not native:
        raise RuntimeError(
            "engine native needs Spark's spark-avro data source loaded in the session (on the "
            "Spark Connect server): spark.jars.packages=org.apache.spark:spark-avro_2.13:<spark "
            "version>; engine auto uses the Python engine without it"
        )
    use_native = engine == "native" or (engine == "auto" and native and dtype is not None)
    if dtype is None:
        # No Spark type before the query runs: the Python engine fits on the workers; native
        # is Spark's own to_avro(column, writer schema), with spark-avro's matching and errors.
        if use_native:
            encoded = F.concat(F.lit(writer.prefix), _native_avro(column, qualified))
        else:
            encoded = _python_avro(column, writer, text, fitted=False)
        return framed_output(encoded, writer, b"", opts, "to_confluent_avro")
    try:
        fitted, problem = fit_column(column, dtype, qualified)
    except ValueError as exc:
        raise ValueError(f"to_confluent_avro ({writer.label}): {exc}") from None
    if use_native:
        encoded = F.concat(F.lit(writer.prefix), _native_avro(fitted, qualified))
    else:
        encoded = _python_avro(
            fitted if problem is None else F.when(problem.isNull(), fitted), writer, text, True
        )
    encoded = guarded(encoded, problem, writer.label, "to_confluent_avro")
    return framed_output(encoded, writer, b"", opts, "to_confluent_avro")


def _native_avro(column: Column, qualified: Any) -> Column:
    """Spark's ``to_avro`` with the writer schema (plain ``bytes``: the value as it is)."""
    if is_raw_bytes(qualified):
        return column
    from pyspark.sql.avro.functions import to_avro

    return to_avro(column, json.dumps(qualified))


def _python_avro(column: Column, writer: Writer, text: str, fitted: bool) -> Column:
    """The Python engine's Arrow UDF; ``fitted=False`` fits each input type on the workers."""
    schema_id, label = writer.schema_id, writer.label
    key = json.dumps(["avro", text, schema_id, label, fitted])

    def encode(values: pa.Array) -> pa.Array:
        build = lambda: AvroBatchEncoder(text, schema_id, label, fitted)  # noqa: E731
        return encoder_for(key, build).encode(values)

    return encoder_udf(encode, column)


def to_confluent_protobuf(
    col: Column | str,
    registry: str | dict[str, Any],
    *,
    subject: str,
    schema: str | Schema | None = None,
    message: str | None = None,
    version: int | str = "latest",
    options: dict[str, Any] | None = None,
    dataframe: DataFrame | None = None,
) -> Column:
    """Encode a struct column as Confluent-framed Protobuf (frame, message indexes, message).

    ``schema``: ``.proto`` text (or a ``serdes.Schema`` with references) registered under
    ``subject``; without it the subject's ``version``. ``message``: the full or simple name of
    the message to write (default the file's first message). ``options``: ``engine``
    (``auto``/``python``), ``auto.register.schemas``, ``normalize.schemas``.
    """
    from spark_serdes.protobuf_encoder import protobuf_column

    opts = parse_options(options)
    if opts["engine"] == "native":
        raise ValueError(
            "to_confluent_protobuf has no native engine (Spark's spark-protobuf is not used); "
            "use engine auto or python"
        )
    writer = resolve_writer(
        "to_confluent_protobuf", registry, subject, schema, version, "PROTOBUF", opts
    )
    column = _column(col)
    dtype = column_type(column, dataframe, "to_confluent_protobuf")
    encoded, indexes = protobuf_column(column, dtype, writer, message)
    return framed_output(encoded, writer, indexes, opts, "to_confluent_protobuf")


def to_confluent_json(
    col: Column | str,
    registry: str | dict[str, Any],
    *,
    subject: str,
    schema: str | dict[str, Any] | Schema | None = None,
    version: int | str = "latest",
    options: dict[str, Any] | None = None,
    dataframe: DataFrame | None = None,
) -> Column:
    """Encode a column as Confluent-framed JSON (``0x00``, 4-byte schema id, UTF-8 JSON).

    ``options``: ``validate`` (default true: every record is checked against the schema, in
    the Python engine), ``engine`` (``auto``: native ``to_json`` when not validating),
    ``auto.register.schemas``, ``normalize.schemas``.
    """
    from spark_serdes.json_encoder import json_column

    opts = parse_options(options, {"validate": True})
    if opts["engine"] == "native" and opts["validate"]:
        raise ValueError(
            "to_confluent_json: validate needs the Python engine; set validate false for the "
            "native engine (Spark's to_json)"
        )
    writer = resolve_writer("to_confluent_json", registry, subject, schema, version, "JSON", opts)
    column = _column(col)
    dtype = column_type(column, dataframe, "to_confluent_json")
    encoded = json_column(column, dtype, writer, opts)
    return framed_output(encoded, writer, b"", opts, "to_confluent_json")

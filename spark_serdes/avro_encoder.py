"""The Python engine's Avro batch encoder (Arrow -> framed Avro bytes).

:class:`AvroBatchEncoder` runs in the Python workers: it casts the batch's timestamps and dates
to their integer Avro values in Arrow, turns the rows into Python values once, and writes them
with fastavro (as ``serdes.avro.AvroSerializer`` does), choosing union branches by name where
Spark's representation says which branch it is. The fit of the column to the schema, at call
time or (unfitted) here per value, is ``spark_serdes.avro_fit``'s.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from fastavro import parse_schema

from serdes import avro as _serdes_avro
from serdes import wire
from serdes.errors import SerializationError
from spark_serdes.arrow_values import arrow_to_pylist, raw_arrow, spark_type_of
from spark_serdes.avro import _kind, map_types
from spark_serdes.avro_fit import (
    Fixer,
    RowProblem,
    branch_name,
    is_raw_bytes,
    qualified_schema,
    value_fitter,
)
from spark_serdes.types import named_types

__all__ = ["AvroBatchEncoder"]


def _java_bytes(unscaled: int) -> bytes:
    """``BigInteger.toByteArray()``: the shortest two's complement (what spark-avro writes).

    fastavro writes one byte more for -2**(8k-1) (e.g. -128 as ``ff 80``, Java ``80``).
    """
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


class _Fixers:
    """Python values from ``to_pylist`` -> what fastavro writes as Spark's to_avro does."""

    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named

    def of(self, schema: Any) -> Fixer | None:
        if isinstance(schema, str):
            if schema in self.named:
                return self.of(self.named[schema])
            return None
        if isinstance(schema, list):
            return self._union(schema)
        kind = schema["type"]
        if isinstance(kind, dict | list):
            return self.of(kind)
        logical = schema.get("logicalType")
        if logical in ("timestamp-millis", "local-timestamp-millis") and kind == "long":
            return lambda v: v // 1000  # Spark's floorDiv of microseconds
        if logical == "decimal" and kind in ("bytes", "fixed"):
            scale = int(schema.get("scale", 0))
            if kind == "fixed":
                size = int(schema["size"])
                return lambda v: int(v.scaleb(scale)).to_bytes(size, "big", signed=True)
            return lambda v: _java_bytes(int(v.scaleb(scale)))
        if kind in ("record", "error"):
            fixes = [(f["name"], self.of(f["type"])) for f in schema["fields"]]
            fixes = [(n, fn) for n, fn in fixes if fn is not None]
            if not fixes:
                return None

            def record(value: dict[str, Any]) -> dict[str, Any]:
                for name, fn in fixes:
                    item = value[name]
                    if item is not None:
                        value[name] = fn(item)
                return value

            return record
        if kind == "array":
            item = self.of(schema["items"])
            if item is None:
                return None
            return lambda value: [None if v is None else item(v) for v in value]
        if kind == "map":
            val = self.of(schema["values"])
            if val is None:
                return dict
            return lambda value: {k: None if v is None else val(v) for k, v in value}
        return None

    def _union(self, branches: list[Any]) -> Fixer | None:
        kinds = [_kind(b, self.named) for b in branches]
        rest = [b for b, k in zip(branches, kinds, strict=True) if k != "null"]
        rest_kinds = [k for k in kinds if k != "null"]
        if len(rest) == 1:
            inner = self.of(rest[0])
            if rest_kinds[0] in ("record", "error", "array", "map"):
                # name the branch: fastavro would otherwise validate the value against it
                name = branch_name(rest[0], self.named)
                if inner is None:
                    return lambda v: (name, v)
                return lambda v: (name, inner(v))
            return inner
        if len(rest) == 2 and set(rest_kinds) in ({"int", "long"}, {"float", "double"}):
            wide = "long" if "long" in rest_kinds else "double"
            return lambda v: (wide, v)
        members = [
            (f"member{i}", branch_name(b, self.named), self.of(b)) for i, b in enumerate(rest)
        ]

        def union(value: dict[str, Any]) -> tuple[str, Any]:
            for key, name, fn in members:
                item = value[key]
                if item is not None:
                    return (name, item if fn is None else fn(item))
            raise SerializationError("a union value with no member set")

        return union


class AvroBatchEncoder:
    """Arrow values of the fitted column -> framed Avro bytes (null stays null).

    ``fitted=False``: the column was not fitted at call time (no Spark type then); each input
    Arrow type is checked and fitted here, once per process (:func:`value_fitter`), and the
    errors name ``label`` as the call-time ones do.
    """

    def __init__(self, schema_json: str, schema_id: int, label: str, fitted: bool = True) -> None:
        qualified = qualified_schema(schema_json)
        self.qualified = qualified
        self.fitted = fitted
        self.fits: dict[pa.DataType, Fixer] = {}
        self.label = label
        self.prefix = wire.id_prefix(schema_id)
        self.raw_bytes = is_raw_bytes(qualified)
        named: dict[str, Any] = {}
        # decimals are written as the bytes the fixers make, timestamps and dates as numbers
        self.parsed = parse_schema(_without_logical_types(qualified), named_schemas=named)
        self.named = named
        self.fix = _Fixers(named_types(qualified)).of(qualified)
        self.write_data = _serdes_avro._write_data
        self.options = dict(_serdes_avro._WRITE_OPTIONS)

    def encode(self, column: pa.Array) -> pa.Array:
        if column.null_count == len(column):
            return pa.nulls(len(column), pa.binary())
        raw = raw_arrow(column.type)
        values = arrow_to_pylist(column.cast(raw) if raw != column.type else column)
        if not self.fitted:
            values = self._fit(column.type, values)
        prefix = self.prefix
        out: list[bytes | None] = []
        if self.raw_bytes:
            return pa.array([None if v is None else prefix + v for v in values], pa.binary())
        fix = self.fix
        write = self.write_data
        parsed, named, options = self.parsed, self.named, self.options
        for value in values:
            if value is None:
                out.append(None)
                continue
            try:
                if fix is not None:
                    value = fix(value)
                if write is not None:
                    buf = bytearray(prefix)
                    write(buf, value, parsed, named, "", options)
                    out.append(bytes(buf))
                else:
                    import io

                    from fastavro import schemaless_writer

                    stream = io.BytesIO()
                    stream.write(prefix)
                    schemaless_writer(stream, parsed, value)
                    out.append(stream.getvalue())
            except Exception as exc:
                raise SerializationError(
                    f"{self.label}: record does not encode: {type(exc).__name__}: {exc}"
                ) from exc
        return pa.array(out, pa.binary())

    def _fit(self, data_type: pa.DataType, values: list[Any]) -> list[Any]:
        where = f"to_confluent_avro ({self.label})"
        fit = self.fits.get(data_type)
        if fit is None:
            try:
                fit = value_fitter(spark_type_of(data_type), self.qualified)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            self.fits[data_type] = fit
        try:
            return [None if v is None else fit(v) for v in values]
        except RowProblem as exc:
            raise RowProblem(f"{where}: {exc}") from None


def _without_logical_types(schema: Any) -> Any:
    """The schema with every logical type removed: the fixers give the plain Avro values."""
    return map_types(
        schema,
        lambda node: {
            k: v for k, v in node.items() if k not in ("logicalType", "precision", "scale")
        },
    )

"""Avro encoding of Spark columns: the call-time fit of a column to a writer schema, and the
Python engine's batch encoder (Arrow -> framed Avro bytes).

:func:`fit_column` runs on the driver when ``to_confluent_avro`` is called. It walks the writer
schema and the column's Spark type together and returns

* the column reshaped to exactly the Spark type spark-avro's ``to_avro`` writes for that schema
  (struct fields by name, Avro's lossless promotions as casts, missing fields with primitive
  defaults filled in, a value of one union branch wrapped into the ``member0..n`` struct);
* a string column naming the first value the schema cannot take (null in a non-null field, an
  enum symbol the schema lacks, a fixed of the wrong size, a union struct without exactly one
  member set), or null: what Spark's type cannot tell at call time is checked per row, on the
  JVM, before either engine writes the record.

Anything visible from the types alone (a missing field without default, an extra field, a type
the Avro type cannot hold) raises ``ValueError`` at once, naming the field.

:class:`AvroBatchEncoder` runs in the Python workers: it casts the batch's timestamps and dates
to their integer Avro values in Arrow, turns the rows into Python values once, and writes them
with fastavro (as ``serdes.avro.AvroSerializer`` does), choosing union branches by name where
Spark's representation says which branch it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from itertools import pairwise
from typing import Any

import pyarrow as pa
from fastavro import parse_schema
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes import avro as _serdes_avro
from serdes import wire
from serdes.errors import SerializationError
from spark_serdes.avro import _kind, _qualified, map_types
from spark_serdes.types import _to_sql, named_types

__all__ = [
    "AvroBatchEncoder",
    "check_type",
    "fit_column",
    "is_raw_bytes",
    "qualified_schema",
    "spark_type_of",
]

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_DIGITS = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 19}
_PRIMITIVE_DEFAULTS = (bool, int, float, str)

Fixer = Callable[[Any], Any]


def qualified_schema(text: str) -> Any:
    """A schema text as plain JSON, fully qualified, each named type defined at first use."""
    return _qualified(text)


def is_raw_bytes(schema: Any) -> bool:
    """Plain ``"bytes"``: Confluent's serializers write the value without an Avro length."""
    return schema == "bytes" or (
        isinstance(schema, dict) and schema.get("type") == "bytes" and "logicalType" not in schema
    )


def _branch_name(schema: Any, named: dict[str, Any]) -> str:
    """The name fastavro's tuple notation ``(name, value)`` selects a union branch by."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        kind = schema["type"]
        if kind in ("record", "error", "enum", "fixed"):
            return str(schema["name"])
        if isinstance(kind, dict | list):
            return _branch_name(kind, named)
        return str(kind)
    raise ValueError("a union cannot directly contain another union")


def _show(schema: Any) -> str:
    text = json.dumps(schema)
    return text if len(text) <= 80 else text[:77] + "..."


def _spark_type(schema: Any, named: dict[str, Any]) -> T.DataType:
    return _to_sql(schema, named, ())[0]


def _where(path: str) -> str:
    return f"field {path}" if path else "the value"


def _first(problems: list[Column], functions: Any = F) -> Column | None:
    if not problems:
        return None
    return problems[0] if len(problems) == 1 else functions.coalesce(*problems)


class _Fit:
    """One walk of (Spark type, Avro schema); ``fit`` returns (column, problem or None)."""

    def __init__(self, named: dict[str, Any], functions: Any = F) -> None:
        self.named = named
        self.F = functions  # pyspark's functions, or _TYPE_ONLY to run the type checks only

    def fit(
        self, expr: Column, dtype: T.DataType, nullable: bool, schema: Any, path: str
    ) -> tuple[Column, Column | None]:
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        if isinstance(schema, list):
            return self._union(expr, dtype, nullable, schema, path)
        if isinstance(schema, dict) and isinstance(schema["type"], dict | list):
            return self.fit(expr, dtype, nullable, schema["type"], path)
        value, problem = self._plain(expr, dtype, schema, path)
        if nullable:
            null = self.F.when(
                expr.isNull(),
                self.F.lit(
                    f"{_where(path)} is null, but its Avro type {_show(schema)} has no null"
                ),
            )
            problem = null if problem is None else self.F.coalesce(null, problem)
        return value, problem

    # -- unions --------------------------------------------------------------------------------

    def _union(
        self, expr: Column, dtype: T.DataType, nullable: bool, branches: list[Any], path: str
    ) -> tuple[Column, Column | None]:
        kinds = [_kind(b, self.named) for b in branches]
        rest = [b for b, k in zip(branches, kinds, strict=True) if k != "null"]
        rest_kinds = [k for k in kinds if k != "null"]
        has_null = len(rest) < len(branches)
        if not rest:
            raise ValueError(f"{_where(path)}: a union of only null cannot be written")
        if len(rest) == 1:
            return self.fit(expr, dtype, nullable and not has_null, rest[0], path)
        if set(rest_kinds) in ({"int", "long"}, {"float", "double"}) and len(rest) == 2:
            wide = "long" if "long" in rest_kinds else "double"
            return self.fit(expr, dtype, nullable and not has_null, wide, path)
        member_types = [_spark_type(b, self.named) for b in rest]
        names = [f"member{i}" for i in range(len(rest))]
        if isinstance(dtype, T.StructType) and [f.name for f in dtype.fields] == names:
            values: list[Column] = []
            problems: list[Column] = []
            for i, (branch, field) in enumerate(zip(rest, dtype.fields, strict=True)):
                value, problem = self.fit(
                    expr[field.name], field.dataType, False, branch, f"{path}.member{i}"
                )
                values.append(self.F.when(expr[field.name].isNotNull(), value).alias(field.name))
                if problem is not None:
                    problems.append(self.F.when(expr[field.name].isNotNull(), problem))
            set_count = sum(
                (
                    self.F.when(expr[n].isNotNull(), self.F.lit(1)).otherwise(self.F.lit(0))
                    for n in names
                ),
                self.F.lit(0),
            )
            count_problem = self.F.when(
                expr.isNotNull() & (set_count != 1),
                self.F.concat(
                    self.F.lit(f"{_where(path)}: a union value needs exactly one member set, not "),
                    set_count.cast("string"),
                ),
            )
            problem = _first(
                [count_problem, *[self.F.when(expr.isNotNull(), p) for p in problems]], self.F
            )
            out = self.F.when(expr.isNotNull(), self.F.struct(*values))
        else:
            # A value of one branch's type: that branch's member, the others null.
            matches = []
            for i, branch in enumerate(rest):
                try:
                    fitted = self.fit(expr, dtype, False, branch, path)
                except ValueError:
                    continue
                matches.append((i, fitted))
            if len(matches) != 1:
                how = "none" if not matches else f"{len(matches)} of them"
                raise ValueError(
                    f"{_where(path)}: Spark type {dtype.simpleString()} matches {how} of the "
                    f"union branches {_show(rest)}; give a struct<member0..member{len(rest) - 1}>"
                    " with the member to write set"
                )
            index, (value, problem) = matches[0]
            members = [
                (value if i == index else self.F.lit(None).cast(member_types[i])).alias(names[i])
                for i in range(len(rest))
            ]
            out = self.F.when(expr.isNotNull(), self.F.struct(*members))
            if problem is not None:
                problem = self.F.when(expr.isNotNull(), problem)
        if nullable and not has_null:
            null = self.F.when(
                expr.isNull(),
                self.F.lit(f"{_where(path)} is null, but its union {_show(branches)} has no null"),
            )
            problem = null if problem is None else self.F.coalesce(null, problem)
        return out, problem

    # -- everything but unions -----------------------------------------------------------------

    def _plain(
        self, expr: Column, dtype: T.DataType, schema: Any, path: str
    ) -> tuple[Column, Column | None]:
        kind = schema if isinstance(schema, str) else schema["type"]
        logical = schema.get("logicalType") if isinstance(schema, dict) else None
        wrong = ValueError(
            f"{_where(path)}: Spark type {dtype.simpleString()} cannot be written as Avro "
            f"{_show(schema)}"
        )
        if kind in ("bytes", "fixed") and logical == "decimal":
            return self._decimal(expr, dtype, schema, wrong), None
        if kind == "int" and logical == "date":
            if not isinstance(dtype, T.DateType):
                raise wrong
            return expr, None
        if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
            if not isinstance(dtype, T.TimestampType):
                raise wrong
            return expr, None
        if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
            if not isinstance(dtype, T.TimestampNTZType):
                raise wrong
            return expr, None
        if kind in ("record", "error"):
            return self._record(expr, dtype, schema, path, wrong)
        if kind == "array":
            if not isinstance(dtype, T.ArrayType):
                raise wrong
            element = dtype.elementType
            items = schema["items"]
            value, problem = self.fit(expr, element, dtype.containsNull, items, f"{path}[]")
            if value is not expr or problem is not None:
                # lambdas: the walk runs again with the element variable (same result, no error)
                if value is not expr:
                    expr_out = self.F.transform(
                        expr, lambda e: self.fit(e, element, dtype.containsNull, items, "")[0]
                    )
                else:
                    expr_out = expr
                if problem is not None:
                    problems = self.F.filter(
                        self.F.transform(
                            expr,
                            lambda e: self.fit(e, element, dtype.containsNull, items, f"{path}[]")[
                                1
                            ],
                        ),
                        lambda m: m.isNotNull(),
                    )
                    problem = self.F.get(problems, 0)
                return expr_out, problem
            return expr, None
        if kind == "map":
            if not isinstance(dtype, T.MapType):
                raise wrong
            if not isinstance(dtype.keyType, T.StringType):
                raise ValueError(
                    f"{_where(path)}: Avro map keys are strings, the Spark map has "
                    f"{dtype.keyType.simpleString()} keys"
                )
            vtype, vnull, vschema = dtype.valueType, dtype.valueContainsNull, schema["values"]
            value, problem = self.fit(expr, vtype, vnull, vschema, f"{path}{{}}")
            expr_out = expr
            if value is not expr:
                expr_out = self.F.transform_values(
                    expr, lambda _k, v: self.fit(v, vtype, vnull, vschema, "")[0]
                )
            if problem is not None:
                problems = self.F.filter(
                    self.F.transform(
                        self.F.map_values(expr),
                        lambda v: self.fit(v, vtype, vnull, vschema, f"{path}{{}}")[1],
                    ),
                    lambda m: m.isNotNull(),
                )
                problem = self.F.get(problems, 0)
            return expr_out, problem
        if kind == "enum":
            if not isinstance(dtype, T.StringType):
                raise wrong
            symbols = list(schema["symbols"])
            problem = self.F.when(
                ~expr.isin(symbols),
                self.F.concat(
                    self.F.lit(f"{_where(path)}: "),
                    expr,
                    self.F.lit(f" is not a symbol of enum {schema['name']} {symbols}"),
                ),
            )
            return expr, problem
        if kind == "fixed":
            if not isinstance(dtype, T.BinaryType):
                raise wrong
            size = int(schema["size"])
            problem = self.F.when(
                self.F.length(expr) != size,
                self.F.concat(
                    self.F.lit(f"{_where(path)}: "),
                    self.F.length(expr).cast("string"),
                    self.F.lit(f" bytes, but fixed {schema['name']} has size {size}"),
                ),
            )
            return expr, problem
        return self._primitive(expr, dtype, str(kind), wrong), None

    def _primitive(self, expr: Column, dtype: T.DataType, kind: str, wrong: Exception) -> Column:
        ok: tuple[type, ...]
        target: T.DataType
        if kind == "boolean":
            ok, target = (T.BooleanType,), T.BooleanType()
        elif kind == "int":
            ok, target = (T.ByteType, T.ShortType, T.IntegerType), T.IntegerType()
        elif kind == "long":
            ok, target = _INTEGRAL, T.LongType()
        elif kind == "float":
            ok, target = (*_INTEGRAL, T.FloatType), T.FloatType()
        elif kind == "double":
            ok, target = (*_INTEGRAL, T.FloatType, T.DoubleType), T.DoubleType()
        elif kind == "string":
            ok, target = (T.StringType,), T.StringType()
        elif kind == "bytes":
            ok, target = (T.BinaryType,), T.BinaryType()
        elif kind == "null":
            ok, target = (T.NullType,), T.NullType()
        else:
            raise ValueError(f"unsupported Avro type {kind!r}")
        if not isinstance(dtype, ok):
            raise wrong
        return expr if type(dtype) is type(target) else expr.cast(target)

    def _decimal(
        self, expr: Column, dtype: T.DataType, schema: dict[str, Any], wrong: Exception
    ) -> Column:
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        target = T.DecimalType(precision, scale)
        if isinstance(dtype, T.DecimalType):
            if dtype.scale > scale or dtype.precision - dtype.scale > precision - scale:
                raise ValueError(
                    f"{str(wrong).split(':')[0]}: Spark {dtype.simpleString()} does not fit "
                    f"Avro decimal({precision},{scale}) without loss"
                )
            return expr if dtype == target else expr.cast(target)
        if isinstance(dtype, _INTEGRAL) and _DIGITS[type(dtype)] <= precision - scale:
            return expr.cast(target)
        raise wrong

    def _record(
        self, expr: Column, dtype: T.DataType, schema: dict[str, Any], path: str, wrong: Exception
    ) -> tuple[Column, Column | None]:
        if not isinstance(dtype, T.StructType):
            raise wrong
        given = {f.name: f for f in dtype.fields}
        wanted = {f["name"] for f in schema["fields"]}
        extra = [n for n in given if n not in wanted]
        if extra:
            raise ValueError(
                f"{_where(path) if path else 'the struct'} has field(s) {extra} that Avro record "
                f"{schema['name']} does not have (its fields: {sorted(wanted)})"
            )
        values: list[Column] = []
        problems: list[Column] = []
        same = [f.name for f in dtype.fields] == [f["name"] for f in schema["fields"]]
        for field in schema["fields"]:
            name = field["name"]
            sub = f"{path}.{name}" if path else name
            spark_field = given.get(name)
            if spark_field is None:
                values.append(self._default(field, sub).alias(name))
                continue
            item = expr[name]
            value, problem = self.fit(
                item, spark_field.dataType, spark_field.nullable, field["type"], sub
            )
            same = same and value is item
            values.append(value.alias(name))
            if problem is not None:
                problems.append(problem)
        problem = _first(problems, self.F)
        if problem is not None:
            problem = self.F.when(expr.isNotNull(), problem)
        if same:  # already the shape to_avro takes
            return expr, problem
        return self.F.when(expr.isNotNull(), self.F.struct(*values)), problem

    def _default(self, field: dict[str, Any], path: str) -> Column:
        if "default" not in field:
            raise ValueError(
                f"field {path} of the Avro schema is missing from the struct and has no default"
            )
        default = field["default"]
        target = _spark_type(field["type"], self.named)
        if default is None or isinstance(default, _PRIMITIVE_DEFAULTS):
            schema = field["type"]
            first = schema[0] if isinstance(schema, list) else schema
            kind = _kind(first, self.named)
            logical = first.get("logicalType") if isinstance(first, dict) else None
            if (
                kind in ("bytes", "fixed")
                or logical is not None
                or isinstance(target, T.StructType)
            ):
                raise ValueError(
                    f"field {path} is missing from the struct; its default {default!r} "
                    f"(Avro {_show(schema)}) is not filled in automatically: add the column"
                )
            return self.F.lit(default).cast(target)
        raise ValueError(
            f"field {path} is missing from the struct; its default {_show(default)} is not a "
            "primitive and is not filled in automatically: add the column"
        )


def fit_column(column: Column, dtype: T.DataType, schema: Any) -> tuple[Column, Column | None]:
    """``column`` (of Spark type ``dtype``) shaped for ``schema``; and the per-row problem.

    ``schema`` is the qualified JSON form (:func:`qualified_schema`). A null value is not a
    problem at the top (it becomes a null record: a tombstone).
    """
    named = named_types(schema)
    return _Fit(named).fit(column, dtype, False, schema, "")


class _TypeOnly:
    """Stands for both ``pyspark.sql.functions`` and every column in a types-only ``_Fit`` walk.

    Python workers have no JVM to build columns with; walking with this object instead runs
    exactly the call-time type checks (same ``ValueError`` messages) and builds nothing.
    """

    def __getattr__(self, name: str) -> _TypeOnly:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> _TypeOnly:
        return self

    def __getitem__(self, key: Any) -> _TypeOnly:
        return self

    def _same(self, *other: Any) -> _TypeOnly:
        return self

    __add__ = __radd__ = __and__ = __or__ = __invert__ = __ne__ = __eq__ = _same  # type: ignore[assignment]
    __hash__ = object.__hash__


_TYPE_ONLY = _TypeOnly()


def check_type(dtype: T.DataType, schema: Any) -> None:
    """The call-time checks of :func:`fit_column` for ``dtype``, without building a column."""
    _Fit(named_types(schema), _TYPE_ONLY).fit(_TYPE_ONLY, dtype, False, schema, "")  # type: ignore[arg-type]


class RowProblem(SerializationError):
    """A value the schema cannot take (the text of the call-time fit's per-row problem)."""


def _fail(message: str) -> Any:
    raise RowProblem(message)


class _ValueFit:
    """The worker's :class:`_Fit` for Python values: Arrow's values of the unfitted column ->
    the values the fitted column would hold (fields in schema order, defaults filled in,
    promotions applied, a one-branch union value as its ``member`` struct), raising
    :class:`RowProblem` with the call-time fit's per-row messages. Run after
    :func:`check_type`, so the types are known to fit.
    """

    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named
        self.types = _Fit(named, _TYPE_ONLY)

    def fit(self, dtype: T.DataType, schema: Any, path: str) -> Fixer:
        if isinstance(schema, str) and schema in self.named:
            schema = self.named[schema]
        if isinstance(schema, list):
            return self._union(dtype, schema, path)
        if isinstance(schema, dict) and isinstance(schema["type"], dict | list):
            return self.fit(dtype, schema["type"], path)
        plain = self._plain(dtype, schema, path)
        null = f"{_where(path)} is null, but its Avro type {_show(schema)} has no null"
        if plain is None:
            return lambda v: _fail(null) if v is None else v
        return lambda v: _fail(null) if v is None else plain(v)

    def _union(self, dtype: T.DataType, branches: list[Any], path: str) -> Fixer:
        kinds = [_kind(b, self.named) for b in branches]
        rest = [b for b, k in zip(branches, kinds, strict=True) if k != "null"]
        rest_kinds = [k for k in kinds if k != "null"]
        null = None
        if len(rest) == len(branches):
            null = f"{_where(path)} is null, but its union {_show(branches)} has no null"
        if len(rest) == 1 or (
            len(rest) == 2 and set(rest_kinds) in ({"int", "long"}, {"float", "double"})
        ):
            target = rest[0] if len(rest) == 1 else ("long" if "long" in rest_kinds else "double")
            inner = self.fit(dtype, target, path)
            if null is not None:
                return inner
            return lambda v: None if v is None else inner(v)
        names = [f"member{i}" for i in range(len(rest))]
        if isinstance(dtype, T.StructType) and [f.name for f in dtype.fields] == names:
            members = [
                (f.name, self.fit(f.dataType, b, f"{path}.member{i}"))
                for i, (b, f) in enumerate(zip(rest, dtype.fields, strict=True))
            ]
            count = f"{_where(path)}: a union value needs exactly one member set, not "

            def union(value: dict[str, Any]) -> dict[str, Any]:
                set_count = sum(value[n] is not None for n, _ in members)
                if set_count != 1:
                    _fail(f"{count}{set_count}")
                return {n: None if value[n] is None else fn(value[n]) for n, fn in members}

            wrap: Fixer = union
        else:
            index = -1
            for i, branch in enumerate(rest):
                try:
                    self.types.fit(_TYPE_ONLY, dtype, False, branch, path)  # type: ignore[arg-type]
                except ValueError:
                    continue
                index = i
            inner = self.fit(dtype, rest[index], path)
            chosen = names[index]

            def one(value: Any) -> dict[str, Any]:
                out: dict[str, Any] = dict.fromkeys(names)
                out[chosen] = inner(value)
                return out

            wrap = one
        if null is None:
            return lambda v: None if v is None else wrap(v)
        message = null
        return lambda v: _fail(message) if v is None else wrap(v)

    def _plain(self, dtype: T.DataType, schema: Any, path: str) -> Fixer | None:
        kind = schema if isinstance(schema, str) else schema["type"]
        logical = schema.get("logicalType") if isinstance(schema, dict) else None
        if kind in ("bytes", "fixed") and logical == "decimal":
            return Decimal if isinstance(dtype, _INTEGRAL) else None
        if logical is not None and kind in ("int", "long"):
            return None
        if kind in ("record", "error"):
            return self._record(dtype, schema, path)
        if kind == "array":
            assert isinstance(dtype, T.ArrayType)
            item = self.fit(dtype.elementType, schema["items"], f"{path}[]")
            return lambda v: [item(x) for x in v]
        if kind == "map":
            assert isinstance(dtype, T.MapType)
            val = self.fit(dtype.valueType, schema["values"], f"{path}{{}}")
            return lambda v: [(k, val(x)) for k, x in v]
        if kind == "enum":
            symbols = list(schema["symbols"])
            known = set(symbols)
            tail = f" is not a symbol of enum {schema['name']} {symbols}"
            where = f"{_where(path)}: "
            return lambda v: v if v in known else _fail(f"{where}{v}{tail}")
        if kind == "fixed":
            size = int(schema["size"])
            where, tail = f"{_where(path)}: ", f" bytes, but fixed {schema['name']} has size {size}"
            return lambda v: v if len(v) == size else _fail(f"{where}{len(v)}{tail}")
        if kind in ("float", "double") and not isinstance(dtype, T.FloatType | T.DoubleType):
            return float
        return None

    def _record(self, dtype: T.DataType, schema: dict[str, Any], path: str) -> Fixer:
        assert isinstance(dtype, T.StructType)
        given = {f.name: f for f in dtype.fields}
        fields: list[tuple[str, Fixer | None, Any]] = []
        for field in schema["fields"]:
            name = field["name"]
            sub = f"{path}.{name}" if path else name
            if name in given:
                fields.append((name, self.fit(given[name].dataType, field["type"], sub), None))
            else:
                target = _spark_type(field["type"], self.named)
                default = field["default"]
                if isinstance(target, T.FloatType | T.DoubleType) and default is not None:
                    default = float(default)
                fields.append((name, None, default))

        def record(value: dict[str, Any]) -> dict[str, Any]:
            return {n: default if fn is None else fn(value[n]) for n, fn, default in fields}

        return record


def value_fitter(dtype: T.DataType, schema: Any) -> Fixer:
    """Checks ``dtype`` (``ValueError``) and returns the worker's fit of one non-null value."""
    check_type(dtype, schema)
    whole = _ValueFit(named_types(schema)).fit(dtype, schema, "")
    return lambda v: whole(v)


# -- the Python engine ----------------------------------------------------------------------------


def _raw_arrow(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with timestamps as int64 (micros), dates as int32 (days), all nullable.

    (Spark marks non-nullable children, but a null parent's children are null in Arrow.)
    """
    if pa.types.is_timestamp(data_type):
        return pa.int64()
    if pa.types.is_date32(data_type):
        return pa.int32()
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(f.name, _raw_arrow(f.type)) for f in data_type])
    if pa.types.is_map(data_type):
        return pa.map_(data_type.key_type, pa.field("value", _raw_arrow(data_type.item_type)))
    if pa.types.is_list(data_type):
        return pa.list_(pa.field("element", _raw_arrow(data_type.value_type)))
    if pa.types.is_large_list(data_type):
        return pa.large_list(pa.field("element", _raw_arrow(data_type.value_type)))
    return data_type


def arrow_to_pylist(array: pa.Array) -> list[Any]:
    """``array.to_pylist()``, built column by column (several times faster for structs).

    pyarrow makes a scalar object per nested value; here every leaf column is converted in one
    call and the rows are zipped together: structs as dicts, lists as lists, maps as lists of
    ``(key, value)`` pairs, nulls as None, exactly as ``to_pylist`` gives them.
    """
    kind = array.type
    if pa.types.is_struct(kind):
        names = [f.name for f in kind]
        children = [arrow_to_pylist(child) for child in array.flatten()]
        rows: list[Any] = [
            dict(zip(names, values, strict=True)) for values in zip(*children, strict=True)
        ]
        if not names:
            rows = [{} for _ in range(len(array))]
    elif pa.types.is_map(kind):
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        size = offsets[-1] - base
        keys = arrow_to_pylist(array.keys.slice(base, size))  # .keys/.items are not sliced
        items = arrow_to_pylist(array.items.slice(base, size))
        rows = [
            list(zip(keys[a - base : b - base], items[a - base : b - base], strict=True))
            for a, b in pairwise(offsets)
        ]
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = arrow_to_pylist(array.flatten())
        offsets = array.offsets.to_pylist()
        base = offsets[0]
        rows = [values[a - base : b - base] for a, b in pairwise(offsets)]
    else:
        return array.to_pylist()
    if array.null_count:
        for i, valid in enumerate(array.is_valid().to_pylist()):
            if not valid:
                rows[i] = None
    return rows


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
                name = _branch_name(rest[0], self.named)
                if inner is None:
                    return lambda v: (name, v)
                return lambda v: (name, inner(v))
            return inner
        if len(rest) == 2 and set(rest_kinds) in ({"int", "long"}, {"float", "double"}):
            wide = "long" if "long" in rest_kinds else "double"
            return lambda v: (wide, v)
        members = [
            (f"member{i}", _branch_name(b, self.named), self.of(b)) for i, b in enumerate(rest)
        ]

        def union(value: dict[str, Any]) -> tuple[str, Any]:
            for key, name, fn in members:
                item = value[key]
                if item is not None:
                    return (name, item if fn is None else fn(item))
            raise SerializationError("a union value with no member set")

        return union


def spark_type_of(data_type: pa.DataType) -> T.DataType:
    """The Spark type of an Arrow UDF's input (timestamps without a zone are ``timestamp_ntz``)."""
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(data_type, prefer_timestamp_ntz=True)


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
        raw = _raw_arrow(column.type)
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

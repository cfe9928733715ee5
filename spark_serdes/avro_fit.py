"""The fit of a Spark column to an Avro writer schema, at call time and per value.

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

:func:`value_fitter` is the same fit for Python values, for a column that was not fitted at call
time (the Python engine's workers, ``spark_serdes.avro_encoder``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes.errors import SerializationError
from spark_serdes.avro import _kind, _qualified
from spark_serdes.types import _to_sql, named_types

__all__ = [
    "Fixer",
    "RowProblem",
    "branch_name",
    "check_type",
    "fit_column",
    "is_raw_bytes",
    "qualified_schema",
    "value_fitter",
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


def branch_name(schema: Any, named: dict[str, Any]) -> str:
    """The name fastavro's tuple notation ``(name, value)`` selects a union branch by."""
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        kind = schema["type"]
        if kind in ("record", "error", "enum", "fixed"):
            return str(schema["name"])
        if isinstance(kind, dict | list):
            return branch_name(kind, named)
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

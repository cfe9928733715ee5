"""The Avro guard: values fastavro would write wrongly without an error, found before writing.

fastavro truncates a float in an int/long field, wraps an int beyond 32 bits, writes any truthy
value as ``true`` and a finite double beyond float range as infinity. ``compile_guard`` turns a
parsed schema into one generated Python function checking just those fields; ``mismatch`` says
which field a record that fastavro refused does not match.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastavro.validation import validate

from serdes.avro_schema import named_schemas
from serdes.errors import SerializationError, SerializationValueError, like

_FLOAT_MAX = 3.4028234663852886e38


def _not_int(value: Any, path: str, kind: str) -> None:
    if isinstance(value, int):  # bool and int subclasses: exact
        return
    if isinstance(value, float):
        raise SerializationValueError(
            f"field {path}: {value!r} is a float but the schema says {kind}; it would be "
            f"written truncated to {int(value)}"
        )
    # Anything else: fastavro raises its own error, which says the field.


def _int_range(value: int, path: str) -> None:
    raise SerializationValueError(
        f"field {path}: {value} does not fit an Avro int (32 bits); the schema says int, not long"
    )


def _not_bool(value: Any, path: str, present: bool = True) -> None:
    if not present:  # missing field: fastavro uses the default or says there is none
        return
    if value.__class__ is int and value in (0, 1):
        return
    raise SerializationValueError(
        f"field {path}: {value!r} ({type(value).__name__}) is not a boolean; it would be "
        f"written as {bool(value)}"
    )


def _float_range(value: float, path: str) -> None:
    raise SerializationValueError(
        f"field {path}: {value!r} is beyond the range of an Avro float (32 bits); it would be "
        "written as infinity"
    )


class _GuardBuilder:
    """Generates Python source checking just the silently-coerced scalar cases of a schema.

    Nested records are inlined (one function per recursive record type), so a record costs a
    ``dict.get`` and a class test per checked field and nothing for the others.
    """

    def __init__(self, named: dict[str, Any]) -> None:
        self.named = named
        self.functions: dict[str, list[str]] = {}
        self.fn_names: dict[str, str] = {}
        self.counter = 0

    def var(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def check(
        self,
        schema: Any,
        var: str,
        path: str,
        indent: str,
        stack: tuple[str, ...],
        present: str = "True",
    ) -> list[str]:
        """Lines checking ``var`` against ``schema`` (none when nothing can go silently wrong)."""
        if isinstance(schema, str):
            if schema in self.named:
                return self.check(self.named[schema], var, path, indent, stack, present)
            return self._scalar(schema, var, path, indent, present)
        if isinstance(schema, list):
            branches = [b for b in schema if b != "null"]
            if len(branches) == 1 and len(schema) == 2:
                inner = self.check(branches[0], var, path, indent + "    ", stack)
                if inner:
                    return [f"{indent}if {var} is not None:", *inner]
            return []
        if not isinstance(schema, dict) or "logicalType" in schema:
            return []
        kind = schema.get("type")
        if kind in ("record", "error"):
            return self._record(schema, var, indent, stack)
        if kind in ("array", "map"):
            item = self.var()
            inner = self.check(
                schema["items" if kind == "array" else "values"],
                item,
                path + ("[]" if kind == "array" else "{}"),
                indent + "        ",
                stack,
            )
            if not inner:
                return []
            cls, source = ("list", var) if kind == "array" else ("dict", f"{var}.values()")
            return [
                f"{indent}if {var}.__class__ is {cls}:",
                f"{indent}    for {item} in {source}:",
                *inner,
            ]
        if isinstance(kind, str) and kind in ("int", "long", "boolean", "float"):
            return self._scalar(kind, var, path, indent, present)
        if isinstance(kind, (dict, list)):
            return self.check(kind, var, path, indent, stack, present)
        return []

    def _record(
        self, schema: dict[str, Any], var: str, indent: str, stack: tuple[str, ...]
    ) -> list[str]:
        name = schema["name"]
        if name in stack:  # recursive type: a function calling itself
            fn = self._function(schema)
            return (
                [f"{indent}if {var}.__class__ is dict:", f"{indent}    {fn}({var})"] if fn else []
            )
        body: list[str] = []
        for field in schema["fields"]:
            item = self.var()
            lines = self.check(
                field["type"],
                item,
                f"{name}.{field['name']}",
                indent + "    ",
                (*stack, name),
                f"{field['name']!r} in {var}",
            )
            if lines:
                body.append(f"{indent}    {item} = {var}.get({field['name']!r})")
                body.extend(lines)
        if not body:
            return []
        return [f"{indent}if {var}.__class__ is dict:", *body]

    def _function(self, schema: dict[str, Any]) -> str | None:
        name = schema["name"]
        if name in self.fn_names:
            return self.fn_names[name] or None
        fn = f"_check_{len(self.fn_names)}"
        self.fn_names[name] = fn
        body = self._record(schema, "d", "    ", ())
        if not body:
            self.fn_names[name] = ""
            return None
        self.functions[fn] = [f"def {fn}(d):", *body]
        return fn

    @staticmethod
    def _scalar(kind: str, var: str, path: str, indent: str, present: str) -> list[str]:
        p = repr(path)
        if kind == "int":
            return [
                f"{indent}if {var}.__class__ is not int:",
                f"{indent}    _not_int({var}, {p}, 'int')",
                f"{indent}elif not -2147483648 <= {var} <= 2147483647:",
                f"{indent}    _int_range({var}, {p})",
            ]
        if kind == "long":
            return [
                f"{indent}if {var}.__class__ is not int:",
                f"{indent}    _not_int({var}, {p}, 'long')",
            ]
        if kind == "boolean":
            return [
                f"{indent}if {var}.__class__ is not bool:",
                f"{indent}    _not_bool({var}, {p}, {present})",
            ]
        if kind == "float":
            return [
                f"{indent}if {var}.__class__ is float and {_FLOAT_MAX!r} < abs({var}) < _INF:",
                f"{indent}    _float_range({var}, {p})",
            ]
        return []


def compile_guard(parsed: Any) -> Callable[[Any], None] | None:
    """A function raising ``SerializationError`` for values fastavro would write wrongly."""
    named = named_schemas(parsed)
    builder = _GuardBuilder(named)
    top = builder.check(parsed, "d", "", "    ", ())
    if not top:
        return None
    source = "".join("\n".join(lines) + "\n\n" for lines in builder.functions.values())
    source += "def _guard(d):\n" + "\n".join(top) + "\n"
    namespace: dict[str, Any] = {
        "_not_int": _not_int,
        "_int_range": _int_range,
        "_not_bool": _not_bool,
        "_float_range": _float_range,
        "_INF": float("inf"),
    }
    exec(compile(source, "<serdes.avro guard>", "exec"), namespace)
    guard = namespace["_guard"]
    guard.source = source
    return guard


def mismatch(value: Any, parsed: Any, exc: BaseException) -> SerializationError:
    """The record does not match the schema: say which field, from fastavro's validator."""
    detail = f"{type(exc).__name__}: {exc}"
    try:
        validate(value, parsed, raise_errors=True)
    except Exception as verr:  # fastavro.validation.ValidationError lists the field paths
        errors = getattr(verr, "errors", None)
        detail = "; ".join(str(e) for e in errors) if errors else str(verr)
    # confluent-kafka lets fastavro's ValueError/TypeError through: ours is catchable as those.
    err = like(exc, f"record does not match the Avro schema: {detail}")
    err.__cause__ = exc
    return err

"""A compiler from the common subset of CEL to Python closures, for the hot path.

Rules are mostly simple: field access, comparisons, ``&&``/``||``/``!``, literals, ``in``
lists, ``size()``, string tests. Such an expression is translated once into a Python
function (no per-message conversion of the record to CEL values; only the fields the
expression reads are looked at). Anything outside the subset, or any doubt, returns None
from :func:`compile_fast` and the compiled CEL engine runs the expression instead.

CEL semantics kept: no implicit conversions (``1 == true`` is false, ``'a' < 1`` an error,
``1 + 1.0`` an error; ``1 == 1.0`` and ``1 < 1.5`` are errors, as in confluent-kafka's CEL,
where the compiled engine compares across numeric types), int64 overflow is an error,
integer division and modulo truncate toward zero, ``&&``/``||`` are commutative over
errors (``false && error`` and ``error && false`` are false), a missing map key is an
error, ``!`` and ``?:`` need a bool.
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Callable
from typing import Any

from serdes.rules.cel.values import to_cel

__all__ = ["CelFastError", "compile_fast"]

_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


class CelFastError(Exception):
    """An evaluation error (as the CEL engine would raise)."""


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|0x[0-9a-fA-F]+|\d+)(?P<suffix>[uU]?)
    | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>&&|\|\||==|!=|<=|>=|[<>!+\-*/%.,()\[\]?:])
    )""",
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}


class _Unsupported(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _Unsupported(text[pos:])
        pos = m.end()
        if m.group("num") is not None:
            if m.group("suffix"):
                raise _Unsupported("uint")
            raw = m.group("num")
            if raw.startswith("0x"):
                out.append(("lit", int(raw, 16)))
            elif any(c in raw for c in ".eE"):
                out.append(("lit", float(raw)))
            else:
                out.append(("lit", int(raw)))
        elif m.group("str") is not None:
            body = m.group("str")[1:-1]
            if "\\" in body:
                if re.search(r"\\[^ntr\\'\"0]", body):
                    raise _Unsupported("escape")
                body = re.sub(r"\\(.)", lambda e: _ESCAPES[e.group(1)], body)
            out.append(("lit", body))
        elif m.group("id") is not None:
            word = m.group("id")
            if word == "true":
                out.append(("lit", True))
            elif word == "false":
                out.append(("lit", False))
            elif word == "null":
                out.append(("lit", None))
            elif word == "in":
                out.append(("op", "in"))
            else:
                out.append(("id", word))
        else:
            out.append(("op", m.group("op")))
    return out


# -- runtime helpers (the generated code calls these) --------------------------------------

_PLAIN = frozenset({str, int, float, bool, type(None), bytes, dict, list})


def _member(obj: Any, name: str) -> Any:
    if obj.__class__ is dict and name in obj:
        value = obj[name]
        return value if value.__class__ in _PLAIN else to_cel(value)
    if not isinstance(obj, dict):
        raise CelFastError(f"no such field {name!r} on {type(obj).__name__}")
    if name not in obj:
        raise CelFastError(f"no such key: {name}")
    value = obj[name]
    return value if value.__class__ in _PLAIN else to_cel(value)


def _index(obj: Any, key: Any) -> Any:
    if isinstance(obj, list):
        if key.__class__ is not int:
            raise CelFastError("list index must be an int")
        if not 0 <= key < len(obj):
            raise CelFastError("index out of range")
        value = obj[key]
    elif isinstance(obj, dict):
        try:
            value = obj[key]
        except (KeyError, TypeError):
            raise CelFastError(f"no such key: {key!r}") from None
    else:
        raise CelFastError("index on a value that is not a list or map")
    return value if value.__class__ in _PLAIN else to_cel(value)


def _kind(v: Any) -> str:
    c = v.__class__
    if c is bool:
        return "bool"
    if c is int:
        return "int"
    if c is float:
        return "double"
    if c is str:
        return "string"
    if c is bytes:
        return "bytes"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, datetime.datetime):
        return "timestamp"
    if isinstance(v, datetime.timedelta):
        return "duration"
    if isinstance(v, uuid.UUID):
        return "string"
    return "other"


_NUM = frozenset({"int", "double"})


_SIMPLE = frozenset({int, str, float, bool})


def _eq(a: Any, b: Any) -> bool:
    if a.__class__ is b.__class__ and a.__class__ in _SIMPLE:
        return a == b
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        if ka in _NUM and kb in _NUM:
            # int == double: an error, as confluent-kafka's CEL (celpy) has it
            raise CelFastError(f"no such overload: {ka} == {kb}")
        return False
    if ka == "list":
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b, strict=True))
    if ka == "map":
        return a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in a)
    return a == b


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _ordered(a: Any, b: Any) -> None:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:  # int < double too: an error, as confluent-kafka's CEL (celpy) has it
        raise CelFastError(f"no such overload: {ka} < {kb}")
    if ka not in _NUM and ka not in ("string", "bytes", "bool", "timestamp", "duration"):
        raise CelFastError(f"no such overload: {ka} < {kb}")


def _lt(a: Any, b: Any) -> bool:
    if a.__class__ is b.__class__ and (a.__class__ is int or a.__class__ is str):
        return a < b
    _ordered(a, b)
    return a < b


def _le(a: Any, b: Any) -> bool:
    if a.__class__ is b.__class__ and (a.__class__ is int or a.__class__ is str):
        return a <= b
    _ordered(a, b)
    return a <= b


def _gt(a: Any, b: Any) -> bool:
    if a.__class__ is b.__class__ and (a.__class__ is int or a.__class__ is str):
        return a > b
    _ordered(a, b)
    return a > b


def _ge(a: Any, b: Any) -> bool:
    if a.__class__ is b.__class__ and (a.__class__ is int or a.__class__ is str):
        return a >= b
    _ordered(a, b)
    return a >= b


def _int_result(v: int) -> int:
    if not _INT_MIN <= v <= _INT_MAX:
        raise CelFastError("integer overflow")
    return v


def _same_arith(a: Any, b: Any, op: str) -> str:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        raise CelFastError(f"no such overload: {ka} {op} {kb}")
    return ka


def _add(a: Any, b: Any) -> Any:
    k = _same_arith(a, b, "+")
    if k == "int":
        return _int_result(a + b)
    if k in ("double", "string", "bytes", "list"):
        return a + b
    raise CelFastError(f"no such overload: {k} + {k}")


def _sub(a: Any, b: Any) -> Any:
    k = _same_arith(a, b, "-")
    if k == "int":
        return _int_result(a - b)
    if k == "double":
        return a - b
    raise CelFastError(f"no such overload: {k} - {k}")


def _mul(a: Any, b: Any) -> Any:
    k = _same_arith(a, b, "*")
    if k == "int":
        return _int_result(a * b)
    if k == "double":
        return a * b
    raise CelFastError(f"no such overload: {k} * {k}")


def _div(a: Any, b: Any) -> Any:
    k = _same_arith(a, b, "/")
    if k == "int":
        if b == 0:
            raise CelFastError("division by zero")
        q = abs(a) // abs(b)
        return _int_result(q if (a >= 0) == (b >= 0) else -q)
    if k == "double":
        if b == 0:
            return float("nan") if a == 0 or a != a else (float("inf") if a > 0 else float("-inf"))
        return a / b
    raise CelFastError(f"no such overload: {k} / {k}")


def _mod(a: Any, b: Any) -> Any:
    k = _same_arith(a, b, "%")
    if k != "int":
        raise CelFastError(f"no such overload: {k} % {k}")
    if b == 0:
        raise CelFastError("modulus by zero")
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _neg(a: Any) -> Any:
    k = _kind(a)
    if k == "int":
        return _int_result(-a)
    if k == "double":
        return -a
    raise CelFastError(f"no such overload: -{k}")


def _not(a: Any) -> bool:
    if a.__class__ is not bool:
        raise CelFastError("no such overload: !" + _kind(a))
    return not a


def _and(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    err: Exception | None = None
    try:
        a = left()
        if a is False:
            return False
        if a is not True:
            raise CelFastError("no such overload: && on " + _kind(a))
    except Exception as exc:
        err = exc
    b = right()  # an error here propagates, unless the left side was false (returned above)
    if b is False:
        return False
    if b is not True:
        raise CelFastError("no such overload: && on " + _kind(b))
    if err is not None:
        raise err
    return True


def _or(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    err: Exception | None = None
    try:
        a = left()
        if a is True:
            return True
        if a is not False:
            raise CelFastError("no such overload: || on " + _kind(a))
    except Exception as exc:
        err = exc
    b = right()
    if b is True:
        return True
    if b is not False:
        raise CelFastError("no such overload: || on " + _kind(b))
    if err is not None:
        raise err
    return False


def _cond(c: Any, then: Callable[[], Any], other: Callable[[], Any]) -> Any:
    if c is True:
        return then()
    if c is False:
        return other()
    raise CelFastError("no such overload: ?: on " + _kind(c))


def _in(a: Any, container: Any) -> bool:
    if isinstance(container, list):
        return any(_eq(a, x) for x in container)
    if isinstance(container, dict):
        return any(_eq(a, k) for k in container)
    raise CelFastError("no such overload: in " + _kind(container))


def _size(a: Any) -> int:
    if isinstance(a, (str, bytes, list, dict)):
        return len(a)
    raise CelFastError("no such overload: size(" + _kind(a) + ")")


def _str_method(name: str) -> Callable[[Any, Any], bool]:
    def method(s: Any, arg: Any) -> bool:
        if s.__class__ is not str or arg.__class__ is not str:
            raise CelFastError(f"no such overload: {_kind(s)}.{name}({_kind(arg)})")
        if name == "startsWith":
            return s.startswith(arg)
        if name == "endsWith":
            return s.endswith(arg)
        return arg in s

    return method


_HELPERS: dict[str, Any] = {
    "_member": _member,
    "_index": _index,
    "_eq": _eq,
    "_ne": _ne,
    "_lt": _lt,
    "_le": _le,
    "_gt": _gt,
    "_ge": _ge,
    "_add": _add,
    "_sub": _sub,
    "_mul": _mul,
    "_div": _div,
    "_mod": _mod,
    "_neg": _neg,
    "_not": _not,
    "_and": _and,
    "_or": _or,
    "_cond": _cond,
    "_in": _in,
    "_size": _size,
    "_startsWith": _str_method("startsWith"),
    "_endsWith": _str_method("endsWith"),
    "_contains": _str_method("contains"),
}
_METHODS = {"startsWith", "endsWith", "contains"}


# -- parser: CEL tokens to Python source --------------------------------------------------


class _Parser:
    _BINARY = {
        "==": "_eq",
        "!=": "_ne",
        "<": "_lt",
        "<=": "_le",
        ">": "_gt",
        ">=": "_ge",
        "in": "_in",
    }
    _ADD = {"+": "_add", "-": "_sub"}
    _MUL = {"*": "_mul", "/": "_div", "%": "_mod"}

    def __init__(self, tokens: list[tuple[str, Any]], variables: frozenset[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.variables = variables

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, op: str | None = None) -> tuple[str, Any]:
        tok = self.peek()
        if tok is None or (op is not None and tok != ("op", op)):
            raise _Unsupported(f"expected {op}")
        self.pos += 1
        return tok

    def at(self, op: str) -> bool:
        return self.peek() == ("op", op)

    def parse(self) -> str:
        """The body of ``_fast(_v)``: statements for a top-level ``&&``/``||`` chain (CEL's
        commutative error handling without a closure per operand), else one return."""
        self.chain: tuple[str, list[str]] | None = None
        src = self.expr()
        if self.peek() is not None:
            raise _Unsupported("trailing tokens")
        chain = self.chain
        if chain is None or src != _fold(chain):
            return f"    return {src}\n"
        op, operands = chain
        stop, other = ("False", "True") if op == "&&" else ("True", "False")
        lines = ["    _e = None"]
        for operand in operands:
            lines += [
                "    try:",
                f"        _r = {operand}",
                "    except Exception as _x:",
                "        _e = _e or _x",
                "    else:",
                f"        if _r is {stop}:",
                f"            return {stop}",
                f"        if _r is not {other}:",
                f"            _e = _e or CelFastError('no such overload: {op} on ' + _kind(_r))",
            ]
        lines += ["    if _e is not None:", "        raise _e", f"    return {other}"]
        return "\n".join(lines) + "\n"

    def expr(self) -> str:
        cond = self.or_()
        if self.at("?"):
            self.take("?")
            then = self.or_()
            self.take(":")
            other = self.expr()
            return f"_cond({cond}, lambda: {then}, lambda: {other})"
        return cond

    def or_(self) -> str:
        operands = [self.and_()]
        while self.at("||"):
            self.take()
            operands.append(self.and_())
        if len(operands) > 1:
            self.chain = ("||", operands)
        left = operands[0]
        for right in operands[1:]:
            left = f"_or(lambda: {left}, lambda: {right})"
        return left

    def and_(self) -> str:
        operands = [self.rel()]
        while self.at("&&"):
            self.take()
            operands.append(self.rel())
        if len(operands) > 1:
            self.chain = ("&&", operands)
        left = operands[0]
        for right in operands[1:]:
            left = f"_and(lambda: {left}, lambda: {right})"
        return left

    def rel(self) -> str:
        left = self.add()
        tok = self.peek()
        while tok is not None and tok[0] == "op" and tok[1] in self._BINARY:
            self.take()
            left = f"{self._BINARY[tok[1]]}({left}, {self.add()})"
            tok = self.peek()
        return left

    def add(self) -> str:
        left = self.mul()
        tok = self.peek()
        while tok is not None and tok[0] == "op" and tok[1] in self._ADD:
            self.take()
            left = f"{self._ADD[tok[1]]}({left}, {self.mul()})"
            tok = self.peek()
        return left

    def mul(self) -> str:
        left = self.unary()
        tok = self.peek()
        while tok is not None and tok[0] == "op" and tok[1] in self._MUL:
            self.take()
            left = f"{self._MUL[tok[1]]}({left}, {self.unary()})"
            tok = self.peek()
        return left

    def unary(self) -> str:
        if self.at("!"):
            self.take()
            return f"_not({self.unary()})"
        if self.at("-"):
            self.take()
            tok = self.peek()
            if tok is not None and tok[0] == "lit" and type(tok[1]) in (int, float):
                self.take()
                return repr(-tok[1])
            return f"_neg({self.unary()})"
        return self.postfix()

    def postfix(self) -> str:
        src = self.primary()
        while True:
            if self.at("."):
                self.take()
                tok = self.take()
                if tok[0] != "id":
                    raise _Unsupported("member")
                if self.at("("):
                    self.take("(")
                    args = self.args(")")
                    if tok[1] == "size" and not args:
                        src = f"_size({src})"
                    elif tok[1] in _METHODS and len(args) == 1:
                        src = f"_{tok[1]}({src}, {args[0]})"
                    else:
                        raise _Unsupported(f"method {tok[1]}")
                else:
                    src = f"_member({src}, {tok[1]!r})"
            elif self.at("["):
                self.take("[")
                key = self.expr()
                self.take("]")
                src = f"_index({src}, {key})"
            else:
                return src

    def args(self, close: str) -> list[str]:
        out: list[str] = []
        if self.at(close):
            self.take(close)
            return out
        while True:
            out.append(self.expr())
            if self.at(","):
                self.take(",")
                continue
            self.take(close)
            return out

    def primary(self) -> str:
        tok = self.take()
        kind, value = tok
        if kind == "lit":
            return repr(value)
        if kind == "id":
            if self.at("("):
                self.take("(")
                args = self.args(")")
                if value == "size" and len(args) == 1:
                    return f"_size({args[0]})"
                raise _Unsupported(f"function {value}")
            if value not in self.variables:
                raise _Unsupported(f"variable {value}")
            return f"_v[{value!r}]"
        if tok == ("op", "("):
            inner = self.expr()
            self.take(")")
            return f"({inner})"
        if tok == ("op", "["):
            items = self.args("]")
            return "[" + ", ".join(items) + "]"
        raise _Unsupported(f"token {value}")


def _fold(chain: tuple[str, list[str]]) -> str:
    op, operands = chain
    name = "_and" if op == "&&" else "_or"
    left = operands[0]
    for right in operands[1:]:
        left = f"{name}(lambda: {left}, lambda: {right})"
    return left


_VARIABLES = frozenset({"message", "value", "name", "fullName", "typeName", "tags"})


def compile_fast(expr: str) -> Callable[[dict[str, Any]], Any] | None:
    """A Python function evaluating ``expr`` over the bound variables, or None when the
    expression is outside the subset this compiler takes (the CEL engine runs it then)."""
    try:
        source = _Parser(_tokens(expr), _VARIABLES).parse()
    except (_Unsupported, IndexError):
        return None
    namespace = {**_HELPERS, "CelFastError": CelFastError, "_kind": _kind}
    exec(compile(f"def _fast(_v):\n{source}", "<cel fast path>", "exec"), namespace)
    fn = namespace["_fast"]
    fn.source = source
    return fn

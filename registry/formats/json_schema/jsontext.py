"""JSON text as Confluent's Jackson ``ObjectMapper`` reads and writes it.

Reading (``readTree``): the first JSON value of the text, trailing content ignored; floats kept
exactly (``USE_BIG_DECIMAL_FOR_FLOATS`` with exact decimals); ``NaN``/``Infinity`` allowed;
a duplicated key keeps its first position and its last value.

Writing (``writeValueAsString``): compact, object keys in document order (or sorted by UTF-16
code units for the normalised form, Jackson's ``TreeMap``), non-ASCII characters written as
they are, control characters escaped (``\\b \\t \\n \\f \\r`` short, others ``\\u00XX`` with
upper-case hex), decimals printed as ``BigDecimal.toString()`` (``1.0``, ``1E+10``, ``1E-7``),
``NaN`` and infinities as quoted strings.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from registry.formats.jackson import quote


class JsonDecimal(float):
    """A JSON number with a fraction or exponent: a float that remembers its source text."""

    __slots__ = ("text",)

    text: str

    def __new__(cls, text: str) -> JsonDecimal:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj

    def decimal(self) -> Decimal:
        return Decimal(self.text)


class JsonTextError(ValueError):
    """The text is not JSON."""


_DECODER = json.JSONDecoder(parse_float=JsonDecimal)
_WHITESPACE = " \t\n\r"


def loads(text: str) -> Any:
    """The first JSON value of ``text`` (Jackson's ``readTree``: trailing content ignored)."""
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if start == len(text):
        raise JsonTextError("No content to map due to end-of-input")
    try:
        value, _end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise JsonTextError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JsonTextError("JSON is nested too deeply") from None
    return value


def _float_text(value: float) -> str:
    if isinstance(value, JsonDecimal):
        try:
            dec = value.decimal()
        except InvalidOperation:
            dec = None
        if dec is not None and dec.is_finite():
            if dec.is_zero() and dec.is_signed():
                dec = dec.copy_abs()
            return str(dec)
    if math.isnan(value):
        return '"NaN"'
    if math.isinf(value):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    return repr(value)


def _utf16_key(item: tuple[str, Any]) -> bytes:
    return item[0].encode("utf-16-be", "surrogatepass")


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text of ``value`` as Jackson writes it (see the module docstring)."""
    out: list[str] = []
    _write(value, out.append, sort_keys)
    return "".join(out)


def _write(value: Any, emit: Callable[[str], Any], sort_keys: bool) -> None:
    if isinstance(value, str):
        emit(quote(value))
    elif isinstance(value, dict):
        items = sorted(value.items(), key=_utf16_key) if sort_keys else value.items()
        emit("{")
        first = True
        for key, item in items:
            if not first:
                emit(",")
            first = False
            emit(quote(key))
            emit(":")
            _write(item, emit, sort_keys)
        emit("}")
    elif isinstance(value, list):
        emit("[")
        for index, item in enumerate(value):
            if index:
                emit(",")
            _write(item, emit, sort_keys)
        emit("]")
    elif value is True:
        emit("true")
    elif value is False:
        emit("false")
    elif value is None:
        emit("null")
    elif isinstance(value, int):
        emit(str(value))
    elif isinstance(value, float):
        emit(_float_text(value))
    else:
        raise TypeError(f"not a JSON value: {value!r}")

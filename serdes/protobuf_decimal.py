"""``confluent.type.Decimal`` <-> ``decimal.Decimal`` (``decimal_to_protobuf`` and
``protobuf_to_decimal`` of ``confluent_kafka.schema_registry.protobuf``).

The message holds the unscaled value as big-endian two's-complement bytes (the shortest form,
as Java's ``BigInteger.toByteArray``), the scale, and the precision (the unscaled value's digit
count, as the Java client writes it). The message class is the default pool's (confluent-kafka's
generated one when it is loaded), so values pass between the two libraries unchanged; else
serdes' own (:func:`serdes.confluent_protos.decimal_class`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from serdes.confluent_protos import decimal_class

__all__ = ["decimal_to_protobuf", "protobuf_to_decimal"]

# BigInteger's limit (Integer.MAX_VALUE bits, in decimal digits): the Java client refuses wider.
_MAX_DIGITS = 646456993


def _unscaled_bytes(unscaled: int) -> bytes:
    magnitude = unscaled if unscaled >= 0 else ~unscaled
    return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)


def decimal_to_protobuf(value: Decimal, scale: int) -> Any:
    """``value`` at ``scale`` digits after the point; ``ValueError`` if that would round it."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError("cannot write a non-finite decimal to confluent.type.Decimal")
    unscaled = 0
    for digit in digits:
        unscaled = unscaled * 10 + digit
    widen = exponent + scale
    if widen >= 0:
        if widen + len(digits) > _MAX_DIGITS:
            raise ValueError("Scale provided is too wide for the decimal")
        unscaled *= 10**widen
    elif unscaled != 0:
        trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
        if -widen > trailing:
            raise ValueError("Scale provided does not match the decimal")
        unscaled //= 10**-widen
    if sign:
        unscaled = -unscaled
    out = decimal_class()()
    out.value = _unscaled_bytes(unscaled)
    out.precision = 1 if unscaled == 0 else len(digits) + widen
    out.scale = scale
    return out


def protobuf_to_decimal(value: Any) -> Decimal:
    """The ``Decimal`` a ``confluent.type.Decimal`` message holds (its precision not applied)."""
    unscaled = int.from_bytes(value.value, "big", signed=True)
    sign = 1 if unscaled < 0 else 0
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return Decimal((sign, digits, -value.scale))

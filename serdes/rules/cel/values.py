"""Python values to what the CEL engine takes, and a CEL result back into a message.

The compiled engine takes dicts, lists, str, bytes, int, float, bool, None, datetime and
timedelta as they are; so the common case costs no conversion. Dates become days since
the epoch and UUIDs strings (as confluent-kafka binds them); a Protobuf message becomes a
dict of its fields by their names in the schema (unset scalars at their defaults, as CEL
reads a proto message).
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

__all__ = ["from_cel_message", "to_cel"]

_DAYS_SHIFT = datetime.date(1970, 1, 1).toordinal()


def _is_proto(value: Any) -> bool:
    return hasattr(value, "DESCRIPTOR") and hasattr(value, "ListFields")


def to_cel(value: Any) -> Any:
    """A value the engine can bind: converted only where it has to be."""
    if isinstance(value, dict):
        return {str(k): to_cel(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_cel(v) for v in value]
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=datetime.UTC)
    if isinstance(value, datetime.date):
        return value.toordinal() - _DAYS_SHIFT
    if isinstance(value, uuid.UUID):
        return str(value)
    if _is_proto(value):
        return proto_to_cel(value)
    return value


def needs_conversion(value: Any) -> bool:
    """Cheap test of the top level: a proto message always needs converting."""
    return value.__class__ is not dict and _is_proto(value)


def _proto_field(fd: Any, value: Any) -> Any:

    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        vfd = fd.message_type.fields_by_name["value"]
        return {k: _proto_scalar(vfd, v) for k, v in value.items()}
    if fd.is_repeated:
        return [_proto_scalar(fd, v) for v in value]
    return _proto_scalar(fd, value)


def _proto_scalar(fd: Any, value: Any) -> Any:
    if fd.message_type is not None:
        return proto_to_cel(value)
    return value


def proto_to_cel(message: Any) -> dict[str, Any]:
    """A Protobuf message as a dict: every scalar field (defaults included), set messages."""
    out: dict[str, Any] = {}
    for fd in message.DESCRIPTOR.fields:
        if (
            fd.message_type is not None
            and not (fd.message_type.GetOptions().map_entry or fd.is_repeated)
            and not message.HasField(fd.name)
        ):
            continue
        out[fd.name] = _proto_field(fd, getattr(message, fd.name))
    return out


def from_cel_message(result: Any, template: Any) -> Any:
    """A CEL transform's result as the message type of ``template`` (a proto) or as is."""
    if not _is_proto(template) or _is_proto(result) or not isinstance(result, dict):
        return result
    message = type(template)()
    _fill(message, result)
    return message


def _fill(message: Any, values: dict[str, Any]) -> None:
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in values.items():
        fd = fields.get(key)
        if fd is None:
            raise ValueError(f"{message.DESCRIPTOR.full_name} has no field {key!r}")
        if value is None:
            continue
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            target = getattr(message, key)
            vfd = fd.message_type.fields_by_name["value"]
            for k, v in value.items():
                if vfd.message_type is not None:
                    _fill(target[k], v)
                else:
                    target[k] = v
        elif fd.is_repeated:
            target = getattr(message, key)
            for item in value:
                if fd.message_type is not None:
                    _fill(target.add(), item)
                else:
                    target.append(item)
        elif fd.message_type is not None:
            _fill(getattr(message, key), value)
        else:
            setattr(message, key, value)

"""The Protobuf field walker: visits a message's fields and applies a field transform to the
fields the rule's tags select (``(confluent.field_meta).tags`` plus the schema's metadata
``tags`` patterns).

As confluent-kafka's ``common/protobuf.transform``: the walk follows the runtime message's
fields, each matched by number to the schema-side descriptor (which carries the tags and
gives the field's full name, ``package.Message.field``); an unset field with presence is
skipped; repeated and map fields are walked per element; a CONDITION failing on a field
raises ``RuleConditionError``. Not carried over: confluent's treatment of ``Decimal`` and
``Timestamp`` messages as leaf values (they are walked as messages here).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from serdes.confluent_protos import meta_tags
from serdes.rules.context import (
    FieldTransform,
    FieldTransformer,
    FieldType,
    RuleContext,
    store_field_result,
)

__all__ = ["proto_field_transformer", "proto_field_type", "proto_inline_tags"]

_T = FieldDescriptor
_INTS = {_T.TYPE_INT32, _T.TYPE_SINT32, _T.TYPE_UINT32, _T.TYPE_FIXED32, _T.TYPE_SFIXED32}
_LONGS = {_T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_UINT64, _T.TYPE_FIXED64, _T.TYPE_SFIXED64}
_SIMPLE = {
    _T.TYPE_ENUM: FieldType.ENUM,
    _T.TYPE_STRING: FieldType.STRING,
    _T.TYPE_BYTES: FieldType.BYTES,
    _T.TYPE_FLOAT: FieldType.FLOAT,
    _T.TYPE_DOUBLE: FieldType.DOUBLE,
    _T.TYPE_BOOL: FieldType.BOOLEAN,
}


def _is_map(fd: Any) -> bool:
    return fd.type == _T.TYPE_MESSAGE and fd.message_type.GetOptions().map_entry


def proto_field_type(fd: Any) -> FieldType:
    if _is_map(fd):
        return FieldType.MAP
    if fd.type == _T.TYPE_MESSAGE:
        return FieldType.RECORD
    if fd.type in _INTS:
        return FieldType.INT
    if fd.type in _LONGS:
        return FieldType.LONG
    return _SIMPLE.get(fd.type, FieldType.NULL)


def proto_inline_tags(fd: Any) -> set[str]:
    """The field's ``(confluent.field_meta).tags``."""
    return meta_tags(fd.GetOptions())


def _child(schema_fd: Any, desc: Any) -> Any:
    if schema_fd.type != _T.TYPE_MESSAGE:
        return desc
    if _is_map(schema_fd):
        value_fd = schema_fd.message_type.fields_by_name["value"]
        return value_fd.message_type if value_fd.type == _T.TYPE_MESSAGE else desc
    return schema_fd.message_type


def _set(fd: Any, message: Any, value: Any) -> None:
    if isinstance(value, list):
        message.ClearField(fd.name)
        getattr(message, fd.name).extend(value)
    elif isinstance(value, dict):
        target = getattr(message, fd.name)
        if fd.message_type.fields_by_name["value"].type == _T.TYPE_MESSAGE:
            for key, item in value.items():
                target[key].CopyFrom(item)
        else:
            message.ClearField(fd.name)
            getattr(message, fd.name).update(value)
    elif hasattr(value, "DESCRIPTOR") and hasattr(value, "ListFields"):
        getattr(message, fd.name).CopyFrom(value)
    else:
        setattr(message, fd.name, value)


def _walk(ctx: RuleContext, desc: Any, message: Any, fn: FieldTransform) -> Any:
    if message is None or desc is None:
        return message
    if isinstance(message, list):
        return [_walk(ctx, desc, item, fn) for item in message]
    if isinstance(message, dict):
        return {key: _walk(ctx, desc, value, fn) for key, value in message.items()}
    if hasattr(message, "DESCRIPTOR") and hasattr(message, "ListFields"):
        by_number = desc.fields_by_number
        for fd in message.DESCRIPTOR.fields:
            schema_fd = by_number.get(fd.number)
            if schema_fd is not None:
                _field(ctx, fd, schema_fd, desc, message, fn)
        return message
    fc = ctx.current_field()
    if fc is not None:
        tags = ctx.rule.tags
        if not tags or not fc.tags.isdisjoint(tags):
            return fn(ctx, fc, message)
    return message


def _field(
    ctx: RuleContext, fd: Any, schema_fd: Any, desc: Any, message: Any, fn: FieldTransform
) -> None:
    try:
        ctx.enter_field(
            message,
            schema_fd.full_name,
            schema_fd.name,
            proto_field_type(fd),
            proto_inline_tags(schema_fd),
            fd,
        )
        if fd.has_presence and not message.HasField(fd.name):
            return
        value = getattr(message, fd.name)
        if _is_map(fd):
            value = {key: value[key] for key in value}
        elif fd.is_repeated:
            value = list(value)
        result = _walk(ctx, _child(schema_fd, desc), value, fn)
        if store_field_result(ctx, result):
            _set(fd, message, result)
    finally:
        ctx.exit_field()


def proto_field_transformer(desc: Any) -> FieldTransformer:
    """The field walker for messages of the (schema-side) message descriptor ``desc``."""

    def transformer(ctx: RuleContext, fn: FieldTransform, message: Any) -> Any:
        return _walk(ctx, desc, message, fn)

    return transformer

"""The DLQ rule action: send the failing record to a dead-letter topic, then fail.

As confluent-kafka's ``DlqAction``: the topic is the action's ``dlq.topic`` conf, else the
rule's ``dlq.topic`` parameter (or the schema's metadata property of that name); other conf
keys (except ``dlq.*`` and ``producer``) configure the Kafka producer; ``dlq.auto.flush``
flushes after each record. On WRITE the key and value sent are the caller's (a dict as
JSON, after redacting fields of ``dlq.redact.rule.types`` rules: ``ENCRYPT,ENCRYPT_PAYLOAD``
by default), on READ the bytes read. The record carries the incoming headers and
``__rule.name``/``mode``/``subject``/``topic``/``exception`` headers; re-reading it skips the
rule named there.
"""

from __future__ import annotations

import copy
import json
import logging
import struct
import threading
import uuid
from typing import Any

from serdes.errors import SerializationError
from serdes.rules.context import (
    DLQ_HEADER_PREFIX,
    DLQ_RULE_EXCEPTION_HEADER,
    DLQ_RULE_MODE_HEADER,
    DLQ_RULE_NAME_HEADER,
    DLQ_RULE_SUBJECT_HEADER,
    DLQ_RULE_TOPIC_HEADER,
    FieldContext,
    FieldRuleExecutor,
    FieldTransform,
    FieldType,
    RuleAction,
    RuleContext,
    rule_failure_message,
)
from serdes.rules.model import Rule, RuleKind
from serdes.rules.registry import RuleRegistry

__all__ = ["DlqAction", "FieldRedactionExecutor"]

log = logging.getLogger(__name__)

_INT64 = (-(2**63), 2**63 - 1)


class FieldRedactionExecutor(FieldRuleExecutor):
    """Replaces the tagged string/bytes fields with ``<REDACTED>`` (for the DLQ copy)."""

    REDACTED_STRING = "<REDACTED>"
    REDACTED_BYTES = REDACTED_STRING.encode()

    def type(self) -> str:
        return "REDACT"

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        def redact(ctx: RuleContext, field_ctx: FieldContext, value: Any) -> Any:
            if value is None:
                return None
            if field_ctx.field_type == FieldType.STRING:
                return self.REDACTED_STRING
            if field_ctx.field_type == FieldType.BYTES:
                return self.REDACTED_BYTES
            return value

        return redact


class DlqAction(RuleAction):
    """Rule action ``DLQ``."""

    TYPE = "DLQ"
    DLQ_TOPIC = "dlq.topic"
    DLQ_AUTO_FLUSH = "dlq.auto.flush"
    DLQ_REDACT_RULE_TYPES = "dlq.redact.rule.types"
    DLQ_REDACT_RULE_TYPES_DEFAULT = "ENCRYPT,ENCRYPT_PAYLOAD"
    PRODUCER = "producer"
    HEADER_PREFIX = DLQ_HEADER_PREFIX
    RULE_NAME = DLQ_RULE_NAME_HEADER
    RULE_MODE = DLQ_RULE_MODE_HEADER
    RULE_SUBJECT = DLQ_RULE_SUBJECT_HEADER
    RULE_TOPIC = DLQ_RULE_TOPIC_HEADER
    RULE_EXCEPTION = DLQ_RULE_EXCEPTION_HEADER

    def __init__(self, conf: dict[str, Any] | None = None) -> None:
        self._conf: dict[str, Any] = dict(conf or {})
        self._lock = threading.Lock()
        self._topic: str | None = None
        self._auto_flush = False
        self._redact_types: list[str] = []
        self._producer: Any = None
        self._parse_conf()

    def type(self) -> str:
        return self.TYPE

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        with self._lock:
            for key, value in (rule_conf or {}).items():
                if key == self.PRODUCER or key.startswith("dlq."):
                    self._conf[key] = value
            self._parse_conf()

    def _parse_conf(self) -> None:
        self._topic = self._conf.get(self.DLQ_TOPIC)
        flush = self._conf.get(self.DLQ_AUTO_FLUSH)
        if flush is not None:
            self._auto_flush = str(flush).lower() == "true"
        types = self._conf.get(self.DLQ_REDACT_RULE_TYPES, self.DLQ_REDACT_RULE_TYPES_DEFAULT)
        self._redact_types = [s.strip() for s in str(types).split(",")]
        if self._conf.get(self.PRODUCER) is not None:
            self._producer = self._conf[self.PRODUCER]

    def _get_producer(self) -> Any:
        if self._producer is None:
            with self._lock:
                if self._producer is None:
                    from confluent_kafka import Producer

                    conf: dict[str, Any] = {
                        "enable.idempotence": False,
                        "acks": "all",
                        "max.in.flight.requests.per.connection": 1,
                        "message.timeout.ms": 0,
                    }
                    conf.update(
                        (k, v)
                        for k, v in self._conf.items()
                        if k != self.PRODUCER and not k.startswith("dlq.")
                    )
                    self._producer = Producer(conf)
        return self._producer

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        topic = self._topic or ctx.get_parameter(self.DLQ_TOPIC)
        if not topic:
            raise SerializationError("Could not send to DLQ as no topic is configured")
        try:
            producer = self._get_producer()
            producer.produce(
                topic,
                key=self._to_bytes(ctx, ctx.original_key),
                value=self._to_bytes(ctx, ctx.original_value),
                headers=self._headers(ctx, ex),
            )
            producer.poll(0)
            if self._auto_flush:
                producer.flush()
        except Exception as exc:
            log.error("Could not produce message to DLQ topic %s: %s", topic, exc)
        text = rule_failure_message(ctx.rule, ex)
        if ex is not None:
            raise SerializationError(text) from ex
        raise SerializationError(text)

    def _to_bytes(self, ctx: RuleContext, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, uuid.UUID):
            return str(value).encode()
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and _INT64[0] <= value <= _INT64[1]
        ):
            return struct.pack(">q", value)
        if isinstance(value, float):
            return struct.pack(">d", value)
        value = self._redact(ctx, value)
        if hasattr(value, "DESCRIPTOR"):
            from google.protobuf import json_format

            return json_format.MessageToJson(value).encode()
        return json.dumps(value, default=_json_default).encode()

    def _redact(self, ctx: RuleContext, value: Any) -> Any:
        rules = [r for r in ctx.rules or () if r.type in self._redact_types]
        if not rules:
            return value
        try:
            tags = sorted({t for r in rules for t in r.tags or ()})
            rule = Rule("redact", None, RuleKind.TRANSFORM, ctx.rule_mode, self.TYPE, tags)
            rctx = RuleContext(
                ctx.enabled_env,
                ctx.ser_ctx,
                ctx.source,
                ctx.target,
                ctx.subject,
                ctx.rule_mode,
                rule,
                0,
                [rule],
                ctx.inline_tags,
                ctx.field_transformer,
                ctx.original_key,
                ctx.original_value,
            )
            return FieldRedactionExecutor().transform(rctx, copy.deepcopy(value))
        except Exception as exc:
            log.error("Could not redact fields: %s", exc)
            return value

    def _headers(self, ctx: RuleContext, ex: Exception | None) -> list[tuple[str, bytes | None]]:
        out: list[tuple[str, bytes | None]] = []
        incoming = ctx.ser_ctx.headers if ctx.ser_ctx is not None else None
        if incoming:
            pairs = incoming.items() if isinstance(incoming, dict) else incoming
            out.extend((k, _header(v)) for k, v in pairs)
        out.append((self.RULE_NAME, _header(ctx.rule.name)))
        out.append((self.RULE_MODE, _header(ctx.rule_mode.value if ctx.rule_mode else None)))
        out.append((self.RULE_SUBJECT, _header(ctx.subject)))
        out.append((self.RULE_TOPIC, _header(ctx.ser_ctx.topic if ctx.ser_ctx else None)))
        if ex is not None:
            out.append((self.RULE_EXCEPTION, _header(str(ex))))
        return out

    def close(self) -> None:
        with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            producer.flush()

    @classmethod
    def register(cls, conf: dict[str, Any] | None = None) -> DlqAction:
        action = cls(conf)
        RuleRegistry.register_rule_action(action)
        return action


def _json_default(obj: Any) -> str:
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).decode("latin-1")
    return str(obj)


def _header(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return str(value).encode()

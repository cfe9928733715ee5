"""Data-contract rules for the serdes: conditions, transforms, migrations, actions.

A schema's rule set (``domainRules``, ``migrationRules``, ``encodingRules``) is run by the
Avro, Protobuf and JSON Schema serializers and deserializers with the semantics of
confluent-kafka 2.16. The serdes know no rule type: they ask a :class:`RuleRunner` to "run
the rules of this phase" and it finds executors and actions by name in a
:class:`RuleRegistry` (the global one unless a serde is given ``rule_registry=``).

Built in (register them, as with confluent-kafka, before building the serdes)::

    from serdes.rules.cel import CelExecutor, CelFieldExecutor
    from serdes.rules.jsonata import JsonataExecutor
    from serdes.rules.dlq import DlqAction

    CelExecutor.register(); CelFieldExecutor.register(); JsonataExecutor.register()
    DlqAction.register({"bootstrap.servers": "..."})

- ``CEL``: a CEL expression over ``message`` (compiled Rust engine, common-expression-language).
- ``CEL_FIELD``: a CEL expression over each field the rule's ``tags`` select (``value``,
  ``name``, ``fullName``, ``typeName``, ``tags``, ``message``).
- ``JSONATA``: a JSONata expression rewriting the message (jsonatapy, Rust), for UPGRADE /
  DOWNGRADE migrations between versions.
- Actions ``NONE``, ``ERROR`` (default on failure) and ``DLQ``.

Extension point (ENCRYPT / ENCRYPT_PAYLOAD and any other rule type)
-------------------------------------------------------------------
An executor subclasses :class:`RuleExecutor` (whole message) or :class:`FieldRuleExecutor`
(per tagged field) and is registered with :func:`register_rule_executor` (global) or
``RuleRegistry.register_executor`` (a registry passed to the serdes)::

    class EncryptExecutor(FieldRuleExecutor):
        def type(self) -> str: return "ENCRYPT"
        def configure(self, client_conf: dict, rule_conf: dict) -> None: ...
        def new_transform(self, ctx: RuleContext) -> FieldTransform:
            # return fn(ctx, field_ctx, value) -> new value; called for each field whose
            # tags (field_ctx.tags) meet ctx.rule.tags. field_ctx.field_type is a FieldType
            # (STRING/BYTES for encryptable fields); field_ctx.full_name "Record.field".
        def close(self) -> None: ...

What the executor gets, in :class:`RuleContext`: ``rule`` (a :class:`Rule`: ``name``,
``kind``, ``mode``, ``type``, ``tags``, ``params``, ``expr``...), ``rule_mode`` (WRITE, READ,
UPGRADE, DOWNGRADE), ``subject``, ``ser_ctx`` (confluent-kafka's SerializationContext),
``source``/``target`` (``serdes.schema.Schema``), ``get_parameter(name)`` (rule params, then
the target schema's metadata properties), ``original_key``/``original_value``.
``configure(client_conf, rule_conf)`` runs once per serde built, with the registry client's
config dict and the serde's ``rule_conf``.

Phases: a domain rule (``domainRules``) gets the message as a dict (Avro, JSON) or a
Protobuf message object, before encoding (WRITE) or after decoding (READ); an encoding rule
(``encodingRules``, e.g. ENCRYPT_PAYLOAD) gets the encoded payload ``bytes`` after encoding
(WRITE) and before decoding (READ), and returns the new bytes. A TRANSFORM returns the new
value; a CONDITION a truth value. Raising any exception runs the rule's ``onFailure``
action (ERROR by default: ``SerializationError`` from the exception); raising
``SerializationError`` fails the call directly.
"""

from serdes.rules.context import (
    ErrorAction,
    FieldContext,
    FieldRuleExecutor,
    FieldTransform,
    FieldTransformer,
    FieldType,
    NoneAction,
    RuleAction,
    RuleBase,
    RuleConditionError,
    RuleContext,
    RuleError,
    RuleExecutor,
)
from serdes.rules.engine import Migration, RuleRunner
from serdes.rules.model import (
    MetadataProperties,
    MetadataTags,
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
    RulePhase,
)
from serdes.rules.registry import (
    RuleOverride,
    RuleRegistry,
    register_rule_action,
    register_rule_executor,
)

__all__ = [
    "ErrorAction",
    "FieldContext",
    "FieldRuleExecutor",
    "FieldTransform",
    "FieldTransformer",
    "FieldType",
    "MetadataProperties",
    "MetadataTags",
    "Migration",
    "NoneAction",
    "Rule",
    "RuleAction",
    "RuleBase",
    "RuleConditionError",
    "RuleContext",
    "RuleError",
    "RuleExecutor",
    "RuleKind",
    "RuleMode",
    "RuleOverride",
    "RuleParams",
    "RulePhase",
    "RuleRegistry",
    "RuleRunner",
    "register_rule_action",
    "register_rule_executor",
]

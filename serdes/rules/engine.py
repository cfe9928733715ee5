"""Running the rules of one phase on one message, and the migrations between versions.

The serdes call :meth:`RuleRunner.execute` ("run the rules of this phase") and
:meth:`RuleRunner.migrations`/:meth:`RuleRunner.execute_migrations`; the runner knows no rule
type: it looks executors and actions up by name in a :class:`RuleRegistry`. Semantics are
confluent-kafka 2.16's ``BaseSerde._execute_rules_with_phase``: READ and DOWNGRADE run the
rules in reverse order; WRITEREAD rules run on WRITE and READ, UPDOWN ones on UPGRADE and
DOWNGRADE; a rule set's ``enableAt`` other than ALL/CLIENT disables its rules here; a record
re-read from a DLQ (``__rule.name`` header) skips the rule that sent it there; a CONDITION
that is false raises :class:`RuleConditionError` into the ``onFailure`` action (default
ERROR); a TRANSFORM that returns None runs ``onFailure`` too. ``onSuccess``/``onFailure`` of a
WRITEREAD/UPDOWN rule may be ``"WRITE_ACTION,READ_ACTION"``.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

from serdes.errors import SerializationError
from serdes.rules.context import (
    DLQ_RULE_NAME_HEADER,
    ErrorAction,
    FieldTransformer,
    NoneAction,
    RuleAction,
    RuleConditionError,
    RuleContext,
    RuleError,
    get_original_key,
)
from serdes.rules.model import ParsedRuleSet, Rule, RuleKind, RuleMode, RulePhase, rules_of
from serdes.rules.registry import RuleRegistry

__all__ = ["Migration", "RuleRunner", "has_rules"]

log = logging.getLogger(__name__)

_CONDITION = RuleKind.CONDITION
_TRANSFORM = RuleKind.TRANSFORM
_ERROR = ErrorAction()
_NONE = NoneAction()
_KEY = "key"

_RUNS_IN: dict[RuleMode, frozenset[RuleMode]] = {
    RuleMode.WRITE: frozenset({RuleMode.WRITE}),
    RuleMode.READ: frozenset({RuleMode.READ}),
    RuleMode.WRITEREAD: frozenset({RuleMode.WRITE, RuleMode.READ}),
    RuleMode.UPGRADE: frozenset({RuleMode.UPGRADE}),
    RuleMode.DOWNGRADE: frozenset({RuleMode.DOWNGRADE}),
    RuleMode.UPDOWN: frozenset({RuleMode.UPGRADE, RuleMode.DOWNGRADE}),
}


def _phase_rules(parsed: ParsedRuleSet, phase: RulePhase) -> tuple[Rule, ...]:
    if phase is RulePhase.MIGRATION:
        return parsed.migration_rules
    if phase is RulePhase.ENCODING:
        return parsed.encoding_rules
    return parsed.domain_rules


def has_rules(schema: Any, phase: RulePhase, mode: RuleMode) -> bool:
    """Whether ``schema`` has a rule of ``phase`` that runs in ``mode`` (as confluent's
    ``_has_rules``: WRITE also counts WRITEREAD rules, UPGRADE/DOWNGRADE count UPDOWN)."""
    rules = _phase_rules(rules_of(schema), phase)
    if mode in (RuleMode.UPDOWN, RuleMode.WRITEREAD):
        return any(r.mode == mode for r in rules)
    return any(r.mode is not None and mode in _RUNS_IN[r.mode] for r in rules)


class Migration:
    """One step between two versions of a subject: UPGRADE or DOWNGRADE, source to target."""

    __slots__ = ("rule_mode", "source", "target")

    def __init__(self, rule_mode: RuleMode, source: Any, target: Any) -> None:
        self.rule_mode = rule_mode
        self.source = source
        self.target = target


def _dlq_replay(ser_ctx: Any, rule: Rule) -> bool:
    headers = getattr(ser_ctx, "headers", None) if ser_ctx is not None else None
    if not headers or rule.name is None:
        return False
    value: Any = None
    if isinstance(headers, dict):
        value = headers.get(DLQ_RULE_NAME_HEADER)
    else:
        for k, v in headers:
            if k == DLQ_RULE_NAME_HEADER:
                value = v
    if isinstance(value, (bytes, bytearray)):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return value is not None and value == rule.name


class RuleRunner:
    """A serde's rule machinery: its registry, configured once with the serde's conf."""

    __slots__ = ("_selections", "registry")

    def __init__(
        self,
        client: Any,
        rule_conf: dict[str, Any] | None,
        rule_registry: RuleRegistry | None,
    ) -> None:
        self.registry = (
            rule_registry if rule_registry is not None else RuleRegistry.get_global_instance()
        )
        self._selections: dict[Any, Any] = {}
        client_conf: dict[str, Any] = {}
        if client is not None and hasattr(client, "config"):
            try:
                client_conf = dict(client.config())
            except Exception:  # a client without a readable config
                client_conf = {}
        for member in (*self.registry.get_executors(), *self.registry.get_actions()):
            member.configure(client_conf, dict(rule_conf or {}))

    # -- one phase ------------------------------------------------------------------------

    def execute(
        self,
        ser_ctx: Any,
        subject: str | None,
        rule_mode: RuleMode,
        source: Any,
        target: Any,
        message: Any,
        inline_tags: dict[str, set[str]] | None,
        field_transformer: FieldTransformer | None,
        original: Any = None,
        phase: RulePhase = RulePhase.DOMAIN,
    ) -> Any:
        """Run the rules of ``phase`` that apply in ``rule_mode`` on ``message``; the result."""
        if message is None or target is None:
            return message
        enabled_env, rules, runnable = self._selection(
            source if rule_mode is RuleMode.DOWNGRADE else target, rule_mode, phase
        )
        if not runnable:
            return message
        if original is None:
            original = message
        is_key = ser_ctx is not None and getattr(ser_ctx, "field", None) == _KEY
        original_key = original if is_key else get_original_key()
        original_value = None if is_key else original
        registry = self.registry
        overridden = bool(registry._overrides)
        headers = getattr(ser_ctx, "headers", None) if ser_ctx is not None else None
        for index, rule, off in runnable:
            ctx = RuleContext(
                enabled_env,
                ser_ctx,
                source,
                target,
                subject,
                rule_mode,
                rule,
                index,
                rules,
                inline_tags,
                field_transformer,
                original_key,
                original_value,
            )
            if (self._disabled(ctx, rule) if overridden else off) or (
                headers and _dlq_replay(ser_ctx, rule)
            ):
                continue
            if rule.type is None:
                self._run_action(
                    ctx,
                    rule_mode,
                    rule,
                    self._on_failure(rule),
                    message,
                    RuleError(f"Rule type is None for rule {rule.name}"),
                    "ERROR",
                )
                return message
            executor = registry._executors.get(rule.type.upper())
            if executor is None:
                self._run_action(
                    ctx,
                    rule_mode,
                    rule,
                    self._on_failure(rule),
                    message,
                    RuleError(f"Could not find rule executor of type {rule.type}"),
                    "ERROR",
                )
                return message
            try:
                result = executor.transform(ctx, message)
                kind = rule.kind
                if kind is _CONDITION:
                    if not result:
                        raise RuleConditionError(rule)
                elif kind is _TRANSFORM:
                    message = result
                if message is None:
                    self._run_action(
                        ctx, rule_mode, rule, self._on_failure(rule), message, None, "ERROR"
                    )
                elif rule.on_success is not None or registry._overrides:
                    self._run_action(
                        ctx, rule_mode, rule, self._on_success(rule), message, None, "NONE"
                    )
            except SerializationError:
                raise
            except Exception as exc:
                self._run_action(
                    ctx, rule_mode, rule, self._on_failure(rule), message, exc, "ERROR"
                )
        return message

    def _selection(
        self, schema: Any, rule_mode: RuleMode, phase: RulePhase
    ) -> tuple[str | None, tuple[Rule, ...], tuple[tuple[int, Rule, bool], ...]]:
        """The rules of ``schema`` for this mode and phase, in running order, and the ones
        that run in this mode (index, rule, disabled by the rule or the rule set's
        ``enableAt``); computed once per schema object."""
        key = (id(schema), id(rule_mode), id(phase))  # ints: Enum hashing is slow
        found = self._selections.get(key)
        if found is not None and found[0] is schema:
            return found[1]
        parsed = rules_of(schema)
        if rule_mode in (RuleMode.UPGRADE, RuleMode.DOWNGRADE):
            rules = parsed.migration_rules
        else:
            rules = _phase_rules(parsed, phase)
        if rule_mode in (RuleMode.READ, RuleMode.DOWNGRADE):
            rules = tuple(reversed(rules))
        env = parsed.enable_at if parsed.enable_at is not None else "ALL"
        env_off = env not in ("ALL", "CLIENT")
        runnable = tuple(
            (index, rule, bool(rule.disabled) or (env_off and rule.type is not None))
            for index, rule in enumerate(rules)
            if rule.mode is not None and rule_mode in _RUNS_IN[rule.mode]
        )
        result = (parsed.enable_at, rules, runnable)
        if len(self._selections) > 4096:
            self._selections.clear()
        self._selections[key] = (schema, result)
        return result

    def _disabled(self, ctx: RuleContext, rule: Rule) -> bool:
        if rule.type is None:
            return bool(rule.disabled)
        override = self.registry.get_override(rule.type)
        if override is not None and override.disabled is not None:
            return override.disabled
        env = ctx.enabled_env if ctx.enabled_env is not None else "ALL"
        if env not in ("ALL", "CLIENT"):
            return True
        return bool(rule.disabled)

    def _on_success(self, rule: Rule) -> str | None:
        override = self.registry.get_override(rule.type) if rule.type is not None else None
        if override is not None and override.on_success is not None:
            return override.on_success
        return rule.on_success

    def _on_failure(self, rule: Rule) -> str | None:
        override = self.registry.get_override(rule.type) if rule.type is not None else None
        if override is not None and override.on_failure is not None:
            return override.on_failure
        return rule.on_failure

    def _run_action(
        self,
        ctx: RuleContext,
        rule_mode: RuleMode,
        rule: Rule,
        action: str | None,
        message: Any,
        ex: Exception | None,
        default_action: str,
    ) -> None:
        name = _action_name(rule, rule_mode, action) or default_action
        rule_action = self._action(name)
        if rule_action is None:
            log.error("Could not find rule action of type %s", name)
            raise RuleError(f"Could not find rule action of type {name}")
        try:
            rule_action.run(ctx, message, ex)
        except SerializationError:
            raise
        except Exception as exc:
            log.warning("Could not run post-rule action %s: %s", name, exc)

    def _action(self, name: str) -> RuleAction | None:
        if name == "ERROR":
            return _ERROR
        if name == "NONE":
            return _NONE
        return self.registry.get_action(name)

    # -- migrations between versions --------------------------------------------------------

    def migrations(
        self, client: Any, subject: str, source_schema: Any, target: Any
    ) -> list[Migration]:
        """The UPGRADE or DOWNGRADE steps from the writer's version to ``target``'s, each
        step a pair of adjacent versions whose later one has migration rules for the mode."""
        source = client.lookup_schema(subject, source_schema, normalize_schemas=False, deleted=True)
        if source.version is None or target.version is None or source.version == target.version:
            return []
        if source.version < target.version:
            mode, first, last = RuleMode.UPGRADE, source, target
        else:
            mode, first, last = RuleMode.DOWNGRADE, target, source
        versions = [first]
        if last.version - first.version > 1:
            versions.extend(
                client.get_version(subject, v, True) for v in range(first.version + 1, last.version)
            )
        versions.append(last)
        steps: list[Migration] = []
        for previous, version in itertools.pairwise(versions):
            if version.schema is not None and has_rules(version.schema, RulePhase.MIGRATION, mode):
                if mode is RuleMode.UPGRADE:
                    steps.append(Migration(mode, previous, version))
                else:
                    steps.append(Migration(mode, version, previous))
        if mode is RuleMode.DOWNGRADE:
            steps.reverse()
        return steps

    def execute_migrations(
        self, ser_ctx: Any, subject: str, migrations: list[Migration], message: Any
    ) -> Any:
        for step in migrations:
            if step.source is not None and step.target is not None:
                message = self.execute(
                    ser_ctx,
                    subject,
                    step.rule_mode,
                    step.source.schema,
                    step.target.schema,
                    message,
                    None,
                    None,
                    phase=RulePhase.MIGRATION,
                )
        return message


def _action_name(rule: Rule, rule_mode: RuleMode, action: str | None) -> str | None:
    if not action:
        return None
    if rule.mode in (RuleMode.WRITEREAD, RuleMode.UPDOWN) and "," in action:
        parts = action.split(",")
        if rule_mode in (RuleMode.WRITE, RuleMode.UPGRADE):
            return parts[0]
        if rule_mode in (RuleMode.READ, RuleMode.DOWNGRADE):
            return parts[1]
    return action

"""Config, mode and context operations with Confluent's semantics."""

from __future__ import annotations

from typing import Any

from registry import compatibility, errors, records
from registry.core import GLOBAL_KEY, MODES, READ_ONLY_MODES, Draft, Registry
from registry.rulesets import validate_rule_set
from registry.subjects import DEFAULT_CONTEXT, is_valid_context, parse_subject

#: Confluent 8.x's ``Config`` / ``ConfigValue`` fields, in their JSON order
CONFIG_FIELDS = (
    "alias",
    "aliasForDeks",
    "normalize",
    "validateFields",
    "validateNewSchemas",
    "validateRules",
    "compatibilityLevel",
    "compatibilityPolicy",
    "compatibilityGroup",
    "defaultMetadata",
    "overrideMetadata",
    "defaultRuleSet",
    "overrideRuleSet",
)
BOOL_FIELDS = ("normalize", "validateFields", "validateNewSchemas", "validateRules")
#: Confluent 8.2+: LENIENT relaxes JSON Schema content-model rules; LOGICAL (8.5) is accepted
#: and checked like STRICT
COMPATIBILITY_POLICIES = ("STRICT", "LENIENT", "LOGICAL")


def config_key(subject: str | None) -> str | None:
    """The stored key for a ``/config/{subject}`` path: None for the global config (also for
    an empty subject or the default context ``:.:``), ``:.ctx:`` for a context."""
    if subject is None or subject == "":
        return None
    if subject == GLOBAL_KEY:
        return GLOBAL_KEY
    qs = parse_subject(subject)
    if qs.name == "":
        return qs.context_key
    return qs.qualified


def _check_subject(reg: Registry, subject: str | None) -> str | None:
    key = config_key(subject)
    if key is None or key == GLOBAL_KEY:
        return key
    qs = parse_subject(key)
    if qs.name == "":
        if not is_valid_context(qs.context):
            raise errors.invalid_subject(subject or "")
        return key
    return reg.valid_subject(key)


def get_config(reg: Registry, subject: str | None, default_to_global: bool) -> dict[str, Any]:
    key = _check_subject(reg, subject)
    if default_to_global:
        return _in_order(reg.effective_config(key))
    stored = reg.stored_config(key)
    if stored is not None:
        # a record without a level is completed with the server default level
        return _in_order({"compatibilityLevel": reg.settings.compatibility_level, **stored})
    if key is None:
        return {"compatibilityLevel": reg.settings.compatibility_level}
    raise errors.subject_compatibility_not_configured(subject or "")


def _in_order(config: dict[str, Any]) -> dict[str, Any]:
    """A ``Config`` with its fields in Confluent's JSON order (unknown ones last)."""
    known = {k: config[k] for k in CONFIG_FIELDS if k in config}
    return {**known, **{k: v for k, v in config.items() if k not in known}}


def put_config(reg: Registry, subject: str | None, body: dict[str, Any]) -> dict[str, Any]:
    """Partial update as ``ConfigValue.update``: a field that is absent or ``null`` keeps its
    stored value. The answer is the config now stored, as a ``ConfigUpdateRequest`` (Confluent
    8.x ``ConfigResource``: ``new ConfigUpdateRequest(newConfig.toConfigEntity())``, null
    fields left out; no default level filled in)."""
    key = _check_subject(reg, subject)
    update: dict[str, Any] = {}
    for name, value in body.items():
        field = "compatibilityLevel" if name == "compatibility" else name
        if field not in CONFIG_FIELDS or name == "compatibilityLevel":
            continue  # unknown fields are ignored, as Jackson does
        if value is None:
            continue
        if value is not None:
            if field == "compatibilityLevel":
                level = compatibility.parse_level(value)
                if level is None:
                    raise errors.invalid_compatibility_level(value)
                value = level
            elif field == "compatibilityPolicy":
                policy = str(value).strip().upper()
                if policy not in COMPATIBILITY_POLICIES:
                    raise errors.RegistryError(
                        42203,
                        "Invalid compatibility policy. Valid values are STRICT, LENIENT and "
                        "LOGICAL",
                    )
                value = policy
            elif field in BOOL_FIELDS and not isinstance(value, bool):
                raise errors.RegistryError(
                    400,
                    f"Cannot deserialize value of type `java.lang"
                    f".Boolean` from {value!r} for field '{name}'",
                )
            elif field in ("defaultRuleSet", "overrideRuleSet"):
                if not isinstance(value, dict):
                    raise errors.invalid_ruleset(f"{name} must be an object")
                validate_rule_set(value)
            elif field in ("defaultMetadata", "overrideMetadata") and not isinstance(value, dict):
                raise errors.RegistryError(400, f"{name} must be an object")
            elif field in ("alias", "aliasForDeks", "compatibilityGroup") and not isinstance(
                value, str
            ):
                raise errors.RegistryError(400, f"{name} must be a string")
        update[field] = value

    def decide() -> tuple[list[Draft], dict[str, Any]]:
        _refuse_read_only(reg, key)
        merged = dict(reg.stored_config(key) or {})
        merged.update(update)
        value = {k: merged[k] for k in CONFIG_FIELDS if k in merged}
        stored = {"subject": key, **value} if key is not None else value
        return [(records.config_key(key), stored)], rename_level(value)

    return reg.write(decide)


def _refuse_read_only(reg: Registry, key: str | None) -> None:
    """``isReadOnlyMode``: config changes are refused (42205) in READONLY(_OVERRIDE)."""
    if reg.effective_mode(key) in READ_ONLY_MODES and key != GLOBAL_KEY:
        # Confluent prints the global key as "null"
        name = "null" if key is None else key
        raise errors.operation_not_permitted(f"Subject {name} is in read-only mode")


def rename_level(config: dict[str, Any]) -> dict[str, Any]:
    """A config as a ConfigUpdateRequest: the level is named ``compatibility``."""
    out = {}
    for field in CONFIG_FIELDS:
        if field in config:
            out["compatibility" if field == "compatibilityLevel" else field] = config[field]
    return out


def delete_config(reg: Registry, subject: str | None) -> dict[str, Any]:
    key = _check_subject(reg, subject)

    def decide() -> tuple[list[Draft], dict[str, Any]]:
        setting = reg.state.configs.get(key)
        if setting is None and key is not None:
            raise errors.subject_not_found(subject or "")
        # Confluent 8.x ``deleteSubjectConfig``: refused in a read-only mode (after the look-up)
        _refuse_read_only(reg, key)
        if setting is None:
            return [], {"compatibilityLevel": reg.settings.compatibility_level}
        previous = {"compatibilityLevel": reg.settings.compatibility_level, **setting.value}
        return [(records.decode_key(setting.key), None)], previous

    return reg.write(decide)


# ---- mode -------------------------------------------------------------------------------


def get_mode(reg: Registry, subject: str | None, default_to_global: bool) -> str:
    key = _check_subject(reg, subject)
    if default_to_global or key is None:
        return reg.effective_mode(key) if key is not None else _global_mode(reg)
    if _global_mode(reg) == "READONLY_OVERRIDE":
        return "READONLY_OVERRIDE"  # 7.9's getMode: the global override wins everywhere
    setting = reg.state.modes.get(key)
    if setting is None:
        raise errors.subject_mode_not_configured(subject or "")
    return str(setting.value.get("mode"))


def _global_mode(reg: Registry) -> str:
    setting = reg.state.modes.get(None)
    return str(setting.value.get("mode")) if setting else "READWRITE"


def parse_mode(value: object) -> str:
    mode = value.strip().upper() if isinstance(value, str) else None
    if mode not in MODES:
        raise errors.invalid_mode()
    return mode


def put_mode(reg: Registry, subject: str | None, mode_value: object, force: bool) -> str:
    key = _check_subject(reg, subject)
    mode = parse_mode(mode_value)
    if not reg.settings.mode_mutability:
        raise errors.operation_not_permitted("Mode changes are not allowed")

    def decide() -> tuple[list[Draft], str]:
        drafts: list[Draft] = []
        current = reg.effective_mode(key) if key is not None else _global_mode(reg)
        if mode == "IMPORT" and current != "IMPORT" and not force:
            in_scope = _subjects_in_scope(reg, key)
            if any(not sv.deleted for subj in in_scope for sv in reg.state.versions(subj).values()):
                raise errors.operation_not_permitted("Cannot import since found existing subjects")
            for subj in in_scope:
                ctx = reg.state.context_of(subj)
                for sv in reg.state.versions(subj).values():
                    if ctx.referrers.get((subj, sv.version)):
                        raise errors.reference_exists(
                            f"{{magic=1,keytype=SCHEMA,subject={subj},version={sv.version}}}"
                        )
                    drafts.append((records.decode_key(sv.key), None))
            drafts.append((records.clear_subject_key(key or ""), {"subject": key or ""}))
        value: dict[str, Any] = {"mode": mode}
        if key is not None:
            value = {"subject": key, "mode": mode}
        drafts.append((records.mode_key(key), value))
        return drafts, mode

    return reg.write(decide)


def _subjects_in_scope(reg: Registry, key: str | None) -> list[str]:
    if key is None:
        ctx = reg.state.find_context(DEFAULT_CONTEXT)
        return list(ctx.subjects) if ctx else []
    qs = parse_subject(key)
    if qs.name == "":
        ctx = reg.state.find_context(qs.context)
        return list(ctx.subjects) if ctx else []
    return [key] if reg.state.versions(key) else []


def delete_mode(reg: Registry, subject: str | None) -> str:
    key = _check_subject(reg, subject)
    if not reg.settings.mode_mutability:
        raise errors.operation_not_permitted("Mode changes are not allowed")

    def decide() -> tuple[list[Draft], str]:
        setting = reg.state.modes.get(key)
        if setting is None:
            if key is None:
                return [], "READWRITE"
            raise errors.subject_not_found(subject or "")
        return [(records.decode_key(setting.key), None)], str(setting.value.get("mode"))

    return reg.write(decide)


# ---- contexts ---------------------------------------------------------------------------


def list_contexts(reg: Registry, prefix: str = "") -> list[str]:
    return [c for c in reg.state.context_names() if c.startswith(prefix)]


def delete_context(reg: Registry, context: str) -> None:
    if not is_valid_context(context):
        raise errors.RegistryError(400, f"Invalid context '{context}'")

    def decide() -> tuple[list[Draft], None]:
        ctx = reg.state.find_context(context)
        if ctx is not None and ctx.subjects:
            raise errors.context_not_empty(context)
        key = reg.state.context_records.get(context)
        if key is None:
            return [], None
        return [(records.decode_key(key), None)], None

    reg.write(decide)


def validates_new_schemas(config: dict[str, Any]) -> bool:
    """Confluent 8.x's ``isSchemaNewSchemaValidationEnabled``: the config's
    ``validateNewSchemas``, else ``schema.validate.new.schemas`` (true)."""
    return config.get("validateNewSchemas") is not False

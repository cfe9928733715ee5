"""Metadata and rule-set merging (default/override configs) and Confluent's rule-set
validation (42210). Pure functions.
"""

from __future__ import annotations

from typing import Any

from registry import errors


def merge_metadata(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    if old is None:
        return new
    if new is None:
        return old
    tags = {**(old.get("tags") or {}), **(new.get("tags") or {})}
    props = {**(old.get("properties") or {}), **(new.get("properties") or {})}
    sensitive = sorted(set(old.get("sensitive") or []) | set(new.get("sensitive") or []))
    out: dict[str, Any] = {}
    if tags:
        out["tags"] = {k: tags[k] for k in sorted(tags)}
    if props:
        out["properties"] = {k: props[k] for k in sorted(props)}
    if sensitive:
        out["sensitive"] = sensitive
    return out


def merge_rule_sets(
    old: dict[str, Any] | None, new: dict[str, Any] | None
) -> dict[str, Any] | None:
    if old is None:
        return new
    if new is None:
        return old
    out: dict[str, Any] = {}
    for group in ("migrationRules", "domainRules", "encodingRules"):
        # a rule that is not an object (a fuzzer's `[null]`) is dropped here: a look-up with
        # it then matches nothing, and a registration refuses it when it validates the set
        merged = {r.get("name"): r for r in _rules(old.get(group))}
        for rule in _rules(new.get(group)):
            merged[rule.get("name")] = rule
        if merged:
            out[group] = list(merged.values())
    enable_at = new.get("enableAt") or old.get("enableAt")
    if enable_at:
        out["enableAt"] = enable_at
    return out


def _rules(group: Any) -> list[dict[str, Any]]:
    return [rule for rule in group if isinstance(rule, dict)] if isinstance(group, list) else []


RULE_KINDS = ("TRANSFORM", "CONDITION")


MIGRATION_MODES = ("UPGRADE", "DOWNGRADE", "UPDOWN")


DOMAIN_MODES = ("WRITE", "READ", "WRITEREAD")


def validate_rule_set(rule_set: dict[str, Any]) -> None:
    """Confluent's rule-set validation (42210)."""
    import re

    names: set[str] = set()
    for group, modes in (
        ("migrationRules", MIGRATION_MODES),
        ("domainRules", DOMAIN_MODES),
        ("encodingRules", DOMAIN_MODES),
    ):
        rules = rule_set.get(group)
        if rules is None:
            rules = []
        if not isinstance(rules, list):  # an empty object too (it is falsy, still not a list)
            raise errors.invalid_ruleset(f"{group} must be a list")
        for rule in rules:
            if not isinstance(rule, dict):
                raise errors.invalid_ruleset("A rule must be an object")
            name = rule.get("name")
            if not name or not isinstance(name, str):
                raise errors.invalid_ruleset("Missing rule name")
            if len(name) > 256 or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name):
                raise errors.invalid_ruleset(f"Invalid rule name {name}")
            if name in names:
                raise errors.invalid_ruleset(f"Found rule with duplicate name '{name}'")
            names.add(name)
            if not rule.get("type"):
                raise errors.invalid_ruleset("Missing rule type")
            kind = str(rule.get("kind") or "TRANSFORM").upper()
            if kind not in RULE_KINDS:
                raise errors.invalid_ruleset(f"Invalid rule kind {rule.get('kind')}")
            mode = str(rule.get("mode") or ("UPGRADE" if group == "migrationRules" else "WRITE"))
            if mode.upper() not in modes:
                kind_name = "Migration" if group == "migrationRules" else "Domain"
                raise errors.invalid_ruleset(f"{kind_name} rules can only be {', '.join(modes)}")
            for action in ("onSuccess", "onFailure"):
                value = rule.get(action)
                if value and "," in str(value) and mode.upper() not in ("WRITEREAD", "UPDOWN"):
                    raise errors.invalid_ruleset(
                        "Multiple actions can only be specified for WRITEREAD or UPDOWN rules"
                    )

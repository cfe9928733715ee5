"""Per-subject authorisation rules.

The rules file (YAML) grants permissions on subject name patterns to principals::

    rules:
      - principals: [ci-deployer]          # exact names or glob patterns; "*" = any user
        subjects: ["orders-*", ":.prod:*"]  # glob patterns on the qualified subject name
        permission: write                   # read < write < admin
      - principals: [ops, "group:platform"]
        permission: admin                   # subjects default to "*"

A principal pattern matches the caller's name (an HTTP Basic user name, the JWT principal claim,
or the common name of a client certificate); ``user:NAME`` says the same explicitly, and
``group:NAME`` matches a caller whose JWT groups claim lists ``NAME`` (never a user whose name
merely starts with ``group:``). The prefixes are case-insensitive, the names are not.

``read`` allows reading a subject, looking schemas up in it and checking compatibility against
it; ``write`` also registering and deleting; ``admin`` also changing its config and mode.
Global ``/config`` and ``/mode`` changes and context deletes need ``admin`` on ``"*"``.
A permission on a pattern also grants the lower ones. Without a rules file every
authenticated user may do everything.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import yaml


class Permission(IntEnum):
    READ = 1
    WRITE = 2
    ADMIN = 3


@dataclass(frozen=True)
class Identity:
    """Who sent a request: a name, and the groups a bearer token lists."""

    name: str
    groups: frozenset[str] = frozenset()


GROUP_PREFIX = "group:"
USER_PREFIX = "user:"


def principal_matches(pattern: str, who: Identity) -> bool:
    """Whether the rule principal ``pattern`` names ``who`` (see the module docstring)."""
    lowered = pattern[: len(GROUP_PREFIX)].lower()
    if lowered == GROUP_PREFIX:
        wanted = pattern[len(GROUP_PREFIX) :]
        return any(fnmatch.fnmatchcase(group, wanted) for group in who.groups)
    if pattern[: len(USER_PREFIX)].lower() == USER_PREFIX:
        pattern = pattern[len(USER_PREFIX) :]
    return fnmatch.fnmatchcase(who.name, pattern)


@dataclass(frozen=True)
class Rule:
    principals: tuple[str, ...]
    subjects: tuple[str, ...]
    permission: Permission


class Grants:
    """What one principal may do."""

    def __init__(self, patterns: dict[Permission, list[str]]) -> None:
        self._regex: dict[Permission, re.Pattern[str] | None] = {}
        self._everything: dict[Permission, bool] = {}
        for perm in Permission:
            allowed = [p for level, ps in patterns.items() if level >= perm for p in ps]
            self._everything[perm] = "*" in allowed
            self._regex[perm] = (
                re.compile("|".join(fnmatch.translate(p) for p in allowed), re.S)
                if allowed
                else None
            )

    def can(self, subject: str, perm: Permission) -> bool:
        if self._everything[perm]:
            return True
        regex = self._regex[perm]
        return regex is not None and regex.match(subject) is not None

    def everything(self, perm: Permission) -> bool:
        """Whether ``perm`` is granted on every subject (``"*"``)."""
        return self._everything[perm]


ALL = Grants({Permission.ADMIN: ["*"]})


class Rules:
    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self._cache: dict[Identity, Grants] = {}

    def grants(self, principal: str | Identity) -> Grants:
        who = principal if isinstance(principal, Identity) else Identity(principal)
        found = self._cache.get(who)
        if found is None:
            patterns: dict[Permission, list[str]] = {}
            for rule in self.rules:
                if any(principal_matches(p, who) for p in rule.principals):
                    patterns.setdefault(rule.permission, []).extend(rule.subjects)
            found = Grants(patterns)
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[who] = found
        return found


def parse_rules(text: str) -> Rules:
    """Rules from the YAML text; ``ValueError`` saying which rule is wrong."""
    try:
        doc: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not YAML: {exc}") from None
    if doc is None:
        doc = {"rules": []}
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise ValueError("expected a mapping with a 'rules' list")
    rules = []
    for i, item in enumerate(doc["rules"], 1):
        if not isinstance(item, dict):
            raise ValueError(f"rule {i}: expected a mapping")
        unknown = set(item) - {"principals", "principal", "subjects", "permission"}
        if unknown:
            raise ValueError(f"rule {i}: unknown keys {sorted(unknown)}")
        principals = _strings(item.get("principals", item.get("principal")), i, "principals")
        if not principals:
            raise ValueError(f"rule {i}: 'principals' is required")
        for name in principals:
            if name.lower() in (GROUP_PREFIX, USER_PREFIX):
                raise ValueError(f"rule {i}: principal {name!r} names nobody")
        subjects = _strings(item.get("subjects", "*"), i, "subjects")
        perm = str(item.get("permission", "")).upper()
        if perm not in Permission.__members__:
            raise ValueError(f"rule {i}: permission must be read, write or admin")
        rules.append(Rule(tuple(principals), tuple(subjects), Permission[perm]))
    return Rules(rules)


def _strings(value: Any, i: int, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"rule {i}: '{key}' must be a string or a list of strings")

"""The registry of rule executors and actions, by type name; one global instance.

Same API as ``confluent_kafka.schema_registry.rule_registry``. A serde uses the registry it
was given (``rule_registry=``) or the global one; executors and actions register by the name
their ``type()`` returns (``CEL``, ``CEL_FIELD``, ``JSONATA``, ``ENCRYPT``, ``DLQ``...).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from serdes.rules.context import RuleAction, RuleExecutor

__all__ = ["RuleOverride", "RuleRegistry", "register_rule_action", "register_rule_executor"]


@dataclass(frozen=True)
class RuleOverride:
    """Client-side override of the rules of one type: onSuccess, onFailure, disabled."""

    type: str
    on_success: str | None
    on_failure: str | None
    disabled: bool | None


class RuleRegistry:
    __slots__ = ("_actions", "_executors", "_lock", "_overrides")

    def __init__(self) -> None:
        self._executors: dict[str, RuleExecutor] = {}
        self._actions: dict[str, RuleAction] = {}
        self._overrides: dict[str, RuleOverride] = {}
        self._lock = threading.Lock()

    def register_executor(self, rule_executor: RuleExecutor) -> None:
        with self._lock:
            self._executors[rule_executor.type()] = rule_executor

    def get_executor(self, name: str) -> RuleExecutor | None:
        return self._executors.get(name)

    def get_executors(self) -> list[RuleExecutor]:
        with self._lock:
            return list(self._executors.values())

    def register_action(self, rule_action: RuleAction) -> None:
        with self._lock:
            self._actions[rule_action.type()] = rule_action

    def get_action(self, name: str) -> RuleAction | None:
        return self._actions.get(name)

    def get_actions(self) -> list[RuleAction]:
        with self._lock:
            return list(self._actions.values())

    def register_override(self, rule_override: RuleOverride) -> None:
        with self._lock:
            self._overrides[rule_override.type] = rule_override

    def get_override(self, name: str) -> RuleOverride | None:
        return self._overrides.get(name)

    def get_overrides(self) -> list[RuleOverride]:
        with self._lock:
            return list(self._overrides.values())

    def clear(self) -> None:
        with self._lock:
            self._executors.clear()
            self._actions.clear()
            self._overrides.clear()

    @staticmethod
    def get_global_instance() -> RuleRegistry:
        return _global_instance

    @staticmethod
    def register_rule_executor(rule_executor: RuleExecutor) -> None:
        _global_instance.register_executor(rule_executor)

    @staticmethod
    def register_rule_action(rule_action: RuleAction) -> None:
        _global_instance.register_action(rule_action)

    @staticmethod
    def register_rule_override(rule_override: RuleOverride) -> None:
        _global_instance.register_override(rule_override)


_global_instance = RuleRegistry()


def register_rule_executor(rule_executor: RuleExecutor) -> None:
    """Register an executor in the global registry, under its ``type()``."""
    _global_instance.register_executor(rule_executor)


def register_rule_action(rule_action: RuleAction) -> None:
    """Register an action in the global registry, under its ``type()``."""
    _global_instance.register_action(rule_action)

"""``confluent_kafka.schema_registry.rule_registry``'s names, for imports mapped to serdes."""

from serdes.rules.registry import (
    RuleOverride,
    RuleRegistry,
    register_rule_action,
    register_rule_executor,
)

__all__ = ["RuleOverride", "RuleRegistry", "register_rule_action", "register_rule_executor"]

"""CEL verdicts: serdes' CEL executor (its Python fast path and the compiled engine behind
it) against confluent-kafka 2.16's (celpy) on the same expressions and messages. A verdict
is what a CONDITION rule makes of the result: true, false, or an evaluation error."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka.schema_registry import Rule as CRule
from confluent_kafka.schema_registry import RuleKind as CRuleKind
from confluent_kafka.schema_registry import RuleMode as CRuleMode
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor as CCel
from confluent_kafka.schema_registry.serde import RuleContext as CRuleContext

from serdes.rules import Rule, RuleContext, RuleKind, RuleMode
from serdes.rules.cel import CelExecutor
from serdes.rules.cel.fastpath import compile_fast
from serdes.schema import Schema

MESSAGE = {
    "name": "alice",
    "age": 30,
    "score": 1.5,
    "ok": True,
    "tags": ["a", "b"],
    "m": {"k": 1},
    "n": None,
    "b": b"xy",
    "big": 2**62,
}

EXPRESSIONS = [
    "message.age > 18",
    "message.age > 18.5",
    "message.age == 30.0",
    "message.ok == true",
    "message.ok == 1",
    "message.name == 'alice'",
    "message.name < 'bob'",
    "message.name < 1",
    "message.age > 'x'",
    "message.age + 1 == 31",
    "message.age + 1.0 == 31.0",
    "message.age / 7 == 4",
    "-message.age / 7 == -4",
    "message.age % 7 == 2",
    "-message.age % 7 == -2",
    "message.age / 0 == 1",
    "message.big * 4 > 0",
    "size(message.tags) == 2",
    "message.tags.size() == 2",
    "size(message.b) == 2",
    "size(message.name) == 5",
    "'a' in message.tags",
    "'z' in message.tags",
    "message.age in [30, 31]",
    "message.missing == 1",
    "message.missing == 1 || true",
    "true || message.missing == 1",
    "false && message.missing",
    "message.missing && false",
    "message.missing || false",
    "!message.ok",
    "!message.age",
    "message.n == null",
    "message.n > 1",
    "message.m.k == 1",
    "message.m['k'] == 1",
    "message.m.z == 1",
    "message.tags[0] == 'a'",
    "message.tags[5] == 'a'",
    "message.name.startsWith('al')",
    "message.name.endsWith('ce')",
    "message.name.contains('lic')",
    "message.age.startsWith('a')",
    "message.age > 10 ? message.ok : false",
    "message.age ? true : false",
    "message.score * 2.0 == 3.0",
    "message.age * 2 == 60",
    "message.age != 30",
    "message.age >= 30 && message.age <= 30",
    "(message.age > 1) == true",
    "message.name + '!' == 'alice!'",
    "message.name + 1 == 'x'",
    "message.age == message.score",
    "message.tags == ['a', 'b']",
    "message.n != null; message.n > 1",
    "message.age > 100; message.missing",
    "message.name.matches('^a.*e$')",
    "message.name.size() > 3 && message.tags.exists(t, t == 'b')",
    "has(message.name) && !has(message.zzz)",
]


def _verdict(fn: Any) -> str:
    try:
        return "true" if fn() else "false"
    except Exception:
        return "error"


def confluent_verdict(expr: str, message: dict[str, Any]) -> str:
    rule = CRule(
        "r", None, CRuleKind.CONDITION, CRuleMode.WRITE, "CEL", None, None, expr, None, None, False
    )
    target = CSchema("{}", "AVRO")
    ctx = CRuleContext(None, None, None, target, "s", CRuleMode.WRITE, rule, 0, [rule], None, None)
    executor = CCel()
    return _verdict(lambda: executor.transform(ctx, dict(message)))


def serdes_verdict(expr: str, message: dict[str, Any]) -> str:
    rule = Rule("r", None, RuleKind.CONDITION, RuleMode.WRITE, "CEL", expr=expr)
    ctx = RuleContext(
        None, None, None, Schema("{}"), "s", RuleMode.WRITE, rule, 0, [rule], None, None
    )
    return _verdict(lambda: CelExecutor().transform(ctx, dict(message)))


# On purpose (README): celpy's booleans are ints, so ``true == 1`` holds there; in CEL (and
# in Confluent's Java client) a bool never equals an int.
DIFFERENT_ON_PURPOSE = {"message.ok == 1": ("false", "true")}


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_same_verdict_as_confluent_kafka(expr: str) -> None:
    ours, theirs = serdes_verdict(expr, MESSAGE), confluent_verdict(expr, MESSAGE)
    assert (ours, theirs) == DIFFERENT_ON_PURPOSE.get(expr, (theirs, theirs))


# Where the compiled engine compares ints with doubles (newer CEL) and confluent-kafka's
# celpy says "no such overload", the fast path follows confluent-kafka.
MIXED_NUMERIC = {"message.age > 18.5", "message.age == 30.0", "message.age == message.score"}


@pytest.mark.parametrize("expr", [e for e in EXPRESSIONS if compile_fast(e) is not None])
def test_fast_path_agrees_with_the_compiled_engine(expr: str) -> None:
    import cel

    fast = compile_fast(expr)
    assert fast is not None
    program = cel.compile(expr)
    args = {"message": dict(MESSAGE)}
    fast_verdict = _verdict(lambda: fast(dict(args)))
    engine_verdict = _verdict(lambda: program.execute(dict(args)))
    if expr in MIXED_NUMERIC:
        assert (fast_verdict, engine_verdict) != ("error", "error")
        assert fast_verdict == "error" == confluent_verdict(expr, MESSAGE)
    else:
        assert fast_verdict == engine_verdict


def test_fast_path_covers_the_common_rules() -> None:
    """The fast subset must take the rules people write, or it speeds nothing up."""
    common = [e for e in EXPRESSIONS[:24] if "matches" not in e]
    assert all(compile_fast(e) is not None for e in common)
    assert compile_fast("message.name.matches('x')") is None  # engine

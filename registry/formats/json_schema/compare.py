"""Confluent's JSON Schema diff (``json-schema-provider/.../json/diff``) over our model.

``compare(original, update, compatible)`` lists every :class:`Difference` between the writer
schema (``original``) and the reader schema (``update``). Pairs of schemas are compared once
(memoised by identity); a pair met again while it is being compared is a recursive cycle and is
assumed compatible, and the whole comparison is repeated with the pairs found incompatible until
that assumption no longer changes the result (Confluent's greatest fixed point).

Set iteration order follows Java's ``HashSet`` of strings, so the differences come out in
Confluent's order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from registry import budget
from registry.formats.json_schema import jsontext
from registry.formats.json_schema.differences import Difference
from registry.formats.json_schema.model import (
    ArraySchema,
    CombinedSchema,
    ConstSchema,
    EmptySchema,
    EnumSchema,
    FalseSchema,
    NotSchema,
    NumberSchema,
    ObjectSchema,
    ReferenceSchema,
    Schema,
    StringSchema,
    deref,
)

Pair = tuple[int, int]


class Context:
    """The differences found at one place of the comparison (Confluent's ``Context``)."""

    __slots__ = (
        "compatible",
        "diffs",
        "memo",
        "optimism",
        "path",
        "progress",
        "seed",
        "shortcut",
    )

    def __init__(
        self,
        compatible: frozenset[str],
        memo: dict[Pair, tuple[Difference, ...]],
        progress: set[Pair],
        seed: dict[Pair, tuple[Difference, ...]],
        optimism: list[bool],
        path: list[str] | None = None,
        shortcut: bool = True,
    ) -> None:
        self.shortcut = shortcut
        self.compatible = compatible
        self.memo = memo
        self.progress = progress
        self.seed = seed
        self.optimism = optimism
        self.path: list[str] = list(path) if path else []
        self.diffs: list[Difference] = []

    def sub(self) -> Context:
        return Context(
            self.compatible,
            self.memo,
            self.progress,
            self.seed,
            self.optimism,
            self.path,
            self.shortcut,
        )

    def fresh(self) -> Context:
        return Context(
            self.compatible, self.memo, self.progress, self.seed, self.optimism, None, self.shortcut
        )

    def is_compatible(self) -> bool:
        compatible = self.compatible
        return all(d.type in compatible for d in self.diffs)

    def path_string(self) -> str:
        return "#/" + "/".join(self.path)

    def add(self, kind: str, attribute: str | None = None) -> None:
        if attribute is None:
            self.diffs.append(Difference(kind, self.path_string()))
        else:
            self.path.append(attribute)
            self.diffs.append(Difference(kind, self.path_string()))
            self.path.pop()

    def extend(self, diffs: Iterable[Difference]) -> None:
        self.diffs.extend(diffs)

    def extend_rebased(self, diffs: tuple[Difference, ...]) -> None:
        if not self.path:
            self.diffs.extend(diffs)
            return
        prefix = self.path_string()
        for diff in diffs:
            rel = diff.path
            self.diffs.append(
                Difference(diff.type, prefix if len(rel) <= 2 else f"{prefix}/{rel[2:]}")
            )

    def memoized(self, original: Schema, update: Schema) -> tuple[Difference, ...]:
        key = (id(original), id(update))
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        if key in self.progress:
            seeded = self.seed.get(key)
            if seeded is not None:
                return seeded
            self.optimism[0] = True
            return ()
        self.progress.add(key)
        try:
            pair_ctx = self.fresh()
            _compare_types(pair_ctx, original, update)
            result = _bounded(pair_ctx.diffs, self.compatible)
            self.memo[key] = result
            return result
        finally:
            self.progress.discard(key)


#: differences kept per pair of schemas: a schema whose ``$ref`` graph shares subschemas (``d0``
#: referring twice to ``d1``, ``d1`` twice to ``d2``, ...) has exponentially many paths, and so
#: exponentially many differences, though only one comparison per pair of nodes is made
MAX_DIFFERENCES = 1000


def _bounded(diffs: list[Difference], compatible: frozenset[str]) -> tuple[Difference, ...]:
    """The first :data:`MAX_DIFFERENCES` of ``diffs``, plus the first incompatible one if none
    is among them (so the verdict never changes)."""
    if len(diffs) <= MAX_DIFFERENCES:
        return tuple(diffs)
    kept = diffs[:MAX_DIFFERENCES]
    if all(d.type in compatible for d in kept):
        kept.extend(d for d in diffs[MAX_DIFFERENCES:] if d.type not in compatible)
        del kept[MAX_DIFFERENCES + 1 :]
    return tuple(kept)


def compare(
    original: Schema, update: Schema, compatible: frozenset[str], same_draft: bool = True
) -> list[Difference]:
    """Every difference between ``original`` (writer) and ``update`` (reader).

    With ``same_draft`` (both documents of one draft), subtrees whose JSON is identical and
    free of references are known to have no difference and are skipped.
    """
    seed: dict[Pair, tuple[Difference, ...]] = {}
    while True:
        memo: dict[Pair, tuple[Difference, ...]] = {}
        optimism = [False]
        ctx = Context(compatible, memo, set(), seed, optimism, None, same_draft)
        compare_into(ctx, original, update)
        incompatible = {
            key: diffs
            for key, diffs in memo.items()
            if any(d.type not in compatible for d in diffs)
        }
        if not optimism[0] or incompatible.keys() == seed.keys():
            return ctx.diffs
        seed = incompatible


def compare_into(ctx: Context, original: Schema | None, update: Schema | None) -> None:
    """``SchemaDiff.compare(ctx, original, update)``."""
    budget.charge()
    if original is None and update is None:
        return
    if original is None:
        ctx.add("SCHEMA_ADDED")
        return
    if update is None:
        ctx.add("SCHEMA_REMOVED")
        return
    original, update = deref(original), deref(update)
    if ctx.shortcut and original is not update:
        fingerprint = _fingerprint(original)
        if fingerprint and fingerprint == _fingerprint(update):
            return
    ctx.extend_rebased(ctx.memoized(original, update))


def _fingerprint(schema: Schema) -> str:
    fingerprint = schema.fingerprint
    if fingerprint is None:
        source = schema.source
        fingerprint = ""
        if isinstance(source, dict):
            text = json.dumps(source, sort_keys=True)
            if '"$ref"' not in text:
                fingerprint = text
        schema.fingerprint = fingerprint
    return fingerprint


def _types_equal(a: Schema, b: Schema) -> bool:
    return type(a) is type(b) or (isinstance(a, CombinedSchema) and isinstance(b, CombinedSchema))


def _compare_types(ctx: Context, original: Schema, update: Schema) -> None:
    if not isinstance(original, CombinedSchema) and isinstance(update, CombinedSchema):
        if len(update.subschemas) == 1:
            sub = ctx.sub()
            compare_into(sub, original, update.subschemas[0])
            if sub.is_compatible():
                ctx.extend(sub.diffs)
                return
        elif update.criterion in ("anyOf", "oneOf"):
            for subschema in update.subschemas:
                sub = ctx.sub()
                compare_into(sub, original, subschema)
                if sub.is_compatible():
                    ctx.extend(sub.diffs)
                    ctx.add("SUM_TYPE_EXTENDED")
                    return
    elif isinstance(original, CombinedSchema) and not isinstance(update, CombinedSchema):
        if len(original.subschemas) == 1:
            sub = ctx.sub()
            compare_into(sub, original.subschemas[0], update)
            if sub.is_compatible():
                ctx.extend(sub.diffs)
                return
        elif original.criterion == "allOf":
            for subschema in original.subschemas:
                sub = ctx.sub()
                compare_into(sub, subschema, update)
                if sub.is_compatible():
                    ctx.extend(sub.diffs)
                    ctx.add("PRODUCT_TYPE_NARROWED")
                    return

    if not _types_equal(original, update):
        if isinstance(original, FalseSchema) or isinstance(update, EmptySchema):
            return
        if (
            original.unprocessed.get("connect.type") == "bytes"
            and update.unprocessed.get("connect.type") == "bytes"
        ):
            return
        ctx.add("TYPE_CHANGED")
        return

    if original.id != update.id:
        ctx.add("ID_CHANGED")
    if original.title != update.title:
        ctx.add("TITLE_CHANGED")
    if original.description != update.description:
        ctx.add("DESCRIPTION_CHANGED")
    if original.has_default != update.has_default or (
        original.has_default and not json_equal(original.default, update.default)
    ):
        ctx.add("DEFAULT_CHANGED")

    rules = _RULES.get(type(original))
    if rules is not None:
        rules(ctx, original, update)
    elif isinstance(original, CombinedSchema) and isinstance(update, CombinedSchema):
        _compare_combined(ctx, original, update)


# ---- strings and numbers ------------------------------------------------------------------


def _compare_bound(
    ctx: Context, name: str, old: Any, new: Any, prefix: str, less: Callable[[Any, Any], bool]
) -> None:
    if old is None and new is None:
        return
    if old is None:
        ctx.add(f"{prefix}_ADDED", name)
    elif new is None:
        ctx.add(f"{prefix}_REMOVED", name)
    elif less(old, new):
        ctx.add(f"{prefix}_INCREASED", name)
    elif less(new, old):
        ctx.add(f"{prefix}_DECREASED", name)


def _lt(a: Any, b: Any) -> bool:
    return bool(a < b)


def _compare_string(ctx: Context, original: Any, update: Any) -> None:
    _compare_bound(ctx, "maxLength", original.max_length, update.max_length, "MAX_LENGTH", _lt)
    _compare_bound(ctx, "minLength", original.min_length, update.min_length, "MIN_LENGTH", _lt)
    if original.pattern is None and update.pattern is not None:
        ctx.add("PATTERN_ADDED", "pattern")
    elif original.pattern is not None and update.pattern is None:
        ctx.add("PATTERN_REMOVED", "pattern")
    elif original.pattern != update.pattern:
        ctx.add("PATTERN_CHANGED", "pattern")


def _decimal(value: Any) -> Decimal:
    if isinstance(value, jsontext.JsonDecimal):
        try:
            return value.decimal()
        except InvalidOperation:
            return Decimal(repr(float(value)))
    if isinstance(value, float):
        return Decimal(repr(value))
    return Decimal(value)


def _num_lt(a: Any, b: Any) -> bool:
    return _decimal(a) < _decimal(b)


def _compare_number(ctx: Context, original: Any, update: Any) -> None:
    _compare_bound(ctx, "maximum", original.maximum, update.maximum, "MAXIMUM", _num_lt)
    _compare_bound(ctx, "minimum", original.minimum, update.minimum, "MINIMUM", _num_lt)
    _compare_bound(
        ctx,
        "exclusiveMaximum",
        original.exclusive_maximum,
        update.exclusive_maximum,
        "EXCLUSIVE_MAXIMUM",
        _num_lt,
    )
    _compare_bound(
        ctx,
        "exclusiveMinimum",
        original.exclusive_minimum,
        update.exclusive_minimum,
        "EXCLUSIVE_MINIMUM",
        _num_lt,
    )
    old, new = original.multiple_of, update.multiple_of
    if old is not None or new is not None:
        if old is None:
            ctx.add("MULTIPLE_OF_ADDED", "multipleOf")
        elif new is None:
            ctx.add("MULTIPLE_OF_REMOVED", "multipleOf")
        else:
            old_d, new_d = _decimal(old), _decimal(new)
            if old_d != new_d:
                if old_d != 0 and new_d % old_d == 0:
                    ctx.add("MULTIPLE_OF_EXPANDED", "multipleOf")
                elif new_d != 0 and old_d % new_d == 0:
                    ctx.add("MULTIPLE_OF_REDUCED", "multipleOf")
                else:
                    ctx.add("MULTIPLE_OF_CHANGED", "multipleOf")
    if original.requires_integer != update.requires_integer:
        ctx.add("TYPE_EXTENDED" if original.requires_integer else "TYPE_NARROWED")


# ---- enum, const, not ---------------------------------------------------------------------


def json_key(value: Any) -> str:
    """A structural identity for a JSON value (numbers compared by value)."""
    return jsontext.dumps(_plain_numbers(value), sort_keys=True)


def _plain_numbers(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        dec = _decimal(value).normalize()
        return int(dec) if dec == dec.to_integral_value() else jsontext.JsonDecimal(str(dec))
    if isinstance(value, list):
        return [_plain_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_numbers(v) for k, v in value.items()}
    return value


def json_equal(a: Any, b: Any) -> bool:
    return a is b or json_key(a) == json_key(b)


def _compare_enum(ctx: Context, original: Any, update: Any) -> None:
    old = {json_key(v) for v in original.values}
    new = {json_key(v) for v in update.values}
    if old != new:
        if new >= old:
            ctx.add("ENUM_ARRAY_EXTENDED", "enum")
        elif old >= new:
            ctx.add("ENUM_ARRAY_NARROWED", "enum")
        else:
            ctx.add("ENUM_ARRAY_CHANGED", "enum")


def _compare_const(ctx: Context, original: Any, update: Any) -> None:
    if not json_equal(original.value, update.value):
        ctx.add("ENUM_ARRAY_CHANGED", "const")


def _compare_not(ctx: Context, original: Any, update: Any) -> None:
    ctx.path.append("not")
    try:
        sub = ctx.sub()
        compare_into(sub, update.must_not_match, original.must_not_match)
        ctx.add("NOT_TYPE_NARROWED" if sub.is_compatible() else "NOT_TYPE_EXTENDED")
    finally:
        ctx.path.pop()


# ---- combined schemas ---------------------------------------------------------------------


def _is_singleton(schema: CombinedSchema) -> bool:
    return len(schema.subschemas) == 1


def _distinct(subschemas: list[Schema]) -> list[Schema]:
    """Confluent collapses equal subschemas (a ``LinkedHashSet`` of ``JsonSchema``)."""
    seen: set[Any] = set()
    out = []
    for schema in subschemas:
        source = schema.source
        key: Any = id(schema) if source is None else (type(schema).__name__, json_key(source))
        if key not in seen:
            seen.add(key)
            out.append(schema)
    return out


def _compare_combined(ctx: Context, original: CombinedSchema, update: CombinedSchema) -> None:
    old_crit, new_crit = original.criterion, update.criterion
    if old_crit != new_crit:
        if (
            new_crit == "anyOf"
            or (_is_singleton(original) and _is_singleton(update))
            or (_is_singleton(original) and new_crit == "oneOf")
            or (_is_singleton(update) and old_crit == "allOf")
        ):
            ctx.add("COMBINED_TYPE_EXTENDED")
        else:
            ctx.add("COMBINED_TYPE_CHANGED")
            return
    olds = _distinct(original.subschemas)
    news = _distinct(update.subschemas)
    if len(olds) < len(news):
        ctx.add("PRODUCT_TYPE_EXTENDED" if new_crit == "allOf" else "SUM_TYPE_EXTENDED")
    elif len(olds) > len(news):
        ctx.add("SUM_TYPE_NARROWED" if old_crit in ("anyOf", "oneOf") else "PRODUCT_TYPE_NARROWED")

    matching = _identical_matching(olds, news) if ctx.shortcut else None
    if matching is None:
        matching = _compatible_matching(ctx, old_crit, olds, news)
    for _i, (_j, diffs) in sorted(matching.items()):
        ctx.extend(diffs)
    if len(matching) < min(len(olds), len(news)):
        ctx.add("COMBINED_TYPE_SUBSCHEMAS_CHANGED")


def _identical_matching(
    olds: list[Schema], news: list[Schema]
) -> dict[int, tuple[int, list[Difference]]] | None:
    """Subschemas paired with identical ones (no difference), when that pairs as many as a
    maximum matching can: a reordered ``oneOf`` is then matched in linear time. None otherwise
    (the general matching compares every pair)."""
    wanted = min(len(olds), len(news))
    by_text: dict[str, list[int]] = {}
    for j, new in enumerate(news):
        text = _fingerprint(new)
        if text:
            by_text.setdefault(text, []).append(j)
    for stack in by_text.values():
        stack.reverse()
    out: dict[int, tuple[int, list[Difference]]] = {}
    for i, old in enumerate(olds):
        stack = by_text.get(_fingerprint(old)) if _fingerprint(old) else None
        if stack:
            out[i] = (stack.pop(), [])
    return out if len(out) == wanted else None


def _compatible_matching(
    ctx: Context, old_crit: str, olds: list[Schema], news: list[Schema]
) -> dict[int, tuple[int, list[Difference]]]:
    edges: dict[int, list[tuple[int, list[Difference]]]] = {}
    for i, old in enumerate(olds):
        ctx.path.append(f"{old_crit}/{i}")
        try:
            for j, new in enumerate(news):
                sub = ctx.sub()
                compare_into(sub, old, new)
                if sub.is_compatible():
                    edges.setdefault(i, []).append((j, sub.diffs))
        finally:
            ctx.path.pop()
    return _maximum_matching(len(olds), edges)


def _maximum_matching(
    left: int, edges: dict[int, list[tuple[int, list[Difference]]]]
) -> dict[int, tuple[int, list[Difference]]]:
    """A maximum bipartite matching (augmenting paths); ``left -> (right, edge value)``."""
    owner: dict[int, int] = {}

    def augment(i: int, visited: set[int]) -> bool:
        for j, _diffs in edges.get(i, ()):
            if j in visited:
                continue
            visited.add(j)
            if j not in owner or augment(owner[j], visited):
                owner[j] = i
                return True
        return False

    for i in range(left):
        augment(i, set())
    out: dict[int, tuple[int, list[Difference]]] = {}
    for j, i in owner.items():
        for jj, diffs in edges[i]:
            if jj == j:
                out[i] = (j, diffs)
                break
    return out


# ---- objects ------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _java_string_hash(text: str) -> int:
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hash_set_order(first: Iterable[str], second: Iterable[str]) -> list[str]:
    """The iteration order of Java's ``new HashSet<>(first)`` after ``addAll(second)``."""
    keys = list(dict.fromkeys(first))
    capacity = 1
    wanted = max(int(len(keys) / 0.75) + 1, 16)
    while capacity < wanted:
        capacity <<= 1
    seen = set(keys)
    for key in second:
        if key not in seen:
            seen.add(key)
            keys.append(key)
    while len(keys) > capacity * 3 // 4:
        capacity <<= 1
    mask = capacity - 1
    order = {key: index for index, key in enumerate(keys)}
    return sorted(keys, key=lambda k: (_java_string_hash(k) & mask, order[k]))


def _is_open(schema: ObjectSchema) -> bool:
    if not schema.additional_permitted or schema.additional_schema is not None:
        return False
    if schema.pattern_properties:
        return False
    uneval = schema.unevaluated
    return uneval is None or isinstance(uneval, EmptySchema)


def _partial_schema(schema: ObjectSchema, key: str) -> Schema | None:
    for pattern, sub in schema.pattern_properties:
        if pattern.search(key):
            return sub
    if schema.additional_schema is not None:
        return schema.additional_schema
    if schema.additional_permitted:
        uneval = schema.unevaluated
        if uneval is not None and not isinstance(uneval, FalseSchema | EmptySchema):
            return uneval
    return None


def _compare_object(ctx: Context, original: Any, update: Any) -> None:
    _compare_required(ctx, original, update)
    _compare_properties(ctx, original, update)
    _compare_dependencies(ctx, original, update)
    _compare_additional(ctx, original, update)
    _compare_unevaluated(ctx, original.unevaluated, update.unevaluated, "PROPERTIES")
    _compare_bound(
        ctx, "maxProperties", original.max_properties, update.max_properties, "MAX_PROPERTIES", _lt
    )
    _compare_bound(
        ctx, "minProperties", original.min_properties, update.min_properties, "MIN_PROPERTIES", _lt
    )


def _compare_required(ctx: Context, original: ObjectSchema, update: ObjectSchema) -> None:
    ctx.path.append("required")
    try:
        old_required = set(original.required)
        new_required = set(update.required)
        for key in original.properties:
            new_schema = update.properties.get(key)
            if new_schema is None:
                continue
            was, now = key in old_required, key in new_required
            if was and not now:
                ctx.add("REQUIRED_ATTRIBUTE_REMOVED", key)
            elif now and not was:
                ctx.add(
                    "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
                    if new_schema.has_default
                    else "REQUIRED_ATTRIBUTE_ADDED",
                    key,
                )
    finally:
        ctx.path.pop()


def _compare_properties(ctx: Context, original: ObjectSchema, update: ObjectSchema) -> None:
    ctx.path.append("properties")
    try:
        update_required = set(update.required)
        for key in java_hash_set_order(original.properties, update.properties):
            budget.charge()  # per property, compared or not
            ctx.path.append(key)
            try:
                old = original.properties.get(key)
                new = update.properties.get(key)
                if new is None:
                    _property_removed(ctx, old, update, key)
                elif old is None:
                    _property_added(ctx, new, original, key, key in update_required)
                else:
                    compare_into(ctx, old, new)
            finally:
                ctx.path.pop()
    finally:
        ctx.path.pop()


def _property_removed(ctx: Context, old: Any, update: ObjectSchema, key: str) -> None:
    if _is_open(update):
        ctx.add("PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL")
        return
    partial = _partial_schema(update, key)
    if partial is not None:
        sub = ctx.sub()
        compare_into(sub, old, partial)
        ctx.extend(sub.diffs)
        ctx.add(
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            if sub.is_compatible()
            else "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
        )
    elif isinstance(old, FalseSchema):
        ctx.add("PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
    else:
        ctx.add("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")


def _property_added(
    ctx: Context, new: Schema, original: ObjectSchema, key: str, required: bool
) -> None:
    if _is_open(original):
        if isinstance(new, EmptySchema):
            ctx.add("PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL")
        elif required:
            ctx.add(
                "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
                if new.has_default
                else "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
            )
        else:
            ctx.add("OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
        return
    partial = _partial_schema(original, key)
    if partial is not None:
        sub = ctx.sub()
        compare_into(sub, partial, new)
        ctx.extend(sub.diffs)
        ctx.add(
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
            if sub.is_compatible()
            else "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
        )
    if required:
        ctx.add(
            "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
            if new.has_default
            else "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
        )
    else:
        ctx.add("OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")


def _compare_dependencies(ctx: Context, original: ObjectSchema, update: ObjectSchema) -> None:
    ctx.path.append("dependencies")
    try:
        old_arrays, new_arrays = original.property_dependencies, update.property_dependencies
        for key in java_hash_set_order(old_arrays, new_arrays):
            old, new = old_arrays.get(key), new_arrays.get(key)
            if new is None:
                ctx.add("DEPENDENCY_ARRAY_REMOVED", key)
            elif old is None:
                ctx.add("DEPENDENCY_ARRAY_ADDED", key)
            elif old != new:
                if new >= old:
                    ctx.add("DEPENDENCY_ARRAY_EXTENDED", key)
                elif old >= new:
                    ctx.add("DEPENDENCY_ARRAY_NARROWED", key)
                else:
                    ctx.add("DEPENDENCY_ARRAY_CHANGED", key)
        old_schemas, new_schemas = original.schema_dependencies, update.schema_dependencies
        for key in java_hash_set_order(old_schemas, new_schemas):
            old_s, new_s = old_schemas.get(key), new_schemas.get(key)
            if new_s is None:
                ctx.add("DEPENDENCY_SCHEMA_REMOVED", key)
            elif old_s is None:
                ctx.add("DEPENDENCY_SCHEMA_ADDED", key)
            else:
                ctx.path.append(key)
                try:
                    compare_into(ctx, old_s, new_s)
                finally:
                    ctx.path.pop()
    finally:
        ctx.path.pop()


def _compare_additional(ctx: Context, original: ObjectSchema, update: ObjectSchema) -> None:
    ctx.path.append("additionalProperties")
    try:
        if original.additional_permitted != update.additional_permitted:
            ctx.add(
                "ADDITIONAL_PROPERTIES_ADDED"
                if update.additional_permitted
                else "ADDITIONAL_PROPERTIES_REMOVED"
            )
        elif original.additional_schema is None and update.additional_schema is not None:
            ctx.add("ADDITIONAL_PROPERTIES_NARROWED")
        elif update.additional_schema is None and original.additional_schema is not None:
            ctx.add("ADDITIONAL_PROPERTIES_EXTENDED")
        else:
            compare_into(ctx, original.additional_schema, update.additional_schema)
    finally:
        ctx.path.pop()


def _compare_unevaluated(ctx: Context, old: Schema | None, new: Schema | None, what: str) -> None:
    if old is None and new is None:
        return
    ctx.path.append(f"unevaluated{what.capitalize()}")
    prefix = f"UNEVALUATED_{what}"
    try:
        if old is None:
            ctx.add(f"{prefix}_REMOVED" if isinstance(new, FalseSchema) else f"{prefix}_NARROWED")
        elif new is None:
            ctx.add(f"{prefix}_ADDED" if isinstance(old, FalseSchema) else f"{prefix}_EXTENDED")
        elif isinstance(old, FalseSchema) and not isinstance(new, FalseSchema):
            ctx.add(f"{prefix}_ADDED")
        elif not isinstance(old, FalseSchema) and isinstance(new, FalseSchema):
            ctx.add(f"{prefix}_REMOVED")
        elif isinstance(old, EmptySchema) and not isinstance(new, EmptySchema):
            ctx.add(f"{prefix}_NARROWED")
        elif not isinstance(old, EmptySchema) and isinstance(new, EmptySchema):
            ctx.add(f"{prefix}_EXTENDED")
        else:
            compare_into(ctx, old, new)
    finally:
        ctx.path.pop()


# ---- arrays -------------------------------------------------------------------------------


def _array_open(schema: ArraySchema) -> bool:
    if not schema.additional_permitted or schema.additional_schema is not None:
        return False
    uneval = schema.unevaluated
    return uneval is None or isinstance(uneval, EmptySchema)


def _array_partial(schema: ArraySchema) -> Schema | None:
    if schema.additional_schema is not None:
        return schema.additional_schema
    if schema.additional_permitted:
        uneval = schema.unevaluated
        if uneval is not None and not isinstance(uneval, FalseSchema | EmptySchema):
            return uneval
    return None


def _compare_array(ctx: Context, original: Any, update: Any) -> None:
    ctx.path.append("items")
    try:
        compare_into(ctx, original.all_items, update.all_items)
    finally:
        ctx.path.pop()
    _compare_tuple_items(ctx, original, update)
    ctx.path.append("additionalItems")
    try:
        if original.additional_permitted != update.additional_permitted:
            ctx.add(
                "ADDITIONAL_ITEMS_REMOVED"
                if original.additional_permitted
                else "ADDITIONAL_ITEMS_ADDED"
            )
        elif original.additional_schema is None and update.additional_schema is not None:
            ctx.add("ADDITIONAL_ITEMS_NARROWED")
        elif update.additional_schema is None and original.additional_schema is not None:
            ctx.add("ADDITIONAL_ITEMS_EXTENDED")
        else:
            compare_into(ctx, original.additional_schema, update.additional_schema)
    finally:
        ctx.path.pop()
    _compare_unevaluated(ctx, original.unevaluated, update.unevaluated, "ITEMS")
    _compare_bound(ctx, "maxItems", original.max_items, update.max_items, "MAX_ITEMS", _lt)
    _compare_bound(ctx, "minItems", original.min_items, update.min_items, "MIN_ITEMS", _lt)
    if original.unique_items != update.unique_items:
        ctx.add(
            "UNIQUE_ITEMS_REMOVED" if original.unique_items else "UNIQUE_ITEMS_ADDED", "uniqueItems"
        )
    _compare_bound(
        ctx,
        "maxContains",
        _int_value(original.max_contains),
        _int_value(update.max_contains),
        "MAX_CONTAINS",
        _lt,
    )
    _compare_bound(
        ctx,
        "minContains",
        _int_value(original.min_contains),
        _int_value(update.min_contains),
        "MIN_CONTAINS",
        _lt,
    )


def _int_value(value: Any) -> int | None:
    return None if value is None else int(value)


def _compare_tuple_items(ctx: Context, original: ArraySchema, update: ArraySchema) -> None:
    olds = original.item_schemas or []
    news = update.item_schemas or []
    common = min(len(olds), len(news))
    for index in range(common):
        ctx.path.append(f"items/{index}")
        try:
            compare_into(ctx, olds[index], news[index])
        finally:
            ctx.path.pop()
    for index in range(common, len(olds)):
        ctx.path.append(f"items/{index}")
        try:
            old = olds[index]
            if _array_open(update):
                ctx.add("ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL")
                continue
            partial = _array_partial(update)
            if partial is not None:
                sub = ctx.sub()
                compare_into(sub, old, partial)
                ctx.extend(sub.diffs)
                ctx.add(
                    "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                    if sub.is_compatible()
                    else "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                )
            elif isinstance(old, FalseSchema):
                ctx.add("ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL")
            else:
                ctx.add("ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        finally:
            ctx.path.pop()
    for index in range(common, len(news)):
        ctx.path.append(f"items/{index}")
        try:
            new = news[index]
            if _array_open(original):
                ctx.add(
                    "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
                    if isinstance(new, EmptySchema)
                    else "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
                )
                continue
            partial = _array_partial(original)
            if partial is not None:
                sub = ctx.sub()
                compare_into(sub, partial, new)
                ctx.extend(sub.diffs)
                ctx.add(
                    "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                    if sub.is_compatible()
                    else "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
                )
            else:
                ctx.add("ITEM_ADDED_TO_CLOSED_CONTENT_MODEL")
        finally:
            ctx.path.pop()


_RULES: dict[type, Callable[[Context, Any, Any], None]] = {
    StringSchema: _compare_string,
    NumberSchema: _compare_number,
    ConstSchema: _compare_const,
    EnumSchema: _compare_enum,
    NotSchema: _compare_not,
    ObjectSchema: _compare_object,
    ArraySchema: _compare_array,
}

__all__ = ["Context", "ReferenceSchema", "compare", "java_hash_set_order"]

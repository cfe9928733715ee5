"""Inline schema tags of a ``.proto`` text (Confluent 8.x ``ProtobufSchema``): the tags its
``(confluent.message_meta)`` and ``(confluent.field_meta)`` options carry
(``inlineTaggedEntities``, for ``findTags``), and the text with tags added or removed
(``copy(tagsToAdd, tagsToRemove)``, for ``POST /subjects/{s}/versions/{v}/tags``).

Confluent works on Wire's parse of the stored text: an entity path names messages from the top
(without the package), then a field, optionally through its oneof (``Order.payment.card``).
The options of each element it changes are merged by name (``mergeOptions``: an option set by
sub-field, ``(confluent.field_meta).tags = "A"``, becomes a map; maps set twice are merged,
repeated values collected), the tags added to and removed from the meta map, and the element's
options replaced by the merged ones - in the iteration order of the Java ``HashMap`` they were
collected in. No import of ``confluent/meta.proto`` is added. The printer then prints the
result like any text schema.
"""

from __future__ import annotations

from typing import Any

from registry.formats.protobuf.elements import Element, FieldElement, parse_elements
from registry.formats.protobuf.options import Option, OptionWriter, Prim

MESSAGE_META = "confluent.message_meta"
FIELD_META = "confluent.field_meta"
TAGS = "tags"
#: field options Wire keeps apart from the option list (printed after it)
_SPECIAL = ("default", "json_name")

TagMap = dict[tuple[str, str], list[str]]


class TagPathError(ValueError):
    """An entity path that names no message or field (Confluent's IllegalArgumentException)."""


# ---- findTags ---------------------------------------------------------------------------------


def inline_tagged_entities(text: str) -> TagMap:
    """``inlineTaggedEntities``: (path, entity type) -> tags, messages before their fields,
    a message's oneof fields before its other fields, nested messages after."""
    found: TagMap = {}
    _collect(parse_elements(text), "", found, set())
    return found


def _collect(parent: Element, scope: str, found: TagMap, visited: set[str]) -> None:
    for message in parent.children:
        if message.kind != "message":
            continue
        name = scope + message.name
        if name in visited:
            continue
        visited.add(name)
        tags = _tags(MESSAGE_META, message.written.options)
        if tags:
            found[(name, "sr_record")] = tags
        fields = [f for o in _oneofs(message) for f in o.fields] + _fields(message)
        for f in fields:
            tags = _tags(FIELD_META, f.written.options)
            if tags:
                found[(f"{name}.{f.name}", "sr_field")] = tags
        _collect(message, name + ".", found, visited)


def _tags(meta: str, options: list[Option] | None) -> list[str]:
    """``getInlineTags``: the tags of the merged ``meta`` option, each once."""
    merged = merge_options(options or [])
    option = merged.get(meta)
    if option is None:
        return []
    value = option.value.get(TAGS) if option.kind == "MAP" else None
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return list(dict.fromkeys(_text(v) for v in values))


def _text(value: Any) -> str:
    return str(value.value) if isinstance(value, Prim) else str(value)


def _oneofs(message: Element) -> list[Element]:
    return [c for c in message.children if c.kind == "oneof"]


def _fields(message: Element) -> list[FieldElement]:
    """The message's own fields (Wire keeps groups apart)."""
    groups = {c.name for c in message.children if c.kind == "group"}
    return [f for f in message.fields if f.name not in groups]


# ---- mergeOptions -----------------------------------------------------------------------------


class JavaHashMap:
    """A ``java.util.HashMap`` with String keys, for its iteration order: bins in index order,
    each bin's chain in order. ``merge`` puts a new key at the head of its bin, ``put`` at the
    tail; a resize splits each chain keeping its order."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._table: list[list[str]] = []

    def _resize(self) -> None:
        capacity = 2 * len(self._table) if self._table else 16
        table: list[list[str]] = [[] for _ in range(capacity)]
        for chain in self._table:
            for key in chain:
                table[_bucket(key, capacity)].append(key)
        self._table = table

    def _threshold(self) -> int:
        return len(self._table) * 3 // 4

    def get(self, key: str) -> Any:
        return self._values.get(key)

    def merge(self, key: str, value: Any) -> None:
        """``merge`` of an absent key (the caller merges present ones)."""
        if key in self._values:
            self._values[key] = value
            return
        if not self._table or len(self._values) > self._threshold():
            self._resize()
        self._table[_bucket(key, len(self._table))].insert(0, key)
        self._values[key] = value

    def put(self, key: str, value: Any) -> None:
        if key in self._values:
            self._values[key] = value
            return
        if not self._table:
            self._resize()
        self._table[_bucket(key, len(self._table))].append(key)
        self._values[key] = value
        if len(self._values) > self._threshold():
            self._resize()

    def remove(self, key: str) -> None:
        if key in self._values:
            del self._values[key]
            self._table[_bucket(key, len(self._table))].remove(key)

    def values(self) -> list[Any]:
        return [self._values[key] for chain in self._table for key in chain]


def _bucket(key: str, capacity: int) -> int:
    """``String.hashCode`` (over UTF-16 units), spread as ``HashMap.hash`` does."""
    data = key.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


def merge_options(options: list[Option]) -> JavaHashMap:
    """``ProtobufSchema.mergeOptions``: options by name (leading dot dropped), sub-field
    options turned into maps, maps set twice merged, any other option set twice replaced."""
    merged = JavaHashMap()
    for option in options:
        key = option.name[1:] if option.name.startswith(".") else option.name
        current = merged.get(key)
        merged.merge(key, transform(option) if current is None else _merge(current, option))
    return merged


def transform(option: Option) -> Option:
    if option.kind != "OPTION":
        return option
    return Option(option.name, "MAP", _option_map(option), option.parenthesized)


def _option_map(option: Option) -> dict[str, Any]:
    inner: Option = option.value
    value = inner.value
    if inner.kind in ("BOOLEAN", "ENUM", "NUMBER"):
        value = value if isinstance(value, Prim) else Prim(inner.kind, value)
    elif inner.kind == "OPTION":
        value = _option_map(inner)
    return {inner.name: value}


def _merge(existing: Option, replacement: Option) -> Option:
    replacement = transform(replacement)
    if existing.kind != "MAP" or replacement.kind != "MAP":
        return replacement  # Confluent discards the earlier one
    result = dict(existing.value)
    for key, value in replacement.value.items():
        if key in result:
            result[key] = _union(result[key], value)
        else:
            result[key] = value
    return Option(replacement.name, "MAP", result, replacement.parenthesized)


def _union(first: Any, second: Any) -> list[Any]:
    out: list[Any] = []
    for part in (first, second):
        for item in part if isinstance(part, list) else [part]:
            if item not in out:
                out.append(item)
    return out


# ---- copy(tagsToAdd, tagsToRemove) --------------------------------------------------------------


def modify_tags(text: str, to_add: TagMap, to_remove: TagMap) -> str:
    """``text`` with the tags added, then removed (Confluent's ``addBeforeRemove``)."""
    to_add, to_remove = _normalized(to_add), _normalized(to_remove)
    root = parse_elements(text, positions=True)
    # element -> its options as changed so far (Confluent's optionCache holds the meta option)
    changed: dict[int, tuple[Element | FieldElement, str, list[Option]]] = {}
    cache: dict[int, Option | None] = {}
    for entity in dict.fromkeys([*to_add, *to_remove]):
        path, kind = entity
        words = _split(path)
        if kind == "sr_record":
            meta, element = MESSAGE_META, _find(root, words, field=False)
        else:
            meta, element = FIELD_META, _find(root, words, field=True)
        cached = cache.get(id(element))
        options = [cached] if cached is not None else _own(element.written.options)
        tags_to_add = to_add.get(entity) or []
        if tags_to_add:
            inner = Option(TAGS, "LIST", list(tags_to_add))
            options = [*options, Option(meta, "OPTION", inner, True)]
        merged = merge_options(options)
        _remove_tags(merged, meta, to_remove.get(entity) or [])
        cache[id(element)] = merged.get(meta)
        changed[id(element)] = (element, meta, merged.values())
    edits: list[tuple[int, int, str]] = []
    for element, _, options in changed.values():
        edits.extend(_edits(text, element, options))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _normalized(tags: TagMap) -> TagMap:
    """Entities by ``SchemaEntity.getNormalizedPath`` (one leading dot dropped)."""
    out: TagMap = {}
    for (path, kind), values in tags.items():
        merged = out.setdefault((path[1:] if path.startswith(".") else path, kind), [])
        merged.extend(v for v in values if v not in merged)
    return out


def _own(options: list[Option] | None) -> list[Option]:
    if options is None:
        raise TagPathError("Options of the tagged element could not be read")
    return [o for o in options if o.parenthesized or o.name not in _SPECIAL]


def _remove_tags(merged: JavaHashMap, meta: str, tags: list[str]) -> None:
    option = merged.get(meta)
    if not tags or option is None or option.kind != "MAP":
        return
    value = dict(option.value)
    current = value.get(TAGS)
    if current is None:
        return
    remaining = [t for t in (current if isinstance(current, list) else [current]) if t not in tags]
    if remaining:
        value[TAGS] = remaining
    else:
        value.pop(TAGS)
    if value:
        merged.put(meta, Option(meta, "MAP", value, True))
    else:
        merged.remove(meta)


def _split(path: str) -> list[str]:
    """Java's ``split("\\\\.")``: trailing empty strings dropped."""
    words = path.split(".")
    while len(words) > 1 and words[-1] == "":
        words.pop()
    return words


def _find(root: Element, words: list[str], *, field: bool) -> Any:
    """``ProtobufSchemaUtils.findMatchingElement``."""
    end = len(words) - 1 if field else len(words)
    message: Element | None = None
    i = 0
    while i < end:
        parent = root if i == 0 else message
        assert parent is not None
        found = next(
            (c for c in parent.children if c.kind == "message" and c.name == words[i]), None
        )
        if found is not None:
            message = found
        elif i == end - 1 and field:
            break
        else:
            raise TagPathError(f"No matching Message with name '{words[i]}' found in the schema")
        i += 1
    if not field:
        assert message is not None
        return message
    name = words[-1]
    if message is None:
        raise TagPathError(f"No matching Field with name '{name}' found in the schema")
    if i == end:
        for f in [*_fields(message), *(f for o in _oneofs(message) for f in o.fields)]:
            if f.name == name:
                return f
    else:
        oneof = None
        for candidate in _oneofs(message):
            if candidate.name == words[i]:
                oneof = candidate
        if oneof is not None:
            for f in oneof.fields:
                if f.name == name:
                    return f
    raise TagPathError(f"No matching Field with name '{name}' found in the schema")


def _edits(
    text: str, element: Element | FieldElement, options: list[Option]
) -> list[tuple[int, int, str]]:
    writer = OptionWriter(normalize=False)
    if isinstance(element, FieldElement):
        special = [
            o for o in element.written.options or [] if not o.parenthesized and o.name in _SPECIAL
        ]
        everything = [*options, *special]
        listed = (" " + writer.options_list(everything)) if everything else ""
        if element.written.spans:
            start, end = element.written.spans[0]
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            return [(start, end, listed)]
        return [(element.end, element.end, listed)]
    edits = [(start, end, "") for start, end in element.written.spans]
    statements = "".join("\n" + writer.statement(o) for o in options)
    edits.append((element.body, element.body, statements))
    return edits

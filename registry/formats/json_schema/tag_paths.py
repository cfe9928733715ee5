"""Where a ``SchemaEntity`` path points in a JSON Schema (Confluent 8.x
``JsonSchemaUtils.findMatchingEntity``), for ``POST /subjects/{s}/versions/{v}/tags``.

A path is a dot-separated walk: a type word (``object``, ``array``, ``anyof``, ``allof``,
``oneof``, ``not``) says how to step into the node, and after ``object`` come property names
(or ``definitions``/``$defs`` and a definition name). Names containing dots are matched by
joining words until the node has such a key. ``object.address.object.street`` is the
``street`` property of the object under the ``address`` property; ``object`` alone (as a
record) is the root.
"""

from __future__ import annotations

from typing import Any


def find_entity(root: Any, path: str, kind: str) -> dict[str, Any] | None:
    """The schema node ``path`` names, or None when there is none."""
    words = path.split(".")
    node = _walk(root, kind, words)
    return node if isinstance(node, dict) else None


def _by_name(node: Any, words: list[str]) -> Any:
    if not words or not isinstance(node, dict):
        return None
    name = words.pop(0)
    while name not in node and words:
        name = f"{name}.{words.pop(0)}"
    return node.get(name)


def _walk(node: Any, kind: str, words: list[str]) -> Any:
    if not words or not isinstance(node, dict):
        return None
    step = words.pop(0)
    if step == "object":
        if kind == "sr_record" and not words:
            return node
        if not words:
            return None
        if words[0] in ("definitions", "$defs"):
            container = node.get(words.pop(0))
        else:
            container = node.get("properties")
        found = _by_name(container, words)
        return found if found is None or not words else _walk(found, kind, words)
    if step == "array":
        return _walk(node.get("items"), kind, words)
    if step == "not":
        return _walk(node.get("not"), kind, words)
    if step == "anyof" and "anyOf" not in node:
        # "type": ["null", "object"]: the index word is skipped, the node itself continues
        if words:
            words.pop(0)
        return _walk(node, kind, words)
    if step == "allof" and "allOf" not in node:
        # if/then/else: "allof.<n>.conditional.<if|then|else>..."
        if words:
            words.pop(0)
        if words and words[0] == "conditional":
            words.pop(0)
            return _walk(node.get(words.pop(0)) if words else None, kind, words)
        return _walk(node, kind, words)
    # anyOf/allOf/oneOf by index: Confluent sorts the subschemas with its own comparator
    # before indexing; that order is not reproduced here, so such paths are not matched.
    return None

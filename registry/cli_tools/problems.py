"""One incompatibility, taken apart from a Confluent-style message: rule, path, field, the old
and the new type, and the line of the new file it is about.

The same parser reads the messages of an offline check (``registry.compatibility.check``) and of
a registry's ``POST /compatibility/...?verbose=true`` answer, e.g. Avro's ``{errorType:
'TYPE_MISMATCH', description:'The type (path '/fields/1/type') of a field in the new schema does
not match with the old schema', additionalInfo:'reader type: STRING not compatible with writer
type: INT'}``; the trailers (``{oldSchemaVersion: 2}``, ``{oldSchema: '...'}``,
``{validateFields: 'false', compatibility: 'BACKWARD'}``) are attached to the problems before
them instead of becoming problems.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

_DIFFERENCE = re.compile(
    r"""^\{errorType:\s*['"](?P<rule>[^'"]+)['"],\s*description:\s*['"](?P<desc>.*?)['"]"""
    r"""(?:,\s*additionalInfo:\s*['"](?P<info>.*)['"])?\s*\}$""",
    re.DOTALL,
)
_PATH = re.compile(r"""path\s+['"]([^'"]*)['"]""")
_LABEL = re.compile(r"\b(new|old)\b")
_TYPE_MISMATCH = re.compile(r"reader type: (\S+) not compatible with writer type: (\S+)")
_UNION_LACKING = re.compile(r"reader union lacking writer type: (\S+)")
_OLD_VERSION = re.compile(r"^\{oldSchemaVersion:\s*(\d+)\}$")
_OLD_SCHEMA = re.compile(r"^\{oldSchema:\s*(?:<truncated>\s*)?'(.*)'\}$", re.DOTALL)
_TRAILER = re.compile(r"^\{validateFields:.*compatibility:\s*'(\w+)'\}$")


@dataclass
class Problem:
    """Why a new schema breaks its subject, in one place of the schema."""

    rule: str
    description: str
    path: str | None = None
    field: str | None = None
    old_type: str | None = None
    new_type: str | None = None
    line: int = 1
    old_version: int | None = None
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_messages(
    messages: Sequence[str], new_text: str, old_text: str | None = None
) -> list[Problem]:
    """Problems of a failed check; ``old_text`` is the version compared with, when known
    (otherwise the ``{oldSchema: ...}`` trailer gives it)."""
    problems: list[Problem] = []
    pending: list[tuple[Problem, re.Match[str] | None]] = []
    for message in messages:
        version = _OLD_VERSION.match(message)
        if version:
            for problem, _ in pending:
                problem.old_version = int(version.group(1))
            continue
        old = _OLD_SCHEMA.match(message)
        if old:
            _explain(pending, new_text, old_text or old.group(1))
            problems += [p for p, _ in pending]
            pending = []
            continue
        if _TRAILER.match(message):
            continue
        difference = _DIFFERENCE.match(message)
        if difference:
            problem = Problem(
                rule=difference.group("rule"),
                description=difference.group("desc"),
                message=message,
            )
        else:
            rule = "DIFFERENT_SCHEMA_TYPE" if "different schema type" in message else "INCOMPATIBLE"
            problem = Problem(rule=rule, description=message, message=message)
        pending.append((problem, difference))
    _explain(pending, new_text, old_text)
    problems += [p for p, _ in pending]
    return problems


def _explain(
    pending: list[tuple[Problem, re.Match[str] | None]], new_text: str, old_text: str | None
) -> None:
    new_doc = _json(new_text)
    old_doc = _json(old_text)
    for problem, difference in pending:
        if difference is None:
            problem.line = first_changed_line(new_text, old_text)
            continue
        description = difference.group("desc")
        info = difference.group("info") or ""
        path = _PATH.search(description)
        problem.path = path.group(1) if path else None
        labels = _LABEL.findall(description)
        reader_is_new = not labels or labels[0] == "new"
        reader_doc, writer_doc = (new_doc, old_doc) if reader_is_new else (old_doc, new_doc)
        reader_type = writer_type = None
        fields: list[str] = []
        if problem.path is not None and reader_doc is not None:
            named = _avro_named(new_doc) | _avro_named(old_doc)
            node, fields = _walk(reader_doc, problem.path, named)
            reader_type = _describe(node) if node is not _MISSING else None
            if writer_doc is not None:
                other = _follow(writer_doc, problem.path, fields, named)
                writer_type = _describe(other) if other is not _MISSING else "(absent)"
        mismatch = _TYPE_MISMATCH.search(info)
        if mismatch:
            reader_type, writer_type = mismatch.group(1).lower(), mismatch.group(2).lower()
        lacking = _UNION_LACKING.search(info)
        if lacking:
            writer_type = lacking.group(1).lower()
        problem.field = ".".join(fields) or None
        if reader_is_new:
            problem.new_type, problem.old_type = reader_type, writer_type
        else:
            problem.new_type, problem.old_type = writer_type, reader_type
        problem.line = field_line(new_text, fields) or first_changed_line(new_text, old_text)


_MISSING = object()


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _avro_named(doc: Any) -> dict[str, Any]:
    """Named Avro types of a document by short and full name (to follow ``"type": "Name"``)."""
    found: dict[str, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if node.get("type") in ("record", "error", "enum", "fixed") and isinstance(
                node.get("name"), str
            ):
                name = node["name"]
                found.setdefault(name, node)
                found.setdefault(name.rsplit(".", 1)[-1], node)
                if isinstance(node.get("namespace"), str):
                    found.setdefault(f"{node['namespace']}.{name}", node)
            for value in node.values():
                walk(value)

    walk(doc)
    return found


def _segments(pointer: str) -> list[str]:
    return [
        s.replace("~1", "/").replace("~0", "~") for s in pointer.lstrip("#").split("/") if s != ""
    ]


def _walk(doc: Any, pointer: str, named: dict[str, Any]) -> tuple[Any, list[str]]:
    """The node at a JSON pointer, following Avro type names, and the field names passed
    (Avro ``fields/N`` and JSON Schema ``properties/NAME``)."""
    node: Any = doc
    fields: list[str] = []
    segments = _segments(pointer)
    for index, segment in enumerate(segments):
        if isinstance(node, str) and node in named:
            node = named[node]
        if isinstance(node, list):
            if not segment.isdigit() or int(segment) >= len(node):
                return _MISSING, fields
            node = node[int(segment)]
            if index > 0 and segments[index - 1] == "fields" and isinstance(node, dict):
                fields.append(str(node.get("name")))
        elif isinstance(node, dict):
            if segment not in node:
                return _MISSING, fields
            node = node[segment]
            if index > 0 and segments[index - 1] == "properties":
                fields.append(segment)
        else:
            return _MISSING, fields
    return node, fields


def _follow(doc: Any, pointer: str, fields: list[str], named: dict[str, Any]) -> Any:
    """The same place in the other schema: by field names for Avro (positions differ), by the
    pointer itself otherwise."""
    segments = _segments(pointer)
    if "fields" not in segments:
        return _walk(doc, pointer, named)[0]
    node: Any = doc
    names = iter(fields)
    skip = False
    for index, segment in enumerate(segments):
        if skip:
            skip = False
            continue
        if isinstance(node, str) and node in named:
            node = named[node]
        if segment == "fields" and isinstance(node, dict) and index + 1 < len(segments):
            wanted = next(names, None)
            match = [f for f in node.get("fields") or [] if f.get("name") == wanted]
            if not match:
                return _MISSING
            node, skip = match[0], True
            continue
        node = _walk(node, "/" + segment, named)[0]
        if node is _MISSING:
            return _MISSING
    return node


def _describe(node: Any) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, list):
        return "[" + ", ".join(_describe(item) for item in node) + "]"
    if isinstance(node, dict):
        kind = node.get("type")
        if "name" in node and kind not in ("record", "error", "enum", "fixed"):
            return _describe(kind)  # an Avro field: its type
        if kind in ("record", "error", "enum", "fixed"):
            return f"{kind} {node.get('name')}"
        if kind == "array" and "items" in node:
            return f"array<{_describe(node['items'])}>"
        if kind == "map" and "values" in node:
            return f"map<{_describe(node['values'])}>"
        if isinstance(kind, str | list):
            text = _describe(kind)
            return f"{text} ({node['logicalType']})" if "logicalType" in node else text
        return json.dumps(node, sort_keys=True)[:80]
    return json.dumps(node)


def field_line(text: str, fields: Sequence[str]) -> int | None:
    """The line of the last field of a path in a schema text (searching each name after the
    previous one), ``None`` when not found."""
    if not fields:
        return None
    position = 0
    for name in fields:
        quoted = re.escape(name)
        pattern = re.compile(
            rf'"name"\s*:\s*"{quoted}"|"{quoted}"\s*:\s*\{{|\b{quoted}\s*=\s*\d+\s*[;\[]'
        )
        match = pattern.search(text, position)
        if match is None:
            return None
        position = match.start()
    return text.count("\n", 0, position) + 1


def first_changed_line(new_text: str, old_text: str | None) -> int:
    """The first line of the new text that differs from the old one (1 when unknown)."""
    if old_text is None:
        return 1
    matcher = difflib.SequenceMatcher(a=old_text.splitlines(), b=new_text.splitlines())
    for tag, _, _, start, _ in matcher.get_opcodes():
        if tag != "equal":
            return start + 1
    return 1

"""``POST /subjects/{subject}/versions/{version}/tags`` (Confluent 8.x ``TagSchemaRequest``):
a new version of the subject whose schema carries the requested inline ``confluent:tags``, with
the metadata and rule set the request gives (``rulesToMerge``/``rulesToRemove`` edit the
previous rule set), registered like any other version.

Tags are written into the schema text as Confluent's ``AvroSchema.copy(tagsToAdd, tagsToRemove)``
does: a ``confluent:tags`` array on the record or field the entity path names (found breadth
first, namespace from the top-level schema). JSON Schema tags go on the schema node the path
walks to, as ``JsonSchema.copy(tagsToAdd, tagsToRemove)`` does (see
``registry.formats.json_schema.tag_paths``). Protobuf tags go into ``(confluent.message_meta)`` /
``(confluent.field_meta)`` options, as ``ProtobufSchema.copy(tagsToAdd, tagsToRemove)`` writes
them (see ``registry.formats.protobuf.tag_paths``).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from registry import errors, reads, registration
from registry.core import Registry, SchemaRequest
from registry.formats.json_schema.tag_paths import find_entity
from registry.lookups import CONFLUENT_VERSION
from registry.registration import Registered
from registry.rulesets import merge_rule_sets, validate_rule_set
from registry.state import SchemaVersion

TAGS = "confluent:tags"
ENTITY_TYPES = ("sr_record", "sr_field")


def modify_tags(reg: Registry, subject: str, version: int, body: Any) -> Registered:
    subject = reg.valid_subject(subject)
    if not isinstance(body, dict):
        raise errors.RegistryError(422, "Unrecognized request body")
    current = reads.get_version(reg, subject, version)
    rules_to_merge, rules_to_remove = body.get("rulesToMerge"), body.get("rulesToRemove")
    if (rules_to_merge is not None or rules_to_remove is not None) and body.get("ruleSet"):
        raise errors.invalid_ruleset(
            "ruleSet should be omitted if specifying rulesToMerge or rulesToRemove"
        )
    for rule_set in (rules_to_merge, body.get("ruleSet")):
        if isinstance(rule_set, dict):
            validate_rule_set(rule_set)
    new_version = body.get("newVersion") or 0
    if not isinstance(new_version, int):
        raise errors.invalid_version(new_version)
    metadata = body.get("metadata") if body.get("metadata") is not None else current.metadata
    metadata = dict(metadata or {})
    metadata["properties"] = {
        **(metadata.get("properties") or {}),
        CONFLUENT_VERSION: str(new_version),
    }
    rule_set = _rule_set(reg, current, body, new_version)
    text = _tagged(current, _tag_map(body.get("tagsToAdd")), _tag_map(body.get("tagsToRemove")))
    request = SchemaRequest(
        schema=text,
        schema_type=current.schema_type,
        references=[dict(r) for r in current.references],
        metadata=metadata,
        rule_set=rule_set,
        version=new_version or None,
    )
    return registration.register(reg, current.subject, request, normalize=False)


def _rule_set(
    reg: Registry, current: SchemaVersion, body: dict[str, Any], new_version: int
) -> dict[str, Any] | None:
    """``maybeModifyPreviousRuleSet``: the request's rule set, or the previous version's with
    ``rulesToMerge`` merged in and the rules named by ``rulesToRemove`` dropped."""
    to_merge, to_remove = body.get("rulesToMerge"), body.get("rulesToRemove")
    if to_merge is None and to_remove is None:
        rule_set = body.get("ruleSet")
        return rule_set if isinstance(rule_set, dict) else None
    versions = reg.state.versions(current.subject)
    live = [v for v in versions.values() if not v.deleted]
    previous = (
        versions.get(new_version - 1)
        if new_version > 0
        else (max(live, key=lambda v: v.version) if live else None)
    )
    if previous is not None and previous.deleted:
        previous = None
    rule_set = previous.rule_set if previous is not None else None
    if isinstance(to_merge, dict):
        rule_set = merge_rule_sets(rule_set, to_merge)
    if rule_set is not None and isinstance(to_remove, list):
        rule_set = {
            **rule_set,
            **{
                group: [r for r in rule_set.get(group) or [] if r.get("name") not in to_remove]
                for group in ("migrationRules", "domainRules", "encodingRules")
                if rule_set.get(group) is not None
            },
        }
    return rule_set


def _tag_map(items: Any) -> dict[tuple[str, str], list[str]]:
    """``schemaTagsListToMap``: entity -> tags, entities in order, duplicates merged."""
    out: dict[tuple[str, str], list[str]] = {}
    #: ``SchemaEntity`` equality: the path without one leading dot (the first spelling is kept)
    first: dict[tuple[str, str], tuple[str, str]] = {}
    for item in items or []:
        entity = item.get("schemaEntity") if isinstance(item, dict) else None
        if not isinstance(entity, dict):
            raise errors.invalid_schema("schemaEntity is required")
        path, kind = entity.get("entityPath"), entity.get("entityType")
        if not isinstance(path, str) or kind not in ENTITY_TYPES:
            # printed as Java's SchemaEntity.toString (a missing field is ``null``, not None)
            raise errors.invalid_schema(
                f"Invalid schema entity SchemaEntity{{entityType={_java(kind)}, "
                f"entityPath='{_java(path)}'}}"
            )
        normalized = (path[1:] if path.startswith(".") else path, str(kind))
        tags = out.setdefault(first.setdefault(normalized, (path, str(kind))), [])
        for tag in item.get("tags") or []:
            if tag not in tags:
                tags.append(str(tag))
    return out


def _tagged(
    sv: SchemaVersion,
    to_add: dict[tuple[str, str], list[str]],
    to_remove: dict[tuple[str, str], list[str]],
) -> str:
    if not to_add and not to_remove:
        return sv.schema
    if sv.schema_type == "PROTOBUF":
        # the Protobuf format is an optional plug-in (it needs grpcio-tools): imported on use
        from registry.formats.protobuf import tag_paths as protobuf_tags

        try:
            return protobuf_tags.modify_tags(sv.schema, to_add, to_remove)
        except protobuf_tags.TagPathError as exc:
            raise errors.invalid_schema(f"java.lang.IllegalArgumentException: {exc}") from exc
    if sv.schema_type not in ("AVRO", "JSON"):
        raise errors.invalid_schema(f"Schema tags are not supported for {sv.schema_type} schemas")
    root = json.loads(sv.schema)
    for entity in dict.fromkeys([*to_add, *to_remove]):
        node = _find(root, entity) if sv.schema_type == "AVRO" else _find_json(root, entity)
        tags = list(node.get(TAGS) or [])
        tags += [t for t in to_add.get(entity, []) if t not in tags]
        tags = [t for t in tags if t not in to_remove.get(entity, [])]
        if tags:
            node[TAGS] = tags
        else:
            node.pop(TAGS, None)
    return json.dumps(root, separators=(",", ":"), ensure_ascii=False)


def _find_json(root: Any, entity: tuple[str, str]) -> dict[str, Any]:
    node = find_entity(root, *entity)
    if node is None:
        raise _no_match(entity[0])
    return node


def _no_match(path: str) -> errors.RegistryError:
    return errors.invalid_schema(
        f"java.lang.IllegalArgumentException: No matching path '{path}' found in the schema"
    )


def _find(root: Any, entity: tuple[str, str]) -> dict[str, Any]:
    """``AvroSchemaUtils.findMatchingEntity``."""
    path, kind = entity
    parts = _java_split(path)
    cut = 1 if kind == "sr_record" else 2
    if len(parts) < cut:
        # ``Arrays.copyOfRange(identifiers, 0, length - cut)`` throws for a path too short for
        # its kind (a record name alone as an ``sr_field``); Confluent answers it as 42201
        raise errors.invalid_schema(f"java.lang.IllegalArgumentException: 0 > {len(parts) - cut}")
    namespace = ".".join(parts[:-cut])
    record_name = parts[-cut]
    field_name = parts[-1] if kind == "sr_field" else None
    top_ns = root.get("namespace") if isinstance(root, dict) else None
    queue: deque[Any] = deque([root])
    while queue:
        node = queue.popleft()
        if isinstance(node, list):
            queue.extend(node)
            continue
        if not isinstance(node, dict) or "type" not in node:
            continue
        kind_of = node["type"]
        if kind_of == "record":
            if (not namespace or namespace == top_ns) and node.get("name") == record_name:
                if field_name is None:
                    return node
                for field in node.get("fields") or []:
                    if field.get("name") == field_name:
                        return field
            else:
                queue.extend(node.get("fields") or [])
        elif kind_of == "array":
            queue.append(node.get("items"))
        elif kind_of == "map":
            queue.append(node.get("values"))
        else:
            queue.append(kind_of)
    raise _no_match(path)


def _java_split(path: str) -> list[str]:
    """``path.split("\\.")`` as Java splits: trailing empty strings removed (``"a."`` is
    ``["a"]``, ``"."`` is ``[]``), but an empty path is ``[""]``."""
    if path == "":
        return [""]
    parts = path.split(".")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def tagged_entities(sv: SchemaVersion, wanted: list[str]) -> list[dict[str, Any]]:
    """``findTags`` on a schema read (Confluent's ``extractSchemaTags``): the records and fields
    whose inline ``confluent:tags`` share a tag with ``wanted`` (``*`` matches any), in schema
    order, as ``SchemaTags`` entries. JSON Schemas have none here."""
    found: dict[tuple[str, str], list[str]] = {}
    if sv.schema_type == "PROTOBUF":
        from registry.formats.protobuf.tag_paths import inline_tagged_entities

        found = inline_tagged_entities(sv.schema)
    elif sv.schema_type == "AVRO":
        _collect(json.loads(sv.schema), "", found, set())
    else:
        return []
    wildcard = "*" in wanted
    return [
        {"schemaEntity": {"entityPath": path, "entityType": kind}, "tags": tags}
        for (path, kind), tags in found.items()
        if wildcard or set(tags) & set(wanted)
    ]


def _collect(
    node: Any, namespace: str, found: dict[tuple[str, str], list[str]], visited: set[str]
) -> None:
    if isinstance(node, list):
        for branch in node:
            _collect(branch, namespace, found, visited)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "array":
        _collect(node.get("items"), namespace, found, visited)
    elif kind == "map":
        _collect(node.get("values"), namespace, found, visited)
    elif kind == "record":
        name = str(node.get("name", ""))
        space = node.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]
        full = name if "." in name or not space else f"{space}.{name}"
        if full in visited:
            return
        visited.add(full)
        if node.get(TAGS):
            found[(full, "sr_record")] = list(dict.fromkeys(node[TAGS]))
        for field in node.get("fields") or []:
            if field.get(TAGS):
                found[(f"{full}.{field.get('name')}", "sr_field")] = list(
                    dict.fromkeys(field[TAGS])
                )
            _collect(field.get("type"), space or "", found, visited)
    elif isinstance(kind, (dict, list)):
        _collect(kind, namespace, found, visited)


def _java(value: object) -> str:
    """``value`` as Java's string concatenation prints it (``null``, ``true``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)

"""The ``TagSchemaRequest`` body of ``POST /subjects/{s}/versions/{v}/tags``, bound as Jackson
binds it: each field of its declared type (a list where a list is declared, an object where an
object is), scalars coerced to strings where strings are declared; anything else is a 400
mapping error, as for every other body (``registry.api.bodies``)."""

from __future__ import annotations

from typing import Any

from registry.api.bodies import _dict, _int, _mapping_error, _metadata, _object, _string


def tag_request(body: Any) -> dict[str, Any] | None:
    if body is None:
        return None  # no body: ``registry.tags.modify_tags`` answers for it
    request = dict(_object(body, "TagSchemaRequest"))
    request["newVersion"] = _int(request, "newVersion")
    for field in ("tagsToAdd", "tagsToRemove"):
        request[field] = _schema_tags_list(request, field)
    metadata = _dict(request, "metadata")
    if metadata is not None:
        request["metadata"] = _metadata(metadata)  # bound as a schema's metadata is
    for field in ("ruleSet", "rulesToMerge"):
        _dict(request, field)
    request["rulesToRemove"] = _strings(request, "rulesToRemove")
    return request


def _schema_tags_list(request: dict[str, Any], field: str) -> list[Any] | None:
    items = request.get(field)
    if items is None:
        return None
    if not isinstance(items, list):
        raise _mapping_error(field, "java.util.List<SchemaTags>", items)
    out: list[Any] = []
    for item in items:
        if item is None:
            out.append(None)  # no entity: refused later as "schemaEntity is required"
            continue
        item = _object(item, "SchemaTags")
        entity = item.get("schemaEntity")
        if entity is not None:
            entity = _object(entity, "SchemaEntity")
            entity = {**entity, "entityPath": _string(entity, "entityPath")}
        out.append({**item, "schemaEntity": entity, "tags": _strings(item, "tags")})
    return out


def _strings(body: dict[str, Any], field: str) -> list[str] | None:
    """A ``List<String>``: scalars become their text, nulls are dropped."""
    values = body.get(field)
    if values is None:
        return None
    if not isinstance(values, list):
        raise _mapping_error(field, "java.util.List<java.lang.String>", values)
    texts = [_string({field: value}, field) for value in values]
    return [text for text in texts if text is not None]

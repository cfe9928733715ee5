"""Request bodies and query parameters, decoded the way Confluent's Jersey/Jackson stack does:
malformed JSON and JSON of the wrong shape are 400 with ``error_code`` 400; unknown fields are
ignored; numbers are accepted where Jackson would coerce them."""

from __future__ import annotations

import codecs
import json
import math
from typing import Any

import orjson
from fastapi import Request

from registry import errors
from registry.core import SchemaRequest

ACCEPTED_CONTENT_TYPES = (
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
    "application/octet-stream",
)


#: Confluent's resource method and argument index of each ``@NotNull`` request body: Jersey's
#: bean validation answers 422 ``<method>.arg<N> must not be null`` for an empty or ``null`` one
NOT_NULL_BODIES = {
    ("POST", "/subjects/{subject}/versions"): "register.arg5",
    ("POST", "/subjects/{subject}"): "lookUpSchemaUnderSubject.arg5",
    (
        "POST",
        "/compatibility/subjects/{subject}/versions/{version}",
    ): "testCompatibilityBySubjectName.arg4",
    ("POST", "/compatibility/subjects/{subject}/versions"): "testCompatibilityForSubject.arg3",
    ("PUT", "/config"): "updateTopLevelConfig.arg1",
    ("PUT", "/config/{subject}"): "updateSubjectLevelConfig.arg2",
    ("PUT", "/mode"): "updateTopLevelMode.arg1",
    ("PUT", "/mode/{subject}"): "updateMode.arg2",
    ("POST", "/associations"): "createAssociation.arg4",
    ("PUT", "/associations/resources/{resource_id}"): "createOrUpdateAssociation.arg5",
    ("POST", "/associations:batchGet"): "batchGetAssociations.arg1",
    ("POST", "/associations:batchMutate"): "mutateAssociations.arg4",
    ("POST", "/subjects/{subject}/versions/{version}/tags"): "modifyTags.arg4",
}


async def json_body(request: Request) -> Any:
    header = request.headers.get("content-type", "")
    content_type = header.split(";")[0].strip().lower()
    if content_type and content_type not in ACCEPTED_CONTENT_TYPES:
        raise errors.RegistryError(415, "HTTP 415 Unsupported Media Type")
    raw = await request.body()
    body = parse_json(raw, charset_of(header)) if raw.strip() else None
    if body is None:
        route = request.scope.get("route")
        name = NOT_NULL_BODIES.get((request.method, getattr(route, "path", "")))
        if name is not None:
            raise errors.RegistryError(422, f"{name} must not be null")
        if not raw.strip():
            raise errors.RegistryError(422, "Request body is missing")
    return body


def charset_of(content_type: str) -> str | None:
    """The ``charset`` parameter of a ``Content-Type`` header, lower case, or None."""
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"').lower() or None
    return None


def parse_json(raw: bytes, charset: str | None = None) -> Any:
    """JSON bytes as Jersey + Jackson read them: in the declared ``charset`` (Java's
    ``UTF-16`` without a byte-order mark is big-endian), else UTF-8, or UTF-16/32 recognised
    from the first bytes as Jackson's encoding detection does."""
    text: str | bytes = raw
    boms = (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)
    try:
        codec = codecs.lookup(charset).name if charset else "utf-8"
        if codec == "utf-16" and raw[:2] not in boms:
            codec = "utf-16-be"
        if codec != "utf-8":
            text = raw.decode(codec)
        elif raw.startswith(codecs.BOM_UTF8):
            text = raw[3:]
        elif b"\x00" in raw[:4] or raw[:2] in boms:
            text = raw.decode(json.detect_encoding(raw))
    except LookupError:
        raise errors.RegistryError(415, "HTTP 415 Unsupported Media Type") from None
    except UnicodeDecodeError as exc:
        raise errors.RegistryError(400, f"Malformed {charset} in request body: {exc}") from None
    if isinstance(text, str):
        text = text.removeprefix("\ufeff")
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise errors.RegistryError(400, f"Unexpected character in request body: {exc}") from exc


def _mapping_error(field: str, expected: str, value: Any) -> errors.RegistryError:
    kind = type(value).__name__ if value is not None else "null"
    return errors.RegistryError(
        400, f"Cannot deserialize value of type `{expected}` from {kind} value (field '{field}')"
    )


def _object(body: Any, entity: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _mapping_error("(root)", entity, body)
    return body


def _string(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value).lower() if isinstance(value, bool) else str(value)
    raise _mapping_error(field, "java.lang.String", value)


def _int(body: dict[str, Any], field: str) -> int | None:
    value = body.get(field)
    if value is None:
        return None
    if isinstance(value, bool):
        raise _mapping_error(field, "java.lang.Integer", value)
    if isinstance(value, int):
        if not -(2**31) <= value < 2**31:
            raise _mapping_error(field, "java.lang.Integer", value)
        return value
    if isinstance(value, float) and math.isfinite(value) and -(2**31) < value < 2**31:
        return int(value)  # Jackson's ACCEPT_FLOAT_AS_INT (on by default) truncates: 1.7 -> 1
    if isinstance(value, str):
        text = value.strip()
        if text in ("", "null"):  # Jackson: an empty String (and "null") is a null Integer
            return None
        try:
            return int(text)
        except ValueError:
            pass
    raise _mapping_error(field, "java.lang.Integer", value)


def _dict(body: dict[str, Any], field: str) -> dict[str, Any] | None:
    value = body.get(field)
    if value is None or isinstance(value, dict):
        return value
    raise _mapping_error(field, "java.util.Map", value)


def schema_request(body: Any) -> SchemaRequest:
    body = _object(body, "RegisterSchemaRequest")
    references = body.get("references")
    refs: list[dict[str, Any]] = []
    if references is not None:
        if not isinstance(references, list):
            raise _mapping_error("references", "java.util.List", references)
        for ref in references:
            ref = _object(ref, "SchemaReference")
            refs.append(
                {
                    "name": _string(ref, "name"),
                    "subject": _string(ref, "subject"),
                    "version": _int(ref, "version"),
                }
            )
    schema_type = _string(body, "schemaType")
    metadata = _dict(body, "metadata")
    if metadata is not None:
        metadata = _metadata(metadata)
    _rule_enums(body.get("ruleSet"))
    return SchemaRequest(
        schema=_string(body, "schema"),
        # Confluent looks the type up as written: "avro" or "" is an unknown type (42201)
        schema_type="AVRO" if schema_type is None else schema_type,
        references=refs,
        metadata=metadata,
        rule_set=_dict(body, "ruleSet"),
        id=_int(body, "id"),
        version=_int(body, "version"),
    )


def _scalar_text(value: Any) -> str | None:
    """A JSON scalar bound to a Java ``String`` as Jackson coerces it (``1`` is ``"1"``,
    ``true`` is ``"true"``); None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def _strings(values: Any, field: str, expected: str) -> list[str]:
    """A JSON array bound to a ``Set<String>``: each scalar element as its text."""
    if not isinstance(values, list):
        raise _mapping_error(field, expected, values)
    out: list[str] = []
    for value in values:
        text = _scalar_text(value)
        if text is None:
            raise _mapping_error(field, "java.lang.String", value)
        out.append(text)
    return out


_ENTITIES = "io.confluent.kafka.schemaregistry.client.rest.entities."
#: the enums of a ``Rule``, in declaration order (``RuleKind``, ``RuleMode``)
RULE_ENUMS = {
    "kind": ("RuleKind", ("TRANSFORM", "CONDITION")),
    "mode": ("RuleMode", ("UPGRADE", "DOWNGRADE", "UPDOWN", "WRITE", "READ", "WRITEREAD")),
}


def _rule_enums(rule_set: Any) -> None:
    """A rule's ``kind`` and ``mode`` as Jackson binds them to Confluent's enums: the constant's
    exact name (case matters), or its index for a number; anything else is a 400 before any
    rule-set validation (a kind ``BOGUS`` is not 42210). Other shapes are left to the rule-set
    validation."""
    if not isinstance(rule_set, dict):
        return
    for group in ("migrationRules", "domainRules", "encodingRules"):
        rules = rule_set.get(group)
        if not isinstance(rules, list):
            continue
        for rule in rules:
            if not isinstance(rule, dict):
                continue
            for field, (enum, names) in RULE_ENUMS.items():
                value = rule.get(field)
                if value is None or (isinstance(value, str) and value in names):
                    continue
                if isinstance(value, int) and not isinstance(value, bool):
                    if 0 <= value < len(names):
                        rule[field] = names[value]
                        continue
                    raise errors.RegistryError(
                        400,
                        f"Cannot deserialize value of type `{_ENTITIES}{enum}` from number "
                        f"{value}: index value outside legal index range [0..{len(names) - 1}]",
                    )
                if isinstance(value, str):
                    raise errors.RegistryError(
                        400,
                        f"Cannot deserialize value of type `{_ENTITIES}{enum}` from String "
                        f"{json.dumps(value)}: not one of the values accepted for Enum class: "
                        f"[{', '.join(names)}]",
                    )
                raise _mapping_error(field, _ENTITIES + enum, value)


def _metadata(metadata: dict[str, Any], field: str = "metadata") -> dict[str, Any]:
    """``Metadata`` as Jackson binds it: only ``tags`` (``Map<String, Set<String>>``),
    ``properties`` (``Map<String, String>``) and ``sensitive`` (``Set<String>``); unknown
    keys are dropped (``@JsonIgnoreProperties(ignoreUnknown = true)``), a number or boolean
    where a string belongs is its text (``{"k": 1}`` is ``{"k": "1"}``)."""
    out: dict[str, Any] = {}
    tags = metadata.get("tags")
    if tags is not None:
        if not isinstance(tags, dict):
            raise _mapping_error(f"{field}.tags", "java.util.Map", tags)
        out["tags"] = {k: _strings(v, f"{field}.tags", "java.util.Set") for k, v in tags.items()}
    props = metadata.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            raise _mapping_error(f"{field}.properties", "java.util.Map", props)
        bound: dict[str, str] = {}
        for key, value in props.items():
            text = _scalar_text(value)
            if text is None:
                raise _mapping_error(f"{field}.properties", "java.lang.String", value)
            bound[key] = text
        out["properties"] = bound
    sensitive = metadata.get("sensitive")
    if sensitive is not None:
        out["sensitive"] = _strings(sensitive, f"{field}.sensitive", "java.util.Set")
    return out


#: ``ConfigUpdateRequest``'s ``String`` fields
CONFIG_STRINGS = (
    "alias",
    "aliasForDeks",
    "compatibility",
    "compatibilityLevel",
    "compatibilityPolicy",
    "compatibilityGroup",
)
CONFIG_BOOLEANS = ("normalize", "validateFields", "validateRules", "validateNewSchemas")


def _boolean(config: dict[str, Any], field: str) -> None:
    """Jackson's ``Boolean`` coercions: ``"true"``/``"True"``/``"TRUE"`` (and false alike,
    surrounding spaces ignored), ``"null"`` and ``""`` as null, an integer as ``!= 0``."""
    value = config.get(field)
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        config[field] = value != 0
    elif isinstance(value, str):
        text = value.strip()
        if text in ("true", "True", "TRUE"):
            config[field] = True
        elif text in ("false", "False", "FALSE"):
            config[field] = False
        elif text in ("", "null"):
            config[field] = None
        else:
            raise errors.RegistryError(
                400,
                "Cannot deserialize value of type `java.lang.Boolean` from String "
                f'{json.dumps(value)}: only "true" or "false" recognized',
            )


def config_body(body: Any) -> dict[str, Any]:
    config = dict(_object(body, "ConfigUpdateRequest"))
    for field in CONFIG_BOOLEANS:
        _boolean(config, field)
    for field in ("defaultMetadata", "overrideMetadata"):
        value = config.get(field)
        if isinstance(value, dict):  # the same mapping as a schema's metadata
            config[field] = _metadata(value, field)
    for field in ("defaultRuleSet", "overrideRuleSet"):
        _rule_enums(config.get(field))
    for field in CONFIG_STRINGS:
        value = config.get(field)
        if value is not None and not isinstance(value, str):
            text = _scalar_text(value)
            if text is None:
                raise _mapping_error(field, "java.lang.String", value)
            config[field] = text  # Jackson binds alias 5 as "5"
    return config


def string_map(body: Any) -> dict[str, str | None]:
    """A ``Map<String, String>`` body (scalars become strings, as Jackson coerces them)."""
    mapping = _object(body, "java.util.Map<java.lang.String,java.lang.String>")
    return {key: _string(mapping, key) for key in mapping}


def mode_body(body: Any) -> object:
    return _object(body, "ModeUpdateRequest").get("mode")


# ---- query parameters -------------------------------------------------------------------


def flag(value: str | None) -> bool:
    """Jersey's boolean query parameter: only ``true`` (any case) is true."""
    return value is not None and value.strip().lower() == "true"


def integer(value: str | None, default: int) -> int:
    """An ``int`` query parameter as Jersey converts it (``Integer.valueOf``): an optional sign
    and digits, nothing else (no spaces, no ``_``), within Java's int range; Jersey answers 404
    when it cannot convert one."""
    if value is None or value == "":
        return default
    digits = value[1:] if value[:1] in ("+", "-") else value
    # Unicode decimal digits too, as Java's Character.digit takes them; more than 10 digits
    # (leading zeros aside) never fit, and int() refuses more than 4,300
    if digits.isdecimal() and len(digits.lstrip("0")) <= 10 and len(digits) < 4000:
        number = int(value)
        if -(2**31) <= number < 2**31:
            return number
    raise errors.RegistryError(404, "HTTP 404 Not Found") from None


def page(
    items: list[Any], offset: str | None, limit: str | None, default_limit: int = -1
) -> list[Any]:
    start = max(integer(offset, 0), 0)
    count = integer(limit, default_limit)
    if count <= 0:
        count = default_limit
    if count <= 0:
        return items[start:]
    return items[start : start + count]

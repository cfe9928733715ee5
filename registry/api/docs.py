"""OpenAPI descriptions of the bodies routes read and write (the routes decode JSON
themselves, the way Confluent's Jackson does, so FastAPI cannot infer these)."""

from __future__ import annotations

import copy
from typing import Any

MEDIA_TYPES = (
    "application/vnd.schemaregistry.v1+json",
    "application/vnd.schemaregistry+json",
    "application/json",
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


_STR = {"type": "string"}
_INT = {"type": "integer", "format": "int32"}
_BOOL = {"type": "boolean"}
_OBJ = {"type": "object", "additionalProperties": True}

COMPONENTS: dict[str, dict[str, Any]] = {
    "ErrorMessage": {
        "type": "object",
        "required": ["error_code", "message"],
        "properties": {"error_code": _INT, "message": _STR},
    },
    "SchemaReference": {
        "type": "object",
        "properties": {"name": _STR, "subject": _STR, "version": _INT},
    },
    "Metadata": {
        "type": "object",
        "properties": {
            # null is accepted (as absent) and echoed back by PUT /config
            "tags": {
                "type": ["object", "null"],
                "additionalProperties": {"type": "array", "items": _STR},
            },
            "properties": {"type": ["object", "null"], "additionalProperties": _STR},
            "sensitive": {"type": ["array", "null"], "items": _STR},
        },
    },
    "RuleSet": {
        "type": "object",
        "properties": {
            # null is accepted (as no rules) and echoed back by PUT /config
            "migrationRules": {"type": ["array", "null"], "items": _OBJ},
            "domainRules": {"type": ["array", "null"], "items": _OBJ},
            "encodingRules": {"type": ["array", "null"], "items": _OBJ},
        },
    },
    "RegisterSchemaRequest": {
        "type": "object",
        "properties": {
            "schema": _STR,
            "schemaType": {"type": "string", "example": "AVRO"},
            "references": {"type": "array", "items": _ref("SchemaReference")},
            "metadata": _ref("Metadata"),
            "ruleSet": _ref("RuleSet"),
            "id": _INT,
            "version": _INT,
        },
    },
    "RegisterSchemaResponse": {
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": _INT,
            "version": _INT,
            "schemaType": _STR,
            "references": {"type": "array", "items": _ref("SchemaReference")},
            "metadata": _ref("Metadata"),
            "ruleSet": _ref("RuleSet"),
            "schema": _STR,
        },
    },
    "Schema": {
        "type": "object",
        "properties": {
            "subject": _STR,
            "version": _INT,
            "id": _INT,
            "schemaType": _STR,
            "references": {"type": "array", "items": _ref("SchemaReference")},
            "metadata": _ref("Metadata"),
            "ruleSet": _ref("RuleSet"),
            "schema": _STR,
        },
    },
    "SchemaString": {
        "type": "object",
        "properties": {
            "schemaType": _STR,
            "schema": _STR,
            "references": {"type": "array", "items": _ref("SchemaReference")},
            "metadata": _ref("Metadata"),
            "ruleSet": _ref("RuleSet"),
            "maxId": _INT,
        },
    },
    "SubjectVersion": {"type": "object", "properties": {"subject": _STR, "version": _INT}},
    "ContextId": {"type": "object", "properties": {"context": _STR, "id": _INT}},
    "CompatibilityCheckResponse": {
        "type": "object",
        "properties": {"is_compatible": _BOOL, "messages": {"type": "array", "items": _STR}},
    },
    "Config": {
        "type": "object",
        "properties": {
            "alias": _STR,
            "aliasForDeks": _STR,
            "normalize": _BOOL,
            "validateFields": _BOOL,
            "validateNewSchemas": _BOOL,
            "validateRules": _BOOL,
            "compatibilityLevel": _STR,
            "compatibilityGroup": _STR,
            "compatibilityPolicy": _STR,
            "defaultMetadata": _ref("Metadata"),
            "overrideMetadata": _ref("Metadata"),
            "defaultRuleSet": _ref("RuleSet"),
            "overrideRuleSet": _ref("RuleSet"),
        },
    },
    "ConfigUpdateRequest": {
        "type": "object",
        "properties": {
            "alias": _STR,
            "aliasForDeks": _STR,
            "normalize": _BOOL,
            "validateFields": _BOOL,
            "validateNewSchemas": _BOOL,
            "validateRules": _BOOL,
            "compatibility": {
                "type": "string",
                "enum": [
                    "NONE",
                    "BACKWARD",
                    "BACKWARD_TRANSITIVE",
                    "FORWARD",
                    "FORWARD_TRANSITIVE",
                    "FULL",
                    "FULL_TRANSITIVE",
                ],
            },
            "compatibilityGroup": _STR,
            "compatibilityPolicy": {"type": "string", "enum": ["STRICT", "LENIENT", "LOGICAL"]},
            "defaultMetadata": _ref("Metadata"),
            "overrideMetadata": _ref("Metadata"),
            "defaultRuleSet": _ref("RuleSet"),
            "overrideRuleSet": _ref("RuleSet"),
        },
    },
    "Mode": {"type": "object", "properties": {"mode": _STR}},
    "ModeUpdateRequest": {
        "type": "object",
        "properties": {
            "mode": {
                "type": "string",
                "enum": ["READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT"],
            }
        },
    },
    "ServerClusterId": {"type": "object", "properties": {"scope": _OBJ}},
    "ServerVersion": {"type": "object", "properties": {"version": _STR, "commitId": _STR}},
}


def _content(schema: dict[str, Any]) -> dict[str, Any]:
    return {media: {"schema": schema} for media in MEDIA_TYPES}


def parameters(path: tuple[str, ...] = (), query: tuple[str, ...] = ()) -> dict[str, Any]:
    """``openapi_extra`` for routes that read their parameters from the request themselves
    (the hot routes skip FastAPI's per-request parameter machinery)."""
    params = [{"name": n, "in": "path", "required": True, "schema": _STR} for n in path]
    params += [{"name": n, "in": "query", "required": False, "schema": _STR} for n in query]
    return {"parameters": params}


#: marks a POST/PUT/DELETE route that changes nothing (look-ups, checks, batch reads): the
#: audit trail (``registry.audit.middleware``) audits every other one as a change
READ_ONLY: dict[str, Any] = {"x-read-only": True}


def body(name: str) -> dict[str, Any]:
    """``openapi_extra`` declaring the JSON request body ``name``."""
    return {"requestBody": {"required": True, "content": _content(_ref(name))}}


ERROR_STATUSES = {
    400: "Malformed JSON or a body of the wrong shape",
    404: "Not found (40401 subject, 40402 version, 40403 schema, 40404-40409)",
    409: "Incompatible schema",
    415: "Unsupported media type",
    422: "Invalid input (42201 schema, 42202 version, 42203 level, 42204 mode, 42205 not "
    "permitted, 42206 referenced, 42208 subject, 42210 rule set)",
    500: "Store error (50001) or internal error",
}


def answers(ok: dict[str, Any] | None, *errors: int, status: int = 200) -> dict[int | str, Any]:
    """``responses`` for a route: the success body and the listed error statuses."""
    out: dict[int | str, Any] = {}
    if ok is None:
        out[status] = {"description": "Success"}
    else:
        out[status] = {"description": "Success", "content": _content(ok)}
    for code in (*errors, 500):
        out[code] = {"description": ERROR_STATUSES[code], "content": _content(_ref("ErrorMessage"))}
    return out


def array_of(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


SCHEMA = _ref("Schema")
SCHEMA_STRING = _ref("SchemaString")
CONFIG = _ref("Config")
MODE = _ref("Mode")
STRINGS = array_of(_STR)
INTS = array_of(_INT)
INT = _INT
TEXT = _STR


SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "basicAuth": {
        "type": "http",
        "scheme": "basic",
        "description": "Users of SCHEMA_REGISTRY_AUTH_USERS_FILE (when it is set)",
    },
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "JWTs signed by a key of SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE or "
        "_JWT_JWKS_URL (when one is set)",
    },
}
#: either scheme; ``{}``: without a users file or JWT keys the server needs no credentials
SECURITY: list[dict[str, list[str]]] = [{"basicAuth": []}, {"bearerAuth": []}, {}]


def _error(description: str, example: dict[str, Any], **headers: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": description,
        "content": {
            media: {"schema": _ref("ErrorMessage"), "example": example} for media in MEDIA_TYPES
        },
    }
    if headers:
        out["headers"] = {
            name: {"description": text, "schema": _STR} for name, text in headers.items()
        }
    return out


#: what the authentication middleware answers on every operation when it is enabled
AUTH_RESPONSES: dict[str, dict[str, Any]] = {
    "401": _error(
        "Missing, malformed or invalid credentials",
        {"error_code": 401, "message": "Unauthorized: invalid user name or password"},
        **{"WWW-Authenticate": "one challenge for each enabled scheme (Basic, Bearer)"},
    ),
    "403": _error(
        "The subject rules do not allow the operation",
        {"error_code": 40301, "message": "User is denied operation Write on Subject: orders"},
    ),
    "429": _error(
        "Too many failed HTTP Basic attempts of this user from this address: refused, without "
        "checking the password, until Retry-After seconds have passed",
        {
            "error_code": 429,
            "message": "Too many failed authentication attempts: retry after 60 seconds",
        },
        **{"Retry-After": "seconds until the lock-out ends"},
    ),
}


def install(openapi: dict[str, Any]) -> dict[str, Any]:
    """Add the component schemas, the authentication schemes and answers to a generated
    document, and correct what FastAPI generates wrongly for this API (found by schemathesis,
    tests/test_fuzz_api.py)."""
    components = openapi.setdefault("components", {})
    components.setdefault("schemas", {}).update(COMPONENTS)
    components["securitySchemes"] = SECURITY_SCHEMES
    openapi["security"] = SECURITY
    for operation in _operations(openapi):
        responses = operation.get("responses", {})
        for status, response in AUTH_RESPONSES.items():
            responses.setdefault(status, copy.deepcopy(response))
        for response in responses.values():
            for media in response.get("content", {}).values():
                schema = media.get("schema", {})
                # FastAPI merges its default ``{"type": "string"}`` for the response class's
                # media type into a ``$ref``, which then no object body can match
                if "$ref" in schema and schema.get("type") == "string":
                    del schema["type"]
        names = {p.get("name") for p in operation.get("parameters", [])}
        if names & {"offset", "limit"} and "404" not in responses:
            # like Jersey, an offset or limit that is not an integer answers 404
            responses["404"] = {
                "description": "offset or limit is not an integer",
                "content": _content(_ref("ErrorMessage")),
            }
    return openapi


def _operations(openapi: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        operation
        for item in openapi.get("paths", {}).values()
        for operation in item.values()
        if isinstance(operation, dict)
    ]


def ref(name: str) -> dict[str, str]:
    return _ref(name)

"""JSON Schema drafts: which one ``$schema`` names (Confluent's ``SpecificationVersion``, draft 7
when absent or unknown) and strict validation against that draft's meta-schema.

Meta-schema validation uses ``jsonschema-rs`` (Rust, bundled meta-schemas, no network): about a
thousand times faster than the pure-Python ``jsonschema`` on a 500-property schema.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs

from registry.formats.base import InvalidSchemaError

DRAFT_4 = 4
DRAFT_6 = 6
DRAFT_7 = 7
DRAFT_2019_09 = 2019
DRAFT_2020_12 = 2020

_URLS = {
    DRAFT_4: (
        "http://json-schema.org/draft-04/schema",
        "https://json-schema.org/draft-04/schema",
        "http://json-schema.org/schema",
        "https://json-schema.org/schema",
    ),
    DRAFT_6: ("http://json-schema.org/draft-06/schema", "https://json-schema.org/draft-06/schema"),
    DRAFT_7: ("http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema"),
    DRAFT_2019_09: (
        "http://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2019-09/schema",
    ),
    DRAFT_2020_12: (
        "http://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema",
    ),
}
_BY_URL = {url: draft for draft, urls in _URLS.items() for url in urls}

#: the meta-schema URI jsonschema-rs knows for each draft (it never fetches these)
META_SCHEMA_URI = {
    DRAFT_4: "http://json-schema.org/draft-04/schema#",
    DRAFT_6: "http://json-schema.org/draft-06/schema#",
    DRAFT_7: "http://json-schema.org/draft-07/schema#",
    DRAFT_2019_09: "https://json-schema.org/draft/2019-09/schema",
    DRAFT_2020_12: "https://json-schema.org/draft/2020-12/schema",
}


def draft_of(root: Any) -> int:
    """The draft a document's ``$schema`` names; draft 7 when absent or not a known URL."""
    if isinstance(root, dict):
        url = root.get("$schema")
        if isinstance(url, str):
            return _BY_URL.get(url.removesuffix("#"), DRAFT_7)
    return DRAFT_7


def _pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "#/" + "/".join(parts)


_COMBINATORS = ("allOf", "anyOf", "oneOf")


def _fill_empty_combinators(node: Any) -> Any:
    """``node`` with each empty ``allOf``/``anyOf``/``oneOf`` given one ``{}`` branch, for the
    meta-schema check only: Confluent's loaders (everit, json-sKema) accept an empty list,
    which the meta-schemas' ``minItems: 1`` would refuse."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key in _COMBINATORS and value == []:
                    current[key] = [{}]
                else:
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
    return node


def validate_against_meta_schema(plain_root: Any, draft: int) -> None:
    """Raise :class:`InvalidSchemaError` unless ``plain_root`` (plain JSON values) is valid
    against ``draft``'s meta-schema."""
    if isinstance(plain_root, bool):
        return
    if not isinstance(plain_root, dict):
        raise InvalidSchemaError("A JSON Schema must be an object or a boolean")
    declared = plain_root.get("$schema")
    if declared is not None and not isinstance(declared, str):
        raise InvalidSchemaError(f'#/$schema: {json.dumps(declared)} is not of type "string"')
    # always name the meta-schema jsonschema-rs bundles, so it never tries to fetch one
    document = {**_fill_empty_combinators(plain_root), "$schema": META_SCHEMA_URI[draft]}
    try:
        jsonschema_rs.meta.validate(document)
    except jsonschema_rs.ValidationError as exc:
        raise InvalidSchemaError(f"{_pointer(exc.instance_path)}: {exc.message}") from None
    except (jsonschema_rs.ReferencingError, ValueError) as exc:
        raise InvalidSchemaError(str(exc)) from None

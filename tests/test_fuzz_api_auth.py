"""Schemathesis against the committed OpenAPI document and a live server with HTTP Basic
authentication, subject rules and throttling on, as three callers:

* an admin: no 5xx, every answer as documented, never refused;
* a restricted user (read ``public-*``, write ``team-*``): no 5xx, every answer as documented,
  no answer carrying the hidden subject's schema, every write to it a 403 40301, and afterwards
  the hidden subject, the global config and the global mode are as they were;
* no or invalid credentials: every answer a documented 401 with a challenge, or a 429 with
  ``Retry-After`` once the invalid user is locked out; never 5xx.

Path parameters named ``subject`` are set, in turn, to the hidden subject, a readable one, a
writable one, and what schemathesis generated, so the rules are exercised on every route.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.production_helpers import Server, running, write_users

SPEC = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"
CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
ADMIN = ("admin", "admin-secret")
READER = ("reader", "reader-secret")
HIDDEN = "secret-value"
#: a field name only the hidden subject's schema has
HIDDEN_FIELD = "classified_9f3c"
HIDDEN_SCHEMA = json.dumps(
    {"type": "record", "name": "S", "fields": [{"name": HIDDEN_FIELD, "type": "string"}]}
)
READABLE = "public-value"
AVRO_PUBLIC = '{"type":"record","name":"P","fields":[{"name":"a","type":"int"}]}'
WRITABLE = "team-fuzz"
RULES = f"""
rules:
  - principals: [{ADMIN[0]}]
    permission: admin
  - principals: [{READER[0]}]
    subjects: ["public-*"]
    permission: read
  - principals: [{READER[0]}]
    subjects: ["{WRITABLE[:5]}*"]
    permission: write
"""
EXAMPLES = {"admin": 4, "restricted": 4, "anonymous": 2}

schema = schemathesis.openapi.from_path(str(SPEC))
_subjects = itertools.cycle([HIDDEN, READABLE, WRITABLE, None])
_anonymous = itertools.cycle(range(4))
_addresses = itertools.count(1)


def fuzz_settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("fuzz-auth")
    write_users(tmp / "users", dict([ADMIN, READER]))
    (tmp / "rules.yaml").write_text(RULES)
    env = {
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp / "users"),
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp / "rules.yaml"),
    }
    with running(Server(tmp, env)) as server:
        with server.client(auth=ADMIN) as client:
            for subject, text in ((HIDDEN, HIDDEN_SCHEMA), (READABLE, AVRO_PUBLIC)):
                response = client.post(f"/subjects/{subject}/versions", json={"schema": text})
                assert response.status_code == 200, response.text
        yield server
        assert "Traceback" not in server.log(), server.log()


def basic(user: tuple[str, str]) -> dict[str, str]:
    token = base64.b64encode(":".join(user).encode()).decode()
    return {"Authorization": f"Basic {token}"}


def _aim(case: schemathesis.Case) -> None:
    if "subject" in (case.path_parameters or {}):
        chosen = next(_subjects)
        if chosen is not None:
            case.path_parameters["subject"] = chosen


_SPEC_PATHS: dict[str, Any] = json.loads(SPEC.read_text())["paths"]


def _is_write_of_hidden(case: schemathesis.Case) -> bool:
    if (case.path_parameters or {}).get("subject") != HIDDEN:
        return False
    path, method = case.path, case.method.upper()
    return (
        # a DELETE the path does not have (schemathesis tries other methods) is 405 for anyone
        (method == "DELETE" and "delete" in _SPEC_PATHS.get(path, {}))
        or (method == "POST" and path == "/subjects/{subject}/versions")
        or (method == "PUT" and path in ("/config/{subject}", "/mode/{subject}"))
    )


def never_refused(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    assert response.status_code not in (401, 403, 429), response.text


def rules_hold(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    assert response.status_code not in (401, 429), response.text
    assert HIDDEN_FIELD not in response.text, f"the hidden schema leaked: {response.text}"
    if _is_write_of_hidden(case):
        assert response.status_code == 403, response.text
        assert response.json()["error_code"] == 40301


def refused(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    status = response.status_code
    assert status in (401, 429), (status, response.text)
    body = response.json()
    assert body["error_code"] == status
    if status == 401:
        assert response.headers.get("www-authenticate") == [
            'Basic realm="schema-registry", charset="UTF-8"'
        ]
    else:
        assert int(response.headers["retry-after"][0]) >= 1
        assert body["message"].startswith("Too many failed authentication attempts")


def test_spec_documents_authentication_on_every_operation() -> None:
    spec = json.loads(SPEC.read_text())
    assert spec["components"]["securitySchemes"]["basicAuth"] == {
        "type": "http",
        "scheme": "basic",
        "description": "Users of SCHEMA_REGISTRY_AUTH_USERS_FILE (when it is set)",
    }
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert spec["security"] == [{"basicAuth": []}, {"bearerAuth": []}, {}]
    operations = [op for item in spec["paths"].values() for op in item.values()]
    assert len(operations) >= 38
    error = {"$ref": "#/components/schemas/ErrorMessage"}
    for operation in operations:
        responses = operation["responses"]
        for status in ("401", "403", "429"):
            for media in responses[status]["content"].values():
                assert media["schema"] == error
        assert "WWW-Authenticate" in responses["401"]["headers"]
        assert "Retry-After" in responses["429"]["headers"]


@schema.parametrize()
@fuzz_settings(EXAMPLES["anonymous"])
def test_without_valid_credentials_every_answer_is_a_documented_refusal(
    case: schemathesis.Case, live: Server
) -> None:
    # in turn: nothing, an unknown user (locked out after 5 failures: 429), a wrong password
    # of a real user on its own address, garbage
    variants: list[dict[str, str]] = [
        {},
        basic(("mallory", "guess")),
        {**basic((READER[0], "wrong")), "X-Forwarded-For": f"10.9.{next(_addresses) % 250}.1"},
        {"Authorization": "Basic %%%"},
    ]
    headers = variants[next(_anonymous)]
    case.call_and_validate(
        base_url=live.url, headers=headers, checks=CONFORMANCE, additional_checks=[refused]
    )


@schema.parametrize()
@fuzz_settings(EXAMPLES["restricted"])
def test_restricted_user_sees_and_changes_only_what_the_rules_allow(
    case: schemathesis.Case, live: Server
) -> None:
    _aim(case)
    case.call_and_validate(
        base_url=live.url, headers=basic(READER), checks=CONFORMANCE, additional_checks=[rules_hold]
    )


def test_restricted_fuzzing_left_hidden_and_global_state_alone(live: Server) -> None:
    with live.client(auth=ADMIN) as client:
        assert client.get(f"/subjects/{HIDDEN}/versions").json() == [1]
        assert HIDDEN_FIELD in client.get(f"/subjects/{HIDDEN}/versions/1").json()["schema"]
        assert client.get("/config").json()["compatibilityLevel"] == "BACKWARD"
        assert client.get("/mode").json() == {"mode": "READWRITE"}
        assert client.get("/subjects/public-value/versions").json() == [1]


@schema.parametrize()
@fuzz_settings(EXAMPLES["admin"])
def test_admin_gets_documented_answers(case: schemathesis.Case, live: Server) -> None:
    _aim(case)
    case.call_and_validate(
        base_url=live.url,
        headers=basic(ADMIN),
        checks=CONFORMANCE,
        additional_checks=[never_refused],
    )

"""Qualified subject names, contexts and subject validation."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from registry.subjects import (
    is_valid_context,
    is_valid_subject,
    matches_prefix,
    parse_subject,
    qualify,
)


@pytest.mark.parametrize(
    ("raw", "context", "name", "qualified"),
    [
        ("foo", ".", "foo", "foo"),
        (":.ctx:foo", ".ctx", "foo", ":.ctx:foo"),
        (":.:foo", ".", "foo", "foo"),
        (":.team.sub:orders-value", ".team.sub", "orders-value", ":.team.sub:orders-value"),
        (":.ctx:", ".ctx", "", ":.ctx:"),
        ("a:b", ".", "a:b", "a:b"),
    ],
)
def test_parse_and_qualify(raw: str, context: str, name: str, qualified: str) -> None:
    qs = parse_subject(raw)
    assert (qs.context, qs.name) == (context, name)
    assert qualify(raw) == qualified


def test_sibling_resolves_unqualified_names_in_the_same_context() -> None:
    assert parse_subject(":.ctx:a").sibling("b").qualified == ":.ctx:b"
    assert parse_subject(":.ctx:a").sibling(":.other:b").qualified == ":.other:b"
    assert parse_subject("a").sibling("b").qualified == "b"


@pytest.mark.parametrize(
    ("subject", "valid"),
    [
        ("orders-value", True),
        ("*", True),
        ("a/b", True),
        (":.ctx:a:b", True),
        (":.:x", True),
        ("", False),
        (":.:", False),
        (":.x:", False),
        (":.x", False),
        (":*:", False),
        (":*:x", False),
        (":.a/b:c", False),
        (":.a*:c", False),
        ("with space", True),
        ("\rbad\nsubject\t", False),
        ("bad\x7fdel", False),
        ("\x00nul", False),
        ("unit\x1fsep", False),
        ("c1\x80start", False),
        ("c1\x9fend", False),
        ("tilde~", True),
        ("nbsp\xa0é", True),
        ("__GLOBAL", False),
        ("__EMPTY", False),
        (":.__GLOBAL:foo", False),
    ],
)
def test_subject_validity(subject: str, valid: bool) -> None:
    assert is_valid_subject(subject) is valid


@pytest.mark.parametrize(
    ("context", "valid"),
    [(".", True), (".ctx", True), (".a.b", True), ("ctx", False), (".a:b", False), ("", False)],
)
def test_context_validity(context: str, valid: bool) -> None:
    assert is_valid_context(context) is valid


@pytest.mark.parametrize(
    ("subject", "prefix", "matches"),
    [
        ("foo", ":*:", True),
        (":.ctx:foo", ":*:", True),
        ("foo", "", True),
        (":.ctx:foo", "", False),
        (":.ctx:foo", ":.ctx:", True),
        (":.ctx:foo", ":.ctx:f", True),
        (":.ctx:foo", ":.ctx:g", False),
        ("foo", ":.ctx:", False),
        ("foo", "fo", True),
        ("foo", "x", False),
    ],
)
def test_subject_prefix(subject: str, prefix: str, matches: bool) -> None:
    assert matches_prefix(subject, prefix) is matches


# ---- over HTTP: names that would stand for something else are refused, nothing stored -------

SCHEMA = {"schema": '"string"'}


@pytest.mark.parametrize(
    "spelling",
    [":.a%2Fb:c", ":.a*:c", ":*:", ":*:x", ":.x:", ":.x", "%3A.x%3A", ":.:", ":.__GLOBAL:x"],
)
def test_names_that_are_not_one_subject_are_refused(client: TestClient, spelling: str) -> None:
    answer = client.post(f"/subjects/{spelling}/versions", json=SCHEMA)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error_code"] == 42208
    assert client.get("/subjects", params={"subjectPrefix": ":*:"}).json() == []
    assert client.get("/contexts").json() == ["."]


def test_invalid_utf8_escapes_do_not_name_one_subject(client: TestClient) -> None:
    for spelling in ("%FF", "%FE", "%E2%82", "%C0%AF"):
        answer = client.post(f"/subjects/x{spelling}/versions", json=SCHEMA)
        assert answer.status_code == 400, answer.text
        assert answer.json()["error_code"] == 400
        assert answer.json()["message"].startswith("Bad UTF-8 encoding in the request path")
    # U+FFFD spelled in valid UTF-8 is an ordinary subject
    assert client.post("/subjects/x%EF%BF%BD/versions", json=SCHEMA).status_code == 200
    assert client.get("/subjects").json() == ["x\ufffd"]


def test_encoded_slash_has_no_second_spelling(client: TestClient) -> None:
    # U+F8FF stands for %2F while routing: spelled out it would name the subject "a/b"
    answer = client.post("/subjects/a%EF%A3%BFb/versions", json=SCHEMA)
    assert answer.status_code == 400 and answer.json()["error_code"] == 400
    assert client.get("/subjects").json() == []
    assert client.post("/subjects/a%2Fb/versions", json=SCHEMA).status_code == 200
    assert client.post("/contexts/.c/subjects/d%2Fe/versions", json=SCHEMA).status_code == 200
    assert client.get("/subjects", params={"subjectPrefix": ":*:"}).json() == [":.c:d/e", "a/b"]
    assert client.get("/contexts/.c/subjects/d%2Fe/versions").json() == [1]

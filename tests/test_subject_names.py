"""Qualified subject names, contexts and subject validation."""

from __future__ import annotations

import pytest

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
        ("", True),
        ("*", True),
        ("with space", True),
        ("\rbad\nsubject\t", False),
        ("bad\x7fdel", False),
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

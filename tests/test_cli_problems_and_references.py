"""How the CLI takes compatibility messages apart (every format's message style) and finds
references among local files, in the working tree and at a git revision."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from registry.cli import main
from registry.cli_tools.problems import first_changed_line, parse_messages
from registry.cli_tools.schemafiles import ReferenceFinder, SchemaSpec, load
from registry.cli_tools.sources import WORK_TREE, GitRevision
from registry.core import default_formats


def test_json_schema_messages_give_property_and_types() -> None:
    old = json.dumps({"type": "object", "properties": {"age": {"type": "integer"}}}, indent=2)
    new = json.dumps({"type": "object", "properties": {"age": {"type": "string"}}}, indent=2)
    message = (
        '{errorType:"TYPE_CHANGED", description:"A type at path \'#/properties/age\' is '
        "different between the new schema and the old schema'}"
    )
    [problem] = parse_messages(
        [message, "{validateFields: 'false', compatibility: 'BACKWARD'}"], new, old
    )
    assert problem.rule == "TYPE_CHANGED"
    assert problem.path == "#/properties/age"
    assert problem.field == "age"
    assert (problem.old_type, problem.new_type) == ("integer", "string")
    assert problem.line == 4


def test_reader_label_decides_which_schema_is_old() -> None:
    old = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})
    new = json.dumps({"type": "object", "properties": {}})
    message = (
        '{errorType:"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", description:"The old has a '
        "closed content model and is missing a property or item present at path "
        "'#/properties/a' in the new schema'}"
    )
    [problem] = parse_messages([message], new, old)
    assert problem.field == "a"
    assert problem.old_type == "string"
    assert problem.new_type == "(absent)"


def test_protobuf_messages_and_plain_messages() -> None:
    proto_old = 'syntax = "proto3";\nmessage M {\n  int32 a = 1;\n}\n'
    proto_new = 'syntax = "proto3";\nmessage M {\n  string a = 1;\n}\n'
    messages = [
        "{errorType:'FIELD_SCALAR_KIND_CHANGED', description:'The kind of a SCALAR field at "
        "path '#/M/1' in the new schema does not match its kind in the old schema'}",
        "Incompatible because of different schema type",
    ]
    first, second = parse_messages(messages, proto_new, proto_old)
    assert (first.rule, first.path, first.field) == ("FIELD_SCALAR_KIND_CHANGED", "#/M/1", None)
    assert first.line == 3  # the first changed line
    assert second.rule == "DIFFERENT_SCHEMA_TYPE"
    assert first_changed_line("a\nb\n", None) == 1


def test_old_schema_trailer_gives_the_old_types_online() -> None:
    old = '{"type":"record","name":"R","fields":[{"name":"x","type":"int"}]}'
    new = (
        '{"type":"record","name":"R","fields":[{"name":"x","type":{"type":"array","items":"int"}}]}'
    )
    messages = [
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in "
        "the new schema does not match with the old schema', additionalInfo:'reader type: "
        "ARRAY not compatible with writer type: INT'}",
        "{oldSchemaVersion: 4}",
        f"{{oldSchema: '{old}'}}",
    ]
    [problem] = parse_messages(messages, new)
    assert (problem.field, problem.old_version) == ("x", 4)
    assert (problem.old_type, problem.new_type) == ("int", "array")


def test_protobuf_imports_and_json_refs_are_found(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "money.proto").write_text('syntax = "proto3";\nmessage Money {}\n')
    order = tmp_path / "order.proto"
    order.write_text(
        'syntax = "proto3";\nimport "common/money.proto";\nimport "google/protobuf/any.proto";\n'
    )
    finder = ReferenceFinder(WORK_TREE)
    assert finder.direct(order, order.read_text(), "PROTOBUF") == [
        ("common/money.proto", tmp_path / "common" / "money.proto")
    ]
    (tmp_path / "address.json").write_text('{"type": "object"}')
    person = tmp_path / "person.json"
    person.write_text(
        '{"properties": {"home": {"$ref": "address.json"}, '
        '"work": {"$ref": "https://example.com/schemas/address.json#/x"}, '
        '"me": {"$ref": "#/definitions/me"}}}'
    )
    loaded = load(SchemaSpec("person", person, "JSON"), WORK_TREE, finder)
    assert loaded is not None
    assert [d.name for d in loaded.dependencies] == [
        "address.json",
        "https://example.com/schemas/address.json",
    ]
    assert [r.subject for r in loaded.direct] == ["address", "address"]


def test_references_at_a_git_revision(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "ci@example.com")
    git("config", "user.name", "CI")
    (tmp_path / "a.avsc").write_text(
        '{"type": "record", "name": "A", "namespace": "n", "fields": []}'
    )
    b = tmp_path / "b.avsc"
    b.write_text('{"type": "record", "name": "B", "fields": [{"name": "a", "type": "n.A"}]}')
    git("add", ".")
    git("commit", "-q", "-m", "one")
    (tmp_path / "a.avsc").unlink()
    rev = GitRevision("HEAD", cwd=tmp_path)
    loaded = load(SchemaSpec("b", b, "AVRO"), rev, ReferenceFinder(rev))
    assert loaded is not None
    assert [d.name for d in loaded.dependencies] == ["n.A"]
    assert (
        load(SchemaSpec("b", b, "AVRO"), WORK_TREE, ReferenceFinder(WORK_TREE)).dependencies == []
    )  # type: ignore[union-attr]
    with pytest.raises(Exception, match="unknown revision"):
        GitRevision("nope", cwd=tmp_path)


@pytest.mark.skipif("PROTOBUF" not in default_formats(), reason="Protobuf format not installed")
def test_protobuf_offline_check_with_an_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "money.proto").write_text(
        'syntax = "proto3";\nmessage Money { int64 units = 1; }\n'
    )
    (tmp_path / "old").mkdir()
    body = (
        'syntax = "proto3";\nimport "money.proto";\n'
        "message Order {\n  Money total = 1;\n  %s id = 2;\n}\n"
    )
    (tmp_path / "old" / "order.proto").write_text(body % "int64")
    (tmp_path / "order.proto").write_text(body % "int64")
    assert main(["check", "--against", "old", "order.proto"]) == 0
    (tmp_path / "order.proto").write_text(body % "string")
    assert main(["check", "--against", "old", "order.proto"]) == 1
    assert "FAIL  order (order.proto)" in capsys.readouterr().out


@pytest.mark.skipif("JSON" not in default_formats(), reason="JSON Schema format not installed")
def test_json_schema_offline_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old").mkdir()
    schema = {"type": "object", "properties": {"age": {"type": "integer"}}}
    (tmp_path / "old" / "person.json").write_text(json.dumps(schema))
    schema["properties"]["age"]["type"] = "string"  # type: ignore[index]
    (tmp_path / "person.json").write_text(json.dumps(schema, indent=2))
    assert main(["check", "--against", "old", "person.json", "--format", "json"]) == 1
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert result["problems"][0]["field"] == "age"

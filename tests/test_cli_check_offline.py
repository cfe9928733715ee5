"""``schema-registry check --offline`` and ``validate`` against a real git repository whose
history holds a sequence of schema changes (every exit code, every output format)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from registry.cli import main

ORDER_V1 = """{"type": "record", "name": "Order", "namespace": "com.acme", "fields": [
  {"name": "id", "type": "long"},
  {"name": "amount", "type": "int"},
  {"name": "address", "type": "com.acme.Address"}
]}
"""
# v2 drops "amount": a backward-compatible change (new readers ignore it)
ORDER_V2 = """{"type": "record", "name": "Order", "namespace": "com.acme", "fields": [
  {"name": "id", "type": "long"},
  {"name": "address", "type": "com.acme.Address"}
]}
"""
ADDRESS = """{"type": "record", "name": "Address", "namespace": "com.acme", "fields": [
  {"name": "street", "type": "string"}
]}
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with two commits: order v1 + address, then order v2; cwd is its root."""
    root = tmp_path / "repo"
    (root / "schemas").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "CI")
    (root / "schemas" / "order.avsc").write_text(ORDER_V1)
    (root / "schemas" / "address.avsc").write_text(ADDRESS)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "order v1")
    (root / "schemas" / "order.avsc").write_text(ORDER_V2)
    git(root, "commit", "-q", "-am", "order v2: drop amount")
    monkeypatch.chdir(root)
    return root


def write_order(repo: Path, *fields: str) -> None:
    body = ",\n".join(
        ['  {"name": "id", "type": "long"}', '  {"name": "address", "type": "com.acme.Address"}']
        + [f"  {f}" for f in fields]
    )
    (repo / "schemas" / "order.avsc").write_text(
        '{"type": "record", "name": "Order", "namespace": "com.acme", "fields": [\n'
        + body
        + "\n]}\n"
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_compatible_change_exits_0(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_order(repo, '{"name": "note", "type": "string", "default": ""}')
    code, out, _ = run(capsys, "check", "--offline", "--against", "git:HEAD", "schemas/order.avsc")
    assert code == 0
    assert "OK    order (schemas/order.avsc): compatible (BACKWARD; 1 previous version" in out


def test_unchanged_files_against_an_older_revision_exit_0(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "check",
        "--against",
        "git:HEAD~1",
        "schemas/order.avsc",
        "schemas/address.avsc",
    )
    assert code == 0
    assert "2 subject(s): 2 compatible, 0 incompatible, 0 error(s)" in out


def test_breaking_change_exits_1_with_one_line_per_problem(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ORDER_V2.replace('"type": "long"', '"type": "string"')
    text = text.replace("]}", '  ,{"name": "due", "type": "long"}\n]}')
    (repo / "schemas" / "order.avsc").write_text(text)
    code, out, _ = run(capsys, "check", "--offline", "--against", "git:HEAD", "schemas/order.avsc")
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(lines) == 2
    assert lines[0].startswith("FAIL  order (schemas/order.avsc):2: field 'id'")
    assert "TYPE_MISMATCH, old type long -> new type string" in lines[0]
    assert "field 'due'" in lines[1]
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in lines[1]
    assert "1 incompatible" in out


def test_json_output(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_order(repo, '{"name": "qty", "type": "int"}')
    code, out, _ = run(
        capsys,
        "check",
        "--offline",
        "--against",
        "git:HEAD",
        "--format",
        "json",
        "schemas/order.avsc",
        "schemas/address.avsc",
    )
    assert code == 1
    report = json.loads(out)
    assert report["status"] == "incompatible"
    order, address = report["results"]
    assert address["status"] == "compatible"
    assert order["status"] == "incompatible"
    [problem] = order["problems"]
    assert problem["rule"] == "READER_FIELD_MISSING_DEFAULT_VALUE"
    assert problem["field"] == "qty"
    assert problem["path"] == "/fields/2"
    assert problem["new_type"] == "int"
    assert problem["old_type"] == "(absent)"
    assert problem["line"] == 4
    assert order["level"] == "BACKWARD"
    assert order["against"] == "git:HEAD"


def test_github_annotations_point_at_the_changed_line(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "schemas" / "order.avsc").write_text(
        ORDER_V2.replace('"id", "type": "long"', '"id", "type": "int"')
    )
    code, out, _ = run(
        capsys,
        "check",
        "--offline",
        "--against",
        "git:HEAD",
        "--format",
        "github",
        "schemas/order.avsc",
    )
    assert code == 1
    [annotation] = [line for line in out.splitlines() if line.startswith("::error")]
    assert annotation.startswith(
        "::error file=schemas/order.avsc,line=2,"
        "title=Incompatible schema change%3A order (TYPE_MISMATCH)::"
    )
    assert "old type long -> new type int" in annotation


def test_transitive_level_compares_with_the_whole_history(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "amount" comes back as a string with a default: fine against v2, not against v1 (int)
    write_order(repo, '{"name": "amount", "type": "string", "default": ""}')
    argv = ["check", "--against", "git:HEAD", "schemas/order.avsc", "--format", "json"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    code, out, _ = run(capsys, *argv, "--level", "BACKWARD_TRANSITIVE")
    assert code == 1
    [result] = json.loads(out)["results"]
    assert result["compared_versions"] == 2
    [problem] = result["problems"]
    assert problem["field"] == "amount"
    assert (problem["old_type"], problem["new_type"]) == ("int", "string")
    assert problem["old_version"] == 1


def test_level_per_subject(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_order(repo, '{"name": "qty", "type": "int"}')
    argv = ["check", "--against", "git:HEAD", "schemas/order.avsc", "schemas/address.avsc"]
    code, _, _ = run(capsys, *argv, "--level", "FULL", "--level", "order=NONE")
    assert code == 0
    code, out, _ = run(capsys, *argv, "--level", "address=NONE")
    assert code == 1
    assert "FAIL  order" in out


def test_file_new_at_the_revision_is_compatible(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "schemas" / "customer.avsc").write_text(
        '{"type": "record", "name": "Customer", "fields": [{"name": "n", "type": "string"}]}'
    )
    code, out, _ = run(capsys, "check", "--against", "git:HEAD", "schemas/customer.avsc")
    assert code == 0
    assert "no previous version" in out


def test_change_in_a_referenced_file_is_seen_by_its_subject(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "schemas" / "address.avsc").write_text(
        ADDRESS.replace('"type": "string"}', '"type": "string"}, {"name": "zip", "type": "int"}')
    )
    code, out, _ = run(
        capsys,
        "check",
        "--against",
        "git:HEAD",
        "--format",
        "json",
        "schemas/order.avsc",
        "schemas/address.avsc",
    )
    assert code == 1
    order, address = json.loads(out)["results"]
    assert address["problems"][0]["field"] == "zip"
    # order embeds Address through its reference: the new field breaks it too
    assert order["problems"][0]["rule"] == "READER_FIELD_MISSING_DEFAULT_VALUE"


def test_unparseable_schema_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "schemas" / "order.avsc").write_text('{"type": "record", "name": "Order"')
    code, out, _ = run(capsys, "check", "--against", "git:HEAD", "schemas/order.avsc")
    assert code == 2
    assert "ERROR order (schemas/order.avsc): invalid schema" in out


def test_unresolvable_reference_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "schemas" / "address.avsc").unlink()
    code, out, _ = run(capsys, "check", "--against", "git:HEAD", "schemas/order.avsc")
    assert code == 2
    assert "invalid schema" in out
    assert "com.acme.Address" in out


def test_missing_file_exits_2_and_other_results_still_shown(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "check", "--against", "git:HEAD", "schemas/nope.avsc", "schemas/order.avsc"
    )
    assert code == 2
    assert "ERROR nope (schemas/nope.avsc): " in out
    assert "file not found" in out
    assert "OK    order" in out


def test_unknown_revision_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "check", "--against", "git:no-such-branch", "schemas/order.avsc")
    assert code == 2
    assert "unknown revision 'no-such-branch'" in err


def test_usage_errors_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", "--offline", "schemas/order.avsc")[0] == 2
    assert run(capsys, "check", "--against", "git:HEAD")[0] == 2
    assert run(capsys, "check", "--against", "git:HEAD", "--level", "SIDEWAYS", "x.avsc")[0] == 2
    assert run(capsys, "check", "--against", "git:HEAD", "schema.txt")[0] == 2
    assert run(capsys, "check", "--against", "nowhere/", "schemas/order.avsc")[0] == 2
    with pytest.raises(SystemExit) as exc:
        main(["check", "--format", "xml", "schemas/order.avsc"])
    assert exc.value.code == 2


def test_against_previous_files_and_directories(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old"
    (old / "order").mkdir(parents=True)
    (old / "order" / "1.avsc").write_text(ORDER_V1)
    (old / "order" / "2.avsc").write_text(ORDER_V2)
    (old / "address.avsc").write_text(ADDRESS)
    write_order(repo, '{"name": "amount", "type": "string", "default": ""}')
    order = "schemas/order.avsc"
    # one file: the version before
    assert run(capsys, "check", "--against", str(old / "order" / "2.avsc"), order)[0] == 0
    assert run(capsys, "check", "--against", str(old / "order" / "1.avsc"), order)[0] == 1
    # a directory: DIR/<subject>/ holds the versions, oldest first by name
    code, out, _ = run(
        capsys, "check", "--against", str(old), "--level", "BACKWARD_TRANSITIVE", order
    )
    assert code == 1
    assert "vs version 1" in out
    # ... or DIR/<file name> is the previous version
    code, out, _ = run(capsys, "check", "--against", str(old), "schemas/address.avsc")
    assert code == 0
    assert "1 previous version" in out
    # a file for several schemas is ambiguous
    assert run(capsys, "check", "--against", str(old / "address.avsc"), order, order)[0] == 2


def test_project_file_gives_subjects_levels_and_previous_versions(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "old").mkdir()
    (repo / "old" / "order.avsc").write_text(ORDER_V1)
    (repo / "schema-registry.yaml").write_text(
        """
subjects:
  - subject: address-value
    file: schemas/address.avsc
  - subject: order-value
    file: schemas/order.avsc
    level: FORWARD
    previous: old/order.avsc
    references:
      - name: com.acme.Address
        subject: address-value
"""
    )
    # FORWARD: the old schema (with "amount", no default) cannot read data without "amount"
    code, out, _ = run(capsys, "check", "--offline", "--project", "schema-registry.yaml")
    assert code == 2  # address-value has no previous version given: usage error
    assert "needs --against" in out
    code, out, _ = run(
        capsys,
        "check",
        "--offline",
        "--project",
        "schema-registry.yaml",
        "schemas/order.avsc",
        "--format",
        "json",
    )
    assert code == 1
    [result] = json.loads(out)["results"]
    assert result["subject"] == "order-value"
    assert result["level"] == "FORWARD"
    problem = result["problems"][0]
    assert problem["rule"] == "READER_FIELD_MISSING_DEFAULT_VALUE"
    assert problem["field"] == "amount"
    # the same project against git: order v2 is unchanged, FORWARD holds
    code, _, _ = run(capsys, "check", "--against", "git:HEAD", "--project", "schema-registry.yaml")
    assert code == 0


def test_invalid_project_file_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "bad.yaml").write_text("subjects:\n  - subject: x\n")
    code, _, err = run(capsys, "check", "--against", "git:HEAD", "--project", "bad.yaml")
    assert code == 2
    assert "'file' is required" in err
    (repo / "bad.yaml").write_text("subjects: [")
    assert run(capsys, "check", "--against", "git:HEAD", "--project", "bad.yaml")[0] == 2


def test_validate(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "schemas/order.avsc", "schemas/address.avsc")
    assert code == 0
    assert "OK    order (schemas/order.avsc): valid" in out
    assert "2 schema(s): 2 valid, 0 error(s)" in out
    (repo / "schemas" / "address.avsc").write_text('{"type": "record", "name": "Address"}')
    code, out, _ = run(capsys, "validate", "schemas/address.avsc", "--format", "github")
    assert code == 2
    assert out.startswith("::error file=schemas/address.avsc,line=1,title=Schema error")


def test_console_script_with_no_configuration(repo: Path) -> None:
    """The documented zero-configuration call, through the installed entry point."""
    write_order(repo, '{"name": "qty", "type": "int"}')
    script = Path(sys.executable).with_name("schema-registry")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "registry.cli"]
    done = subprocess.run(
        [*command, "check", "--offline", "--against", "git:HEAD", "schemas/order.avsc"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "field 'qty'" in done.stdout
    git(repo, "checkout", "-q", "--", "schemas/order.avsc")
    done = subprocess.run(
        [*command, "check", "--offline", "--against", "git:HEAD~1", "schemas/order.avsc"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr

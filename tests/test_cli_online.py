"""The online commands against one live ``schema-registry serve`` process: check, register,
download, config, plan and apply (every exit code)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from registry.cli import main
from tests.conftest import LiveServer, free_port

V1 = {
    "type": "record",
    "name": "User",
    "namespace": "com.acme",
    "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("cli-online")
    live = LiveServer(f"sqlite:///{tmp / 'live.db'}", tmp)
    live.start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def record(name: str, *fields: tuple[str, object], **extra: object) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": name,
            "namespace": "com.acme",
            "fields": [{"name": n, "type": t, **extra} for n, t in fields],
        },
        indent=2,
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def register_direct(server: LiveServer, subject: str, schema: str) -> None:
    answer = httpx.post(f"{server.url}/subjects/{subject}/versions", json={"schema": schema})
    assert answer.status_code == 200, answer.text


def test_check_online_exit_codes_and_messages(
    server: LiveServer, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    register_direct(server, "online-user", record("User", ("id", "long"), ("name", "string")))
    path = work / "online-user.avsc"
    path.write_text(record("User", ("id", "long"), ("name", "string")))
    code, out, _ = run(capsys, "check", "--url", server.url, str(path))
    assert code == 0
    assert "OK    online-user" in out
    assert "compatible (BACKWARD; 1 previous version at http://127.0.0.1" in out

    path.write_text(record("User", ("id", "string"), ("name", "string")))
    code, out, _ = run(capsys, "check", "--url", server.url, str(path), "--format", "json")
    assert code == 1
    [result] = json.loads(out)["results"]
    assert result["level"] == "BACKWARD"
    [problem] = result["problems"]
    assert problem["rule"] == "TYPE_MISMATCH"
    assert problem["field"] == "id"
    assert (problem["old_type"], problem["new_type"]) == ("long", "string")
    assert problem["old_version"] == 1
    assert problem["line"] == 7  # the "name": "id" line of the indented file

    code, out, _ = run(capsys, "check", "--url", server.url, str(path), "--format", "github")
    assert code == 1
    assert out.startswith(f"::error file={path.name},line=7,")


def test_check_online_new_subject_and_template(
    server: LiveServer, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (work / "fresh.avsc").write_text(record("Fresh", ("id", "long")))
    code, out, _ = run(
        capsys, "check", "--url", server.url, "--subject-template", "{stem}-value", "fresh.avsc"
    )
    assert code == 0
    assert "fresh-value (fresh.avsc): compatible" in out
    assert "no previous version" in out


def test_check_online_input_errors_exit_2(
    server: LiveServer,
    work: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (work / "bad.avsc").write_text('{"type": "record", "name": "Bad", "fields": [{"name": "x"}]}')
    code, out, _ = run(capsys, "check", "--url", server.url, "bad.avsc")
    assert code == 2
    assert "invalid schema" in out
    (work / "ok.avsc").write_text(record("Ok", ("id", "long")))
    code, _, err = run(capsys, "check", "--url", f"http://127.0.0.1:{free_port()}", "ok.avsc")
    assert code == 2
    assert "unreachable" in err
    monkeypatch.delenv("SCHEMA_REGISTRY_URL", raising=False)
    code, _, err = run(capsys, "check", "ok.avsc")
    assert code == 2
    assert "no registry URL" in err
    code, _, err = run(capsys, "check", "--url", server.url, "--ca-cert", "none.pem", "ok.avsc")
    assert code == 2
    assert "--ca-cert none.pem: no such file" in err
    monkeypatch.setenv("SCHEMA_REGISTRY_URL", server.url)
    code, _, _ = run(capsys, "check", "--user", "ci:secret", "--token", "t", "ok.avsc")
    assert code == 0


def test_register_download_and_config(
    server: LiveServer, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    schemas = work / "schemas"
    schemas.mkdir()
    (schemas / "address.avsc").write_text(record("Address", ("street", "string")))
    (schemas / "customer.avsc").write_text(
        record("Customer", ("id", "long"), ("home", "com.acme.Address"))
    )
    argv = ["register", "--url", server.url, "--subject-template", "reg-{stem}"]
    code, out, _ = run(capsys, *argv, "schemas/customer.avsc", "schemas/address.avsc")
    assert code == 0
    # the referenced subject is registered first, then the one referencing it
    lines = out.splitlines()
    assert lines[0].startswith("registered reg-address version 1 id ")
    assert lines[1].startswith("registered reg-customer version 1 id ")
    latest = httpx.get(f"{server.url}/subjects/reg-customer/versions/latest").json()
    assert latest["references"] == [
        {"name": "com.acme.Address", "subject": "reg-address", "version": 1}
    ]
    # registering again is idempotent
    assert run(capsys, *argv, "schemas/address.avsc")[0] == 0

    (schemas / "address.avsc").write_text(record("Address", ("street", "int")))
    code, out, _ = run(capsys, *argv, "schemas/address.avsc")
    assert code == 1
    assert out.startswith("INCOMPATIBLE reg-address")

    code, out, _ = run(capsys, "config", "--url", server.url, "reg-address", "--level", "none")
    assert (code, out.strip()) == (0, "reg-address: NONE")
    code, out, _ = run(capsys, "config", "--url", server.url, "reg-address")
    assert (code, out.strip()) == (0, "reg-address: NONE")
    assert run(capsys, "config", "--url", server.url, "reg-address", "--level", "up")[0] == 2
    assert run(capsys, *argv, "schemas/address.avsc")[0] == 0  # NONE lets it through

    out_dir = work / "downloaded"
    code, out, _ = run(
        capsys,
        "download",
        "--url",
        server.url,
        "--subject-pattern",
        "reg-.*",
        "--output-dir",
        str(out_dir),
    )
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["reg-address.avsc", "reg-customer.avsc"]
    downloaded = json.loads((out_dir / "reg-address.avsc").read_text())
    assert downloaded["fields"] == [{"name": "street", "type": "int"}]
    assert "reg-address version 2" in out
    assert run(capsys, "download", "--url", server.url, "--subject-pattern", "(")[0] == 2


PROJECT = """
subjects:
  - subject: plan-order
    file: order.avsc
    level: FULL
    references:
      - name: com.acme.Line
        subject: plan-line
  - subject: plan-line
    file: line.avsc
"""


def test_plan_and_apply(server: LiveServer, work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (work / "schema-registry.yaml").write_text(PROJECT)
    (work / "line.avsc").write_text(record("Line", ("sku", "string")))
    (work / "order.avsc").write_text(record("Order", ("id", "long"), ("line", "com.acme.Line")))
    url = ["--url", server.url]

    code, out, _ = run(capsys, "plan", *url)
    assert code == 0
    assert out.splitlines() == [
        "+ create    plan-line (line.avsc): new subject, version 1",
        "~ set-level plan-order (order.avsc): level (unset) -> FULL",
        "+ register  plan-order (order.avsc): new version after plan-line (checked when applied)",
        "3 change(s)",
    ]
    code, out, _ = run(capsys, "apply", *url)
    assert code == 0
    assert "set plan-order level FULL" in out
    assert "registered plan-order version 1" in out
    assert httpx.get(f"{server.url}/config/plan-order").json()["compatibilityLevel"] == "FULL"

    code, out, _ = run(capsys, "plan", *url, "--format", "json")
    assert code == 0
    assert [a["action"] for a in json.loads(out)["actions"]] == ["unchanged", "unchanged"]

    # FULL: a new field without a default breaks forward compatibility
    (work / "order.avsc").write_text(
        record("Order", ("id", "long"), ("line", "com.acme.Line"), ("qty", "int"))
    )
    code, out, _ = run(capsys, "plan", *url)
    assert code == 1
    assert "+ register  plan-order (order.avsc): new version after 1 INCOMPATIBLE" in out
    assert "field 'qty'" in out
    code, out, _ = run(capsys, "apply", *url)
    assert code == 1
    assert "INCOMPATIBLE plan-order" in out

    (work / "order.avsc").write_text(record("Order", ("id", "long"), ("line", "com.acme.Line")))
    (work / "line.avsc").write_text("{not json")
    assert run(capsys, "plan", *url)[0] == 2
    assert run(capsys, "apply", *url)[0] == 2
    assert run(capsys, "plan", *url, "missing.yaml")[0] == 2

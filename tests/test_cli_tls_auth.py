"""`schema-registry check` and `register` against a registry served over HTTPS with HTTP
Basic authentication: the CA option verifies it, credentials are sent, wrong ones exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.cli import main
from tests.production_helpers import Pki, running, write_users

RECORD = json.dumps({"type": "record", "name": "U", "fields": [{"name": "a", "type": "int"}]})
BREAKING = json.dumps({"type": "record", "name": "U", "fields": [{"name": "b", "type": "int"}]})


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_and_register_over_https_with_basic_auth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pki = Pki(tmp_path)
    users = tmp_path / "users"
    write_users(users, {"ci": "s3cret"})
    server = pki.https_server(tmp_path, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users)})
    schema = tmp_path / "orders-value.avsc"
    schema.write_text(RECORD)
    with running(server) as srv:
        common = ["--url", srv.url, "--ca-cert", str(pki.ca)]
        code, out, err = run(capsys, "register", *common, "--user", "ci:s3cret", str(schema))
        assert code == 0, out + err
        code, out, _ = run(capsys, "check", *common, "--user", "ci:s3cret", str(schema))
        assert code == 0
        assert "orders-value" in out

        schema.write_text(BREAKING)
        code, out, _ = run(capsys, "check", *common, "--user", "ci:s3cret", str(schema))
        assert code == 1
        assert "orders-value" in out

        # wrong credentials and an untrusted server are input errors (exit 2), never "compatible"
        code, out, err = run(capsys, "check", *common, "--user", "ci:wrong", str(schema))
        assert code == 2
        assert "Unauthorized" in out + err
        code, out, err = run(capsys, "check", "--url", srv.url, "--user", "ci:s3cret", str(schema))
        assert code == 2
        assert "CERTIFICATE_VERIFY_FAILED" in out + err or "certificate" in (out + err).lower()

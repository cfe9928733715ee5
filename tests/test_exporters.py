"""Schema exporters against a real second registry: two ``schema-registry serve`` processes
(SQLite stores), the source running the exporter, the destination receiving its copies."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CONTENT_TYPE, LiveServer

SECRET_ENV = {"SCHEMA_REGISTRY_EXPORTER_SECRET": "test passphrase"}


def _avro(name: str, fields: list[dict[str, Any]] | None = None) -> str:
    return json.dumps({"type": "record", "name": name, "fields": fields or []})


class Api:
    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, headers={"Content-Type": CONTENT_TYPE}, timeout=30)

    def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return self.http.request(method, path, json=body)

    def ok(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.call(method, path, body)
        assert answer.status_code < 300, (method, path, answer.status_code, answer.text)
        return answer.json() if answer.content else None

    def refused(self, method: str, path: str, body: Any, status: int, code: int) -> str:
        answer = self.call(method, path, body)
        assert (answer.status_code, answer.json().get("error_code")) == (status, code), answer.text
        return str(answer.json()["message"])


def _server(tmp: Path, name: str, env: dict[str, str] | None = None) -> LiveServer:
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    return LiveServer(f"sqlite:///{folder / 'registry.db'}", folder, env)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer]]:
    tmp = tmp_path_factory.mktemp("exporters")
    source, destination = _server(tmp, "source", SECRET_ENV), _server(tmp, "destination")
    source.start()
    try:
        destination.start()
        try:
            yield source, destination
        finally:
            destination.stop()
    finally:
        if source.proc is not None and source.proc.poll() is None:
            source.stop()


@pytest.fixture(scope="module")
def src(servers: tuple[LiveServer, LiveServer]) -> Api:
    return Api(servers[0].url)


@pytest.fixture(scope="module")
def dst(servers: tuple[LiveServer, LiveServer]) -> Api:
    return Api(servers[1].url)


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        else:
            if result is not False:
                return result
            if time.monotonic() > deadline:
                raise AssertionError("condition not met in time")
        time.sleep(0.1)


def _exporter(name: str, url: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "config": {"schema.registry.url": url}, **fields}


def _state(api: Api, name: str) -> str:
    return str(api.ok("GET", f"/exporters/{name}/status")["state"])


# ---- the API -----------------------------------------------------------------------------


def test_bad_definitions_are_refused_and_nothing_stored(src: Api, dst: Api) -> None:
    before = src.ok("GET", "/exporters")
    src.refused("POST", "/exporters", {"config": {"schema.registry.url": dst.url}}, 409, 40950)
    src.refused("POST", "/exporters", _exporter("a/b", dst.url), 409, 40950)
    src.refused("POST", "/exporters", {"name": "x"}, 409, 40951)
    src.refused("POST", "/exporters", _exporter("x", "ftp://host"), 409, 40951)
    src.refused("POST", "/exporters", _exporter("x", dst.url, contextType="ODD"), 409, 40951)
    src.refused("POST", "/exporters", _exporter("x", dst.url, contextType="CUSTOM"), 409, 40951)
    src.refused("POST", "/exporters", _exporter("x", dst.url, subjects="all"), 409, 40952)
    src.refused("POST", "/exporters", _exporter("x", dst.url, subjects=[]), 409, 40952)
    src.refused("POST", "/exporters", [1], 400, 400)
    for path in ("/exporters/nope", "/exporters/nope/config", "/exporters/nope/status"):
        src.refused("GET", path, None, 404, 40450)
    for action in ("pause", "resume", "reset"):
        src.refused("PUT", f"/exporters/nope/{action}", None, 404, 40450)
    src.refused("DELETE", "/exporters/nope", None, 404, 40450)
    assert src.ok("GET", "/exporters") == before


def test_definition_round_trip_and_state_rules(src: Api, dst: Api) -> None:
    body = _exporter(
        "rules",
        dst.url,
        contextType="CUSTOM",
        context="rules",
        subjects=["nothing-matches-*"],
        subjectRenameFormat="copy-${subject}",
    )
    assert src.ok("POST", "/exporters", body) == {"name": "rules"}
    src.refused("POST", "/exporters", body, 409, 40960)
    assert "rules" in src.ok("GET", "/exporters")
    assert src.ok("GET", "/exporters/rules") == {
        "name": "rules",
        "contextType": "CUSTOM",
        "context": "rules",
        "subjects": ["nothing-matches-*"],
        "subjectRenameFormat": "copy-${subject}",
        "config": {"schema.registry.url": dst.url},
    }
    assert src.ok("GET", "/exporters/rules/config") == {"schema.registry.url": dst.url}
    status = eventually(
        lambda: (s := src.ok("GET", "/exporters/rules/status"))["state"] == "RUNNING" and s
    )
    assert status["name"] == "rules" and status["ts"] > 0
    # changes need a paused exporter (40963); resuming a running one is 40961
    src.refused("PUT", "/exporters/rules", {"subjects": ["a"]}, 409, 40963)
    src.refused("PUT", "/exporters/rules/config", {"x": "y"}, 409, 40963)
    src.refused("PUT", "/exporters/rules/reset", None, 409, 40963)
    src.refused("PUT", "/exporters/rules/resume", None, 409, 40961)
    assert src.ok("PUT", "/exporters/rules/pause") == {"name": "rules"}
    assert _state(src, "rules") == "PAUSED"
    assert src.ok("PUT", "/exporters/rules", {"subjects": ["a", ":*:b*"], "contextType": "NONE"})
    src.refused("PUT", "/exporters/rules", {"subjects": [""]}, 409, 40952)
    assert src.ok("PUT", "/exporters/rules/config", {"extra.setting": "1"}) == {"name": "rules"}
    described = src.ok("GET", "/exporters/rules")
    assert described["subjects"] == ["a", ":*:b*"] and described["contextType"] == "NONE"
    assert described["config"] == {"schema.registry.url": dst.url, "extra.setting": "1"}
    assert src.ok("PUT", "/exporters/rules/reset") == {"name": "rules"}
    assert src.ok("GET", "/exporters/rules/status")["offset"] == -1
    assert src.ok("PUT", "/exporters/rules/resume") == {"name": "rules"}
    eventually(lambda: _state(src, "rules") == "RUNNING")
    assert src.call("DELETE", "/exporters/rules").status_code == 204
    src.refused("GET", "/exporters/rules", None, 404, 40450)


def test_credentials_are_masked_and_encrypted_at_rest(
    servers: tuple[LiveServer, LiveServer], src: Api, dst: Api
) -> None:
    password = "pa55-w0rd-that-must-not-leak"
    config = {
        "schema.registry.url": dst.url,
        "basic.auth.credentials.source": "USER_INFO",
        "basic.auth.user.info": f"alice:{password}",
    }
    src.ok("POST", "/exporters", {"name": "creds", "subjects": ["none-*"], "config": config})
    shown = src.ok("GET", "/exporters/creds/config")
    assert shown["basic.auth.user.info"] == "[hidden]"
    assert password not in json.dumps(src.ok("GET", "/exporters/creds"))
    src.ok("PUT", "/exporters/creds/pause")
    # sending the mask back keeps the stored credential
    src.ok("PUT", "/exporters/creds/config", {"basic.auth.user.info": "[hidden]"})
    database = Path(servers[0].store.removeprefix("sqlite:///"))
    raw = b"".join(p.read_bytes() for p in database.parent.glob("registry.db*"))
    assert b"alice:" not in raw and password.encode() not in raw and b"enc:v1:" in raw
    assert password not in servers[0].log()
    src.ok("DELETE", "/exporters/creds")


def test_credentials_need_the_secret_setting(dst: Api) -> None:
    # the destination runs without exporter_secret: it cannot store credentials
    body = _exporter("nokey", dst.url)
    body["config"]["bearer.auth.token"] = "t0ken"
    message = dst.refused("POST", "/exporters", body, 409, 40951)
    assert "exporter_secret" in message and "t0ken" not in message
    dst.refused("GET", "/exporters/nokey", None, 404, 40450)


# ---- the export ----------------------------------------------------------------------------


def test_export_copies_versions_ids_references_configs_modes_and_deletes(
    src: Api, dst: Api
) -> None:
    base = src.ok("POST", "/subjects/ex-base/versions", {"schema": _avro("Base")})["id"]
    src.ok(
        "POST",
        "/subjects/ex-base/versions",
        {"schema": _avro("Base", [{"name": "a", "type": "int", "default": 0}])},
    )
    ref = [{"name": "Base", "subject": "ex-base", "version": 1}]
    top_schema = _avro("Top", [{"name": "b", "type": "Base"}])
    top = src.ok("POST", "/subjects/ex-top/versions", {"schema": top_schema, "references": ref})
    src.ok("PUT", "/config/ex-top", {"compatibility": "FULL"})
    src.ok("POST", "/subjects/other/versions", {"schema": _avro("Other")})
    src.ok(
        "POST",
        "/exporters",
        _exporter("main", dst.url, contextType="CUSTOM", context="dr", subjects=["ex-*"]),
    )

    def copied() -> None:
        got = dst.ok("GET", "/subjects/:.dr:ex-top/versions/1")
        assert got["id"] == top["id"] and got["references"] == ref

    eventually(copied)
    assert dst.ok("GET", "/subjects/:.dr:ex-base/versions/1")["id"] == base
    assert dst.ok("GET", "/subjects/:.dr:ex-base/versions") == [1, 2]
    assert dst.ok("GET", "/mode/:.dr:ex-top")["mode"] == "IMPORT"
    eventually(lambda: dst.ok("GET", "/config/:.dr:ex-top")["compatibilityLevel"] == "FULL")
    assert "other" not in json.dumps(dst.ok("GET", "/subjects?subjectPrefix=:*:"))
    # the live tail: a new version, a soft delete, a hard delete
    new = src.ok(
        "POST",
        "/subjects/ex-base/versions",
        {"schema": _avro("Base", [{"name": "c", "type": "int", "default": 1}])},
    )
    eventually(lambda: dst.ok("GET", "/subjects/:.dr:ex-base/versions/3")["id"] == new["id"])
    src.ok("DELETE", "/subjects/ex-base/versions/2")
    eventually(lambda: dst.ok("GET", "/subjects/:.dr:ex-base/versions") == [1, 3])
    src.ok("DELETE", "/subjects/ex-base/versions/2?permanent=true")
    eventually(lambda: dst.ok("GET", "/subjects/:.dr:ex-base/versions?deleted=true") == [1, 3])
    status = eventually(
        lambda: (s := src.ok("GET", "/exporters/main/status"))["state"] == "RUNNING" and s
    )
    assert status["offset"] > 0 and status.get("trace") is None
    metrics = src.http.get("/metrics").text
    assert 'schema_registry_exporter_state{exporter="main",state="RUNNING"} 1.0' in metrics
    assert 'schema_registry_exporter_state{exporter="main",state="ERROR"} 0.0' in metrics
    exported = re.search(r'exporter_records_exported_total\{exporter="main"\} (\S+)', metrics)
    assert exported is not None and float(exported.group(1)) >= 7  # versions, deletes, config
    assert 'schema_registry_exporter_lag_records{exporter="main"}' in metrics
    src.ok("PUT", "/exporters/main/pause")
    src.ok("DELETE", "/exporters/main")


def test_pause_resume_reset_and_rename(src: Api, dst: Api) -> None:
    src.ok("POST", "/subjects/pr-one/versions", {"schema": _avro("One")})
    src.ok(
        "POST",
        "/exporters",
        _exporter(
            "pr",
            dst.url,
            contextType="CUSTOM",
            context="pr",
            subjects=["pr-*"],
            subjectRenameFormat="copy.${subject}",
        ),
    )
    eventually(lambda: dst.ok("GET", "/subjects/:.pr:copy.pr-one/versions") == [1])
    src.ok("PUT", "/exporters/pr/pause")
    src.ok("POST", "/subjects/pr-two/versions", {"schema": _avro("Two")})
    time.sleep(1.5)
    assert dst.call("GET", "/subjects/:.pr:copy.pr-two/versions").status_code == 404
    assert _state(src, "pr") == "PAUSED"
    src.ok("PUT", "/exporters/pr/resume")
    eventually(lambda: dst.ok("GET", "/subjects/:.pr:copy.pr-two/versions") == [1])
    # reset: the export starts over; the copies it sends again change nothing
    src.ok("PUT", "/exporters/pr/pause")
    src.ok("PUT", "/exporters/pr/reset")
    assert src.ok("GET", "/exporters/pr/status")["offset"] == -1
    src.ok("PUT", "/exporters/pr/resume")
    eventually(lambda: src.ok("GET", "/exporters/pr/status")["offset"] > 0)
    assert dst.ok("GET", "/subjects?subjectPrefix=:.pr:") == [
        ":.pr:copy.pr-one",
        ":.pr:copy.pr-two",
    ]
    src.ok("DELETE", "/exporters/pr")


class Gate:
    """A TCP relay on a free port to ``target``: while closed it hangs up on every connection
    (the destination is down), while open it relays."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.open = False
        self.relayed: list[socket.socket] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                conn.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            self.relayed += [conn, upstream]
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def shut(self) -> None:
        """Down: hang up on new connections and cut the relayed ones."""
        self.open = False
        for each in self.relayed:
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
        self.relayed = []

    def close(self) -> None:
        self.shut()
        self.listener.close()


def test_destination_down_is_an_error_until_it_answers(
    servers: tuple[LiveServer, LiveServer], src: Api, dst: Api
) -> None:
    gate = Gate(servers[1].port)
    try:
        src.ok("POST", "/subjects/down-one/versions", {"schema": _avro("Down")})
        body = _exporter("down", gate.url, subjects=["down-*"], contextType="CUSTOM")
        src.ok("POST", "/exporters", {**body, "context": "down"})
        status = eventually(
            lambda: (s := src.ok("GET", "/exporters/down/status"))["state"] == "ERROR" and s
        )
        assert gate.url.removeprefix("http://") in status["trace"]
        # the destination comes back: the back-off retry (1 s, then 2 s) gets through alone
        gate.open = True
        eventually(lambda: dst.ok("GET", "/subjects/:.down:down-one/versions") == [1])
        eventually(lambda: _state(src, "down") == "RUNNING")
        assert src.ok("GET", "/exporters/down/status").get("trace") is None
        # down again: ERROR; resume (allowed from ERROR) goes on from where it stopped
        gate.shut()
        src.ok("POST", "/subjects/down-two/versions", {"schema": _avro("DownTwo")})
        eventually(lambda: _state(src, "down") == "ERROR")
        gate.open = True
        assert src.ok("PUT", "/exporters/down/resume") == {"name": "down"}
        eventually(lambda: dst.ok("GET", "/subjects/:.down:down-two/versions") == [1])
        assert dst.ok("GET", "/subjects/:.down:down-one/versions") == [1]
        src.ok("DELETE", "/exporters/down")
    finally:
        gate.close()


def test_restart_resumes_from_the_stored_offset(
    servers: tuple[LiveServer, LiveServer], src: Api, dst: Api
) -> None:
    src.ok("POST", "/subjects/rs-a/versions", {"schema": _avro("RsA")})
    src.ok(
        "POST",
        "/exporters",
        _exporter("rs", dst.url, contextType="CUSTOM", context="rs", subjects=["rs-*"]),
    )
    eventually(lambda: dst.ok("GET", "/subjects/:.rs:rs-a/versions") == [1])
    offset = eventually(lambda: src.ok("GET", "/exporters/rs/status")["offset"])
    source = servers[0]
    source.stop()
    source.start()
    src = Api(source.url)  # new connections to the new process
    assert src.ok("GET", "/exporters/rs/status")["offset"] >= offset
    src.ok(
        "POST",
        "/subjects/rs-a/versions",
        {"schema": _avro("RsA", [{"name": "x", "type": "int", "default": 0}])},
    )
    eventually(lambda: dst.ok("GET", "/subjects/:.rs:rs-a/versions") == [1, 2])
    src_ids = [src.ok("GET", f"/subjects/rs-a/versions/{v}")["id"] for v in (1, 2)]
    dst_ids = [dst.ok("GET", f"/subjects/:.rs:rs-a/versions/{v}")["id"] for v in (1, 2)]
    assert src_ids == dst_ids
    src.ok("DELETE", "/exporters/rs")


# ---- the CLI ------------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    from registry.cli import main

    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_cli_exporter_commands_and_compare(
    capsys: pytest.CaptureFixture[str], src: Api, dst: Api
) -> None:
    on = ("--url", src.url, "--format", "json")
    src.ok("POST", "/subjects/cmp-a/versions", {"schema": _avro("CmpA")})
    src.ok("PUT", "/config/cmp-a", {"compatibility": "NONE"})
    src.ok("POST", "/subjects/cmp-a/versions", {"schema": _avro("CmpA2")})
    code, out = _cli(
        capsys,
        "exporter",
        "create",
        "cmp",
        "--config",
        f"schema.registry.url={dst.url}",
        "--subjects",
        "cmp-*",
        "--context-type",
        "custom",
        "--context-name",
        "cmp",
        *on,
    )
    assert (code, json.loads(out)) == (0, {"name": "cmp"})
    assert "cmp" in json.loads(_cli(capsys, "exporter", "list", *on)[1])
    described = json.loads(_cli(capsys, "exporter", "describe", "cmp", *on)[1])
    assert described["context"] == "cmp" and described["subjects"] == ["cmp-*"]
    eventually(lambda: dst.ok("GET", "/subjects/:.cmp:cmp-a/versions") == [1, 2])
    eventually(lambda: dst.ok("GET", "/config/:.cmp:cmp-a")["compatibilityLevel"] == "NONE")
    status = json.loads(_cli(capsys, "exporter", "status", "cmp", *on)[1])
    assert status["state"] == "RUNNING"
    compare = ("compare", "--url", src.url, "--to-url", dst.url, "--subjects", "cmp-*")
    # the copies are in IMPORT mode until the cutover: a difference unless modes are left out
    code, out = _cli(capsys, *compare, "--to-context", ".cmp")
    assert code == 1 and "cmp-a: mode" in out
    code, out = _cli(capsys, *compare, "--to-context", ".cmp", "--ignore-modes")
    assert code == 0 and "1 subjects, 2 versions compared: identical" in out, out
    assert _cli(capsys, "exporter", "pause", "cmp", *on)[0] == 0
    src.ok("POST", "/subjects/cmp-a/versions", {"schema": _avro("CmpA3")})
    code, out = _cli(capsys, *compare, "--to-context", ".cmp", "--ignore-modes")
    assert code == 1 and "cmp-a version 3: only in the first registry" in out, out
    assert _cli(capsys, "exporter", "update", "cmp", "--subjects", "cmp-*,x", *on)[0] == 0
    assert _cli(capsys, "exporter", "reset", "cmp", *on)[0] == 0
    assert _cli(capsys, "exporter", "resume", "cmp", *on)[0] == 0
    eventually(lambda: dst.ok("GET", "/subjects/:.cmp:cmp-a/versions") == [1, 2, 3])
    assert _cli(capsys, "exporter", "delete", "cmp", *on)[0] == 0
    code = _cli(capsys, "exporter", "describe", "cmp", "--url", src.url)[0]
    assert code == 2


def test_exporters_in_the_project_file_plan_and_apply(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, src: Api, dst: Api, monkeypatch: Any
) -> None:
    monkeypatch.setenv("PLAN_TOKEN", "pl4n-t0ken")
    project = tmp_path / "schema-registry.yaml"

    def write(subjects: list[str]) -> None:
        exporter = {
            "name": "planned",
            "contextType": "CUSTOM",
            "context": "planned",
            "subjects": subjects,
            "config": {"schema.registry.url": dst.url, "bearer.auth.token": "${PLAN_TOKEN}"},
        }
        project.write_text(json.dumps({"exporters": [exporter]}))  # JSON is YAML

    write(["pl-*"])
    code, out = _cli(capsys, "plan", str(project), "--url", src.url)
    assert code == 0 and "create-exporter" in out and "1 change(s)" in out, out
    code, out = _cli(capsys, "apply", str(project), "--url", src.url)
    assert code == 0 and "created exporter planned" in out, out
    assert src.ok("GET", "/exporters/planned/config")["bearer.auth.token"] == "[hidden]"
    code, out = _cli(capsys, "plan", str(project), "--url", src.url)
    assert "0 change(s)" in out, out
    write(["pl-*", "more-*"])
    code, out = _cli(capsys, "plan", str(project), "--url", src.url)
    assert "update-exporter" in out and "subjects" in out, out
    code, out = _cli(capsys, "apply", str(project), "--url", src.url)
    assert code == 0 and "updated exporter planned" in out, out
    assert src.ok("GET", "/exporters/planned")["subjects"] == ["pl-*", "more-*"]
    assert _state(src, "planned") != "PAUSED"  # paused for the change, then resumed
    src.ok("DELETE", "/exporters/planned")


def test_credentials_reach_a_destination_that_requires_them(tmp_path: Path, src: Api) -> None:
    from tests.production_helpers import Server, write_users

    users = tmp_path / "users"
    write_users(users, {"exporter": "s3cret-pw"})
    guarded = Server(tmp_path, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users)})
    guarded.start()
    try:
        src.ok("POST", "/subjects/auth-one/versions", {"schema": _avro("AuthOne")})
        body = _exporter("guarded", guarded.url, subjects=["auth-*"], contextType="NONE")
        src.ok(
            "POST",
            "/exporters",
            {**body, "config": {**body["config"], "basic.auth.user.info": "exporter:wrong"}},
        )
        status = eventually(
            lambda: (s := src.ok("GET", "/exporters/guarded/status"))["state"] == "ERROR" and s
        )
        assert "401" in status["trace"] and "wrong" not in status["trace"]
        src.ok("PUT", "/exporters/guarded/pause")
        src.ok("PUT", "/exporters/guarded/config", {"basic.auth.user.info": "exporter:s3cret-pw"})
        src.ok("PUT", "/exporters/guarded/resume")
        reader = httpx.Client(base_url=guarded.url, auth=("exporter", "s3cret-pw"), timeout=30)
        eventually(lambda: reader.get("/subjects/auth-one/versions").json() == [1])
        src.ok("DELETE", "/exporters/guarded")
    finally:
        guarded.stop()


def test_context_configs_and_modes_follow_into_the_exporters_context(src: Api, dst: Api) -> None:
    """With ``:*:`` into a context of its own (CUSTOM here), the source's global and
    context-level config and mode are copied to the matching destination contexts, as
    Confluent's exporter does; the destination's own global settings are left alone, and an
    exporter of some subjects only copies no context setting."""
    dest_global = dst.ok("GET", "/config")
    src.ok("POST", "/subjects/:.ctxa:cs-one/versions", {"schema": _avro("CsOne")})
    src.ok("PUT", "/config/:.ctxa:", {"compatibility": "FULL"})
    src.ok("PUT", "/mode/:.ctxa:", {"mode": "READWRITE"})
    src.ok("PUT", "/config", {"compatibility": "NONE"})
    try:
        src.ok(
            "POST",
            "/exporters",
            _exporter("ctx", dst.url, contextType="CUSTOM", context="cc", subjects=[":*:"]),
        )
        src.ok(
            "POST",
            "/exporters",
            _exporter("some", dst.url, contextType="CUSTOM", context="cs", subjects=["cs-*"]),
        )
        eventually(lambda: dst.ok("GET", "/config/:.cc.ctxa:")["compatibilityLevel"] == "FULL")
        eventually(lambda: dst.ok("GET", "/config/:.cc:")["compatibilityLevel"] == "NONE")
        assert dst.ok("GET", "/mode/:.cc.ctxa:")["mode"] == "IMPORT"  # READWRITE imports
        assert dst.ok("GET", "/subjects/:.cc.ctxa:cs-one/versions") == [1]
        assert dst.ok("GET", "/config") == dest_global
        # later changes follow: a context config removed, a context turned read-only
        src.ok("DELETE", "/config/:.ctxa:")
        src.ok("PUT", "/mode/:.ctxa:", {"mode": "READONLY"})
        eventually(lambda: dst.ok("GET", "/mode/:.cc.ctxa:")["mode"] == "READONLY")
        assert dst.call("GET", "/config/:.cc.ctxa:").json().get("error_code") == 40408
        eventually(lambda: _state(src, "some") == "RUNNING")
        for context in (":.cs:", ":.cs.ctxa:"):
            assert dst.call("GET", f"/config/{context}").json().get("error_code") == 40408
    finally:
        src.ok("DELETE", "/config")
        src.ok("PUT", "/mode/:.ctxa:", {"mode": "READWRITE"})
        for name in ("ctx", "some"):
            src.call("PUT", f"/exporters/{name}/pause")
            src.call("DELETE", f"/exporters/{name}")


def test_a_destination_on_https_with_a_ca_file(tmp_path: Path, src: Api) -> None:
    from tests.production_helpers import Pki

    pki = Pki(tmp_path)
    secure = pki.https_server(tmp_path)
    secure.start()
    try:
        src.ok("POST", "/subjects/tls-one/versions", {"schema": _avro("TlsOne")})
        src.ok("POST", "/exporters", _exporter("tls", secure.url, subjects=["tls-*"]))
        status = eventually(
            lambda: (s := src.ok("GET", "/exporters/tls/status"))["state"] == "ERROR" and s
        )
        assert "CERTIFICATE_VERIFY_FAILED" in status["trace"]  # the CA is not trusted yet
        src.ok("PUT", "/exporters/tls/pause")
        src.ok("PUT", "/exporters/tls/config", {"schema.registry.ssl.ca.location": str(pki.ca)})
        src.ok("PUT", "/exporters/tls/resume")
        reader = secure.client()
        # contextType AUTO (the default): under a context named for the source's cluster id
        cluster = src.ok("GET", "/v1/metadata/id")["scope"]["clusters"]["kafka-cluster"]
        assert src.ok("GET", "/exporters/tls")["contextType"] == "AUTO"
        path = f"/subjects/:.{cluster}:tls-one/versions"
        eventually(lambda: reader.get(path).json() == [1])
        eventually(lambda: _state(src, "tls") == "RUNNING")
        src.ok("PUT", "/exporters/tls/pause")
        src.ok("DELETE", "/exporters/tls")
    finally:
        secure.stop()


def test_a_refused_version_holds_the_offset_and_the_rest_follows_once_it_is_accepted(
    src: Api, dst: Api
) -> None:
    """Requests of many subjects are in flight at once; one the destination refuses (its id is
    taken there by another schema) puts the exporter in ERROR and the stored offset stays
    before it, though later subjects may have been answered; once the destination accepts it,
    everything arrives, each subject's versions in order."""
    ids = {}
    for n in range(12):
        for v in range(2):
            fields = [{"name": f"f{i}", "type": "int", "default": 0} for i in range(v)]
            body = {"schema": _avro(f"Gap{n}", fields)}
            ids[(n, v + 1)] = src.ok("POST", f"/subjects/gap-{n}/versions", body)["id"]
    blocked = ":.gap:gap-5"
    dst.ok("PUT", f"/mode/{blocked}?force=true", {"mode": "IMPORT"})
    squatter = {"schema": _avro("Squatter"), "id": ids[(5, 1)], "version": 1}
    dst.ok("POST", f"/subjects/{blocked}/versions", squatter)
    src.ok(
        "POST",
        "/exporters",
        _exporter("gap", dst.url, contextType="CUSTOM", context="gap", subjects=["gap-*"]),
    )
    status = eventually(
        lambda: (s := src.ok("GET", "/exporters/gap/status"))["state"] == "ERROR" and s
    )
    assert "gap-5" in status["trace"]
    assert dst.ok("GET", "/subjects/:.gap:gap-0/versions") == [1, 2]  # before it in the log
    held = status["offset"]
    time.sleep(1.5)  # retried with back-off, still refused: the offset does not move
    assert src.ok("GET", "/exporters/gap/status")["offset"] == held
    dst.ok("DELETE", f"/subjects/{blocked}")
    dst.ok("DELETE", f"/subjects/{blocked}?permanent=true")  # its IMPORT mode goes with it
    # no resume: the worker's own retry (after its back-off) must put the subject back in
    # IMPORT mode (it did not: 404 here for 90 s)
    for n in range(12):
        path = f"/subjects/:.gap:gap-{n}/versions"
        eventually(lambda path=path: dst.ok("GET", path) == [1, 2], timeout=120)
        for v in (1, 2):
            assert dst.ok("GET", f"{path}/{v}")["id"] == ids[(n, v)]
    final = eventually(
        lambda: (s := src.ok("GET", "/exporters/gap/status"))["state"] == "RUNNING" and s
    )
    assert final["offset"] > held and final.get("trace") is None
    src.ok("PUT", "/exporters/gap/pause")
    src.ok("DELETE", "/exporters/gap")


def test_a_bearer_token_reaches_a_destination_that_checks_it(tmp_path: Path, src: Api) -> None:
    """``bearer.auth.credentials.source=STATIC_TOKEN`` with ``bearer.auth.token``, against a
    destination that verifies JWTs: a token it does not trust is an ERROR naming the 401 (and
    not the token); the right one, set through ``PUT /exporters/{name}/config``, gets through."""
    from tests.production_helpers import Server, Signer

    trusted, stranger = Signer("k1"), Signer("k1")
    keys = tmp_path / "keys.pem"
    keys.write_bytes(trusted.public_pem())
    claims = {"iss": "https://issuer.test", "aud": "schema-registry"}
    guarded = Server(
        tmp_path,
        {
            "SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(keys),
            "SCHEMA_REGISTRY_AUTH_JWT_ISSUER": claims["iss"],
            "SCHEMA_REGISTRY_AUTH_JWT_AUDIENCE": claims["aud"],
        },
    )
    guarded.start()
    try:
        src.ok("POST", "/subjects/bearer-one/versions", {"schema": _avro("BearerOne")})
        forged = stranger.token(claims)
        body = _exporter("bearer", guarded.url, subjects=["bearer-*"], contextType="NONE")
        body["config"].update(
            {"bearer.auth.credentials.source": "STATIC_TOKEN", "bearer.auth.token": forged}
        )
        src.ok("POST", "/exporters", body)
        assert src.ok("GET", "/exporters/bearer/config")["bearer.auth.token"] == "[hidden]"
        status = eventually(
            lambda: (s := src.ok("GET", "/exporters/bearer/status"))["state"] == "ERROR" and s
        )
        assert "401" in status["trace"] and forged not in status["trace"]
        src.ok("PUT", "/exporters/bearer/pause")
        src.ok("PUT", "/exporters/bearer/config", {"bearer.auth.token": trusted.token(claims)})
        src.ok("PUT", "/exporters/bearer/resume")
        reader = httpx.Client(
            base_url=guarded.url,
            headers={"Authorization": f"Bearer {trusted.token(claims)}"},
            timeout=30,
        )
        eventually(lambda: reader.get("/subjects/bearer-one/versions").json() == [1])
        eventually(lambda: _state(src, "bearer") == "RUNNING")
        src.ok("DELETE", "/exporters/bearer")
    finally:
        guarded.stop()


def test_an_exporter_is_starting_until_its_first_records_are_across(src: Api) -> None:
    """``STARTING`` from creation until the destination has taken the first records: here a
    destination that accepts connections and never answers, so the state stays STARTING (not
    RUNNING, not ERROR) while the first request waits; closing it makes the exporter an ERROR.
    An exporter with nothing to copy goes on to RUNNING."""
    src.ok("POST", "/subjects/starting-one/versions", {"schema": _avro("StartingOne")})
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel completes connections; nobody reads or answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    try:
        src.ok("POST", "/exporters", _exporter("starting", url, subjects=["starting-*"]))
        seen = set()
        for _ in range(20):
            status = src.ok("GET", "/exporters/starting/status")
            seen.add(status["state"])
            time.sleep(0.1)
        assert seen == {"STARTING"}, seen
        assert status["offset"] == -1 and "trace" not in status  # no error to report
    finally:
        silent.close()
    status = eventually(
        lambda: (s := src.ok("GET", "/exporters/starting/status"))["state"] == "ERROR" and s
    )
    assert status["trace"]
    src.ok("DELETE", "/exporters/starting")
    src.ok("POST", "/exporters", _exporter("idle", url, subjects=["nothing-matches-*"]))
    eventually(lambda: _state(src, "idle") == "RUNNING")
    src.ok("DELETE", "/exporters/idle")

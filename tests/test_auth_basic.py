"""HTTP Basic authentication on a live server: Confluent-shaped 401s with a challenge, the
users file (salted scrypt hashes) reloaded when it changes, ``schema-registry user add``, and
confluent-kafka's ``basic.auth.user.info`` against it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

from registry.auth.passwords import hash_password, parse_users, verify_password
from tests.production_helpers import AVRO, Server, running, write_users


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("basic")
    users = tmp / "users"
    write_users(users, {"alice": "wonderland", "bob": "builder"})
    with running(Server(tmp, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users)})) as srv:
        srv.users_file = users  # type: ignore[attr-defined]
        yield srv


def sr_client(server: Server, user_info: str) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": server.url, "basic.auth.user.info": user_info})


def test_request_without_credentials_gets_a_confluent_shaped_401(server: Server) -> None:
    with server.client() as client:
        response = client.get("/subjects", headers={"X-Request-ID": "req-1"})
    assert response.status_code == 401
    assert response.json() == {
        "error_code": 401,
        "message": "Unauthorized: credentials are required",
    }
    assert response.headers["www-authenticate"] == 'Basic realm="schema-registry", charset="UTF-8"'
    assert response.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    assert response.headers["x-request-id"] == "req-1"


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        (("alice", "wrong"), "Unauthorized: invalid user name or password"),
        (("mallory", "wonderland"), "Unauthorized: invalid user name or password"),
    ],
)
def test_wrong_password_and_unknown_user_answer_the_same(
    server: Server, auth: tuple[str, str], message: str
) -> None:
    with server.client() as client:
        response = client.get("/subjects", auth=auth)
    assert response.status_code == 401
    assert response.json() == {"error_code": 401, "message": message}


@pytest.mark.parametrize(
    "header",
    ["Basic !!!not-base64", "Basic bm9jb2xvbg==", "Digest abc", "Bearer x.y.z", "Basic"],
)
def test_malformed_or_unaccepted_credentials_are_401(server: Server, header: str) -> None:
    with server.client(headers={"Authorization": header}) as client:
        response = client.get("/subjects")
    assert response.status_code == 401
    assert response.json()["error_code"] == 401
    assert "www-authenticate" in response.headers


def test_probes_and_metrics_need_no_credentials(server: Server) -> None:
    with server.client() as client:
        assert client.get("/live").json() == {"live": True}
        assert client.get("/ready").status_code == 200
        assert client.get("/metrics").status_code == 200
        assert client.get("/").status_code == 401


def test_confluent_client_with_basic_auth_user_info(server: Server) -> None:
    client = sr_client(server, "alice:wonderland")
    schema_id = client.register_schema("basic-value", Schema(AVRO, "AVRO"))
    assert client.get_schema(schema_id).schema_str == AVRO
    assert "basic-value" in client.get_subjects()

    with pytest.raises(SchemaRegistryError) as denied:
        sr_client(server, "alice:nope").get_subjects()
    assert denied.value.http_status_code == 401
    assert denied.value.error_code == 401


def test_users_file_is_reloaded_and_user_add_writes_it(server: Server) -> None:
    users: Path = server.users_file  # type: ignore[attr-defined]
    with server.client() as client:
        assert client.get("/subjects", auth=("carol", "c-pass")).status_code == 401
        result = subprocess.run(
            [sys.executable, "-m", "registry.cli", "user", "add", "carol", "--file", str(users)],
            input="c-pass\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "added carol" in result.stdout
        assert client.get("/subjects", auth=("carol", "c-pass")).status_code == 200
        # a changed password takes effect at once; the old one stops working
        result = subprocess.run(
            [sys.executable, "-m", "registry.cli", "user", "add", "carol", "--file", str(users)],
            input="new-pass\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "changed the password of carol" in result.stdout
        assert client.get("/subjects", auth=("carol", "c-pass")).status_code == 401
        assert client.get("/subjects", auth=("carol", "new-pass")).status_code == 200
        # a broken file keeps the previous users
        good = users.read_text()
        users.write_text(good + "broken line without a hash\n")
        assert client.get("/subjects", auth=("alice", "wonderland")).status_code == 200
        users.write_text(good)
    assert "keeping the previous" in server.log()
    assert "wonderland" not in users.read_text()


def test_user_add_needs_a_file_and_a_password(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "registry.cli", "user", "add"]
    no_file = subprocess.run(
        [*base, "dave"], input="x\n", capture_output=True, text=True, timeout=60, env={}
    )
    assert no_file.returncode == 2
    assert "--file" in no_file.stderr
    empty = subprocess.run(
        [*base, "dave", "--file", str(tmp_path / "u")],
        input="\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert empty.returncode == 2
    assert "empty password" in empty.stderr
    bad_name = subprocess.run(
        [*base, "da:ve", "--file", str(tmp_path / "u")],
        input="x\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad_name.returncode == 2
    assert "user name" in bad_name.stderr


def test_hashes_are_salted_and_verified() -> None:
    one, two = hash_password("secret", n=2**10), hash_password("secret", n=2**10)
    assert one != two  # a fresh salt each time
    assert verify_password("secret", one) and verify_password("secret", two)
    assert not verify_password("Secret", one)
    assert not verify_password("secret", "md5$abc")
    assert not verify_password("secret", "scrypt$x$8$1$AA==$AA==")
    with pytest.raises(ValueError, match=r"line 3 \(bob\)"):
        parse_users(f"# users\nalice:{one}\nbob:plaintext\n")
    with pytest.raises(ValueError, match="line 1"):
        parse_users("no-colon-here\n")


def test_missing_users_file_stops_the_server_at_start(tmp_path: Path) -> None:
    server = Server(tmp_path, {"SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp_path / "absent")})
    with pytest.raises(RuntimeError, match="server exited"):
        server.start()
    assert server.proc is not None and server.proc.returncode == 2
    assert "authentication is misconfigured" in server.log()


def test_authentication_is_off_by_default(tmp_path: Path) -> None:
    with running(Server(tmp_path)) as srv:
        assert httpx.get(srv.url + "/subjects").status_code == 200

"""Authentication and subject rules with a Kafka store and two instances: a follower checks the
caller before forwarding a write (refused writes never reach the leader), and the leader
checks the same caller again: the forwarded request keeps its identity."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.production_helpers import AVRO, CONTENT_TYPE, Server, settled_leader, write_users

RULES = """
rules:
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
"""


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": CONTENT_TYPE}


def ready(server: Server, timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = httpx.get(server.url + "/ready", timeout=2)
        if reply.status_code == 200 and reply.json().get("leader"):
            return dict(reply.json())
        time.sleep(0.1)
    raise AssertionError(f"{server.url} not ready:\n{server.log()[-2000:]}")


def access_lines(server: Server) -> list[dict[str, object]]:
    lines = [json.loads(x) for x in server.log().splitlines() if x.startswith("{")]
    return [x for x in lines if x.get("logger") == "registry.access"]


def test_forwarded_writes_keep_the_callers_identity(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    write_users(tmp_path / "users", {"dev": "d", "eve": "e"})
    (tmp_path / "rules.yaml").write_text(RULES)
    env = {
        "SCHEMA_REGISTRY_STORE": f"kafka://{kafka_bootstrap}/?topic={kafka_topic}"
        "&election.session.timeout.ms=2000",
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp_path / "users"),
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp_path / "rules.yaml"),
        "SCHEMA_REGISTRY_LOG_FORMAT": "json",
        "SCHEMA_REGISTRY_ACCESS_LOG": "true",
    }
    servers = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            servers.append(Server(tmp_path / name, env).start())
        leader = settled_leader(servers, ready, (kafka_bootstrap, kafka_topic))
        follower = next(s for s in servers if s is not leader)

        with httpx.Client(base_url=follower.url, timeout=30) as client:
            allowed = client.post(
                "/subjects/orders-value/versions",
                json={"schema": AVRO},
                headers={**basic("dev", "d"), "X-Request-ID": "fwd-1"},
            )
            assert allowed.status_code == 200, allowed.text
            denied = client.post(
                "/subjects/payments-value/versions",
                json={"schema": AVRO},
                headers={**basic("dev", "d"), "X-Request-ID": "fwd-2"},
            )
            assert denied.status_code == 403
            assert denied.json()["error_code"] == 40301
            anonymous = client.post(
                "/subjects/orders-value/versions",
                json={"schema": AVRO},
                headers={"Content-Type": CONTENT_TYPE, "X-Request-ID": "fwd-3"},
            )
            assert anonymous.status_code == 401
            # the follower reads its own forwarded write; eve may not read the subject
            assert client.get("/subjects", headers=basic("dev", "d")).json() == ["orders-value"]
            assert client.get("/subjects", headers=basic("eve", "e")).json() == []

        on_leader = {str(x.get("request_id")): x for x in access_lines(leader)}
        # the write reached the leader as dev's: authenticated and authorised there again
        assert on_leader["fwd-1"]["principal"] == "dev"
        assert on_leader["fwd-1"]["status"] == 200
        # refused requests stopped at the follower
        assert "fwd-2" not in on_leader and "fwd-3" not in on_leader
        on_follower = {str(x.get("request_id")): x for x in access_lines(follower)}
        assert on_follower["fwd-2"]["status"] == 403
        assert on_follower["fwd-3"]["status"] == 401
    finally:
        for server in servers:
            server.stop()


pytestmark = pytest.mark.timeout(240)

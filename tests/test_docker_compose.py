"""docker-compose.yml cannot run here (no Docker engine); check what can be checked: one Kafka
and three registry instances on one topic, each advertising the URL the others reach it at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from registry.store.kafka import parse_kafka_url

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"


def test_compose_runs_kafka_and_three_registry_instances() -> None:
    compose: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    services = compose["services"]
    kafka = services["kafka"]
    assert kafka["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"
    advertised = kafka["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    registries = {n: s for n, s in services.items() if n.startswith("registry-")}
    assert len(registries) == 3
    stores = set()
    host_ports = set()
    for name, service in registries.items():
        env = service["environment"]
        settings = parse_kafka_url(env["SCHEMA_REGISTRY_STORE"])
        assert f"PLAINTEXT://{settings.bootstrap}" == advertised
        stores.add(env["SCHEMA_REGISTRY_STORE"])
        assert env["SCHEMA_REGISTRY_ADVERTISED_URL"] == f"http://{service['hostname']}:8081"
        assert service["hostname"] == name
        assert service["depends_on"]["kafka"]["condition"] == "service_healthy"
        assert "/ready" in " ".join(service["healthcheck"]["test"])
        host_ports.add(service["ports"][0].split(":")[0])
        assert service["build"] == "."
    assert len(stores) == 1 and len(host_ports) == 3

"""/live, /metrics (requests by route template and status, latency histograms, schema and
subject counts, store lag) and JSON logs carrying request ids, on live servers."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import AVRO, CONTENT_TYPE, Server, running


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(
    metrics: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return metrics.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_requests_by_route_template_and_state(tmp_path: Path) -> None:
    with running(Server(tmp_path)) as srv, srv.client() as client:
        for name in ("a", "b", "c"):
            assert (
                client.post(f"/subjects/{name}/versions", json={"schema": AVRO}).status_code == 200
            )
        assert client.get("/subjects/nope/versions").status_code == 404
        assert client.get("/no/such/path").status_code == 404
        client.delete("/subjects/c")
        response = client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        m = samples(response.text)
    route = "/subjects/{subject}/versions"
    assert (
        value(m, "schema_registry_http_requests_total", method="POST", route=route, status="200")
        == 3
    )
    assert (
        value(m, "schema_registry_http_requests_total", method="GET", route=route, status="404")
        == 1
    )
    assert (
        value(
            m, "schema_registry_http_requests_total", method="GET", route="unmatched", status="404"
        )
        == 1
    )
    assert (
        value(m, "schema_registry_http_request_duration_seconds_count", method="POST", route=route)
        == 3
    )
    assert (
        value(
            m,
            "schema_registry_http_request_duration_seconds_bucket",
            method="POST",
            route=route,
            le="+Inf",
        )
        == 3
    )
    assert value(m, "schema_registry_schemas") == 1  # one schema, three subjects
    assert value(m, "schema_registry_subjects") == 2  # c is soft-deleted
    assert value(m, "schema_registry_schema_versions") == 2
    assert value(m, "schema_registry_ready") == 1
    assert value(m, "schema_registry_store_lag_records") == 0
    assert value(m, "schema_registry_store_applied_offset") >= 3
    # no per-subject label: the series do not grow with the data
    assert not any("subject=" in str(labels) for _, labels in m)


def test_store_lag_counts_records_other_instances_wrote(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    writer = Registry(open_store(url), Settings(poll_interval=0))
    reader = Registry(open_store(url), Settings(poll_interval=3600))  # never polls by itself
    writer.start()
    reader.start()
    try:
        with (
            TestClient(create_app(writer, manage_lifecycle=False)) as w,
            TestClient(create_app(reader, manage_lifecycle=False)) as r,
        ):
            for name in ("x", "y"):
                w.post(
                    f"/subjects/{name}/versions",
                    json={"schema": AVRO},
                    headers={"Content-Type": CONTENT_TYPE},
                )
            assert value(samples(r.get("/metrics").text), "schema_registry_store_lag_records") == 2
            reader.refresh()
            assert value(samples(r.get("/metrics").text), "schema_registry_store_lag_records") == 0
            reader.store.close()  # the store is gone: the scrape still answers, with -1
            assert value(samples(r.get("/metrics").text), "schema_registry_store_lag_records") == -1
    finally:
        writer.stop()
        reader.stop()


def test_live_answers_without_touching_the_store(tmp_path: Path) -> None:
    with running(Server(tmp_path)) as srv:
        response = httpx.get(srv.url + "/live")
        assert response.status_code == 200
        assert response.json() == {"live": True}
        assert httpx.get(srv.url + "/ready").json()["ready"] is True


def test_json_logs_carry_the_request_id(tmp_path: Path) -> None:
    env = {"SCHEMA_REGISTRY_LOG_FORMAT": "json", "SCHEMA_REGISTRY_ACCESS_LOG": "true"}
    with running(Server(tmp_path, env)) as srv, srv.client() as client:
        echoed = client.get("/subjects", headers={"X-Request-ID": "abc-123"})
        assert echoed.headers["x-request-id"] == "abc-123"
        generated = client.post("/subjects/s/versions", json={"schema": AVRO})
        new_id = generated.headers["x-request-id"]
        assert len(new_id) == 36
    lines = [json.loads(line) for line in srv.log().splitlines() if line.startswith("{")]
    assert lines, srv.log()
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    access = {line.get("request_id"): line for line in lines if line["logger"] == "registry.access"}
    assert access["abc-123"]["route"] == "/subjects"
    assert access["abc-123"]["status"] == 200
    assert access[new_id]["method"] == "POST"
    assert access[new_id]["route"] == "/subjects/{subject}/versions"
    assert access[new_id]["duration_ms"] > 0
    assert any("listening on" in line["message"] for line in lines)


def test_unknown_log_format_is_a_usage_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "registry.cli", "serve", "--log-format", "xml", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "log format must be text or json" in result.stderr

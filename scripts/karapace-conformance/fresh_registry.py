"""pytest plugin: a fresh pyschemaregistry server (new SQLite file) before every test.

Karapace's own `registry_cluster` fixture is function-scoped and gives each test a new
`_schemas` topic, i.e. an empty registry; this reproduces that against an external server.
Env: FRESH_SR_PORT, FRESH_SR_BIN, FRESH_SR_DIR, FRESH_SR_ARGS; FRESH_SR_KAFKA=host:port runs
the server on a Kafka store reading `_schemas` (dropped before each test) instead of SQLite.
"""

import os
import subprocess
import time
import urllib.request

import pytest

_PORT = int(os.environ["FRESH_SR_PORT"])
_BIN = os.environ["FRESH_SR_BIN"]
_DIR = os.environ["FRESH_SR_DIR"]
_ARGS = os.environ.get("FRESH_SR_ARGS", "").split()
_proc = None


def _stop():
    global _proc
    if _proc is not None:
        _proc.terminate()
        try:
            _proc.wait(20)
        except subprocess.TimeoutExpired:
            _proc.kill()
            _proc.wait()
        _proc = None


def _drop_topics(bootstrap):
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    names = [t for t in admin.list_topics(timeout=10).topics if t.startswith("_schemas")]
    if names:
        for f in admin.delete_topics(names, operation_timeout=30).values():
            f.result()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            left = [t for t in admin.list_topics(timeout=10).topics if t.startswith("_schemas")]
            if not left:
                break
            time.sleep(0.2)
        time.sleep(1)


def _start():
    global _proc
    db = os.path.join(_DIR, "fresh.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    store = f"sqlite:///{db}"
    kafka = os.environ.get("FRESH_SR_KAFKA")
    if kafka:  # Kafka store on `_schemas`, the topic Karapace's tests write to: drop it first
        _drop_topics(kafka)
        store = f"kafka://{kafka}/?topic=_schemas"
    with open(os.path.join(_DIR, "server.log"), "a") as log:
        _proc = subprocess.Popen(
            [_BIN, "serve", "--port", str(_PORT), "--store", store, *_ARGS],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{_PORT}/subjects", timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError("registry did not start")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _stop()
    _start()


def pytest_sessionfinish(session, exitstatus):
    _stop()

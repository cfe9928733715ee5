"""The DEK registry's own tests, run again with the audit trail on: every KEK and DEK secret
that crossed the API in either direction (``encryptedKeyMaterial``, a shared KEK's generated
``keyMaterial``, ``kmsProps`` values, the local KMS secret) is collected from the requests and
answers, and none of them may be in any audit event."""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests import test_dek_registry
from tests.production_helpers import CONTENT_TYPE

SECRET_FIELDS = ("encryptedKeyMaterial", "keyMaterial", "kmsProps")
FIXTURES = {"client", "keys", "local_secret"}


def dek_tests() -> list[tuple[str, Callable[..., Any]]]:
    """The module's tests that write and need only an in-process client (and a local KMS
    secret)."""
    found = []
    for name, fn in vars(test_dek_registry).items():
        if name.startswith("test_") and callable(fn):
            params = set(inspect.signature(fn).parameters)
            source = inspect.getsource(fn)
            writes = "keys" in params or any(f".{m}(" in source for m in ("post", "put", "delete"))
            if params and params <= FIXTURES and writes:
                found.append((name, fn))
    return found


def secrets_in(value: Any, out: set[str]) -> None:
    """The string values under the secret fields of a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in SECRET_FIELDS:
                leaves: list[Any] = list(item.values()) if isinstance(item, dict) else [item]
                out.update(v for v in leaves if isinstance(v, str) and len(v) >= 4)
            else:
                secrets_in(item, out)
    elif isinstance(value, list):
        for item in value:
            secrets_in(item, out)


@pytest.fixture
def audited_client(tmp_path: Path) -> Iterator[tuple[TestClient, Path, set[str]]]:
    audit_file = tmp_path / "audit.jsonl"
    settings = Settings(poll_interval=0, audit_file=str(audit_file))
    registry = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    registry.start()
    seen: set[str] = set()

    def on_request(request: httpx.Request) -> None:
        if request.content:
            with contextlib.suppress(ValueError):
                secrets_in(json.loads(request.content), seen)

    def on_response(response: httpx.Response) -> None:
        response.read()
        with contextlib.suppress(ValueError):
            secrets_in(response.json(), seen)

    try:
        app = create_app(registry, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
            client.event_hooks = {"request": [on_request], "response": [on_response]}
            yield client, audit_file, seen
    finally:
        registry.stop()


@pytest.mark.parametrize(("name", "test"), dek_tests(), ids=[n for n, _ in dek_tests()])
def test_dek_registry_events_hold_no_key_material(
    name: str,
    test: Callable[..., Any],
    audited_client: tuple[TestClient, Path, set[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, audit_file, seen = audited_client
    params = set(inspect.signature(test).parameters)
    args: dict[str, Any] = {}
    if "local_secret" in params:
        monkeypatch.setenv("LOCAL_SECRET", test_dek_registry.SECRET)
        args["local_secret"] = test_dek_registry.SECRET
        seen.add(test_dek_registry.SECRET)
    if "keys" in params:
        args["keys"] = test_dek_registry.keys.__wrapped__(client)  # type: ignore[attr-defined]
    if "client" in params:
        args["client"] = client
    test(**args)
    events = audit_file.read_text() if audit_file.exists() else ""
    assert events.count("\n") >= 1, name
    if "material(" in inspect.getsource(test) or "local_secret" in params:
        assert seen, name  # the hooks saw the secrets this test sends or receives
    for secret in seen:
        assert secret not in events, (name, secret)
    for field in SECRET_FIELDS:
        assert f'"{field}":' not in events, (name, field)  # named in a message is fine

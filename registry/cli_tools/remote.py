"""A small REST client for the commands that talk to a registry (ours or Confluent's).

Connection options: URL, basic auth (``USER:PASSWORD``), bearer token, CA bundle, client
certificate and key, or no TLS verification. Transport failures and unexpected answers become
:class:`~registry.cli_tools.errors.ToolError` (exit code 2); Confluent errors that a command
handles itself are :class:`RemoteError`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from registry.cli_tools.errors import ToolError
from registry.cli_tools.schemafiles import Reference

MEDIA_TYPE = "application/vnd.schemaregistry.v1+json"


@dataclass(frozen=True)
class Connection:
    url: str
    user_info: str | None = None
    token: str | None = None
    ca_cert: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    insecure: bool = False
    timeout: float = 30.0


class RegistryUnreachable(ToolError):
    """No answer from the registry: every further call would fail the same way."""


class RemoteError(Exception):
    """A Confluent error answer: HTTP status, ``error_code`` and message."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status}, error code {error_code})")
        self.status = status
        self.error_code = error_code
        self.message = message


class RegistryClient:
    def __init__(self, connection: Connection) -> None:
        self.url = connection.url.rstrip("/")
        headers = {"Accept": MEDIA_TYPE, "Content-Type": MEDIA_TYPE}
        auth: httpx.BasicAuth | None = None
        if connection.user_info:
            user, _, password = connection.user_info.partition(":")
            auth = httpx.BasicAuth(user, password)
        if connection.token:
            headers["Authorization"] = f"Bearer {connection.token}"
        verify: ssl.SSLContext | bool = not connection.insecure
        try:
            if connection.ca_cert or connection.cert:
                context = ssl.create_default_context(
                    cafile=str(connection.ca_cert) if connection.ca_cert else None
                )
                if connection.cert:
                    context.load_cert_chain(
                        str(connection.cert), str(connection.key) if connection.key else None
                    )
                if connection.insecure:
                    context.check_hostname = False
                    context.verify_mode = ssl.CERT_NONE
                verify = context
        except (OSError, ssl.SSLError) as exc:
            raise ToolError(f"TLS set-up: {exc}") from None
        self._http = httpx.Client(
            headers=headers, auth=auth, verify=verify, timeout=connection.timeout
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None
    ) -> Any:
        try:
            response = self._http.request(method, self.url + path, json=body, params=params)
        except httpx.HTTPError as exc:
            raise RegistryUnreachable(f"registry {self.url} unreachable: {exc}") from None
        try:
            payload = response.json() if response.content else None
        except ValueError:
            payload = None
        if response.status_code >= 400:
            if isinstance(payload, dict) and "error_code" in payload:
                raise RemoteError(
                    response.status_code, int(payload["error_code"]), str(payload.get("message"))
                )
            raise ToolError(
                f"registry {self.url}: {method} {path}: HTTP {response.status_code} "
                f"{response.text[:200]}"
            )
        return payload

    # ---- the calls the commands make ----------------------------------------------------------

    def check(
        self, subject: str, schema: str, schema_type: str, references: list[dict[str, Any]]
    ) -> tuple[bool, list[str]]:
        """``POST /compatibility/subjects/{s}/versions?verbose=true`` (against the versions the
        subject's level says); a subject that does not exist yet is compatible."""
        try:
            answer = self.call(
                "POST",
                f"/compatibility/subjects/{_seg(subject)}/versions",
                _schema_body(schema, schema_type, references),
                {"verbose": "true"},
            )
        except RemoteError as exc:
            if exc.error_code in (40401, 40402):
                return True, []
            raise
        if not isinstance(answer, dict) or "is_compatible" not in answer:
            raise ToolError(f"registry {self.url}: unexpected answer {answer!r}")
        return bool(answer["is_compatible"]), [str(m) for m in answer.get("messages") or []]

    def register(
        self, subject: str, schema: str, schema_type: str, references: list[dict[str, Any]]
    ) -> int:
        answer = self.call(
            "POST",
            f"/subjects/{_seg(subject)}/versions",
            _schema_body(schema, schema_type, references),
        )
        return int(answer["id"])

    def lookup(
        self, subject: str, schema: str, schema_type: str, references: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """The version of ``subject`` holding this schema, ``None`` when there is none."""
        try:
            return self.call(  # type: ignore[no-any-return]
                "POST", f"/subjects/{_seg(subject)}", _schema_body(schema, schema_type, references)
            )
        except RemoteError as exc:
            if exc.error_code in (40401, 40403):
                return None
            raise

    def latest(self, subject: str) -> dict[str, Any] | None:
        try:
            return self.call("GET", f"/subjects/{_seg(subject)}/versions/latest")  # type: ignore[no-any-return]
        except RemoteError as exc:
            if exc.error_code in (40401, 40402):
                return None
            raise

    def subjects(self) -> list[str]:
        return [str(s) for s in self.call("GET", "/subjects")]

    def subject_level(self, subject: str | None, *, default_to_global: bool = False) -> str | None:
        """The level set on the subject (or globally when ``subject`` is ``None``); with
        ``default_to_global`` the level that applies to the subject."""
        path = "/config" if subject is None else f"/config/{_seg(subject)}"
        params = {"defaultToGlobal": "true"} if default_to_global else None
        try:
            answer = self.call("GET", path, params=params)
        except RemoteError as exc:
            if exc.error_code in (40401, 40408):
                return None
            raise
        return str(answer.get("compatibilityLevel") or answer.get("compatibility"))

    def set_level(self, subject: str | None, level: str) -> None:
        path = "/config" if subject is None else f"/config/{_seg(subject)}"
        self.call("PUT", path, {"compatibility": level})


def reference_body(references: list[Reference], versions: dict[str, int]) -> list[dict[str, Any]]:
    """References as the REST API takes them; a reference without a version takes the one in
    ``versions`` (registered by this run) or the subject's latest."""
    return [
        {"name": r.name, "subject": r.subject, "version": r.version or versions.get(r.subject, -1)}
        for r in references
    ]


def resolve_latest(
    client: RegistryClient, references: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Replace version ``-1`` by the subject's latest version number."""
    resolved = []
    for ref in references:
        if ref["version"] == -1:
            latest = client.latest(ref["subject"])
            if latest is None:
                raise ToolError(
                    f"reference {ref['name']!r}: subject {ref['subject']!r} is not registered"
                )
            ref = {**ref, "version": int(latest["version"])}
        resolved.append(ref)
    return resolved


def _schema_body(schema: str, schema_type: str, references: list[dict[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {"schema": schema}
    if schema_type != "AVRO":
        body["schemaType"] = schema_type
    if references:
        body["references"] = references
    return body


def _seg(subject: str) -> str:
    return quote(subject, safe="")

"""Several instances, one writer: readiness, and forwarding writes to the elected leader.

:func:`install` is called by ``create_app`` for every store:

* ``GET /ready`` answers 200 ``{"ready": true, ...}`` (with ``leader`` and ``is_leader`` for a
  Kafka store) once the instance has replayed its store up to where it was at start-up, else
  503 with a Confluent-shaped body (``error_code`` 503).
* For a Kafka store (one that elects a leader, :mod:`registry.store.kafka`) it also installs
  :class:`ForwardingMiddleware`, the outermost ASGI middleware:

  - until the replay is done every request but ``/`` and ``/ready`` gets that 503;
  - a write (register, delete subject/version, config and mode writes, context deletes,
    exporters: every ``PUT`` and ``DELETE``, ``POST .../subjects/{subject}/versions`` and
    ``POST /exporters``) on an instance that is not the leader is sent to the leader's URL
    with the same method, path, query, body and headers (``Authorization`` included) plus
    ``X-Forward: true``, and the leader's answer is returned verbatim; afterwards the instance
    reads the topic to its end, so the client reads its own write here too;
  - leader unknown: 50004; the leader could not be reached or did not answer in time: 50003.
    A request that already carries ``X-Forward`` is never forwarded again.

An instance's URL as the others reach it is ``SCHEMA_REGISTRY_ADVERTISED_URL`` if set, else
``http://<host>:<port>`` from the settings (the machine's host name when listening on all
addresses; ``https`` when TLS is on).

Over HTTPS the follower verifies the leader's certificate against
``SCHEMA_REGISTRY_FORWARD_TLS_CA_FILE`` (else ``SCHEMA_REGISTRY_TLS_CA_FILE``, else the system's
CAs) and its host name, and presents ``SCHEMA_REGISTRY_FORWARD_TLS_CERTFILE``/``_KEYFILE`` when
set (a leader requiring client certificates). A caller that a client certificate named (no
``Authorization``) is passed on as ``X-Forwarded-Principal``, which the leader believes only
from an instance whose certificate's name is in ``SCHEMA_REGISTRY_AUTH_TRUSTED_FORWARDERS``
(a client's own header is dropped). A leader whose certificate is not trusted is
never sent the request (nor its ``Authorization``): 50003 saying so. Unusable files stop the
server at start with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import quote

import httpx
import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response

from registry import errors
from registry.api.deps import AUDIT_RELAYED
from registry.api.responses import PREFERRED, SRResponse
from registry.core import Registry
from registry.settings import Settings

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]

FORWARD_HEADER = "x-forward"
#: the caller a client certificate named on the follower (percent-encoded); the leader believes
#: it only from a trusted instance's certificate (``auth_trusted_forwarders``)
PRINCIPAL_HEADER = "x-forwarded-principal"
#: on the leader's answer to a forwarded write: the offset of the last record its state holds
#: once the write is applied. The leader answers when its commit is durable, before the
#: transaction's markers make the records readable, so the follower waits to read up to it
#: (the end of the topic it could ask for may still be short of it).
APPLIED_OFFSET_HEADER = "x-registry-applied-offset"
#: headers that describe one connection, not the request
_HOP_BY_HOP = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
    }
)
_ALWAYS_SERVED = frozenset({"/", "/ready"})


def advertised_url(settings: Settings) -> str:
    """This instance's URL for the other instances: ``advertised_url`` when set, else built
    from the listening address (https when TLS is on)."""
    explicit = settings.advertised_url.strip()
    if explicit:
        return explicit.rstrip("/")
    host = settings.host
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = socket.gethostname()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    scheme = "https" if settings.tls_certfile else "http"
    return f"{scheme}://{host}:{settings.port}"


def install(app: FastAPI, registry: Registry) -> None:
    """Add ``/ready``; for a store with a leader, forwarding (see the module docstring)."""

    @app.get("/ready", include_in_schema=False)
    async def ready(request: Request) -> Response:
        ok, detail = readiness(registry)
        if not ok:
            return SRResponse({"error_code": 503, "message": detail}, status_code=503)
        body: dict[str, Any] = {"ready": True, "message": detail}
        leader_url = getattr(registry.store, "leader_url", None)
        if leader_url is not None:
            body["leader"] = leader_url()
            body["is_leader"] = bool(registry.store.is_leader)  # type: ignore[attr-defined]
        return SRResponse(body)

    store = registry.store
    if not hasattr(store, "leader_url"):
        return
    if getattr(store, "advertised_url", None) is None:
        store.advertised_url = advertised_url(registry.settings)  # type: ignore[attr-defined]
    tls = client_tls(registry.settings)  # ValueError now, not at the first forwarded write
    store.set_listener(registry.refresh)  # type: ignore[attr-defined]
    app.add_middleware(ForwardingMiddleware, registry=registry, tls=tls)


def client_tls(settings: Settings) -> ssl.SSLContext:
    """How a follower verifies the leader (and proves itself when asked); ``ValueError`` for an
    unusable file."""
    ca = settings.forward_tls_ca_file or settings.tls_ca_file
    certfile, keyfile = settings.forward_tls_certfile, settings.forward_tls_keyfile
    if keyfile and not certfile:
        raise ValueError("SCHEMA_REGISTRY_FORWARD_TLS_KEYFILE needs _FORWARD_TLS_CERTFILE")
    try:
        context = ssl.create_default_context(cafile=ca or None)
        if certfile:
            context.load_cert_chain(certfile, keyfile or None)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"unusable TLS file for forwarding to the leader: {exc}") from None
    return context


def _failure(leader: str, exc: Exception) -> str:
    """Why forwarding to ``leader`` failed, naming an untrusted certificate as such."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ssl.SSLCertVerificationError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ssl.SSLCertVerificationError):
        return (
            f"Error while forwarding the request to the leader {leader}: its TLS certificate "
            f"is not trusted ({cause.verify_message}); set SCHEMA_REGISTRY_FORWARD_TLS_CA_FILE "
            "to the CA that signs it"
        )
    return f"Error while forwarding the request to the leader {leader}: {type(exc).__name__}: {exc}"


def readiness(registry: Registry) -> tuple[bool, str]:
    """Whether ``registry`` has applied its store up to where it stood at start-up."""
    check = getattr(registry.store, "readiness", None)
    if check is None:
        return True, "ready"
    try:
        done, last, detail = check()
    except RuntimeError as exc:  # not open yet
        return False, f"Schema Registry is starting: {exc}"
    if not done:
        return False, f"Schema Registry is not ready: {detail}"
    if registry.state.offset < last:
        return False, (
            f"Schema Registry is not ready: applied offset {registry.state.offset} of {last}"
        )
    keys_last = getattr(registry.store, "keys_replayed_through", lambda: -1)()
    if registry.state.encryption_keys.offset < keys_last:
        return False, "Schema Registry is not ready: applying the DEK registry's keys"
    return True, detail


def is_write(method: str, raw_path: str) -> bool:
    """Whether a request changes the registry (and so must reach the leader)."""
    method = method.upper()
    if method in ("PUT", "DELETE"):
        return True
    if method != "POST":
        return False
    segments = raw_path.rstrip("/").split("/")
    if len(segments) > 1 and segments[1] in ("dek-registry", "exporters"):
        return True  # every POST of the DEK registry creates or undeletes keys; of /exporters
        # creates an exporter
    if len(segments) > 3 and segments[1] == "contexts":
        segments = ["", *segments[3:]]
    return len(segments) == 4 and segments[1] == "subjects" and segments[3] == "versions"


#: seconds an idle connection to the leader is kept for reuse
_KEEPALIVE = 2.0


class ForwardingMiddleware:
    """See the module docstring."""

    def __init__(self, app: Any, registry: Registry, tls: ssl.SSLContext | None = None) -> None:
        self.app = app
        self.tls = tls if tls is not None else client_tls(registry.settings)
        self.registry = registry
        self.store: Any = registry.store
        write_timeout = float(getattr(getattr(self.store, "settings", None), "write_timeout", 10))
        self.timeout = httpx.Timeout(write_timeout + 10, connect=5)
        #: how long a write that finds no leader (or a leader that refuses connections) waits
        #: for one before it answers 50004 (50003)
        self.leader_wait = (
            float(getattr(getattr(self.store, "settings", None), "leader_wait_ms", 5000)) / 1000
        )
        self.max_body = registry.settings.max_request_bytes
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path not in _ALWAYS_SERVED:
            ok, detail = readiness(self.registry)
            if not ok:
                await _send_error(send, errors.RegistryError(503, detail, 503))
                return
        raw_path = (scope.get("raw_path") or path.encode()).decode("latin-1")
        if not is_write(scope["method"], raw_path):
            await self.app(scope, receive, send)
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        if any(k.lower() == FORWARD_HEADER for k, _ in headers):
            # a forwarded request is never forwarded again (the store answers 50004 if this
            # instance is not the leader after all)
            await self.app(scope, receive, self._with_applied_offset(send))
            return
        body = await _read_body(receive, self.max_body)
        if body is None:  # larger than the server accepts: refused here, as the leader would
            too_large = "HTTP 413 Request Entity Too Large"
            await _send_error(send, errors.RegistryError(413, too_large, 413))
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.leader_wait
        refused: str | None = None  # the last leader URL that refused the connection
        failure: Exception | None = None
        resent: str | None = None  # the leader a dropped connection was sent again to
        lost = False  # this instance answered 50004 itself: it lost the leadership
        while True:
            leader = self.store.leader_url()
            if self._leads():
                answer = await _answered(self.app, scope, body)
                if not answer.not_the_leader() or (lost and loop.time() >= deadline):
                    await answer.replay(send)
                    return
                # this instance lost the leadership with the write, which it did not commit
                # (the store answers 50004 only then): on to the new leader, as a follower
                # would, waiting for it up to leader.wait.ms from now
                if not lost:
                    lost, deadline = True, loop.time() + self.leader_wait
                failure = errors.unknown_leader(answer.message())
                refused = self.store.advertised_url
                await asyncio.sleep(0.05)
                continue
            if not leader and getattr(self.store, "leader_named", lambda: False)():
                break  # the leader serves no HTTP (e.g. the copy command): nothing to wait for
            if leader and leader != refused:
                failure = await self._forward(scope, leader, raw_path, headers, body, send)
                if failure is None:
                    return
                if _dropped(failure) and resent != leader:
                    # a kept-alive connection the leader had just closed, or the leader died
                    # with the request: sent again at once, once (a dead leader then refuses)
                    resent = leader
                    continue
                refused = leader
            if loop.time() >= deadline:
                break
            await asyncio.sleep(0.05)
        if isinstance(failure, errors.RegistryError):
            await _send_error(send, failure)
        elif refused is not None and failure is not None:
            await _send_error(send, errors.forwarding_failed(_failure(refused, failure)))
        else:
            await _send_error(send, errors.unknown_leader())

    def _leads(self) -> bool:
        leader = self.store.leader_url()
        return bool(self.store.is_leader) or (
            leader is not None and leader == self.store.advertised_url
        )

    async def _forward(
        self,
        scope: Scope,
        leader: str,
        raw_path: str,
        headers: list[tuple[str, str]],
        body: bytes,
        send: Any,
    ) -> Exception | None:
        """Send the write to ``leader`` and its answer to the client; or, when nothing was
        sent (connection refused), the leader refused it as not the leader, or it died with a
        write that may be sent again (anything but a DELETE), return why without answering."""
        query = scope.get("query_string", b"").decode("latin-1")
        url = leader.rstrip("/") + raw_path + (f"?{query}" if query else "")
        out = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP | {PRINCIPAL_HEADER}]
        out.append(("X-Forward", "true"))
        principal = scope.get("state", {}).get("principal")
        if principal and not any(k.lower() == "authorization" for k, _ in headers):
            # authenticated without credentials: by its client certificate, which the
            # follower cannot pass on; its own certificate vouches for the name instead
            out.append(("X-Forwarded-Principal", quote(str(principal), safe="")))
        if not any(k.lower() == "x-forwarded-for" for k, _ in headers):
            client = scope.get("client")
            if client:
                out.append(("X-Forwarded-For", str(client[0])))
        try:
            response = await self._http().request(
                scope["method"],
                httpx.URL(url),
                headers=out,
                content=body,
            )
        except httpx.ConnectError as exc:
            # nothing was sent: the leader is gone (or not listening yet); the caller looks
            # for the next leader until its wait is over
            log.info("forwarding %s %s to %s: %r", scope["method"], raw_path, leader, exc)
            return exc
        except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
            if scope["method"].upper() != "DELETE":
                # the leader died with the request: a registration or a config/mode write may
                # be sent again (the same answer if it was done), to the next leader
                log.info("forwarding %s %s to %s: %r", scope["method"], raw_path, leader, exc)
                return exc
            log.warning("forwarding %s %s to %s failed: %r", scope["method"], raw_path, leader, exc)
            await _send_error(send, errors.forwarding_failed(_failure(leader, exc)))
            return None
        except httpx.HTTPError as exc:
            log.warning("forwarding %s %s to %s failed: %r", scope["method"], raw_path, leader, exc)
            await _send_error(send, errors.forwarding_failed(_failure(leader, exc)))
            return None
        if response.status_code == 500 and _error_code(response) == 50004:
            # the leader we knew no longer leads and refused the write before doing anything
            return errors.unknown_leader(f"{leader} is no longer the leader")
        if response.is_success:
            await self._catch_up(_applied_offset(response.headers.get(APPLIED_OFFSET_HEADER)))
        reply_headers = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.items()
            if k.lower() not in _HOP_BY_HOP
            and k.lower() not in ("content-encoding", APPLIED_OFFSET_HEADER)
        ]
        reply_headers.append((b"content-length", str(len(response.content)).encode()))
        scope.setdefault("state", {})[AUDIT_RELAYED] = True  # the leader audited it
        start = {"type": "http.response.start", "status": response.status_code}
        await send({**start, "headers": reply_headers})
        await send({"type": "http.response.body", "body": response.content})
        return None

    def _with_applied_offset(self, send: Any) -> Any:
        """``send`` with :data:`APPLIED_OFFSET_HEADER` added to the answer's headers."""

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                # the follower answers once it has read the write: no commit linger for it
                getattr(self.store, "commit_soon", _nothing)()
                offset = str(self.registry.state.offset).encode()
                headers = [*message.get("headers", []), (APPLIED_OFFSET_HEADER.encode(), offset)]
                message = {**message, "headers": headers}
            await send(message)

        return sending

    async def _catch_up(self, applied: int = -1) -> None:
        """Read the leader's write here too (bounded), so the client reads it from us: up to
        the end of the topic, and at least past ``applied`` (the leader's applied offset)."""
        try:
            caught = await asyncio.to_thread(self.store.catch_up, 5.0, applied + 1)
            if caught:
                await asyncio.to_thread(self.registry.refresh)
        except Exception:  # the write succeeded; being late to read it is not an error
            log.warning("catching up after a forwarded write failed", exc_info=True)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                verify=self.tls,
                # below the leader's keep-alive (uvicorn's 5 s): a connection it is closing
                # is not picked for a request (the request then fails with ReadError)
                limits=httpx.Limits(keepalive_expiry=_KEEPALIVE),
            )
        return self._client


class _Answer:
    """An ASGI response kept to be sent later (a write answered by this instance)."""

    def __init__(self) -> None:
        self.messages: list[MutableMapping[str, Any]] = []

    async def __call__(self, message: MutableMapping[str, Any]) -> None:
        self.messages.append(message)

    def status(self) -> int | None:
        starts = [m for m in self.messages if m["type"] == "http.response.start"]
        return int(starts[0]["status"]) if starts else None

    def _body(self) -> bytes:
        return b"".join(
            m.get("body", b"") for m in self.messages if m["type"] == "http.response.body"
        )

    def _error(self) -> dict[str, Any]:
        """The answer's JSON object ({} when it is not one)."""
        try:
            body = orjson.loads(self._body())
        except orjson.JSONDecodeError:
            return {}
        return body if isinstance(body, dict) else {}

    def message(self) -> str:
        return str(self._error().get("message", ""))

    def not_the_leader(self) -> bool:
        return self.status() == 500 and self._error().get("error_code") == 50004

    async def replay(self, send: Any) -> None:
        for message in self.messages:
            await send(message)


async def _answered(app: Any, scope: Scope, body: bytes) -> _Answer:
    """This instance's answer to a write (not sent yet)."""
    answer = _Answer()
    await app(scope, _replay(body), answer)
    return answer


def _dropped(failure: Exception) -> bool:
    """Whether the connection to the leader dropped with the request sent (not a refusal)."""
    return isinstance(failure, (httpx.ReadError, httpx.RemoteProtocolError))


def _replay(body: bytes) -> Any:
    """An ASGI ``receive`` that gives ``body`` (read already) once, then waits."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # a disconnect would come here; we never disconnect
        return {"type": "http.disconnect"}

    return receive


def _error_code(response: httpx.Response) -> int | None:
    try:
        code = response.json().get("error_code")
    except (ValueError, AttributeError):
        return None
    return code if isinstance(code, int) else None


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The request body, or None once it grows past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _send_error(send: Any, exc: errors.RegistryError) -> None:
    body = orjson.dumps(exc.body())
    await send(
        {
            "type": "http.response.start",
            "status": exc.http_status,
            "headers": [
                (b"content-type", PREFERRED.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _applied_offset(value: str | None) -> int:
    try:
        return int(value) if value is not None else -1
    except ValueError:
        return -1


def _nothing() -> None:
    """A store that commits before it answers has nothing to hurry."""

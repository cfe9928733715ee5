"""The ASGI middleware that authenticates every request and applies the subject rules.

It runs outside the forwarding middleware (a follower checks the caller before forwarding a
write, and the leader checks the same ``Authorization`` header again) and outside the protocol
middleware, so it reads the path through :func:`registry.api.paths.rewrite_paths` itself.

Decisions, for a principal whose rules do not grant everything:

* a read of a subject it may not read is answered by the real endpoint for a subject that does
  not exist (a random name in the same context), with that name replaced by the requested one in
  the answer: the same status, ``error_code`` and message as for a missing subject, so whether
  the subject exists does not leak; the same for ``/schemas/ids/{id}`` and ``/schemas/guids``
  when no subject holding the schema is readable;
* a write it may not do answers 403 ``{"error_code": 40301, ...}`` whether or not the subject
  exists;
* listings leave out the subjects it may not read, and references to such a subject in a
  register, lookup or compatibility request answer as missing ones (see
  :mod:`registry.auth.visibility`; the grants are in the request state for the routers).

A request without credentials is the common name of its verified TLS client certificate when
``auth_client_cert_principal`` is on; a bearer token's groups claim adds ``group:NAME``
principals (:mod:`registry.auth.rules`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import fnmatch
import hashlib
import hmac
import logging
import secrets
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

import orjson

from registry import reads
from registry.api.alias_paths import rewrite_aliases
from registry.api.deps import ENCODED_SLASH, subject_param
from registry.api.paths import rewrite_paths
from registry.api.responses import PREFERRED, negotiate
from registry.api.ui import is_ui_path
from registry.audit.middleware import AUDIT_REFUSED
from registry.auth import passwords, visibility
from registry.auth.rules import ALL, Grants, Identity, Permission, Rules, parse_rules
from registry.auth.throttle import Throttle, hash_gate
from registry.auth.tokens import TokenError, TokenVerifier
from registry.auth.watched import WatchedFile
from registry.core import Registry
from registry.errors import RegistryError
from registry.path_numbers import java_int
from registry.settings import Settings
from registry.subjects import DEFAULT_CONTEXT
from registry.tls import CLIENT_CN

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
REALM = "schema-registry"


class AuthFailure(Exception):
    def __init__(self, message: str, *, bearer_error: bool = False, retry_after: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.bearer_error = bearer_error
        #: seconds a locked-out client must wait (answered 429 with Retry-After); 0: a 401
        self.retry_after = retry_after


@dataclass
class AuthCounts:
    """What authentication has cost so far (exported on ``/metrics``)."""

    #: scrypt computations (known users, and the decoy for unknown ones)
    password_hashes: int = 0
    #: (user, address) pairs locked out
    lockouts: int = 0
    #: attempts refused with 429 while locked out, without hashing
    locked_out_refusals: int = 0


class Authenticator:
    """Who sent a request: HTTP Basic against the users file, or a JWT bearer token."""

    def __init__(self, settings: Settings) -> None:
        self.users = (
            WatchedFile(settings.auth_users_file, passwords.parse_users)
            if settings.auth_users_file
            else None
        )
        self.tokens = (
            TokenVerifier(
                keys_file=settings.auth_jwt_keys_file,
                jwks_url=settings.auth_jwt_jwks_url,
                issuer=settings.auth_jwt_issuer,
                audience=settings.auth_jwt_audience,
                algorithms=settings.auth_jwt_algorithms,
                principal_claim=settings.auth_jwt_principal_claim,
                leeway=settings.auth_jwt_leeway,
                groups_claim=settings.auth_jwt_groups_claim,
            )
            if settings.auth_jwt_keys_file or settings.auth_jwt_jwks_url
            else None
        )
        self._secret = secrets.token_bytes(32)
        self._verified: dict[bytes, str] = {}
        self._generation = -1
        # verified against for unknown users, so they cost as much as a wrong password
        self._decoy = passwords.decoy({})
        # failed Basic attempts per (user, address), and a bound on scrypt computations at once
        self.throttle = Throttle.from_settings(settings)
        self._hashing = hash_gate(settings)
        self.counts = AuthCounts()

        #: a request without credentials may be its verified client certificate's common name
        self.certificates = settings.auth_client_cert_principal
        #: certificate names of instances whose X-Forwarded-Principal is believed
        self.forwarders = [
            p.strip() for p in settings.auth_trusted_forwarders.split(",") if p.strip()
        ]

    @property
    def enabled(self) -> bool:
        return self.users is not None or self.tokens is not None or self.certificates

    def certified(self, authorization: str | None, scope: Scope) -> str | None:
        """The common name of the verified client certificate of a request without credentials,
        when certificates name principals (put in the state by :mod:`registry.tls`)."""
        if authorization or not self.certificates:
            return None
        name: str | None = scope.get("state", {}).get(CLIENT_CN)
        forwarded = next((v for k, v in scope["headers"] if k == b"x-forwarded-principal"), None)
        if forwarded is None:
            return name
        if name is not None and any(fnmatch.fnmatchcase(name, p) for p in self.forwarders):
            return unquote(forwarded.decode("latin-1")) or None
        raise AuthFailure(
            "Unauthorized: X-Forwarded-Principal is only accepted from the certificate of "
            "another instance (SCHEMA_REGISTRY_AUTH_TRUSTED_FORWARDERS)"
        )

    def identity(self, principal: str, authorization: str | None) -> Identity:
        """``principal`` with the groups of the bearer token that named it (none otherwise)."""
        scheme, _, value = (authorization or "").strip().partition(" ")
        if self.tokens is None or scheme.lower() != "bearer":
            return Identity(principal)
        return Identity(principal, self.tokens.groups(value.strip()))

    def challenges(self, bearer_error: bool) -> list[bytes]:
        out = []
        if self.users is not None:
            out.append(f'Basic realm="{REALM}", charset="UTF-8"'.encode())
        if self.tokens is not None:
            extra = ', error="invalid_token"' if bearer_error else ""
            out.append(f'Bearer realm="{REALM}"{extra}'.encode())
        return out

    async def principal(self, authorization: str | None, address: str = "") -> str:
        if not authorization:
            raise AuthFailure("Unauthorized: credentials are required")
        scheme, _, value = authorization.strip().partition(" ")
        scheme = scheme.lower()
        if scheme == "basic" and self.users is not None:
            return await self._basic(value.strip(), address)
        if scheme == "bearer" and self.tokens is not None:
            try:
                return await self.tokens.principal(value.strip())
            except TokenError as exc:
                raise AuthFailure(f"Unauthorized: {exc}", bearer_error=True) from None
        raise AuthFailure(f"Unauthorized: the {scheme or 'empty'} scheme is not accepted")

    async def _basic(self, value: str, address: str) -> str:
        assert self.users is not None
        users = self.users.get()
        if self.users.generation != self._generation:
            self._verified.clear()
            self._generation = self.users.generation
            self._decoy = passwords.decoy(users)
        key = hmac.digest(self._secret, value.encode("latin-1", "replace"), hashlib.sha256)
        known = self._verified.get(key)
        if known is not None:
            self._refuse_locked_out(known, address)
            self.throttle.succeeded(known, address)
            return known
        try:
            decoded = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise AuthFailure("Unauthorized: malformed Basic credentials") from None
        name, sep, password = decoded.partition(":")
        if not sep:
            raise AuthFailure("Unauthorized: malformed Basic credentials")
        self._refuse_locked_out(name, address)
        encoded = users.get(name)
        async with self._hashing:
            # attempts that waited for the gate while the pair got locked out hash nothing
            self._refuse_locked_out(name, address)
            self.counts.password_hashes += 1
            ok = await asyncio.to_thread(
                passwords.verify_password, password, encoded or self._decoy
            )
        if not ok or encoded is None:
            locked = self.throttle.failed(name, address)
            if locked:
                self.counts.lockouts += 1
                log.warning(
                    "HTTP Basic user %r from %s locked out for %.0f s after %d failed attempts",
                    name,
                    address or "an unknown address",
                    locked,
                    self.throttle.max_failures,
                )
            raise AuthFailure("Unauthorized: invalid user name or password")
        self.throttle.succeeded(name, address)
        if len(self._verified) > 10_000:
            self._verified.clear()
        self._verified[key] = name
        return name

    def _refuse_locked_out(self, name: str, address: str) -> None:
        wait = self.throttle.retry_after(name, address)
        if wait:
            self.counts.locked_out_refusals += 1
            raise AuthFailure(
                f"Too many failed authentication attempts: retry after {wait} seconds",
                retry_after=wait,
            )


# ---- what a request needs -------------------------------------------------------------------

ANY, SUBJECT, GLOBAL, SCHEMA_ID, GUID = "any", "subject", "global", "id", "guid"


@dataclass(frozen=True)
class Need:
    kind: str
    perm: Permission = Permission.READ
    #: index in the path segments of the subject, id or guid
    index: int = 0


def need_of(method: str, segs: list[str]) -> Need:
    """What ``method`` on the (rewritten) path ``/segs[0]/segs[1]/...`` needs."""
    write = method in ("PUT", "DELETE", "POST")
    n = len(segs)
    root = segs[0]
    if root == "subjects":
        if n == 1:
            return Need(ANY)
        if method == "DELETE" or (method == "POST" and n == 3 and segs[2] == "versions"):
            return Need(SUBJECT, Permission.WRITE, 1)
        if method == "POST" and segs[-1] == "tags":  # a new version with tags (Confluent 8.x)
            return Need(SUBJECT, Permission.WRITE, 1)
        return Need(SUBJECT, Permission.READ, 1)
    if root == "audit" and n >= 3 and segs[1] == "subjects":  # a subject's audit history
        return Need(SUBJECT, Permission.READ, 2)
    if root == "compatibility" and n >= 3 and segs[1] == "subjects":
        return Need(SUBJECT, Permission.READ, 2)
    if root in ("config", "mode"):
        if n == 1:
            return Need(GLOBAL, Permission.ADMIN) if write else Need(ANY)
        return Need(SUBJECT, Permission.ADMIN if write else Permission.READ, 1)
    if root == "contexts" and n > 1:
        return Need(GLOBAL, Permission.ADMIN) if write else Need(ANY)
    if root == "dek-registry":
        return _dek_need(method, segs)
    if root == "exporters":  # an exporter copies every subject it names, and its config
        return Need(GLOBAL, Permission.ADMIN)  # names the destination
    if root == "associations:batchGet":  # a read; the router filters by readable subject
        return Need(ANY)
    if root in ("associations", "associations:batchMutate"):
        # writing associations registers and (with cascadeLifecycle) deletes subjects
        if write:
            return Need(GLOBAL, Permission.ADMIN)
        if n >= 3 and segs[1] == "subjects":
            return Need(SUBJECT, Permission.READ, 2)
        return Need(ANY)
    if root == "schemas":
        if n == 1:
            return Need(ANY)
        if segs[1] == "ids" and n >= 3:
            return Need(SCHEMA_ID, index=2)
        if segs[1] == "guids" and n >= 3:
            return Need(GUID, index=2)
    return Need(ANY)


def _dek_need(method: str, segs: list[str]) -> Need:
    """``/dek-registry/v1/keks/{name}/deks/{subject}/...``: a DEK needs rights on its subject;
    reading KEKs needs none; changing a KEK, or creating a DEK named in the body, needs admin
    rights on every subject."""
    write = method in ("PUT", "DELETE", "POST")
    if len(segs) >= 6 and segs[4] == "deks":
        return Need(SUBJECT, Permission.WRITE if write else Permission.READ, 5)
    return Need(GLOBAL, Permission.ADMIN) if write else Need(ANY)


def _context_prefix(subject: str) -> tuple[str, str]:
    if subject.startswith(":") and subject.count(":") >= 2:
        end = subject.index(":", 1)
        return subject[: end + 1], subject[end + 1 :]
    return "", subject


# ---- the middleware -------------------------------------------------------------------------


class AuthMiddleware:
    def __init__(self, app: Any, registry: Registry, authenticator: Authenticator) -> None:
        self.app = app
        self.registry = registry
        self.auth = authenticator
        settings = registry.settings
        self.public = frozenset(
            p.strip() for p in settings.auth_public_paths.split(",") if p.strip()
        )
        self.rules = (
            WatchedFile(settings.auth_rules_file, parse_rules) if settings.auth_rules_file else None
        )
        self.token = "hidden-" + secrets.token_hex(8)
        self.hidden_guid = str(uuid.uuid4())

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in self.public or is_ui_path(scope["path"]):
            # the web UI's static files carry no data (its API calls are authenticated)
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        authorization = None
        accept = None
        for k, v in headers:
            if k == b"authorization":
                authorization = v.decode("latin-1")
            elif k == b"accept":
                accept = v.decode("latin-1")
        client = scope.get("client")
        try:
            principal = self.auth.certified(authorization, scope) or await self.auth.principal(
                authorization, client[0] if client else ""
            )
        except AuthFailure as exc:
            if exc.retry_after:
                retry = [(b"retry-after", str(exc.retry_after).encode())]
                await send_error(scope, send, 429, 429, exc.message, accept, retry)
                return
            extra = [(b"www-authenticate", c) for c in self.auth.challenges(exc.bearer_error)]
            await send_error(scope, send, 401, 401, exc.message, accept, extra)
            return
        scope.setdefault("state", {})["principal"] = principal
        who = self.auth.identity(principal, authorization)
        grants = self.rules.get().grants(who) if self.rules is not None else ALL
        scope["state"][visibility.GRANTS] = grants
        if grants.everything(Permission.ADMIN):
            await self.app(scope, receive, send)
            return
        await self._authorise(scope, receive, send, grants, accept)

    async def _authorise(
        self, scope: Scope, receive: Any, send: Any, grants: Grants, accept: str | None
    ) -> None:
        view = {
            "path": scope["path"],
            "raw_path": scope.get("raw_path"),
            "query_string": scope.get("query_string", b""),
        }
        try:
            rewrite_paths(view)
        except RegistryError:  # the app answers the malformed path (400)
            await self.app(scope, receive, send)
            return
        rewrite_aliases(view, self.registry.state)  # rules apply to the subject an alias names
        path: str = view["path"]
        segs = path.split("/")[1:]
        method = "GET" if scope["method"] == "HEAD" else scope["method"]
        need = need_of(method, segs)
        if need.kind in (SUBJECT, SCHEMA_ID, GUID) and not segs[need.index]:
            need = Need(ANY)  # not a route: the app answers 404
        replacements: list[tuple[bytes, bytes]] = []
        if need.kind == GLOBAL and not grants.everything(Permission.ADMIN):
            await _denied(scope, send, accept, "Write", "Config" if segs[0] != "contexts" else "")
            return
        if need.kind == SUBJECT:
            # the subject the route acts on (``:.:x`` is ``x``), so no spelling walks around
            # a rule; a name carrying the placeholder is never anyone's
            subject = subject_param(segs[need.index])
            hidden = (
                need.perm == Permission.READ and self._falls_back_unreadable(subject, grants)
            ) or self.token in subject
            if hidden or not grants.can(subject, need.perm):
                if need.perm > Permission.READ and grants.can(subject, Permission.READ):
                    op = "Write" if need.perm == Permission.WRITE else "AlterConfigs"
                    await _denied(scope, send, accept, op, subject)
                    return
                if need.perm > Permission.READ:
                    await _denied(scope, send, accept, "Write", subject)
                    return
                prefix, name = _context_prefix(subject)
                segs[need.index] = prefix + self.token
                replacements = [
                    (_json_text(prefix + self.token), _json_text(subject)),
                    (self.token.encode(), _json_text(name)),
                ]
            if method == "POST":  # register, lookup, compatibility: hide unreadable references
                receive, hidden_refs = await self._hide_references(scope, receive, subject, grants)
                replacements = hidden_refs + replacements
        elif need.kind == SCHEMA_ID and not self._id_readable(segs[need.index], view, grants):
            number = java_int(segs[need.index])
            hidden_id = self._unused_id()
            replacements = [(hidden_id.encode(), str(number).encode())]
            segs[need.index] = hidden_id
        elif need.kind == GUID and not self._guid_readable(segs[need.index], grants):
            replacements = [(self.hidden_guid.encode(), _json_text(segs[need.index]))]
            segs[need.index] = self.hidden_guid
        if replacements:
            _point_at(scope, segs, view["query_string"])
            head = scope["method"] == "HEAD"
            await self.app(scope, receive, _rewriting(send, replacements, head))
            return
        await self.app(scope, receive, send)

    async def _hide_references(
        self, scope: Scope, receive: Any, subject: str, grants: Grants
    ) -> tuple[Any, list[tuple[bytes, bytes]]]:
        """The request body read, with references the caller may not read renamed
        (:func:`visibility.hide_references`), as a new ``receive``; and the names to put back.
        A body over the size limit is passed on unread (the protocol layer answers 413)."""
        limit = self.registry.settings.max_request_bytes
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= limit:
            message = await receive()
            if message["type"] != "http.request":
                return _replaying(message, receive), []
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        hidden = None if more else visibility.hide_references(body, subject, grants)
        if hidden is None:
            unchanged = {"type": "http.request", "body": body, "more_body": more}
            return _replaying(unchanged, receive), []
        body, names = hidden
        scope["headers"] = [
            (k, str(len(body)).encode() if k == b"content-length" else v)
            for k, v in scope["headers"]
        ]
        return _replaying({"type": "http.request", "body": body}, receive), names

    def _falls_back_unreadable(self, subject: str, grants: Grants) -> bool:
        """Whether reading ``subject`` could answer with another context's subject the caller
        may not read: an unqualified subject missing from the default context is looked up in
        every other context (Confluent's fallback)."""
        state = self.registry.state
        if subject.startswith(":") or state.versions(subject):
            return False
        for name in state.context_names():
            other = f":{name}:{subject}"
            if (
                name != DEFAULT_CONTEXT
                and state.versions(other)
                and not grants.can(other, Permission.READ)
            ):
                return True
        return False

    def _unused_id(self) -> str:
        """An id no context holds (a Java int, so the route reads it as the requested one)."""
        contexts = list(self.registry.state.contexts.values())
        while True:
            candidate = 2**30 + secrets.randbelow(2**30 - 1)
            if not any(candidate in ctx.ids for ctx in contexts):
                return str(candidate)

    def _id_readable(self, raw_id: str, view: Scope, grants: Grants) -> bool:
        schema_id = java_int(raw_id)  # the routers' parser: both read the same number
        if schema_id is None:
            return True  # the route answers 404
        query = dict(parse_qsl(view["query_string"].decode("latin-1")))
        subject = subject_param(query.get("subject", ""))
        reg = self.registry
        try:
            sv = reads.schema_by_id(reg, schema_id, subject or None)
        except RegistryError:
            return True  # missing anyway
        holders = reg.state.context_of(sv.subject).ids.get(schema_id, {})
        return any(grants.can(s, Permission.READ) for s in list(holders))

    def _guid_readable(self, guid: str, grants: Grants) -> bool:
        found = reads.schemas_by_guid(self.registry, guid.lower())
        if not found:
            return True
        for sv in found:
            holders = self.registry.state.context_of(sv.subject).ids.get(sv.id, {})
            if any(grants.can(s, Permission.READ) for s in list(holders)):
                return True
        return False


def _replaying(first: Any, receive: Any) -> Any:
    """A ``receive`` answering ``first``, then what ``receive`` answers."""
    pending = [first]

    async def wrapped() -> Any:
        return pending.pop() if pending else await receive()

    return wrapped


def _json_text(value: str) -> bytes:
    """``value`` as it appears inside a JSON string."""
    return orjson.dumps(value)[1:-1]


def _point_at(scope: Scope, segs: list[str], query: bytes) -> None:
    """Make ``scope`` request the path ``segs`` (already rewritten: no ``/contexts`` form)."""
    decoded = [s.replace(ENCODED_SLASH, "/") for s in segs]
    scope["path"] = "/" + "/".join(s.replace("/", ENCODED_SLASH) for s in decoded)
    scope["raw_path"] = ("/" + "/".join(quote(s, safe="") for s in decoded)).encode()
    scope["query_string"] = query


Send = Callable[[Any], Awaitable[None]]


def _buffered(send: Send, transform: Callable[[int, bytes], bytes], head: bool = False) -> Send:
    """A ``send`` that collects the body and passes ``transform(status, body)`` on (only its
    length for a ``head`` request)."""
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def wrapped(message: Any) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            return
        if message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = transform(start["status"], b"".join(chunks))
        headers = [
            (k, transform(0, v) if k.lower() == b"location" else v)
            for k, v in start.get("headers", [])
            if k.lower() != b"content-length"
        ]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else body})

    return wrapped


def _rewriting(send: Send, replacements: list[tuple[bytes, bytes]], head: bool) -> Send:
    def transform(status: int, body: bytes) -> bytes:
        for old, new in replacements:
            body = body.replace(old, new)
        return body

    return _buffered(send, transform, head)


async def _denied(scope: Scope, send: Send, accept: str | None, op: str, resource: str) -> None:
    what = f"Subject: {resource}" if resource and resource != "Config" else "Cluster"
    if resource == "Config":
        what = "Config: global"
    await send_error(scope, send, 403, 40301, f"User is denied operation {op} on {what}", accept)


async def send_error(
    scope: Scope,
    send: Send,
    status: int,
    code: int,
    message: str,
    accept: str | None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """A Confluent-shaped error with the headers the protocol middleware adds to others.
    Every refusal of this middleware goes through here: it is marked for the audit trail."""
    scope.setdefault("state", {})[AUDIT_REFUSED] = True
    media = negotiate(accept) or PREFERRED
    body = orjson.dumps({"error_code": code, "message": message})
    request_id = next((v for k, v in scope["headers"] if k == b"x-request-id"), None)
    headers = [
        (b"content-type", media.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"x-request-id", request_id or str(uuid.uuid4()).encode()),
        (b"x-xss-protection", b"1; mode=block"),
        (b"cache-control", b"no-cache, no-store, must-revalidate"),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def install(app: Any, registry: Registry) -> Authenticator | None:
    """Add the middleware when authentication is configured (call after forwarding's
    ``install``, so this runs first). Raises ``ValueError`` for an unusable configuration."""
    settings = registry.settings
    if settings.auth_rules_file and not (
        settings.auth_users_file
        or settings.auth_jwt_keys_file
        or settings.auth_jwt_jwks_url
        or settings.auth_client_cert_principal
    ):
        raise ValueError(
            "SCHEMA_REGISTRY_AUTH_RULES_FILE needs authentication: set "
            "SCHEMA_REGISTRY_AUTH_USERS_FILE, SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE/_JWKS_URL or "
            "SCHEMA_REGISTRY_AUTH_CLIENT_CERT_PRINCIPAL"
        )
    try:
        authenticator = Authenticator(settings)
        if settings.auth_rules_file:
            WatchedFile(settings.auth_rules_file, parse_rules)
    except (OSError, ValueError) as exc:
        raise ValueError(f"authentication is misconfigured: {exc}") from None
    if not authenticator.enabled:
        return None
    app.add_middleware(AuthMiddleware, registry=registry, authenticator=authenticator)
    return authenticator


__all__ = ["AuthMiddleware", "Authenticator", "Rules", "install", "need_of"]

"""Bearer tokens: JWTs verified against configured public keys (a PEM or JWKS file) or the
keys published at a JWKS URL, with issuer, audience and expiry checks.

Only asymmetric algorithms are accepted (never ``none`` nor HMAC, so a public key can never be
used as a shared secret). A verified token is remembered until it expires, so a client sending
the same token again costs a dictionary lookup.

With ``groups_claim`` set (``groups``, ``roles``, a dotted path such as ``realm_access.roles``,
or several separated by commas), the token's groups are read from those claims: a list of
strings, or one string of names separated by spaces or commas. Rules name them ``group:NAME``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from registry.auth.rules import Identity
from registry.auth.watched import WatchedFile

log = logging.getLogger(__name__)

ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.S)
#: cached verified tokens at most (cleared when full)
_CACHE_SIZE = 10_000
#: seconds between two fetches of the JWKS URL caused by an unknown key id
_REFETCH_INTERVAL = 2.0
#: seconds a fetched JWKS is used before it is fetched again
_JWKS_TTL = 300.0


class TokenError(Exception):
    """The token is not acceptable; the message says why (it becomes a 401)."""


@dataclass(frozen=True)
class Key:
    kid: str | None
    key: Any


def parse_keys(text: str) -> list[Key]:
    """Keys from a JWKS document (``{"keys": [...]}``) or PEM public keys / certificates."""
    if text.lstrip().startswith("{"):
        try:
            jwks = jwt.PyJWKSet.from_json(text)
        except jwt.PyJWTError as exc:
            raise ValueError(f"not a usable JWKS: {exc}") from None
        return [Key(k.key_id, k.key) for k in jwks.keys]
    keys: list[Key] = []
    for match in _PEM_BLOCK.finditer(text):
        block = match.group(0).encode()
        try:
            if match.group(1) == "CERTIFICATE":
                keys.append(Key(None, x509.load_pem_x509_certificate(block).public_key()))
            else:
                keys.append(Key(None, serialization.load_pem_public_key(block)))
        except ValueError as exc:
            raise ValueError(f"unreadable PEM {match.group(1)}: {exc}") from None
    if not keys:
        raise ValueError("no PEM public key, certificate or JWKS found")
    return keys


class TokenVerifier:
    def __init__(
        self,
        *,
        keys_file: str = "",
        jwks_url: str = "",
        issuer: str = "",
        audience: str = "",
        algorithms: str = "",
        principal_claim: str = "sub",
        leeway: float = 0.0,
        groups_claim: str = "",
    ) -> None:
        if not keys_file and not jwks_url:
            raise ValueError("bearer tokens need a keys file or a JWKS URL")
        wanted = [a.strip() for a in algorithms.split(",") if a.strip()] or sorted(ASYMMETRIC)
        unsupported = [a for a in wanted if a not in ASYMMETRIC]
        if unsupported:
            raise ValueError(f"unsupported JWT algorithms {unsupported}; use {sorted(ASYMMETRIC)}")
        self.algorithms = frozenset(wanted)
        self.issuer = issuer or None
        self.audience = audience or None
        self.principal_claim = principal_claim
        self.groups_claims = [c.strip() for c in groups_claim.split(",") if c.strip()]
        self.leeway = leeway
        self._file = WatchedFile(keys_file, parse_keys) if keys_file else None
        self.jwks_url = jwks_url
        self._remote: list[Key] = []
        self._fetched_at = -1e9
        self._fetch_lock = asyncio.Lock()
        self._cache: dict[str, tuple[Identity, float]] = {}
        self._generation = -1

    async def principal(self, token: str) -> str:
        """The principal a valid ``token`` names; :class:`TokenError` otherwise."""
        return (await self.identity(token)).name

    async def identity(self, token: str) -> Identity:
        """The principal and groups a valid ``token`` names; :class:`TokenError` otherwise."""
        generation = self._file.generation if self._file else 0
        if self._file is not None:
            self._file.get()
            generation = self._file.generation
        if generation != self._generation:
            self._cache.clear()
            self._generation = generation
        hit = self._cache.get(token)
        now = time.time()
        if hit is not None and hit[1] + self.leeway > now:
            return hit[0]
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenError(f"Malformed bearer token: {exc}") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise TokenError(f"Bearer token algorithm {alg!r} is not accepted")
        kid = header.get("kid")
        keys = await self._keys(kid)
        if not keys:
            raise TokenError(
                "No key to verify the bearer token" + (f" (kid {kid!r})" if kid else "")
            )
        payload = self._decode(token, alg, keys)
        principal = payload.get(self.principal_claim)
        if not isinstance(principal, str) or not principal:
            raise TokenError(f"Bearer token has no {self.principal_claim!r} claim")
        who = Identity(principal, self._groups(payload))
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.clear()
        self._cache[token] = (who, float(payload["exp"]))
        return who

    def groups(self, token: str) -> frozenset[str]:
        """The groups of ``token`` once :meth:`principal` has accepted it (none otherwise)."""
        hit = self._cache.get(token)
        return hit[0].groups if hit is not None else frozenset()

    def _groups(self, payload: dict[str, Any]) -> frozenset[str]:
        """The names listed by the groups claims (absent claims list none)."""
        found: set[str] = set()
        for claim in self.groups_claims:
            value: Any = payload
            for key in claim.split("."):
                value = value.get(key) if isinstance(value, dict) else None
            if value is None:
                continue
            if isinstance(value, str):
                found.update(n for n in re.split(r"[\s,]+", value) if n)
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                found.update(v for v in value if v)
            else:
                raise TokenError(
                    f"Bearer token claim {claim!r} must be a string or a list of strings"
                )
        return frozenset(found)

    def _decode(self, token: str, alg: str, keys: list[Key]) -> dict[str, Any]:
        error: jwt.PyJWTError | None = None
        for key in keys:
            try:
                payload: dict[str, Any] = jwt.decode(
                    token,
                    key.key,
                    algorithms=[alg],
                    audience=self.audience,
                    issuer=self.issuer,
                    leeway=self.leeway,
                    options={
                        "require": ["exp"],
                        "verify_aud": self.audience is not None,
                    },
                )
                return payload
            except jwt.InvalidSignatureError as exc:
                error = exc  # try the next key
            except (jwt.PyJWTError, ValueError, TypeError) as exc:
                raise TokenError(f"Invalid bearer token: {exc}") from None
        raise TokenError(f"Invalid bearer token: {error}")

    async def _keys(self, kid: str | None) -> list[Key]:
        keys: list[Key] = list(self._file.get()) if self._file is not None else []
        if self.jwks_url:
            age = time.monotonic() - self._fetched_at
            known = any(k.kid == kid for k in self._remote)
            if age > _JWKS_TTL or (kid is not None and not known and age > _REFETCH_INTERVAL):
                await self._fetch()
            keys += self._remote
        if kid is not None:
            chosen = [k for k in keys if k.kid == kid]
            if chosen:
                return chosen
            return [k for k in keys if k.kid is None]
        return keys

    async def _fetch(self) -> None:
        async with self._fetch_lock:
            if time.monotonic() - self._fetched_at < 1.0:
                return  # another request just fetched
            try:
                async with httpx.AsyncClient(timeout=5.0) as client:
                    response = await client.get(self.jwks_url)
                    response.raise_for_status()
                self._remote = parse_keys(response.text)
            except (httpx.HTTPError, ValueError) as exc:
                log.warning("could not fetch the JWKS at %s: %s", self.jwks_url, exc)
            finally:
                self._fetched_at = time.monotonic()

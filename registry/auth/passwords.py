"""Salted password hashes (scrypt) and the users file of HTTP Basic authentication.

The users file has one ``name:hash`` per line (``#`` starts a comment), the hash as written by
``schema-registry user add``::

    alice:scrypt$16384$8$1$<salt base64>$<hash base64>

Verifying a scrypt hash costs tens of milliseconds by design, so a successful verification is
remembered (keyed by a keyed digest of the whole ``Authorization`` value, never the password
itself) until the users file changes: later requests cost a dictionary lookup.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections import Counter
from collections.abc import Mapping

SCHEME = "scrypt"
#: CPU/memory cost, block size, parallelism: about 30 ms and 16 MiB per verification
N, R, P = 2**14, 8, 1


def hash_password(password: str, *, n: int = N, r: int = R, p: int = P) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=2**27, dklen=32)
    return "$".join(
        (SCHEME, str(n), str(r), str(p), _b64(salt), _b64(digest)),
    )


def verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = encoded.split("$")
        if scheme != SCHEME:
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            maxmem=2**27,
            dklen=len(expected),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def decoy(users: Mapping[str, str]) -> str:
    """A hash no password matches, with the cost parameters (N, r, p and digest length) most
    of ``users``' hashes have: verifying an unknown user's password against it costs what
    verifying a known user's does, so the time of a 401 does not tell which names exist."""
    shapes = Counter(_shape(encoded) for encoded in users.values())
    n, r, p, length = shapes.most_common(1)[0][0] if shapes else (N, R, P, 32)
    return "$".join(
        (
            SCHEME,
            str(n),
            str(r),
            str(p),
            _b64(secrets.token_bytes(16)),
            _b64(secrets.token_bytes(length)),
        )
    )


def _shape(encoded: str) -> tuple[int, int, int, int]:
    _, n, r, p, _, digest = encoded.split("$")
    return int(n), int(r), int(p), len(base64.b64decode(digest))


def check_hash(encoded: str) -> None:
    """Raise ``ValueError`` unless ``encoded`` is a hash this module writes."""
    parts = encoded.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        raise ValueError(f"not a {SCHEME}$N$r$p$salt$hash password hash")
    try:
        int(parts[1]), int(parts[2]), int(parts[3])
        base64.b64decode(parts[4], validate=True)
        base64.b64decode(parts[5], validate=True)
    except ValueError as exc:
        raise ValueError(f"malformed password hash: {exc}") from None


def parse_users(text: str) -> dict[str, str]:
    """``name -> hash`` from the users file's text; ``ValueError`` naming the bad line."""
    users: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, encoded = line.partition(":")
        if not sep or not name:
            raise ValueError(f"line {number}: expected name:hash")
        try:
            check_hash(encoded.strip())
        except ValueError as exc:
            raise ValueError(f"line {number} ({name}): {exc}") from None
        users[name] = encoded.strip()
    return users


def set_user(path: str, name: str, password: str) -> bool:
    """Add ``name`` to the users file at ``path`` or change its password (the file is replaced
    atomically, so a running server never reads half of it). Returns whether it was new."""
    if not name or ":" in name or any(c.isspace() for c in name):
        raise ValueError("a user name must be non-empty, without ':' or spaces")
    lines: list[str] = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    entry = f"{name}:{hash_password(password)}"
    new = True
    for i, line in enumerate(lines):
        if line.strip().partition(":")[0] == name and not line.lstrip().startswith("#"):
            lines[i] = entry
            new = False
    if new:
        lines.append(entry)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return new


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")

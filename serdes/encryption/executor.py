"""The ENCRYPT (field-level) and ENCRYPT_PAYLOAD rule executors, with confluent-kafka 2.16's
semantics and wire format (``rules/encryption/encrypt_executor.py``).

Rule parameters: ``encrypt.kek.name`` (required), ``encrypt.kms.type`` and
``encrypt.kms.key.id`` (to create the KEK on first produce), ``encrypt.dek.algorithm``
(``AES256_GCM`` default, ``AES128_GCM``, ``AES256_SIV`` deterministic),
``encrypt.dek.expiry.days`` (rotate: a new DEK version once the latest is older; ciphertexts
then carry a 5-byte prefix, 0x00 + the DEK version big-endian), ``encrypt.alternate.kms.key.ids``
(KEK fallbacks). KMS credentials and the local KMS ``secret`` come from the serde's
``rule_conf`` or the KEK's ``kmsProps``.

On write a field (STRING or BYTES) is encrypted with the subject's DEK (created, wrapped by
the KEK through the KMS, and registered on first use; unwrapped by the registry for a shared
KEK); a STRING becomes the base64 of the ciphertext. On read the DEK is looked up (deleted ones
too) and the field decrypted.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from serdes.encryption import kms, tink
from serdes.encryption.dek_client import Dek, DekRegistryClient, Kek
from serdes.errors import SchemaRegistryError
from serdes.rules.context import (
    FieldContext,
    FieldRuleExecutor,
    FieldTransform,
    FieldType,
    RuleContext,
    RuleError,
    RuleExecutor,
)
from serdes.rules.model import RuleMode
from serdes.rules.registry import RuleRegistry

__all__ = [
    "Clock",
    "EncryptionExecutor",
    "FieldEncryptionExecutor",
]

log = logging.getLogger(__name__)

ENCRYPT_KEK_NAME = "encrypt.kek.name"
ENCRYPT_KMS_KEY_ID = "encrypt.kms.key.id"
ENCRYPT_KMS_TYPE = "encrypt.kms.type"
ENCRYPT_DEK_ALGORITHM = "encrypt.dek.algorithm"
ENCRYPT_DEK_EXPIRY_DAYS = "encrypt.dek.expiry.days"
ENCRYPT_ALTERNATE_KMS_KEY_IDS = "encrypt.alternate.kms.key.ids"

MILLIS_IN_DAY = 24 * 60 * 60 * 1000
EMPTY_AAD = b""
_VERSION_PREFIX = 0  # magic byte before the DEK version of a rotated DEK's ciphertext


def context_of(subject: str | None) -> str | None:
    """The context of a qualified subject ``:.ctx:name`` (None for the default one)."""
    if subject is None or not subject.startswith(":."):
        return None
    end = subject.find(":", 2)
    context = subject[1:end] if end >= 0 else subject[1:]
    return None if context == "." else context


class Clock:
    """Milliseconds since the epoch (replaced in tests of DEK expiry)."""

    def now(self) -> int:
        return time.time_ns() // 1_000_000


class EncryptionExecutor(RuleExecutor):
    """``ENCRYPT_PAYLOAD``: the whole encoded payload, as bytes."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.client: DekRegistryClient | None = None
        self.config: dict[str, Any] | None = None
        self.clock = clock or Clock()
        self._lock = threading.Lock()
        #: (rule, target schema) -> (rule, target, algorithm, kek name, expiry days): the
        #: parameters of a rule on a schema, read once (both objects live as long as a serde)
        self._params: dict[tuple[int, int], tuple[Any, Any, str, str, int]] = {}
        #: (kek, subject, algorithm, version, read) -> the DEK and its cipher, once fetched,
        #: unwrapped and checked (the DEK client caches the same DEKs for ever too)
        self._ready: dict[tuple[str, str, str, int, bool], tuple[Dek, tink.Cipher]] = {}

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        with self._lock:
            if client_conf:
                if self.client is not None:
                    if self.client.config() != client_conf:
                        raise RuleError("executor already configured")
                else:
                    self.client = DekRegistryClient.new_client(client_conf)
            if self.config:
                for key, value in (rule_conf or {}).items():
                    current = self.config.get(key)
                    if current is None:
                        self.config[key] = value
                    elif current != value:
                        raise RuleError(f"rule config key already set: {key}")
            else:
                self.config = dict(rule_conf) if rule_conf else {}

    def type(self) -> str:
        return "ENCRYPT_PAYLOAD"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        return self.new_transform(ctx).transform(ctx, FieldType.BYTES, message)

    def new_transform(self, ctx: RuleContext) -> EncryptionTransform:
        key = (id(ctx.rule), id(ctx.target))
        known = self._params.get(key)
        if known is not None and known[0] is ctx.rule and known[1] is ctx.target:
            return EncryptionTransform(self, known[2], known[3], known[4])
        transform = self._new_transform(ctx)
        if len(self._params) > 1000:
            self._params.clear()
        self._params[key] = (
            ctx.rule,
            ctx.target,
            transform._algorithm,
            transform._kek_name,
            transform._expiry_days,
        )
        return transform

    def _new_transform(self, ctx: RuleContext) -> EncryptionTransform:
        algorithm = ctx.get_parameter(ENCRYPT_DEK_ALGORITHM) or tink.AES256_GCM
        if algorithm not in tink.ALGORITHMS:
            raise RuleError("invalid dek algorithm")
        kek_name = ctx.get_parameter(ENCRYPT_KEK_NAME)
        if kek_name is None:
            raise RuleError("no kek name found")
        if kek_name == "":
            raise RuleError("empty kek name")
        return EncryptionTransform(self, algorithm, kek_name, _expiry_days(ctx))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    @classmethod
    def register(cls) -> None:
        RuleRegistry.register_rule_executor(cls())

    @classmethod
    def register_with_clock(cls, clock: Clock) -> EncryptionExecutor:
        executor = cls(clock)
        RuleRegistry.register_rule_executor(executor)
        return executor


def _expiry_days(ctx: RuleContext) -> int:
    text = ctx.get_parameter(ENCRYPT_DEK_EXPIRY_DAYS)
    if text is None:
        return 0
    try:
        days = int(text)
    except ValueError:
        raise RuleError("invalid expiry days") from None
    if days < 0:
        raise RuleError("negative expiry days")
    return days


class EncryptionTransform:
    """One message's encryption work: the KEK, the DEK of the right version, the cipher."""

    __slots__ = ("_algorithm", "_executor", "_expiry_days", "_kek", "_kek_name")

    def __init__(
        self, executor: EncryptionExecutor, algorithm: str, kek_name: str, expiry_days: int
    ) -> None:
        self._executor = executor
        self._algorithm = algorithm
        self._kek_name = kek_name
        self._expiry_days = expiry_days
        self._kek: Kek | None = None

    # -- the KEK ----------------------------------------------------------------------------

    def _client(self) -> DekRegistryClient:
        client = self._executor.client
        if client is None:
            raise RuleError("client not configured")
        return client

    def _get_kek(self, ctx: RuleContext) -> Kek:
        if self._kek is None:
            self._kek = self._get_or_create_kek(ctx)
        return self._kek

    def _get_or_create_kek(self, ctx: RuleContext) -> Kek:
        is_read = ctx.rule_mode == RuleMode.READ
        kms_type = ctx.get_parameter(ENCRYPT_KMS_TYPE)
        kms_key_id = ctx.get_parameter(ENCRYPT_KMS_KEY_ID)
        context = context_of(ctx.subject)
        kek = self._fetch_kek(context)
        if kek is None:
            if is_read:
                raise RuleError(f"no kek found for {self._kek_name} during consume")
            if not kms_type:
                raise RuleError(f"no kms type found for {self._kek_name} during produce")
            if not kms_key_id:
                raise RuleError(f"no kms key id found for {self._kek_name} during produce")
            kek = self._store_kek(kms_type, kms_key_id, context) or self._fetch_kek(context)
            if kek is None:
                raise RuleError(f"no kek found for {self._kek_name} during produce")
        if kms_type and kek.kms_type != kms_type:
            raise RuleError(
                f"found {self._kek_name} with kms type {kek.kms_type} which differs from rule "
                f"kms type {kms_type}"
            )
        if kms_key_id and kek.kms_key_id != kms_key_id:
            raise RuleError(
                f"found {self._kek_name} with kms key id {kek.kms_key_id} which differs from "
                f"rule kms key id {kms_key_id}"
            )
        return kek

    def _fetch_kek(self, context: str | None) -> Kek | None:
        try:
            return self._client().get_kek(self._kek_name, False, context)
        except SchemaRegistryError as exc:
            if exc.http_status_code == 404:
                return None
            raise RuleError(f"could not get kek {self._kek_name}") from exc
        except RuleError:
            raise
        except Exception as exc:
            raise RuleError(f"could not get kek {self._kek_name}") from exc

    def _store_kek(self, kms_type: str, kms_key_id: str, context: str | None) -> Kek | None:
        try:
            return self._client().register_kek(
                self._kek_name, kms_type, kms_key_id, False, context=context
            )
        except SchemaRegistryError as exc:
            if exc.http_status_code == 409:
                return None
            raise RuleError(f"could not register kek {self._kek_name}") from exc

    # -- the DEK ----------------------------------------------------------------------------

    def _kek_aead(self, kek: Kek) -> _KekAead:
        return _KekAead(self._executor.config or {}, kek)

    def _get_or_create_dek(self, ctx: RuleContext, version: int | None) -> Dek:
        kek = self._get_kek(ctx)
        is_read = ctx.rule_mode == RuleMode.READ
        if not version:
            version = 1
        subject = ctx.subject or ""
        dek = self._fetch_dek(kek, subject, version, is_read)
        expired = self._is_expired(ctx, dek)
        aead: _KekAead | None = None
        if dek is None or expired:
            if is_read:
                raise RuleError(f"no dek found for {kek.name} during consume")
            wrapped: bytes | None = None
            if not kek.shared:
                aead = self._kek_aead(kek)
                wrapped = aead.encrypt(tink.new_key(self._algorithm), EMPTY_AAD)
            new_version = 1
            if dek is not None and dek.version is not None and expired:
                new_version = dek.version + 1
            try:
                dek = self._create_dek(kek, subject, version, new_version, wrapped, is_read)
            except RuleError:
                if dek is None:
                    raise
                log.warning(
                    "failed to create dek for %s, subject %s, version %d, using existing dek",
                    kek.name,
                    subject,
                    new_version,
                )
        if dek.get_key_material_bytes() is None:
            if aead is None:
                aead = self._kek_aead(kek)
            encrypted = dek.get_encrypted_key_material_bytes()
            if encrypted is None:
                raise RuleError(f"dek for {kek.name} has no key material")
            dek.set_key_material(aead.decrypt(encrypted, EMPTY_AAD))
        return dek

    def _fetch_dek(self, kek: Kek, subject: str, version: int, deleted: bool) -> Dek | None:
        try:
            dek = self._client().get_dek(str(kek.name), subject, self._algorithm, version, deleted)
        except SchemaRegistryError as exc:
            if exc.http_status_code == 404:
                return None
            raise RuleError(f"could not get dek for kek {kek.name}, subject {subject}") from exc
        return dek if dek.encrypted_key_material else None

    def _create_dek(
        self,
        kek: Kek,
        subject: str,
        version: int,
        new_version: int,
        wrapped: bytes | None,
        deleted: bool,
    ) -> Dek:
        material = base64.b64encode(wrapped).decode() if wrapped else None
        try:
            dek: Dek | None = self._client().register_dek(
                str(kek.name), subject, material, self._algorithm, new_version
            )
        except SchemaRegistryError as exc:
            if exc.http_status_code != 409:
                raise RuleError(
                    f"could not register dek for kek {kek.name}, subject {subject}"
                ) from exc
            dek = None
        if dek is None:  # another producer won the race: use its DEK
            dek = self._fetch_dek(kek, subject, version, deleted)
        if dek is None:
            raise RuleError(f"no dek found for {kek.name} during produce")
        return dek

    def _is_expired(self, ctx: RuleContext, dek: Dek | None) -> bool:
        return (
            ctx.rule_mode != RuleMode.READ
            and self._expiry_days > 0
            and dek is not None
            and (self._executor.clock.now() - (dek.ts or 0)) / MILLIS_IN_DAY > self._expiry_days
        )

    # -- values ------------------------------------------------------------------------------

    def transform(self, ctx: RuleContext, field_type: FieldType, value: Any) -> Any:
        if value is None:
            return None
        rotated = self._expiry_days > 0
        if ctx.rule_mode == RuleMode.WRITE:
            plaintext = _to_bytes(field_type, value)
            if plaintext is None:
                raise RuleError(f"type {field_type} not supported for encryption")
            dek, box = self._prepared(ctx, -1 if rotated else 1, False)
            ciphertext = box.encrypt(plaintext, EMPTY_AAD)
            if rotated:
                if dek.version is None:
                    raise RuleError("no version found for dek")
                ciphertext = bytes([_VERSION_PREFIX]) + dek.version.to_bytes(4, "big") + ciphertext
            if field_type == FieldType.STRING:
                return base64.b64encode(ciphertext).decode()
            return ciphertext
        if ctx.rule_mode == RuleMode.READ:
            if field_type == FieldType.STRING:
                ciphertext_in: bytes | None = base64.b64decode(value)
            else:
                ciphertext_in = _to_bytes(field_type, value)
            if ciphertext_in is None:
                return value
            version = None
            if rotated:
                if len(ciphertext_in) < 5:
                    raise RuleError("no version found in ciphertext")
                version = int.from_bytes(ciphertext_in[1:5], "big")
                ciphertext_in = ciphertext_in[5:]
            _, box = self._prepared(ctx, version or 1, True)
            try:
                plaintext = box.decrypt(ciphertext_in, EMPTY_AAD)
            except tink.CryptoError as exc:
                raise RuleError(str(exc)) from exc
            return plaintext.decode() if field_type == FieldType.STRING else plaintext
        raise RuleError(f"unsupported rule mode {ctx.rule_mode}")

    def _prepared(self, ctx: RuleContext, version: int, read: bool) -> tuple[Dek, tink.Cipher]:
        """The DEK of ``version`` (-1: the latest) and its cipher; fetched, created or
        unwrapped the first time, and again on write once the DEK has expired."""
        ready = self._executor._ready
        key = (self._kek_name, ctx.subject or "", self._algorithm, version, read)
        found = ready.get(key)
        if found is not None and not self._is_expired(ctx, found[0]):
            return found
        dek = self._get_or_create_dek(ctx, version)
        found = (dek, self._cipher(dek))
        if len(ready) > 10_000:
            ready.clear()
        ready[key] = found
        return found

    def _cipher(self, dek: Dek) -> tink.Cipher:
        raw = dek.get_key_material_bytes()
        if raw is None:
            raise RuleError("no key material bytes found for dek")
        try:
            return tink.cipher(self._algorithm, raw)
        except tink.CryptoError as exc:
            raise RuleError(str(exc)) from exc


def _to_bytes(field_type: FieldType, value: Any) -> bytes | None:
    if field_type == FieldType.STRING:
        return str(value).encode()
    if field_type == FieldType.BYTES:
        if hasattr(value, "read"):
            return bytes(value.read())
        return bytes(value)
    return None


class _KekAead:
    """The KEK's AEAD through the KMS: its key id, then the alternate ones, in turn."""

    def __init__(self, config: Mapping[str, Any], kek: Kek) -> None:
        self._kek = kek
        self._config = {**config, **(kek.kms_props or {})}
        ids = [str(kek.kms_key_id)]
        alternates = (kek.kms_props or {}).get(ENCRYPT_ALTERNATE_KMS_KEY_IDS)
        if alternates is None:
            alternates = config.get(ENCRYPT_ALTERNATE_KMS_KEY_IDS)
        if alternates:
            ids.extend(i.strip() for i in str(alternates).split(",") if i.strip())
        self._ids = ids

    def _each(self, action: str, run: Any) -> bytes:
        if self._kek.kms_type is None:
            raise RuleError("no kms type found for kek")
        last: Exception | None = None
        for key_id in self._ids:
            try:
                result: bytes = run(kms.aead_for(self._kek.kms_type, key_id, self._config))
                return result
            except Exception as exc:
                log.warning(
                    "failed to %s with kek %s and kms key id %s", action, self._kek.name, key_id
                )
                last = exc
        raise RuleError(f"failed to {action} with all KEKs for {self._kek.name}") from last

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        return self._each("encrypt", lambda a: a.encrypt(plaintext, associated_data))

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        return self._each("decrypt", lambda a: a.decrypt(ciphertext, associated_data))


class FieldEncryptionExecutor(FieldRuleExecutor):
    """``ENCRYPT``: each STRING or BYTES field the rule's tags select."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.executor = EncryptionExecutor(clock)

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:
        self.executor.configure(client_conf, rule_conf)

    def type(self) -> str:
        return "ENCRYPT"

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        transform = self.executor.new_transform(ctx)

        def run(ctx: RuleContext, field_ctx: FieldContext, value: Any) -> Any:
            return transform.transform(ctx, field_ctx.field_type, value)

        return run

    def close(self) -> None:
        self.executor.close()

    @classmethod
    def register(cls) -> None:
        RuleRegistry.register_rule_executor(cls())

    @classmethod
    def register_with_clock(cls, clock: Clock) -> FieldEncryptionExecutor:
        executor = cls(clock)
        RuleRegistry.register_rule_executor(executor)
        return executor

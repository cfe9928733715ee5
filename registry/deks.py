"""DEK registry operations with the semantics of Confluent's ``DekRegistry``: KEKs and their
DEKs, versions, soft and permanent deletes, undeletes, and shared KEKs (the registry itself
generates and unwraps the DEKs of a KEK marked ``shared``, through the KMS drivers of
:mod:`serdes.encryption`).

Every change is a record appended through :meth:`registry.core.Registry.write`; reads are
answered from ``state.encryption_keys`` (:class:`registry.dek_records.KeyIndex`).
"""

from __future__ import annotations

import base64
import os
import unicodedata
from typing import Any

from registry import errors
from registry.core import Draft, Registry
from registry.dek_records import (
    ALGORITHMS,
    DEFAULT_ALGORITHM,
    MIN_VERSION,
    Dek,
    Kek,
    KeyIndex,
    dek_key,
    kek_key,
)

NAME_MAX_LENGTH = 64


# ---- Confluent's DekRegistryErrors ------------------------------------------------------------


def key_not_found(name: str) -> errors.RegistryError:
    return errors.RegistryError(40470, f"Key '{name}' not found")


def key_not_soft_deleted(name: str) -> errors.RegistryError:
    return errors.RegistryError(
        40471, f"Key '{name}' was not deleted first before being permanently deleted"
    )


def key_soft_deleted(name: str) -> errors.RegistryError:
    return errors.RegistryError(40472, f"Key '{name}' must be undeleted first")


def already_exists(name: str) -> errors.RegistryError:
    return errors.RegistryError(40971, f"Key '{name}' already exists; use a different value")


def invalid_key(field: str) -> errors.RegistryError:
    """Confluent's ``RestInvalidKeyException``: the message is the offending field's name."""
    return errors.RegistryError(42271, field)


def reference_exists(name: str) -> errors.RegistryError:
    return errors.RegistryError(42272, f"One or more references exist to the key {name}")


def dek_generation_failed(message: str) -> errors.RegistryError:
    return errors.RegistryError(50070, message)


def too_many_keys(max_keys: int) -> errors.RegistryError:
    return errors.RegistryError(40972, f"A maximum of {max_keys} keys already exist")


# ---- validation (DekRegistryResource.checkName / checkSubject) --------------------------------


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name or len(name) > NAME_MAX_LENGTH:
        raise invalid_key("name")
    if not (name[0].isalpha() or name[0] == "_"):
        raise invalid_key("name")
    if any(not (c.isalnum() or c in "_-") for c in name[1:]):
        raise invalid_key("name")
    return name


def check_subject(subject: Any) -> str:
    if (
        not isinstance(subject, str)
        or not subject
        or any(unicodedata.category(c) == "Cc" for c in subject)
    ):
        raise invalid_key("subject")
    return subject


def algorithm_param(value: str | None) -> str:
    """The ``algorithm`` query parameter: a ``DekFormat`` name; Jersey answers 404 for a query
    parameter its enum cannot hold."""
    if value is None or value == "":
        return DEFAULT_ALGORITHM
    if value not in ALGORITHMS:
        raise errors.RegistryError(404, "HTTP 404 Not Found")
    return value


def _index(reg: Registry) -> KeyIndex:
    return reg.state.encryption_keys


def check_room(reg: Registry, kind: str) -> None:
    """Confluent's cap (``dek.registry.max.keys``): a KEK or DEK is refused once more than the
    maximum of that kind are stored, soft-deleted ones included (Confluent compares its count
    with ``>``, so the maximum plus one can exist)."""
    index = _index(reg)
    if kind == "KEK":
        count = len(index.keks)
    else:
        count = sum(len(versions) for versions in index.deks.values())
    limit = reg.settings.dek_registry_max_keys
    if count > limit:
        raise too_many_keys(limit)


def _kek_or_404(reg: Registry, name: str, deleted: bool) -> Kek:
    kek = _index(reg).kek(name, deleted)
    if kek is None:
        raise key_not_found(name)
    return kek


# ---- KEKs -----------------------------------------------------------------------------------


def list_keks(reg: Registry, deleted: bool) -> list[str]:
    return _index(reg).kek_names(deleted)


def get_kek(reg: Registry, name: str, deleted: bool) -> dict[str, Any]:
    return _kek_or_404(reg, check_name(name), deleted).entity()


def create_kek(reg: Registry, body: dict[str, Any]) -> dict[str, Any]:
    name = check_name(body.get("name"))
    kms_key_id = body.get("kmsKeyId")
    if not isinstance(kms_key_id, str) or not kms_key_id:
        raise invalid_key("kmsKeyId")
    kms_type = body.get("kmsType")
    if not isinstance(kms_type, str):
        raise invalid_key("kmsType")
    new = Kek(
        name=name,
        kms_type=normalize_kms_type(kms_type),
        kms_key_id=kms_key_id,
        kms_props=_props(body.get("kmsProps")),
        doc=_optional_str(body, "doc"),
        shared=bool(body.get("shared") or False),
        deleted=bool(body.get("deleted") or False),
    )

    def decide() -> tuple[list[Draft], None]:
        check_room(reg, "KEK")
        old = _index(reg).keks.get(name)
        # creating a soft-deleted KEK again with the same content undeletes it
        if old is not None and (old.deleted == new.deleted or not old.equivalent(new)):
            raise already_exists(name)
        return [(kek_key(name), new.value())], None

    reg.write(decide)
    return _kek_or_404(reg, name, True).entity()


def update_kek(reg: Registry, name: str, body: dict[str, Any]) -> dict[str, Any]:
    check_name(name)

    def decide() -> tuple[list[Draft], None]:
        old = _index(reg).kek(name, False)
        if old is None:
            raise key_not_found(name)
        props = body.get("kmsProps")
        shared = body.get("shared")
        new = Kek(
            name=name,
            kms_type=old.kms_type,
            kms_key_id=old.kms_key_id,
            kms_props=_props(props) if props is not None else old.kms_props,
            doc=_optional_str(body, "doc") if body.get("doc") is not None else old.doc,
            shared=bool(shared) if shared is not None else old.shared,
            deleted=False,
        )
        if new.equivalent(old):
            return [], None
        return [(kek_key(name), new.value())], None

    reg.write(decide)
    return _kek_or_404(reg, name, False).entity()


def delete_kek(reg: Registry, name: str, permanent: bool) -> None:
    check_name(name)

    def decide() -> tuple[list[Draft], None]:
        index = _index(reg)
        old = index.kek(name, True)
        if old is None:
            raise key_not_found(name)
        # a soft delete needs every DEK soft-deleted first; a permanent one needs them gone
        if index.deks_of(name, permanent):
            raise reference_exists(name)
        if permanent:
            if not old.deleted:
                raise key_not_soft_deleted(name)
            return [(kek_key(name), None)], None
        if old.deleted:
            return [], None
        return [(kek_key(name), _replace_kek(old, deleted=True).value())], None

    reg.write(decide)


def undelete_kek(reg: Registry, name: str) -> None:
    check_name(name)

    def decide() -> tuple[list[Draft], None]:
        old = _index(reg).kek(name, True)
        if old is None:
            raise key_not_found(name)
        if not old.deleted:
            return [], None
        return [(kek_key(name), _replace_kek(old, deleted=False).value())], None

    reg.write(decide)


def normalize_kms_type(kms_type: str) -> str:
    lowered = kms_type.lower()
    for prefix, name in (("aws", "aws-kms"), ("azure", "azure-kms"), ("gcp", "gcp-kms")):
        if lowered.startswith(prefix):
            return name
    return kms_type


# ---- DEKs -----------------------------------------------------------------------------------


def list_dek_subjects(reg: Registry, kek_name: str, deleted: bool) -> list[str]:
    _kek_or_404(reg, check_name(kek_name), deleted)
    return sorted({d.subject for d in _index(reg).deks_of(kek_name, deleted)})


def list_dek_versions(
    reg: Registry, kek_name: str, subject: str, algorithm: str, deleted: bool
) -> list[int]:
    check_name(kek_name)
    check_subject(subject)
    _kek_or_404(reg, kek_name, deleted)
    return [d.version for d in _index(reg).versions(kek_name, subject, algorithm, deleted)]


def get_dek(
    reg: Registry, kek_name: str, subject: str, version: int, algorithm: str, deleted: bool
) -> dict[str, Any]:
    check_name(kek_name)
    check_subject(subject)
    kek = _kek_or_404(reg, kek_name, deleted)
    dek = _index(reg).dek(kek_name, subject, algorithm, version, deleted)
    if dek is None:
        raise key_not_found(subject)
    return dek.entity(_raw_material(kek, dek) if kek.shared else None)


def create_dek(
    reg: Registry, kek_name: str, body: dict[str, Any], subject: str | None = None
) -> dict[str, Any]:
    check_name(kek_name)
    subject = check_subject(subject if subject is not None else body.get("subject"))
    deleted = bool(body.get("deleted") or False)
    kek = _kek_or_404(reg, kek_name, deleted)
    algorithm = body.get("algorithm") or DEFAULT_ALGORITHM
    if algorithm not in ALGORITHMS:
        raise errors.RegistryError(400, f"Unknown DEK algorithm {algorithm!r}")
    version = body.get("version")
    if version is None:
        version = MIN_VERSION
    if isinstance(version, bool) or not isinstance(version, int) or version < MIN_VERSION:
        raise errors.invalid_version(str(version))
    material = body.get("encryptedKeyMaterial")
    if material is not None and not isinstance(material, str):
        raise invalid_key("encryptedKeyMaterial")
    if material is None:
        if not kek.shared:
            raise invalid_key("encryptedKeyMaterial")
        check_room(reg, "DEK")  # before asking the KMS for a key that would be refused
        material = _generate_encrypted_dek(kek, algorithm, subject)
    new = Dek(kek_name, subject, algorithm, version, material, deleted)

    def decide() -> tuple[list[Draft], None]:
        check_room(reg, "DEK")
        old = _index(reg).dek(kek_name, subject, algorithm, version, True)
        if old is not None and (old.deleted == new.deleted or not old.equivalent(new)):
            raise already_exists(subject)
        return [(dek_key(*new.identity), new.value())], None

    reg.write(decide)
    stored = _index(reg).dek(kek_name, subject, algorithm, version, True)
    assert stored is not None
    raw = None
    if kek.shared and reg.effective_mode(subject) != "IMPORT":
        raw = _raw_material(kek, stored)
    return stored.entity(raw)


def delete_deks(
    reg: Registry,
    kek_name: str,
    subject: str,
    version: int | None,
    algorithm: str,
    permanent: bool,
) -> None:
    """Soft- or permanently delete one version (``version``) or all versions of a DEK."""
    check_name(kek_name)
    check_subject(subject)

    def decide() -> tuple[list[Draft], None]:
        index = _index(reg)
        if index.kek(kek_name, True) is None:
            raise key_not_found(kek_name)
        targets = _targets(index, kek_name, subject, version, algorithm)
        drafts: list[Draft] = []
        for dek in targets:
            if permanent:
                if not dek.deleted:
                    raise key_not_soft_deleted(subject)
                drafts.append((dek_key(*dek.identity), None))
            elif not dek.deleted:
                drafts.append((dek_key(*dek.identity), _replace_dek(dek, True).value()))
        return drafts, None

    reg.write(decide)


def undelete_deks(
    reg: Registry, kek_name: str, subject: str, version: int | None, algorithm: str
) -> None:
    check_name(kek_name)
    check_subject(subject)

    def decide() -> tuple[list[Draft], None]:
        index = _index(reg)
        kek = index.kek(kek_name, True)
        if kek is None:
            raise key_not_found(kek_name)
        targets = _targets(index, kek_name, subject, version, algorithm)
        if kek.deleted:
            raise key_soft_deleted(kek_name)
        drafts: list[Draft] = [
            (dek_key(*d.identity), _replace_dek(d, False).value()) for d in targets if d.deleted
        ]
        return drafts, None

    reg.write(decide)


def _targets(
    index: KeyIndex, kek_name: str, subject: str, version: int | None, algorithm: str
) -> list[Dek]:
    if version is None:
        found = index.versions(kek_name, subject, algorithm, True)
    else:
        one = index.dek(kek_name, subject, algorithm, version, True)  # LATEST: the newest
        found = [one] if one is not None else []
    if not found:
        raise key_not_found(subject)
    return found


def _replace_kek(kek: Kek, deleted: bool) -> Kek:
    return Kek(kek.name, kek.kms_type, kek.kms_key_id, kek.kms_props, kek.doc, kek.shared, deleted)


def _replace_dek(dek: Dek, deleted: bool) -> Dek:
    return Dek(
        dek.kek_name, dek.subject, dek.algorithm, dek.version, dek.encrypted_key_material, deleted
    )


def _props(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise errors.RegistryError(400, "kmsProps must be an object of strings")
    return {str(k): str(v) for k, v in sorted(value.items())}


def _optional_str(body: dict[str, Any], field: str) -> str | None:
    value = body.get(field)
    if value is not None and not isinstance(value, str):
        raise errors.RegistryError(400, f"{field} must be a string")
    return value


# ---- shared KEKs: the registry wraps and unwraps DEKs with the KMS --------------------------


def _kek_aead(kek: Kek) -> Any:
    from serdes.encryption.kms import aead_for

    config: dict[str, str] = {}
    secret = os.environ.get("LOCAL_SECRET")
    if secret:
        config["secret"] = secret
    config.update(kek.kms_props)
    return aead_for(kek.kms_type, kek.kms_key_id, config)


def _generate_encrypted_dek(kek: Kek, algorithm: str, subject: str) -> str:
    from serdes.encryption.tink import new_key

    try:
        wrapped = _kek_aead(kek).encrypt(new_key(algorithm), b"")
    except Exception as exc:
        raise dek_generation_failed(
            f"Could not generate encrypted dek for {subject}: {exc}"
        ) from exc
    return base64.b64encode(wrapped).decode()


def _raw_material(kek: Kek, dek: Dek) -> str | None:
    if dek.encrypted_key_material is None:
        return None
    try:
        raw = _kek_aead(kek).decrypt(base64.b64decode(dek.encrypted_key_material), b"")
    except Exception as exc:
        raise dek_generation_failed(f"Could not generate raw dek for {dek.subject}: {exc}") from exc
    return base64.b64encode(raw).decode()

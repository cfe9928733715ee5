"""The Tink formats Confluent's DEKs use, on ``cryptography``'s ciphers.

A DEK's key material is a serialized Tink key proto, and its ciphertexts use Tink's RAW output
prefix (no 5-byte key-id prefix):

* ``AES128_GCM`` / ``AES256_GCM``: ``AesGcmKey{version=1: uint32, key_value=3: bytes}``;
  ciphertext = 12-byte random IV || ciphertext || 16-byte tag;
* ``AES256_SIV`` (deterministic): ``AesSivKey{version=1, key_value=2}`` with a 64-byte key;
  ciphertext = 16-byte synthetic IV || ciphertext, the associated data one S2V component.

These are small enough to write here, and ``cryptography`` is several times faster per call
than going through Tink's key registry.
"""

from __future__ import annotations

import os
from functools import lru_cache

from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESSIV

AES128_GCM = "AES128_GCM"
AES256_GCM = "AES256_GCM"
AES256_SIV = "AES256_SIV"
ALGORITHMS = (AES128_GCM, AES256_GCM, AES256_SIV)

_KEY_SIZES = {AES128_GCM: 16, AES256_GCM: 32, AES256_SIV: 64}
#: proto field number of ``key_value`` in AesGcmKey / AesSivKey
_KEY_FIELD = {AES128_GCM: 3, AES256_GCM: 3, AES256_SIV: 2}
GCM_IV_SIZE = 12


class CryptoError(Exception):
    """Key material or a ciphertext that cannot be used."""


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def serialize_key(algorithm: str, raw: bytes) -> bytes:
    """The Tink key proto of ``algorithm`` holding ``raw`` (version 0, so field 1 is omitted,
    as protobuf serialises a proto3 default)."""
    tag = (_KEY_FIELD[algorithm] << 3) | 2
    return bytes([tag]) + _varint(len(raw)) + raw


def parse_key(algorithm: str, material: bytes) -> bytes:
    """The raw AES key inside a serialized AesGcmKey / AesSivKey."""
    if algorithm not in _KEY_SIZES:
        raise CryptoError(f"unknown DEK algorithm {algorithm}")
    want = _KEY_FIELD[algorithm]
    pos, found = 0, None
    try:
        while pos < len(material):
            key, pos = _read_varint(material, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                _, pos = _read_varint(material, pos)
            elif wire == 2:
                size, pos = _read_varint(material, pos)
                if pos + size > len(material):
                    raise CryptoError("truncated key material")
                if number == want:
                    found = material[pos : pos + size]
                pos += size
            else:
                raise CryptoError(f"unexpected wire type {wire} in key material")
    except IndexError:
        raise CryptoError("truncated key material") from None
    if found is None or len(found) != _KEY_SIZES[algorithm]:
        raise CryptoError(f"key material is not a {algorithm} key")
    return bytes(found)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise CryptoError("varint too long in key material")


def new_key(algorithm: str) -> bytes:
    """Fresh key material (a serialized Tink key proto) for ``algorithm``."""
    if algorithm not in _KEY_SIZES:
        raise CryptoError(f"unknown DEK algorithm {algorithm}")
    return serialize_key(algorithm, os.urandom(_KEY_SIZES[algorithm]))


class Cipher:
    """Encrypts and decrypts with one DEK's key material."""

    __slots__ = ("_gcm", "_siv", "algorithm", "deterministic")

    def __init__(self, algorithm: str, material: bytes) -> None:
        key = parse_key(algorithm, material)
        self.algorithm = algorithm
        self.deterministic = algorithm == AES256_SIV
        self._gcm = None if self.deterministic else AESGCM(key)
        self._siv = AESSIV(key) if self.deterministic else None

    def encrypt(self, plaintext: bytes, associated_data: bytes = b"") -> bytes:
        if self._siv is not None:
            return self._siv.encrypt(plaintext, [associated_data])
        assert self._gcm is not None
        iv = os.urandom(GCM_IV_SIZE)
        return iv + self._gcm.encrypt(iv, plaintext, associated_data)

    def decrypt(self, ciphertext: bytes, associated_data: bytes = b"") -> bytes:
        try:
            if self._siv is not None:
                return self._siv.decrypt(ciphertext, [associated_data])
            assert self._gcm is not None
            if len(ciphertext) < GCM_IV_SIZE + 16:
                raise CryptoError("ciphertext too short")
            return self._gcm.decrypt(
                ciphertext[:GCM_IV_SIZE], ciphertext[GCM_IV_SIZE:], associated_data
            )
        except CryptoError:
            raise
        except Exception as exc:  # cryptography's InvalidTag and friends
            raise CryptoError(f"decryption failed: {type(exc).__name__}") from exc


@lru_cache(maxsize=1024)
def cipher(algorithm: str, material: bytes) -> Cipher:
    """A (cached) :class:`Cipher` for key material."""
    return Cipher(algorithm, material)


class RawAesGcm:
    """An AEAD over a raw AES key (Tink's AES-GCM with the RAW prefix): the local KMS's KEK."""

    def __init__(self, key: bytes) -> None:
        self._cipher = Cipher(AES256_GCM if len(key) == 32 else AES128_GCM, _wrap(key))

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        return self._cipher.encrypt(plaintext, associated_data)

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        return self._cipher.decrypt(ciphertext, associated_data)


def _wrap(key: bytes) -> bytes:
    return serialize_key(AES256_GCM if len(key) == 32 else AES128_GCM, key)

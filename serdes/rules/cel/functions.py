"""The validation functions confluent-kafka adds to CEL (protovalidate's): ``isEmail``,
``isHostname``, ``isIpv4``, ``isIpv6``, ``isUri``, ``isUriRef``, ``isUuid``."""

from __future__ import annotations

import uuid
from email.utils import parseaddr
from ipaddress import IPv4Address, IPv6Address
from typing import Any
from urllib import parse as urlparse

__all__ = ["EXTRA_FUNCTIONS"]


def _hostname(host: str) -> bool:
    if not host or len(host) > 253:
        return False
    if host[-1] == ".":
        host = host[:-1]
    all_digits = True
    for part in host.split("."):
        if not 0 < len(part) <= 63 or part[0] == "-" or part[-1] == "-":
            return False
        all_digits = True
        for ch in part:
            if not (ch.isascii() and (ch.isalnum() or ch == "-")):
                return False
            all_digits = all_digits and "0" <= ch <= "9"
    return not all_digits


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: invalid argument, expected string")
    return value


def is_email(value: Any) -> bool:
    addr = _string(value, "isEmail")
    if parseaddr(addr)[1] != addr or len(addr) > 254:
        return False
    parts = addr.split("@")
    return len(parts) == 2 and len(parts[0]) <= 64 and _hostname(parts[1])


def is_hostname(value: Any) -> bool:
    return _hostname(_string(value, "isHostname"))


def _ip(value: Any, cls: type, name: str) -> bool:
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{name}: invalid argument, expected string or bytes")
    try:
        cls(value)
    except ValueError:
        return False
    return True


def is_ipv4(value: Any) -> bool:
    return _ip(value, IPv4Address, "isIpv4")


def is_ipv6(value: Any) -> bool:
    return _ip(value, IPv6Address, "isIpv6")


def is_uri(value: Any) -> bool:
    url = urlparse.urlparse(_string(value, "isUri"))
    return bool(url.scheme and url.netloc and url.path)


def is_uri_ref(value: Any) -> bool:
    url = urlparse.urlparse(_string(value, "isUriRef"))
    return not (not (url.scheme and url.path) and url.fragment)


def is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(_string(value, "isUuid"))
    except ValueError:
        return False
    return True


EXTRA_FUNCTIONS = {
    "isEmail": is_email,
    "isHostname": is_hostname,
    "isIpv4": is_ipv4,
    "isIpv6": is_ipv6,
    "isUri": is_uri,
    "isUriRef": is_uri_ref,
    "isUuid": is_uuid,
}

"""Which client class a registry URL's scheme selects: ``SchemaRegistryClient({"url":
"mock://..."})`` is the in-memory ``MockSchemaRegistryClient``, and the same for the DEK
registry client, as confluent-kafka's ``new_client`` does.

The real clients look their URL's scheme up here; the in-memory clients register themselves
(``serdes.mock_client``, ``serdes.encryption.mock_dek_client``, imported by their packages'
``__init__``), so a real client never imports its mock.
"""

from __future__ import annotations

from typing import Any

_by_scheme: dict[tuple[type, str], type] = {}


def register_scheme(base: type, scheme: str, client_class: type) -> None:
    """``base(conf)`` with a ``scheme://`` URL builds a ``client_class`` (a subclass of it)."""
    if not issubclass(client_class, base):
        raise TypeError(f"{client_class.__name__} is not a {base.__name__}")
    _by_scheme[(base, scheme.lower())] = client_class


def client_class(base: type, conf: Any) -> type:
    """The class ``base(conf)`` builds: the one registered for the URL's scheme, else ``base``."""
    url = conf.get("url") if isinstance(conf, dict) else None
    if not isinstance(url, str) or "://" not in url:
        return base
    scheme = url.strip().split("://", 1)[0].lower()
    return _by_scheme.get((base, scheme), base)

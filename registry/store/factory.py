"""Choose the log-store backend from a URL.

============================================  =========================================
``sqlite:///relative/path.db``                SQLite file (created with its directory)
``sqlite:////absolute/path.db``
``postgresql://user:pass@host:5432/db``       PostgreSQL via psycopg 3
``postgresql+psycopg://...``, ``postgres://``
``kafka://host:9092/?topic=_schemas``         Kafka topic (``registry.store.kafka``)
============================================  =========================================
"""

from __future__ import annotations

from registry.store.base import LogStore

SQL_SCHEMES = frozenset({"sqlite", "postgresql", "postgres"})


def _scheme(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    if not sep or not scheme:
        raise ValueError(
            f"store URL {url!r} has no scheme; expected e.g. sqlite:///registry.db, "
            "postgresql://user@host/db or kafka://host:9092"
        )
    return scheme.lower().partition("+")[0]


def open_store(url: str) -> LogStore:
    """The store for ``url``, not yet opened (call ``.open()``); raises ``ValueError`` for an
    unsupported or malformed URL."""
    scheme = _scheme(url)
    if scheme in SQL_SCHEMES:
        from registry.store.sql import SqlLogStore

        return SqlLogStore(url)
    if scheme == "kafka":
        from registry.store.kafka import KafkaLogStore

        return KafkaLogStore(url)
    raise ValueError(
        f"unsupported store URL scheme {scheme!r} in {url!r}; "
        "supported: sqlite:///path.db, postgresql://user@host:port/db, kafka://host:9092"
    )

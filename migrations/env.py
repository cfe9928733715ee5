"""Alembic environment for the SQL log store (``registry/store/sql.py``).

The registry runs migrations itself (``registry.store.sql.upgrade_database``, called by
``SqlLogStore.open()`` and ``schema-registry db upgrade``), passing an open connection in
``config.attributes["connection"]`` whose transaction already holds the migration lock.

For developers running ``alembic`` by hand from the repository root (``alembic.ini``), the
database URL comes from ``-x url=...``, else ``$REGISTRY_DATABASE_URL``, else ``sqlalchemy.url``.
"""

from __future__ import annotations

import os

from alembic import context

from registry.store.sql import (
    DEFAULT_LOCK_TIMEOUT,
    MIGRATION_LOCK_KEY,
    locked_transaction,
    make_engine,
    metadata,
    normalize_url,
)

config = context.config
target_metadata = metadata


def _url() -> str:
    url = (
        context.get_x_argument(as_dictionary=True).get("url")
        or os.environ.get("REGISTRY_DATABASE_URL")
        or config.get_main_option("sqlalchemy.url")
    )
    if not url:
        raise SystemExit(
            "no database URL: pass -x url=sqlite:///registry.db or set REGISTRY_DATABASE_URL"
        )
    return url


def run_migrations_offline() -> None:
    context.configure(
        url=normalize_url(_url()), target_metadata=target_metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        # called by registry.store.sql: the caller owns the (locked) transaction
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
        return

    # by hand: same engine set-up and migration lock as the registry uses
    engine = make_engine(normalize_url(_url()), lock_timeout=DEFAULT_LOCK_TIMEOUT)
    try:
        with (
            engine.connect() as conn,
            locked_transaction(conn, MIGRATION_LOCK_KEY, DEFAULT_LOCK_TIMEOUT),
        ):
            context.configure(connection=conn, target_metadata=target_metadata)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

"""The SQL log store: the ``_schemas`` record log in one table, on SQLite or PostgreSQL.

Table ``registry_log`` (created by the Alembic migrations in ``migrations/``)::

    offset        integer primary key   -- 0, 1, 2, ... assigned at commit, never reused
    key           bytes, not null       -- Confluent key bytes, stored exactly
    value         bytes, null           -- NULL is a tombstone
    timestamp_ms  integer, not null     -- commit time, ms since the epoch, never decreasing

Writers serialise on one cross-process lock held for a whole database transaction:

* PostgreSQL: ``pg_advisory_xact_lock`` on a fixed key (released by COMMIT/ROLLBACK), waiting at
  most ``lock_timeout`` seconds.
* SQLite: ``BEGIN IMMEDIATE`` in WAL mode with a busy timeout of ``lock_timeout`` seconds.
  pysqlite's own transaction handling is switched off (``isolation_level = None``) and
  SQLAlchemy's ``begin`` event emits the BEGIN, as SQLAlchemy's SQLite documentation describes.

Offsets are computed as ``max(offset) + 1`` while the lock is held and committed before it is
released, so commit order is offset order and a reader that remembers the last offset it applied
never misses a record. Within one process a :class:`threading.Lock` queues the threads, so only
one connection per process competes for the database lock.

Every failure talking to the database surfaces as :class:`StoreUnavailableError`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from registry.records import Record
from registry.store.base import LogStore, StoreTransaction

log = logging.getLogger(__name__)

__all__ = [
    "LOG_TABLE",
    "MIGRATIONS_DIR",
    "SqlLogStore",
    "StoreUnavailableError",
    "alembic_config",
    "normalize_url",
    "upgrade_database",
]


def _migrations_dir() -> Path:
    """``migrations/`` of the source tree, or the copy a wheel installs as
    ``registry._migrations``."""
    source = Path(__file__).resolve().parents[2] / "migrations"
    if (source / "env.py").is_file():
        return source
    import importlib.util

    spec = importlib.util.find_spec("registry._migrations")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return source


#: the Alembic environment (``env.py``, ``versions/``) at the repository root
MIGRATIONS_DIR = _migrations_dir()

LOG_TABLE = "registry_log"

#: ``pg_advisory_xact_lock`` keys (any fixed 64-bit numbers; these spell "reglog" / "regmig")
LOG_LOCK_KEY = 0x7265676C6F67
MIGRATION_LOCK_KEY = 0x7265676D6967

DEFAULT_LOCK_TIMEOUT = 15.0

metadata = sa.MetaData()

#: the table as the migrations create it (kept in step with ``migrations/versions``)
log_table = sa.Table(
    LOG_TABLE,
    metadata,
    # INTEGER PRIMARY KEY on SQLite makes the offset the rowid: the table is clustered by offset
    sa.Column(
        "offset",
        sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    sa.Column("key", sa.LargeBinary(), nullable=False),
    sa.Column("value", sa.LargeBinary(), nullable=True),
    sa.Column("timestamp_ms", sa.BigInteger(), nullable=False),
    sa.CheckConstraint('"offset" >= 0', name="registry_log_offset_nonnegative"),
)

# execution option read by the SQLite "begin" hook: which BEGIN to emit
_SQLITE_BEGIN = "registry_sqlite_begin"


class StoreUnavailableError(Exception):
    """The database could not be reached or refused an operation (Confluent error 50001)."""


# ---- URLs -----------------------------------------------------------------------------------


def normalize_url(url: str) -> URL:
    """Parse a store URL into the SQLAlchemy URL we connect with.

    ``sqlite:///relative.db``, ``sqlite:////absolute.db``, ``postgresql://...``,
    ``postgres://...`` and ``postgresql+psycopg://...`` are accepted; PostgreSQL always uses the
    psycopg 3 driver. Raises :class:`ValueError` for anything else.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ValueError(f"not a database URL: {url!r} ({exc})") from exc
    backend, _, driver = parsed.drivername.partition("+")
    if backend == "sqlite":
        if driver not in ("", "pysqlite"):
            raise ValueError(f"unsupported SQLite driver {driver!r} in {url!r}; use sqlite:///")
        database = parsed.database or ""
        if database in ("", ":memory:") or parsed.query.get("mode") == "memory":
            raise ValueError(
                f"an in-memory SQLite database cannot be shared between connections: {url!r}; "
                "use a file, e.g. sqlite:///registry.db"
            )
        return parsed.set(drivername="sqlite+pysqlite")
    if backend in ("postgresql", "postgres"):
        if driver not in ("", "psycopg"):
            raise ValueError(
                f"unsupported PostgreSQL driver {driver!r} in {url!r}; "
                "use postgresql:// or postgresql+psycopg:// (psycopg 3)"
            )
        return parsed.set(drivername="postgresql+psycopg")
    raise ValueError(
        f"unsupported SQL database URL {url!r}: expected sqlite:///path.db or postgresql://..."
    )


def _describe(url: URL) -> str:
    return url.render_as_string(hide_password=True)


def _is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def _ensure_sqlite_directory(url: URL) -> None:
    if _is_sqlite(url) and url.database:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)


def make_engine(
    url: URL, *, lock_timeout: float, pool_size: int = 5, max_overflow: int = 10
) -> Engine:
    if _is_sqlite(url):
        _ensure_sqlite_directory(url)
        engine = sa.create_engine(
            url,
            connect_args={"timeout": lock_timeout, "check_same_thread": False},
            poolclass=sa.pool.QueuePool,
            pool_size=pool_size,
            max_overflow=max_overflow,
        )
        busy_ms = int(lock_timeout * 1000)

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
            # switch pysqlite's implicit BEGIN off; the "begin" hook below emits ours
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
                cursor.execute("PRAGMA journal_mode = WAL")
                cursor.execute("PRAGMA synchronous = FULL")
            finally:
                cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            mode = conn.get_execution_options().get(_SQLITE_BEGIN, "DEFERRED")
            conn.exec_driver_sql(f"BEGIN {mode}")

        return engine

    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = max(1, int(lock_timeout))
    return sa.create_engine(
        url,
        connect_args=connect_args,
        pool_pre_ping=True,
        pool_size=pool_size,
        max_overflow=max_overflow,
    )


@contextmanager
def locked_transaction(conn: Connection, key: int, lock_timeout: float) -> Iterator[None]:
    """One database transaction holding the cross-process lock ``key``; commits on clean exit."""
    if _is_sqlite(conn.engine.url):
        conn.execution_options(**{_SQLITE_BEGIN: "IMMEDIATE"})
        with conn.begin():
            yield
        return
    with conn.begin():
        conn.execute(
            sa.text("SELECT set_config('lock_timeout', :timeout, true)"),
            {"timeout": f"{int(lock_timeout * 1000)}ms"},
        )
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
        yield


def _error_text(exc: Exception) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ---- migrations -----------------------------------------------------------------------------


def alembic_config(connection: Connection | None = None) -> Any:
    """An Alembic ``Config`` for ``migrations/``, built without an ini file.

    With ``connection`` the migrations run on it, inside its current transaction.
    """
    from alembic.config import Config

    if not (MIGRATIONS_DIR / "env.py").is_file():
        raise StoreUnavailableError(
            f"the database migrations are missing: {MIGRATIONS_DIR} has no env.py "
            "(install the project from its source tree: pip install -e .)"
        )
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _upgrade(engine: Engine, lock_timeout: float) -> None:
    """Migrate to the newest revision under the migration lock (safe from many processes)."""
    from alembic import command
    from alembic.util import CommandError

    with engine.connect() as conn, locked_transaction(conn, MIGRATION_LOCK_KEY, lock_timeout):
        try:
            command.upgrade(alembic_config(conn), "head")
        except CommandError as exc:
            # e.g. the database was migrated by a newer release than this one
            raise StoreUnavailableError(
                f"cannot migrate {_describe(engine.url)}: {exc} "
                "(is the database used by a newer version of the registry?)"
            ) from exc


def upgrade_database(url: str, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> None:
    """Create or migrate the store's tables at ``url`` to the newest revision; idempotent.

    Raises :class:`ValueError` for an unsupported URL and :class:`StoreUnavailableError` when the
    database cannot be reached.
    """
    sa_url = normalize_url(url)
    try:
        engine = make_engine(sa_url, lock_timeout=lock_timeout, pool_size=1, max_overflow=0)
    except OSError as exc:
        raise StoreUnavailableError(f"cannot create {_describe(sa_url)}: {exc}") from exc
    try:
        _upgrade(engine, lock_timeout)
    except SQLAlchemyError as exc:
        raise StoreUnavailableError(
            f"migrating {_describe(sa_url)} failed: {_error_text(exc)}"
        ) from exc
    finally:
        engine.dispose()


# ---- the store ------------------------------------------------------------------------------


def _rows_to_records(rows: Sequence[Any]) -> list[Record]:
    # rows unpacked by position (named access cost a third of a million-record replay's read);
    # bytes() only where the driver gives a memoryview (PostgreSQL) rather than bytes
    return [
        Record(
            key if type(key) is bytes else bytes(key),
            value if value is None or type(value) is bytes else bytes(value),
            int(offset),
            int(timestamp_ms),
        )
        for offset, key, value, timestamp_ms in rows
    ]


# Statements are built once: constructing SQLAlchemy expressions per call cost more than the
# SQLite round trips on the write path.
_COLUMNS = (log_table.c.offset, log_table.c.key, log_table.c.value, log_table.c.timestamp_ms)
_SELECT_AFTER = (
    sa.select(*_COLUMNS)
    .where(log_table.c.offset > sa.bindparam("after"))
    .order_by(log_table.c.offset)
)
_SELECT_AFTER_LIMITED = _SELECT_AFTER.limit(sa.bindparam("limit"))
_SELECT_LAST = (
    sa.select(log_table.c.offset, log_table.c.timestamp_ms)
    .order_by(log_table.c.offset.desc())
    .limit(1)
)
_INSERT = sa.insert(log_table)
# SQLite's write path as driver SQL: compiled statements ran SQLAlchemy's per-value bind
# processors (a quarter of a batch commit's CPU) on every key and value
_SQLITE_SELECT_AFTER = (
    f'SELECT "offset", key, value, timestamp_ms FROM {LOG_TABLE} WHERE "offset" > ? '
    'ORDER BY "offset"'
)
_SQLITE_SELECT_LAST = (
    f'SELECT "offset", timestamp_ms FROM {LOG_TABLE} ORDER BY "offset" DESC LIMIT 1'
)
_SQLITE_INSERT = f'INSERT INTO {LOG_TABLE} ("offset", key, value, timestamp_ms) VALUES (?, ?, ?, ?)'


def _select_after(conn: Connection, offset: int, limit: int | None) -> Sequence[Any]:
    if limit is None and conn.dialect.name == "sqlite":
        return conn.exec_driver_sql(_SQLITE_SELECT_AFTER, (offset,)).all()
    if limit is None:
        return conn.execute(_SELECT_AFTER, {"after": offset}).all()
    return conn.execute(_SELECT_AFTER_LIMITED, {"after": offset, "limit": limit}).all()


class _SqlTransaction(StoreTransaction):
    def __init__(
        self, conn: Connection, store: SqlLogStore, driver: sqlite3.Connection | None = None
    ) -> None:
        self._conn = conn
        #: SQLite: the driver's connection, which the statements go to directly
        self._driver = driver
        self._store = store
        self._staged: list[tuple[bytes, bytes | None]] = []
        self._open = True
        self.appended: list[Record] = []

    def _check_open(self) -> None:
        if not self._open:
            raise RuntimeError("the exclusive() block has ended; this transaction is closed")

    def read_after(self, offset: int) -> list[Record]:
        self._check_open()
        with self._store._db_errors("reading the log"):
            if self._driver is not None:
                return _rows_to_records(
                    self._driver.execute(_SQLITE_SELECT_AFTER, (offset,)).fetchall()
                )
            return _rows_to_records(_select_after(self._conn, offset, None))

    def append(self, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        self._check_open()
        staged = []
        for key, value in records:
            if not isinstance(key, bytes | bytearray | memoryview):
                raise TypeError(f"record key must be bytes, not {type(key).__name__}")
            if value is not None and not isinstance(value, bytes | bytearray | memoryview):
                raise TypeError(f"record value must be bytes or None, not {type(value).__name__}")
            staged.append((bytes(key), None if value is None else bytes(value)))
        self._staged.extend(staged)

    def _insert_staged(self) -> list[Record]:
        """Insert the staged records with the next offsets; the caller commits."""
        if not self._staged:
            return []
        driver = self._driver
        if driver is not None:
            last = driver.execute(_SQLITE_SELECT_LAST).fetchone()
        else:
            last = self._conn.execute(_SELECT_LAST).first()
        next_offset = 0 if last is None else int(last[0]) + 1
        now_ms = time.time_ns() // 1_000_000
        timestamp = now_ms if last is None else max(now_ms, int(last[1]))
        records = [
            Record(key=key, value=value, offset=next_offset + i, timestamp=timestamp)
            for i, (key, value) in enumerate(self._staged)
        ]
        if driver is not None:
            driver.executemany(
                _SQLITE_INSERT, [(r.offset, r.key, r.value, r.timestamp) for r in records]
            )
        else:
            self._conn.execute(
                _INSERT,
                [
                    {
                        "offset": r.offset,
                        "key": r.key,
                        "value": r.value,
                        "timestamp_ms": r.timestamp,
                    }
                    for r in records
                ],
            )
        return records


def _dispose_pools_after_fork(store: SqlLogStore) -> None:
    """A forked child must not use the parent's pooled connections (nor inherit a lock some
    other thread held at the fork): give it fresh ones. Registered once per store."""
    if store._fork_hook_registered:
        return
    store._fork_hook_registered = True
    ref = weakref.ref(store)

    def after_fork_in_child() -> None:
        live = ref()
        if live is None:
            return
        live._write_lock = threading.Lock()
        live._open_lock = threading.Lock()
        live._writer = None  # the parent's: not closed here, not used either
        engine = live._engine
        if engine is not None:
            engine.dispose(close=False)

    os.register_at_fork(after_in_child=after_fork_in_child)


class SqlLogStore(LogStore):
    """The record log in a SQL table; see the module docstring.

    ``url`` is ``sqlite:///path.db`` (the file and its directory are created on open) or
    ``postgresql://user:password@host:port/database``. ``lock_timeout`` (seconds) bounds the
    wait for the write lock (SQLite's busy timeout) and for connecting. Thread-safe once open.
    """

    def __init__(
        self,
        url: str,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        pool_size: int = 5,
        max_overflow: int = 10,
    ) -> None:
        self._url = normalize_url(url)
        self.description = _describe(self._url)
        self.lock_timeout = lock_timeout
        self._pool_size = pool_size
        self._max_overflow = max_overflow
        self._engine: Engine | None = None
        self._open_lock = threading.Lock()
        # threads of this process queue here, so one connection per process waits on the DB lock
        self._write_lock = threading.Lock()
        #: SQLite: the connection every write uses, kept (taking one from the pool and giving
        #: it back, with its reset, cost a tenth of a batch commit's CPU); guarded by the lock
        self._writer: Connection | None = None
        self._fork_hook_registered = False

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._url.get_backend_name()

    # -- lifecycle

    def open(self) -> None:
        with self._open_lock:
            if self._engine is not None:
                return
            try:
                engine = make_engine(
                    self._url,
                    lock_timeout=self.lock_timeout,
                    pool_size=self._pool_size,
                    max_overflow=self._max_overflow,
                )
            except OSError as exc:
                raise StoreUnavailableError(f"cannot create {self.description}: {exc}") from exc
            try:
                with self._db_errors("migrating the database"):
                    _upgrade(engine, self.lock_timeout)
            except BaseException:
                engine.dispose()
                raise
            self._engine = engine
            _dispose_pools_after_fork(self)
            log.info("opened log store %s", self.description)

    def close(self) -> None:
        with self._open_lock:
            engine, self._engine = self._engine, None
        with self._write_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            with suppress(SQLAlchemyError):
                writer.close()
        if engine is not None:
            engine.dispose()

    def _require_engine(self) -> Engine:
        engine = self._engine
        if engine is None:
            raise RuntimeError(f"log store {self.description} is not open")
        return engine

    @contextmanager
    def _db_errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except (SQLAlchemyError, sqlite3.Error) as exc:
            raise StoreUnavailableError(
                f"{action} failed on {self.description}: {_error_text(exc)}"
            ) from exc

    # -- reading

    def read_after(self, offset: int, limit: int | None = None) -> list[Record]:
        if limit is not None and limit <= 0:
            return []
        engine = self._require_engine()
        with self._db_errors("reading the log"), engine.connect() as conn:
            return _rows_to_records(_select_after(conn, offset, limit))

    # -- writing

    @contextmanager
    def exclusive(self) -> Iterator[StoreTransaction]:
        engine = self._require_engine()
        with self._write_lock:
            if self.dialect == "sqlite":
                with self._sqlite_exclusive(engine) as txn:
                    yield txn
                return
            with self._db_errors("connecting"):
                conn = engine.connect()
            try:
                with (
                    self._db_errors("writing the log"),
                    locked_transaction(conn, LOG_LOCK_KEY, self.lock_timeout),
                ):
                    txn = _SqlTransaction(conn, self)
                    try:
                        yield txn
                    finally:
                        txn._open = False
                    records = txn._insert_staged()
                # committed (the transaction context exited cleanly)
                txn.appended = records
            finally:
                with suppress(SQLAlchemyError):
                    conn.close()

    @contextmanager
    def _sqlite_exclusive(self, engine: Engine) -> Iterator[StoreTransaction]:
        """SQLite's write transaction, on the kept writer connection and through the driver
        itself (``BEGIN IMMEDIATE``, the statements, ``COMMIT``): SQLAlchemy's transaction and
        result objects around them cost a twentieth of a registration's CPU. The connection's
        pysqlite has its implicit transactions off (``make_engine``), and SQLAlchemy never
        sees a transaction on it."""
        conn = self._writer
        if conn is None:
            with self._db_errors("connecting"):
                conn = engine.connect()
        failed = True
        try:
            with self._db_errors("writing the log"):
                driver = conn.connection.driver_connection
                driver.execute("BEGIN IMMEDIATE")
                try:
                    txn = _SqlTransaction(conn, self, driver)
                    try:
                        yield txn
                    finally:
                        txn._open = False
                    records = txn._insert_staged()
                    driver.execute("COMMIT")
                except BaseException:
                    if driver.in_transaction:
                        with suppress(sqlite3.Error):
                            driver.execute("ROLLBACK")
                    raise
            txn.appended = records
            failed = False
        finally:
            if not failed:
                self._writer = conn
            else:  # a connection that failed is not kept: the next write takes a new one
                self._writer = None
                with suppress(SQLAlchemyError, sqlite3.Error):
                    conn.close()

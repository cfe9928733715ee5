"""The SQL log store on a real SQLite file and a real PostgreSQL (tests/fixtures/postgres.py)."""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from registry.records import Record
from registry.store.factory import open_store
from registry.store.sql import (
    LOG_TABLE,
    SqlLogStore,
    StoreUnavailableError,
    alembic_config,
    normalize_url,
    upgrade_database,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'nested' / 'dir' / 'registry.db'}"
    return str(request.getfixturevalue("postgres_store_url"))


@pytest.fixture
def store(store_url: str) -> Iterator[SqlLogStore]:
    opened = SqlLogStore(store_url)
    opened.open()
    try:
        yield opened
    finally:
        opened.close()


def _append(store: SqlLogStore, records: list[tuple[bytes, bytes | None]]) -> list[Record]:
    with store.exclusive() as txn:
        txn.append(records)
    return txn.appended


def _head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _alembic_version(url: str) -> list[str]:
    engine = sa.create_engine(normalize_url(url))
    try:
        with engine.connect() as conn:
            return list(conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars())
    finally:
        engine.dispose()


# ---- reading and writing --------------------------------------------------------------------


def test_empty_store_reads_nothing(store: SqlLogStore) -> None:
    assert store.read_after(-1) == []
    assert list(store.iter_all()) == []
    with store.exclusive() as txn:
        assert txn.read_after(-1) == []
    assert txn.appended == []


def test_append_assigns_offsets_and_timestamps_in_order(store: SqlLogStore) -> None:
    first = _append(store, [(b"k0", b"v0"), (b"k1", b"v1")])
    second = _append(store, [(b"k2", b"v2")])
    assert [r.offset for r in first + second] == [0, 1, 2]
    assert all(r.timestamp > 1_600_000_000_000 for r in first + second)
    assert first[0].timestamp <= first[1].timestamp <= second[0].timestamp
    assert store.read_after(-1) == first + second
    assert store.read_after(0) == first[1:] + second
    assert store.read_after(2) == []


def test_tombstones_round_trip_as_none(store: SqlLogStore) -> None:
    _append(store, [(b"key", b"value"), (b"key", None)])
    records = store.read_after(-1)
    assert [r.value for r in records] == [b"value", None]
    assert all(r.key == b"key" for r in records)


def test_key_and_value_bytes_are_stored_exactly(store: SqlLogStore) -> None:
    key = bytes(range(256)) + b'{"keytype":"SCHEMA","subject":"s\xc3\xa9","version":1,"magic":1}'
    value = b"\x00\xff" * 1000 + b" trailing space "
    _append(store, [(key, value), (b"", b"")])
    records = store.read_after(-1)
    assert records[0].key == key and records[0].value == value
    assert records[1].key == b"" and records[1].value == b""
    assert type(records[0].key) is bytes and type(records[0].value) is bytes


def test_read_after_with_limit_and_iter_all(store: SqlLogStore) -> None:
    _append(store, [(f"k{i}".encode(), f"v{i}".encode()) for i in range(25)])
    assert [r.offset for r in store.read_after(-1, 10)] == list(range(10))
    assert [r.offset for r in store.read_after(9, 10)] == list(range(10, 20))
    assert [r.offset for r in store.read_after(19, 10)] == list(range(20, 25))
    assert store.read_after(-1, 0) == []
    assert [r.offset for r in store.iter_all(batch=7)] == list(range(25))
    assert [r.key for r in store.iter_all(batch=7)] == [f"k{i}".encode() for i in range(25)]


def test_transaction_reads_committed_records_not_its_own_staged_ones(store: SqlLogStore) -> None:
    _append(store, [(b"a", b"1")])
    with store.exclusive() as txn:
        assert [r.key for r in txn.read_after(-1)] == [b"a"]
        txn.append([(b"b", b"2")])
        txn.append([(b"c", None)])
        assert [r.key for r in txn.read_after(-1)] == [b"a"]
    assert [(r.key, r.offset) for r in txn.appended] == [(b"b", 1), (b"c", 2)]
    with pytest.raises(RuntimeError):
        txn.read_after(-1)


def test_append_rejects_non_bytes(store: SqlLogStore) -> None:
    with pytest.raises(TypeError), store.exclusive() as txn:
        txn.append([("text", b"v")])  # type: ignore[list-item]
    assert store.read_after(-1) == []


def test_exception_inside_exclusive_stores_nothing(store: SqlLogStore) -> None:
    _append(store, [(b"kept", b"1")])

    class Refused(Exception):
        pass

    with pytest.raises(Refused), store.exclusive() as txn:
        txn.append([(b"lost", b"2"), (b"lost", None)])
        raise Refused
    assert txn.appended == []
    assert [r.key for r in store.read_after(-1)] == [b"kept"]
    # the lock was released and the next write takes the next offset
    assert [r.offset for r in _append(store, [(b"next", b"3")])] == [1]


def test_many_threads_share_one_store(store: SqlLogStore) -> None:
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(10):
                with store.exclusive() as txn:
                    txn.read_after(-1)
                    txn.append([(f"t{n}-{i}".encode(), b"x")])
                store.read_after(-1, 5)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    records = store.read_after(-1)
    assert [r.offset for r in records] == list(range(80))
    assert len({r.key for r in records}) == 80


# ---- opening, migrations, URLs --------------------------------------------------------------


def test_open_applies_migrations_and_records_the_revision(store_url: str) -> None:
    store = SqlLogStore(store_url)
    store.open()
    store.open()  # idempotent
    try:
        _append(store, [(b"k", b"v")])
    finally:
        store.close()
        store.close()
    assert _alembic_version(store_url) == [_head_revision()] == ["0001"]
    upgrade_database(store_url)
    upgrade_database(store_url)
    assert _alembic_version(store_url) == ["0001"]
    reopened = SqlLogStore(store_url)
    reopened.open()
    try:
        assert [r.key for r in reopened.read_after(-1)] == [b"k"]
    finally:
        reopened.close()


def test_upgrade_database_before_open(store_url: str) -> None:
    upgrade_database(store_url)
    engine = sa.create_engine(normalize_url(store_url))
    try:
        assert LOG_TABLE in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()
    assert _alembic_version(store_url) == ["0001"]


def test_sqlite_creates_directory_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "registry.db"
    store = open_store(f"sqlite:///{path}")
    store.open()
    try:
        assert path.is_file()
        engine = sa.create_engine(f"sqlite:///{path}")
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        engine.dispose()
    finally:
        store.close()


def test_use_before_open_is_an_error(tmp_path: Path) -> None:
    store = SqlLogStore(f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(RuntimeError, match="not open"):
        store.read_after(-1)


def test_unreachable_postgres_raises_store_unavailable() -> None:
    with socketless_port() as port:
        store = SqlLogStore(f"postgresql://nobody@127.0.0.1:{port}/none", lock_timeout=2)
        with pytest.raises(StoreUnavailableError, match=r"127\.0\.0\.1"):
            store.open()
        with pytest.raises(StoreUnavailableError):
            upgrade_database(f"postgresql://nobody@127.0.0.1:{port}/none", lock_timeout=2)


class socketless_port:
    """A port that refuses connections (bound, never listening) for the block's duration."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_factory_urls(tmp_path: Path) -> None:
    assert isinstance(open_store(f"sqlite:///{tmp_path / 'x.db'}"), SqlLogStore)
    for url in (
        "postgresql://u:secret@db:5432/reg",
        "postgres://u:secret@db/reg",
        "postgresql+psycopg://u:secret@db/reg",
    ):
        store = open_store(url)
        assert isinstance(store, SqlLogStore)
        assert store.description.startswith("postgresql+psycopg://u:***@db")
        assert "secret" not in store.description
    for bad in ("mysql://x/y", "kafka:///?topic=no-brokers", "registry.db", "sqlite:///:memory:"):
        with pytest.raises(ValueError):
            open_store(bad)
    with pytest.raises(ValueError, match="psycopg"):
        open_store("postgresql+psycopg2://u@db/reg")


# ---- concurrency across processes -----------------------------------------------------------


def _claim_ids(url: str, worker: int, rounds: int) -> None:
    """Each round: catch up on the log, claim max(id seen) + 1, append the claim."""
    store = SqlLogStore(url)
    store.open()
    seen_offset, max_id = -1, 0
    try:
        for i in range(rounds):
            with store.exclusive() as txn:
                for record in txn.read_after(seen_offset):
                    assert record.offset > seen_offset
                    seen_offset = record.offset
                    max_id = max(max_id, int(record.value or b"0"))
                txn.append([(f"w{worker}-{i}".encode(), str(max_id + 1).encode())])
            (claimed,) = txn.appended
            assert claimed.offset > seen_offset
            seen_offset, max_id = claimed.offset, max_id + 1
    finally:
        store.close()


def test_processes_never_claim_the_same_id(store_url: str) -> None:
    workers, rounds = 4, 40
    ctx = multiprocessing.get_context("spawn")
    # the processes race to create the database and run the migrations too
    procs = [ctx.Process(target=_claim_ids, args=(store_url, n, rounds)) for n in range(workers)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=240)
    assert [proc.exitcode for proc in procs] == [0] * workers

    store = SqlLogStore(store_url)
    store.open()
    try:
        records = store.read_after(-1)
    finally:
        store.close()
    total = workers * rounds
    assert [r.offset for r in records] == list(range(total))
    assert [int(r.value or b"0") for r in records] == list(range(1, total + 1))
    assert len({r.key for r in records}) == total
    assert all(a.timestamp <= b.timestamp for a, b in itertools.pairwise(records))


def test_database_from_a_newer_release_is_refused(store_url: str) -> None:
    upgrade_database(store_url)
    engine = sa.create_engine(normalize_url(store_url))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    finally:
        engine.dispose()
    with pytest.raises(StoreUnavailableError, match="newer version"):
        SqlLogStore(store_url).open()


def test_forked_child_gets_its_own_connections(tmp_path: Path) -> None:
    store = SqlLogStore(f"sqlite:///{tmp_path / 'r.db'}")
    store.open()
    try:
        _append(store, [(b"parent", b"1")])
        ctx = multiprocessing.get_context("fork")
        child = ctx.Process(target=_append, args=(store, [(b"child", b"2")]))
        child.start()
        child.join(timeout=60)
        assert child.exitcode == 0
        _append(store, [(b"parent", b"3")])
        assert [r.key for r in store.read_after(-1)] == [b"parent", b"child", b"parent"]
    finally:
        store.close()


def test_a_broken_kept_writer_connection_fails_one_write_and_is_replaced(
    tmp_path: Path,
) -> None:
    """SQLite keeps one connection for its writes; if it breaks, that write fails with the
    store's error and the next one opens a new connection."""
    opened = SqlLogStore(f"sqlite:///{tmp_path / 'kept.db'}")
    opened.open()
    try:
        with opened.exclusive() as txn:
            txn.append([(b"k1", b"v1")])
        kept = opened._writer
        assert kept is not None
        with opened.exclusive() as txn:  # the same connection again
            txn.append([(b"k2", b"v2")])
        assert opened._writer is kept
        kept.connection.dbapi_connection.close()  # broken underneath  # type: ignore[union-attr]
        with pytest.raises(StoreUnavailableError), opened.exclusive() as txn:
            txn.append([(b"k3", b"v3")])
        assert opened._writer is None
        with opened.exclusive() as txn:
            txn.append([(b"k4", b"v4")])
        assert [r.key for r in opened.read_after(-1)] == [b"k1", b"k2", b"k4"]
        assert [r.offset for r in opened.read_after(-1)] == [0, 1, 2]
    finally:
        opened.close()
    assert opened._writer is None


def test_a_busy_sqlite_file_fails_the_write_with_the_stores_error_and_keeps_nothing(
    tmp_path: Path,
) -> None:
    """SQLite's write transaction goes to the driver directly (``BEGIN IMMEDIATE``): when
    another connection holds the file's write lock past ``lock_timeout`` the write fails with
    the store's error, nothing of it is stored, and the next write (lock released) succeeds on
    a new connection."""
    import sqlite3

    path = tmp_path / "busy.db"
    opened = SqlLogStore(f"sqlite:///{path}", lock_timeout=0.3)
    opened.open()
    other = sqlite3.connect(path, isolation_level=None)
    try:
        with opened.exclusive() as txn:
            txn.append([(b"k0", b"v0")])
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailableError, match="locked"), opened.exclusive() as txn:
            txn.append([(b"k1", b"v1")])
        assert opened._writer is None
        other.execute("ROLLBACK")
        with opened.exclusive() as txn:
            txn.append([(b"k2", b"v2")])
        assert [(r.key, r.offset) for r in opened.read_after(-1)] == [(b"k0", 0), (b"k2", 1)]
        assert not opened._writer.connection.driver_connection.in_transaction  # type: ignore[union-attr]
    finally:
        other.close()
        opened.close()

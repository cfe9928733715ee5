"""Writes queued from the event loop (``Registry.write_async``, ``registry.group_commit``): they
share the group commit with threads' writes, are committed by the committer thread (no worker
thread of their own), batched like the others, answered through their futures, one failure
does not fail the others, and a stopped registry fails what is still queued."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from registry import errors
from registry.core import Registry, SchemaRequest
from registry.registration import Registered, register, register_locked
from registry.settings import Settings
from registry.store.factory import open_store
from tests.test_group_commit import count_transactions


def avro(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": "id", "type": "long"}]})


def queue_async(reg: Registry, subject: str, schema: str) -> Any:
    """A registration's locked decision queued from the running loop."""
    req = SchemaRequest(schema=schema)
    return reg.write_async(lambda: register_locked(reg, subject, req, False))


def test_writes_queued_from_the_loop_are_one_batch_answered_through_futures(
    registry: Registry,
) -> None:
    calls = count_transactions(registry)

    async def main() -> list[Any]:
        with registry._write_lock:  # every write queues before the first batch is taken
            futures = [queue_async(registry, f"s{i}", avro(f"R{i}")) for i in range(8)]
            assert len(registry._group.queue) == 8
            await asyncio.sleep(0.05)
            assert not any(f.done() for f in futures)
        return await asyncio.wait_for(asyncio.gather(*futures), 30)

    results = asyncio.run(main())
    assert len(calls) == 1
    assert [r.id for r in results] == list(range(1, 9))
    assert all(isinstance(r, Registered) for r in results)
    assert registry.state.versions("s7")[1].id == 8
    # the committer is a thread of its own, not the loop's
    assert any(t.name == "group-commit" for t in threading.enumerate())


def test_an_error_fails_only_its_own_future(registry: Registry) -> None:
    async def main() -> list[Any]:
        with registry._write_lock:
            futures = [
                queue_async(registry, "a", avro("A")),
                queue_async(registry, "b", "{not avro"),
                queue_async(registry, "c", avro("C")),
            ]
        return await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 30)

    first, bad, third = asyncio.run(main())
    assert first.id == 1 and third.id == 2
    assert isinstance(bad, errors.RegistryError) and bad.error_code == 42201
    assert not registry.state.versions("b")


def test_threads_and_the_loop_share_one_batch(registry: Registry) -> None:
    calls = count_transactions(registry)
    answers: list[Any] = []

    def threaded() -> None:
        answers.append(register(registry, "t", SchemaRequest(schema=avro("T")), normalize=False))

    async def main() -> list[Any]:
        with registry._write_lock:
            worker = threading.Thread(target=threaded)
            worker.start()
            deadline = time.monotonic() + 10
            while len(registry._group.queue) < 1:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.005)
            futures = [queue_async(registry, f"l{i}", avro(f"L{i}")) for i in range(3)]
        results = await asyncio.wait_for(asyncio.gather(*futures), 30)
        await asyncio.to_thread(worker.join, 30)
        return results

    looped = asyncio.run(main())
    assert answers and answers[0].id == 1  # queued first, decided first
    assert [r.id for r in looped] == [2, 3, 4]
    assert len(calls) == 1


def test_a_failed_transaction_fails_every_queued_future(registry: Registry) -> None:
    real = registry.store.exclusive

    def failing() -> Any:
        raise OSError("disk gone")

    registry.store.exclusive = failing  # type: ignore[method-assign]

    async def main() -> list[Any]:
        with registry._write_lock:
            futures = [queue_async(registry, f"f{i}", avro(f"F{i}")) for i in range(3)]
        return await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 30)

    results = asyncio.run(main())
    assert all(isinstance(r, errors.RegistryError) and r.error_code == 50001 for r in results)
    registry.store.exclusive = real  # type: ignore[method-assign]

    async def again() -> Any:  # the committer thread survived the failure
        return await asyncio.wait_for(queue_async(registry, "ok", avro("Ok")), 30)

    assert asyncio.run(again()).id == 1
    assert registry.store.read_after(-1)[0].value is not None


def test_stopping_the_registry_fails_writes_still_queued(sqlite_url: str) -> None:
    reg = Registry(open_store(sqlite_url), Settings(poll_interval=0))
    reg.start()

    async def main() -> Any:
        reg._write_lock.acquire()  # the committer cannot take the queue
        future = queue_async(reg, "s", avro("S"))
        await asyncio.sleep(0.05)
        stopper = threading.Thread(target=reg._group.close)
        stopper.start()
        await asyncio.sleep(0.05)
        reg._write_lock.release()  # the committer finds the registry stopping
        await asyncio.to_thread(stopper.join, 30)
        return await asyncio.wait_for(asyncio.gather(future, return_exceptions=True), 30)

    try:
        (result,) = asyncio.run(main())
    finally:
        reg.stop()
    # either the committer took it before noticing the stop (stored), or it failed: never lost
    if isinstance(result, errors.RegistryError):
        assert result.error_code == 50001
        assert reg.store.read_after(-1) == []
    else:
        assert result.id == 1

    async def after() -> None:
        queue_async(reg, "late", avro("Late"))

    with pytest.raises(errors.RegistryError):
        asyncio.run(after())

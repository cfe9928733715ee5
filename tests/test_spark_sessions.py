"""The Spark suites in the sessions users have, each in its own pytest process.

This process's ``spark`` fixture is a classic session with the connector jars. A second classic
session cannot share its JVM, and a Spark Connect client switches the whole Python process to
Connect, so the other kinds (tests/fixtures/spark.py ``SPARK_SESSION_KIND``) run in child
pytest processes, started together:

* ``plain``: a new user's ``SparkSession`` (no ``--packages``): the Avro and JSON decode matrix,
  ``engine: "auto"`` choosing the Python engine for Avro and ``from_json`` for JSON.
* ``connect`` / ``connect-plain``: a local Spark Connect server with and without the jars: every
  decoder and encoder, the native engines where the server has spark-avro; with the jars also
  the all-types Avro matrix and the GUID / header framing tests.

The all-types Avro matrix (tests/test_spark_avro_types.py) compares with Spark's own
``from_avro``, so it runs where spark-avro is loaded: here and on the Connect server with the
jars. tests/test_spark_any_session.py checks every function against serdes in every kind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # minutes: scheduled early under xdist (tests/fixtures/parallel.py)

ANY = "tests/test_spark_any_session.py"
AVRO_MATRIX = "tests/test_spark_avro_types.py"  # its oracle is Spark's from_avro: needs the jars
JSON_MATRIX = "tests/test_spark_json.py::test_every_rule_decodes_to_exact_rows"
FRAMING = "tests/test_spark_framing.py"  # GUID and header frames, through Connect too


RUNS = {
    "plain": [ANY, JSON_MATRIX],
    "connect": [ANY, AVRO_MATRIX, FRAMING],
    "connect-plain": [ANY],
}


@pytest.fixture(scope="module")
def children(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Any, Path]]]:
    """The child pytest runs, started together (each mostly waits on its own JVM starting)."""
    out = tmp_path_factory.mktemp("spark-sessions")
    procs: dict[str, tuple[Any, Path]] = {}
    for kind, paths in RUNS.items():
        env = {**os.environ, "SPARK_SESSION_KIND": kind}
        args = [sys.executable, "-m", "pytest", *paths, "-q", "-x", "-p", "no:cacheprovider"]
        log = out / f"{kind}.log"
        with open(log, "wb") as sink:
            proc = subprocess.Popen(
                args,
                cwd=ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
                preexec_fn=_interruptible,
            )
        procs[kind] = (proc, log)
    try:
        yield procs
    finally:
        stop_children([proc for proc, _ in procs.values()])


def _interruptible() -> None:
    """In the child before it runs: SIGINT is not ignored (a suite started in the background
    ignores it), so the child's pytest answers it with KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop_children(procs: list[subprocess.Popen[bytes]], grace: float = 60) -> None:
    """Interrupt the children still running (a test failed or timed out), so that their pytest
    tears its session down: their Spark Connect server and registry run in processes of their
    own and outlived a killed child (found still running 40 min later in a ``make test``)."""
    running = [proc for proc in procs if proc.poll() is None]
    for proc in running:
        proc.send_signal(signal.SIGINT)
    for proc in running:
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# the first test waits for its child, which shares two cores with two more JVM sessions starting:
# pyproject's 300 s per test fired on a loaded machine; this only catches a hang (children get
# 1200 s each)
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("kind", list(RUNS))
def test_spark_suite_in_session(children: dict[str, tuple[Any, Path]], kind: str) -> None:
    proc, log = children[kind]
    code = proc.wait(timeout=1200)
    text = log.read_text(errors="replace")
    tail = text[-6000:]
    assert code == 0, f"SPARK_SESSION_KIND={kind} pytest {' '.join(RUNS[kind])} failed:\n{tail}"
    assert " passed" in text and " failed" not in text, tail

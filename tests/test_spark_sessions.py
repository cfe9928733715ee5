"""The Spark suites in the sessions users have, each in its own pytest process.

This process's ``spark`` fixture is a classic session with the connector jars. A second classic
session cannot share its JVM, and a Spark Connect client switches the whole Python process to
Connect, so the other kinds (tests/fixtures/spark.py ``SPARK_SESSION_KIND``) run in child
pytest processes:

* ``plain``: a new user's ``SparkSession`` (no ``--packages``): the Avro and JSON decode matrix,
  ``engine: "auto"`` choosing the Python engine for Avro and ``from_json`` for JSON.
* ``connect`` / ``connect-plain``: a local Spark Connect server with and without the jars: every
  decoder and encoder, the native engines where the server has spark-avro.

The all-types Avro matrix (tests/test_spark_avro_types.py) compares with Spark's own
``from_avro``, so it runs where spark-avro is loaded: here and on the Connect server with the
jars. tests/test_spark_any_session.py checks every function against serdes in every kind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ANY = "tests/test_spark_any_session.py"
AVRO_MATRIX = "tests/test_spark_avro_types.py"  # its oracle is Spark's from_avro: needs the jars
JSON_MATRIX = "tests/test_spark_json.py::test_every_rule_decodes_to_exact_rows"


def _run(kind: str, paths: list[str]) -> None:
    env = {**os.environ, "SPARK_SESSION_KIND": kind}
    args = [sys.executable, "-m", "pytest", *paths, "-q", "-x", "-p", "no:cacheprovider"]
    result = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    tail = (result.stdout + result.stderr)[-6000:]
    assert result.returncode == 0, f"SPARK_SESSION_KIND={kind} pytest failed:\n{tail}"
    assert " passed" in result.stdout and " failed" not in result.stdout, tail


@pytest.mark.parametrize(
    ("kind", "paths"),
    [
        ("plain", [ANY, JSON_MATRIX]),
        ("connect", [ANY, AVRO_MATRIX]),
        ("connect-plain", [ANY]),
    ],
)
def test_spark_suite_in_session(kind: str, paths: list[str]) -> None:
    _run(kind, paths)

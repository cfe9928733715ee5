"""What every scenario of bench/spark_bench.py shares: the registry server, the SparkSession,
the "same rows on every path" check, the timed ``noop`` loop and the table of ratios."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._server import start_server

ROOT = Path(__file__).resolve().parents[1]

# a path's name -> a function giving its column (built anew for each query)
Paths = dict[str, Callable[[], Any]]


def spark_jars() -> str:
    """The connector jars (spark-avro, ...) as a ``spark.jars`` list, from scripts/spark-jars."""
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "spark-jars"), sys.executable],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@dataclass
class BenchRun:
    spark: Any  # pyspark.sql.SparkSession
    url: str  # the registry's
    tmp: Path  # scratch directory, removed afterwards


_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
}


@contextmanager
def bench_run(master: str, *, jars: bool, connect: bool = False) -> Iterator[BenchRun]:
    """A registry server, a SparkSession on ``master`` (with the connector jars if ``jars``;
    with ``connect``, a client of a local Spark Connect server started here) and a scratch
    directory; all are gone afterwards."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    conf = dict(_CONF, **({"spark.jars": spark_jars()} if jars else {}))
    from pyspark.sql import SparkSession

    tmp = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    proc, url = start_server(tmp)
    server = None
    try:
        if connect:
            from tests.fixtures.spark import ConnectServer

            server = ConnectServer({**conf, "spark.master": master}, tmp)
            spark = SparkSession.builder.remote(server.__enter__()).getOrCreate()
        else:
            builder = SparkSession.builder.master(master)
            for key, value in conf.items():
                builder = builder.config(key, value)
            spark = builder.getOrCreate()
            spark.sparkContext.setLogLevel("ERROR")
        try:
            yield BenchRun(spark, url, tmp)
        finally:
            spark.stop()
    finally:
        if server is not None:
            server.__exit__()
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def decoded(source: Any, make: Callable[[], Any]) -> Any:
    """``source`` decoded by one path into all columns."""
    return source.select(make().alias("v")).select("v.*")


def check_same_decoded(source: Any, paths: Paths, sample_rows: int = 2000) -> None:
    """Every path decodes a sample of ``source`` into the same rows as the first path."""
    sample = source.limit(sample_rows)
    reference = None
    for name, make in paths.items():
        rows = sorted(decoded(sample, make).collect())
        if reference is None:
            reference = rows
        elif rows != reference:
            raise SystemExit(f"{name} decodes differently from the row UDF")


def time_paths(
    paths: Paths, query: Callable[[Callable[[], Any]], Any], rows: int, rounds: int, width: int = 32
) -> dict[str, float]:
    """Best rows/s of each path over ``rounds`` runs of ``query(make)`` into the ``noop`` sink."""
    results: dict[str, float] = {}
    for _ in range(rounds):
        for name, make in paths.items():
            df = query(make)
            begun = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            rate = rows / (time.perf_counter() - begun)
            results[name] = max(results.get(name, 0.0), rate)
            print(f"{name:{width}s} {rate:12,.0f} rows/s", flush=True)
    return results


def print_table(title: str, results: dict[str, float], baselines: dict[str, str]) -> None:
    """The markdown table: each path's rows/s and its ratio to each baseline
    (column heading -> path name), after a blank line and ``title``."""
    print(f"\n{title}")
    print("| path | rows/s | " + " | ".join(baselines) + " |")
    print("| --- | ---: |" + " ---: |" * len(baselines))
    for name, rate in results.items():
        ratios = " | ".join(f"{rate / results[base]:.2f}x" for base in baselines.values())
        print(f"| {name} | {rate:,.0f} | {ratios} |")

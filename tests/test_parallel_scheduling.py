"""How ``make test`` spreads the suite over pytest-xdist workers (tests/fixtures/parallel.py),
checked on a small suite run with two workers: a module stays on one worker, the
``timing_sensitive`` tests of several modules run one after another on one worker and first,
``slow`` modules start before the others."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RECORD = """
import json, os, time

def record(name, seconds=0.0):
    start = time.monotonic()
    time.sleep(seconds)
    line = {"test": name, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "start": start, "end": time.monotonic()}
    with open(os.environ["RECORD"], "a") as out:
        out.write(json.dumps(line) + "\\n")
"""


def _module(name: str, tests: int, marker: str | None = None, seconds: float = 0.0) -> str:
    lines = ["import pytest", "from record import record"]
    if marker:
        lines.append(f"pytestmark = pytest.mark.{marker}")
    for n in range(tests):
        lines += [f"def test_{n}():", f"    record('{name}::{n}', {seconds})"]
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(900)  # three interpreters start and collect: minutes on a loaded machine
def test_modules_stay_whole_timing_tests_run_alone_and_first(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "record.py").write_text(RECORD)
    (suite / "conftest.py").write_text('pytest_plugins = ["tests.fixtures.parallel"]\n')
    modules = {
        "test_drill_a.py": _module("drill_a", 2, "timing_sensitive", 0.3),
        "test_drill_b.py": _module("drill_b", 2, "timing_sensitive", 0.3),
        "test_minutes.py": _module("minutes", 1, "slow"),
        "test_many.py": _module("many", 6),
        "test_few.py": _module("few", 3),
    }
    for name, text in modules.items():
        (suite / name).write_text(text)
    record = tmp_path / "record.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_ADD"))}
    env.update(RECORD=str(record), PYTHONPATH=f"{ROOT}{os.pathsep}{suite}")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "--dist", "loadgroup", "--rootdir", str(suite), str(suite)],
        cwd=suite, env=env, capture_output=True, text=True, timeout=840, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(runs) == 14

    def workers(prefix: str) -> set[str]:
        return {r["worker"] for r in runs if r["test"].split("::")[0] in prefix.split()}

    for module in ("drill_a", "drill_b", "minutes", "many", "few"):
        assert len(workers(module)) == 1, (module, runs)
    assert workers("drill_a drill_b") == workers("drill_a"), "the drills share one worker"
    assert workers("drill_a") <= {"gw0", "gw1"}

    drills = sorted((r for r in runs if r["test"].startswith("drill")), key=lambda r: r["start"])
    for earlier, later in itertools.pairwise(drills):
        assert later["start"] >= earlier["end"], f"two drills overlapped: {earlier}, {later}"

    first = {}
    for r in sorted(runs, key=lambda r: r["start"]):
        first.setdefault(r["worker"], r["test"].split("::")[0])
    assert sorted(first.values()) == ["drill_a", "minutes"], first

"""Install size and time of serdes alone, of the server extra, and of confluent-kafka's
serializers, each into a fresh virtualenv.

    .venv/bin/python bench/install_size.py [--repeat 1]

Builds this tree's wheel once, then for each target creates a virtualenv and times
``pip install --no-compile TARGET`` (pip's cache warm after the first run: the times are
resolving and unpacking, not downloading), and reports the size of ``site-packages`` (pip,
setuptools and their metadata excluded) and the number of distributions installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PIP_WHEEL = (sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q")
BASELINE = {"pip", "setuptools", "wheel"}


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def measure(target: str, tmp: Path) -> tuple[float, int, int]:
    venv = tmp / "venv"
    if venv.exists():
        shutil.rmtree(venv)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    started = time.perf_counter()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile", target],
        check=True,
        env=env,
        cwd=tmp,
    )
    seconds = time.perf_counter() - started
    site = next((venv / "lib").glob("python3*/site-packages"))
    size = 0
    count = 0
    for entry in site.iterdir():
        if entry.name.endswith(".dist-info"):
            dist = entry.name.split("-")[0].lower().replace("_", "-")
            if dist not in BASELINE:
                count += 1
            continue
        top = entry.name.split(".")[0].lower()
        if top in BASELINE or top in ("_distutils_hack", "distutils-precedence", "pkg_resources"):
            continue
        size += _tree_bytes(entry) if entry.is_dir() else entry.stat().st_size
    return seconds, size, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        subprocess.run(
            [*_PIP_WHEEL, "-w", str(tmp / "dist"), str(ROOT)],
            check=True,
        )
        wheel = next((tmp / "dist").glob("pyschemaregistry-*.whl"))
        targets = {
            "pyschemaregistry (serdes alone)": str(wheel),
            "pyschemaregistry[server]": f"pyschemaregistry[server] @ {wheel.as_uri()}",
            "confluent-kafka[schemaregistry,avro,protobuf,json]": (
                "confluent-kafka[schemaregistry,avro,protobuf,json]"
            ),
        }
        print("| install | distributions | site-packages MB | install s (median) |")
        print("|---|---:|---:|---:|")
        for label, target in targets.items():
            runs = [measure(target, tmp) for _ in range(args.repeat + 1)][1:]  # first warms
            seconds = statistics.median(r[0] for r in runs)
            _, size, count = runs[-1]
            print(f"| `{label}` | {count} | {size / 1e6:.0f} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()

#!/bin/bash
# Sets up Karapace (Aiven-Open/karapace) as a benchmark peer OUTSIDE this repository, the way
# docs/benchmarks.md ("Peers: Confluent Schema Registry, Karapace") describes. It is not a
# dependency of the product: nothing in registry/ imports it, and no test needs it.
#
#   bench/peers/karapace-setup.sh [DEST]           # DEST defaults to /work/karapace
#
# Needs the git directories of two public repositories, already on this machine:
#   KARAPACE_GIT  Aiven-Open/karapace  (default /work/.mirror/Aiven-Open+karapace/repo)
#   BUF_GIT       Aiven-Open/buf       (default /work/.mirror/Aiven-Open+buf/repo)
# Here they came from the agent session's `fetch` tool (github:Aiven-Open/karapace,
# github:Aiven-Open/buf); where that tool is not available, clone the two repositories by other
# means and point the variables at them, or this script fails at the first step. The Go module
# proxy does not serve the buf fork, which is why it is a local checkout.
# Also needs: uv, Python 3.11 (PYTHON, default python3.11; Karapace declares >= 3.12 but imports
# and runs on 3.11), Go (GO, default /usr/local/go/bin/go) with the Go module proxy, and PyPI.
#
# Deviations from Karapace's own install (none touches Avro-only benchmarks beyond Avro parsing):
# - Python 3.11 instead of >= 3.12;
# - upstream `avro` 1.12.x from PyPI instead of Aiven's patched fork (a GitHub archive URL,
#   not reachable here);
# - the Go `protopace` library built with `go build -buildmode=c-shared` against the local buf
#   checkout (Karapace's setup.py uses setuptools-golang, which needs the Go proxy for the fork);
# - Karapace's source is put on sys.path with a .pth file instead of `pip install .`.
#
# Then run it with bench/peers/karapace-run.sh (or see bench/compare_karapace.sh).
set -euo pipefail
DEST=${1:-/work/karapace}
KARAPACE_GIT=${KARAPACE_GIT:-/work/.mirror/Aiven-Open+karapace/repo}
BUF_GIT=${BUF_GIT:-/work/.mirror/Aiven-Open+buf/repo}
KARAPACE_COMMIT=${KARAPACE_COMMIT:-3bbc1f8d}   # main of 2026-06-23 (merge of PR #1313)
BUF_COMMIT=${BUF_COMMIT:-099cfb8b4b31}          # the fork's commit named in go/protopace/go.mod
PYTHON=${PYTHON:-python3.11}
GO=${GO:-/usr/local/go/bin/go}

for g in "$KARAPACE_GIT" "$BUF_GIT"; do
  git --git-dir "$g" rev-parse --verify -q HEAD > /dev/null \
    || { echo "no git directory at $g (see this script's header)" >&2; exit 1; }
done
mkdir -p "$DEST"
echo "== sources: karapace $KARAPACE_COMMIT, buf fork $BUF_COMMIT -> $DEST"
rm -rf "$DEST/src" "$DEST/buf"
mkdir -p "$DEST/src" "$DEST/buf" "$DEST/lib"
# only what is built and run (the snapshot may lack some large website files)
git --git-dir "$KARAPACE_GIT" archive "$KARAPACE_COMMIT" src go requirements pyproject.toml setup.py LICENSE \
  | tar -x -C "$DEST/src"
git --git-dir "$BUF_GIT" archive "$BUF_COMMIT" | tar -x -C "$DEST/buf"
full=$(git --git-dir "$KARAPACE_GIT" rev-parse "$KARAPACE_COMMIT")
# setuptools-scm would write this file at install time
printf '__version__ = version = "6.2.0+g%s"\n' "${full:0:8}" > "$DEST/src/src/karapace/version.py"

echo "== protopace (Go, c-shared) against the local buf fork"
(
  cd "$DEST/src/go/protopace"
  "$GO" mod edit -replace "github.com/bufbuild/buf=$DEST/buf"
  GOFLAGS=-mod=mod GOTOOLCHAIN=local "$GO" build -buildmode=c-shared -o "$DEST/lib/protopacelib.so" .
)
rm -f "$DEST/lib/protopacelib.h"

echo "== virtualenv ($PYTHON) with Karapace's pinned requirements"
uv venv --python "$PYTHON" "$DEST/venv"
# its pinned set, minus the patched avro fork (upstream avro 1.12.x from PyPI instead)
grep -v -E '^\s*(#|avro @|-e )' "$DEST/src/requirements/requirements.txt" | sed 's/\s*#.*//' \
  | grep -v '^\s*$' > "$DEST/requirements.txt"
echo 'avro>=1.12,<1.13' >> "$DEST/requirements.txt"
VIRTUAL_ENV="$DEST/venv" uv pip install -r "$DEST/requirements.txt"
site=$("$DEST/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n%s\n' "$DEST/src/src" "$DEST/lib" > "$site/karapace-src.pth"

echo "== check"
"$DEST/venv/bin/python" -c 'import karapace.core.protobuf.protopace.protopace as p, karapace, avro; print("karapace", karapace.__file__, "protopace", p.lib_file)'
echo "Karapace is set up in $DEST; run it with bench/peers/karapace-run.sh"

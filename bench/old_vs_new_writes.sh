#!/bin/bash
# Registration throughput of this checkout against an older commit, in the same run (scenarios
# interleaved by bench/registry_bench.py). Both servers run from this virtualenv; the old one
# from an exported tree of OLD_COMMIT (git archive, no worktree).
#
#   bench/old_vs_new_writes.sh sqlite 16 out.json
#   bench/old_vs_new_writes.sh kafka 1 out.json 127.0.0.1:19092     # scripts/kafka start ...
#
# env: OLD_COMMIT (default 0ae3b01, before group commit), SECONDS_PER_RUN (8), ROUNDS (2),
#      SCENARIOS (default register_subject; e.g. "register_version register_subject")
set -euo pipefail
kind=$1; conc=$2; out=$3; boot=${4:-}
NEW=$(cd "$(dirname "$0")/.." && pwd); PY=$NEW/.venv/bin/python
OLD=$(mktemp -d); git -C "$NEW" archive "${OLD_COMMIT:-0ae3b01}" | tar -x -C "$OLD"
tag=$(date +%s%N | tail -c 7)
pn=$((20000 + RANDOM % 10000)); po=$((pn + 1))
if [ "$kind" = sqlite ]; then
  sn="sqlite:///$OLD/new-$tag.db"; so="sqlite:///$OLD/old-$tag.db"
else
  sn="kafka://$boot/?topic=bench_new_$tag"; so="kafka://$boot/?topic=bench_old_$tag"
fi
(cd "$NEW" && exec "$PY" -m registry.cli serve --port $pn --store "$sn" > "$OLD/new.log" 2>&1) &
pidn=$!
(cd "$OLD" && exec "$PY" -m registry.cli serve --port $po --store "$so" > "$OLD/old.log" 2>&1) &
pido=$!
trap 'kill $pidn $pido 2>/dev/null || true' EXIT
for p in $pn $po; do
  for _ in $(seq 120); do curl -sf "127.0.0.1:$p/ready" > /dev/null && break; sleep 0.5; done
done
"$PY" "$NEW/bench/registry_bench.py" "http://127.0.0.1:$pn" --compare "old=http://127.0.0.1:$po" \
  --scenarios ${SCENARIOS:-register_subject} --subjects 100 --no-ceiling --concurrency "$conc" \
  --seconds "${SECONDS_PER_RUN:-8}" --warmup 2 --rounds "${ROUNDS:-2}" --json "$out"

#!/bin/bash
# Registration with the audit trail's file sink on (SCHEMA_REGISTRY_AUDIT_FILE) against the
# same checkout with it off, in the same run: two servers from this virtualenv, each on a fresh
# SQLite file, scenarios interleaved by bench/registry_bench.py (issue 28: within 10%).
#
#   bench/audit_ab.sh 16 out.json
#   bench/audit_ab.sh 1 out.json
#
# env: SECONDS_PER_RUN (8), ROUNDS (2), SCENARIOS (default "register_subject register_version")
set -euo pipefail
conc=$1; out=$2
REPO=$(cd "$(dirname "$0")/.." && pwd); PY=$REPO/.venv/bin/python
TMP=$(mktemp -d)
poff=$((20000 + RANDOM % 10000)); pon=$((poff + 1))
(cd "$TMP" && exec "$PY" -m registry.cli serve --port $poff --store "sqlite:///$TMP/off.db" \
  > "$TMP/off.log" 2>&1) &
pidoff=$!
(cd "$TMP" && SCHEMA_REGISTRY_AUDIT_FILE="$TMP/audit.jsonl" exec "$PY" -m registry.cli serve \
  --port $pon --store "sqlite:///$TMP/on.db" > "$TMP/on.log" 2>&1) &
pidon=$!
trap 'kill $pidoff $pidon 2>/dev/null || true; wait 2>/dev/null; rm -rf "$TMP"' EXIT
for p in $poff $pon; do
  for _ in $(seq 120); do curl -sf "127.0.0.1:$p/ready" > /dev/null && break; sleep 0.5; done
done
"$PY" "$REPO/bench/registry_bench.py" "http://127.0.0.1:$poff" \
  --compare "audit-file=http://127.0.0.1:$pon" \
  --scenarios ${SCENARIOS:-register_subject register_version} --subjects 100 --no-ceiling \
  --concurrency "$conc" --seconds "${SECONDS_PER_RUN:-8}" --warmup 2 --rounds "${ROUNDS:-2}" \
  --json "$out"
echo "audit events written: $(wc -l < "$TMP/audit.jsonl")"

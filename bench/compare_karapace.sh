#!/bin/bash
# Ours on the Kafka store against Karapace, same broker, same load generator, same run: the
# comparison recorded in docs/benchmarks.md ("Kafka store against Karapace"). One command:
#
#   bench/compare_karapace.sh [OUT_DIR]          # default /tmp/compare-karapace-<time>
#
# 1. starts (or reuses) a Kafka broker: scripts/kafka start --dir /tmp/kbench-kafka --port 19092;
# 2. starts Karapace from KARAPACE_DIR (default /work/karapace, made by
#    bench/peers/karapace-setup.sh) on a free port with a fresh topic of its own;
# 3. runs bench/registry_bench.py --start-ours --store kafka (a fresh topic of ours) with
#    --compare karapace=...: by default (SUBJECTS=0) on the two fresh topics, what a client of a
#    new registry sees: new subjects and new versions (register_new) and new subjects
#    (register_subject), with 1 and 16 clients; with SUBJECTS=N both are pre-filled with N
#    subjects first and every scenario runs (the earlier recorded runs: SUBJECTS=4000; Karapace
#    then pays a scan of all its schemas per registration); writes OUT_DIR/results.md,
#    results.json, bench.log;
# 4. counts the records per Kafka transaction of ours' topic per scenario (group commit batch
#    sizes: bench/peers/topic_batches.py) into OUT_DIR/batches.md;
# 5. stops Karapace (and the broker, if this script started it).
#
# env: OURS_BIN (our schema-registry executable; default this checkout's .venv), SUBJECTS (0),
#      SCENARIOS (with SUBJECTS=0 "register_new register_subject", else every default one),
#      ROUNDS (3), SECONDS_PER_RUN (10), WARMUP (2), CLIENTS ("1 16"), BROKER_PORT (19092),
#      BROKER_DIR (/tmp/kbench-kafka), EXTRA (more registry_bench.py options, e.g. --no-ceiling)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PY=$REPO/.venv/bin/python
OUT=${1:-/tmp/compare-karapace-$(date +%Y%m%d-%H%M%S)}
BROKER_PORT=${BROKER_PORT:-19092}
BROKER_DIR=${BROKER_DIR:-/tmp/kbench-kafka}
BOOT=127.0.0.1:$BROKER_PORT
mkdir -p "$OUT"
tag=$(date +%s)

started_broker=
if ! (exec 3<>"/dev/tcp/127.0.0.1/$BROKER_PORT") 2>/dev/null; then
  "$REPO/scripts/kafka" start --dir "$BROKER_DIR" --port "$BROKER_PORT"
  started_broker=1
fi

kport=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ktopic=karapace_bench_$tag
setsid "$REPO/bench/peers/karapace-run.sh" "$BOOT" "$kport" "$ktopic" > "$OUT/karapace.log" 2>&1 &
kpid=$!   # the script execs Karapace: this is its process
cleanup() {
  kill "$kpid" 2>/dev/null || true
  wait "$kpid" 2>/dev/null || true
  if [ -n "$started_broker" ]; then "$REPO/scripts/kafka" stop --dir "$BROKER_DIR" || true; fi
}
trap cleanup EXIT
for _ in $(seq 240); do
  if curl -sf "127.0.0.1:$kport/_health" | grep -q '"schema_registry_is_primary":true'; then break; fi
  kill -0 "$kpid" 2>/dev/null || { echo "Karapace exited; see $OUT/karapace.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "127.0.0.1:$kport/_health" | grep -q '"schema_registry_is_primary":true' \
  || { echo "Karapace not primary after 120 s; see $OUT/karapace.log" >&2; exit 1; }

otopic=bench_ours_$tag
bpid=$(cat "$BROKER_DIR/broker.pid" 2>/dev/null || true)   # its CPU per request, when ours
ours_bin=()
[ -n "${OURS_BIN:-}" ] && ours_bin=(--ours-bin "$OURS_BIN")
subjects=${SUBJECTS:-0}
scenarios=()
if [ -n "${SCENARIOS:-}" ]; then
  read -r -a scenarios <<< "$SCENARIOS"
elif [ "$subjects" = 0 ]; then
  scenarios=(register_new register_subject)
fi
[ ${#scenarios[@]} -gt 0 ] && scenarios=(--scenarios "${scenarios[@]}")
# shellcheck disable=SC2086
"$PY" "$REPO/bench/registry_bench.py" --start-ours --store kafka --bootstrap "$BOOT" \
  --topic "$otopic" "${ours_bin[@]}" --subjects "$subjects" "${scenarios[@]}" --clients ${CLIENTS:-1 16} \
  --rounds "${ROUNDS:-3}" --seconds "${SECONDS_PER_RUN:-10}" --warmup "${WARMUP:-2}" \
  --compare "karapace=http://127.0.0.1:$kport" --compare-pid "karapace=$kpid" \
  ${bpid:+--broker-pid "$bpid"} \
  --json "$OUT/results.json" ${EXTRA:-} > "$OUT/results.md" 2> "$OUT/bench.log" || rc=$?
"$PY" "$REPO/bench/peers/topic_batches.py" "$BOOT" "$otopic" "$OUT/results.json" \
  > "$OUT/batches.md" 2>> "$OUT/bench.log" || true
cat "$OUT/results.md" "$OUT/batches.md"
echo "results in $OUT (ours' topic $otopic, Karapace's $ktopic)"
exit "${rc:-0}"

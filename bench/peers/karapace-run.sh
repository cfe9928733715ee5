#!/bin/bash
# Runs the Karapace set up by bench/peers/karapace-setup.sh as a benchmark peer, in the
# foreground (exec: the process id of this script becomes Karapace's).
#
#   bench/peers/karapace-run.sh BOOTSTRAP PORT [TOPIC]
#   e.g. bench/peers/karapace-run.sh 127.0.0.1:19092 18081 karapace_bench_$(date +%s)
#
# One process (`python -m karapace`: FastAPI/uvicorn, its Kafka reader thread and coordinator),
# its own topic and group on the given broker, log level WARNING, defaults otherwise (BACKWARD,
# telemetry NOOP). KARAPACE_DIR (default /work/karapace) is where the set-up put it.
set -euo pipefail
boot=$1; port=$2; topic=${3:-karapace_bench_$(date +%s)}
DIR=${KARAPACE_DIR:-/work/karapace}
[ -x "$DIR/venv/bin/python" ] || { echo "no Karapace in $DIR (run bench/peers/karapace-setup.sh)" >&2; exit 1; }
export KARAPACE_KARAPACE_REGISTRY=true
export KARAPACE_BOOTSTRAP_URI=$boot
export KARAPACE_HOST=127.0.0.1
export KARAPACE_PORT=$port
export KARAPACE_ADVERTISED_HOSTNAME=127.0.0.1
export KARAPACE_ADVERTISED_PORT=$port
export KARAPACE_REGISTRY_HOST=127.0.0.1
export KARAPACE_REGISTRY_PORT=$port
export KARAPACE_TOPIC_NAME=$topic
export KARAPACE_GROUP_ID=${topic}_group
export KARAPACE_CLIENT_ID=${topic}_client
export KARAPACE_MASTER_ELIGIBILITY=true
export KARAPACE_LOG_LEVEL=WARNING
cd "$DIR"
exec "$DIR/venv/bin/python" -m karapace

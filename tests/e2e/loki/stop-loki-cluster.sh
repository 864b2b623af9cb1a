#!/usr/bin/env bash
# Stop the cluster started by start-loki-cluster.sh DATA_DIR: the gateway
# (nginx, SIGQUIT) and the three Loki nodes (SIGTERM, all at once), each
# SIGKILLed after $LOKI_STOP_TIMEOUT seconds (default 20); returns when all of
# them are gone. Idempotent: nothing running is fine. Leaves DATA_DIR in place.
#
#   tests/e2e/loki/stop-loki-cluster.sh DATA_DIR
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=cluster-common.sh
. "$here/cluster-common.sh"

want_args 1 1 "DATA_DIR" "$@"
exit_unless_dir "$1"
cluster_init "$1"

rc=0
stop_gateway QUIT || rc=1

# SIGTERM all nodes first, then wait: the three shut down in parallel.
declare -A pids=()
for n in "${CLUSTER_NODES[@]}"; do
    if pid="$(node_pid "$n")"; then
        log "node $n (pid $pid): SIGTERM"
        kill -TERM "$pid" 2>/dev/null || true
        pids[$n]="$pid"
    else
        rm -f "$(node_dir "$n")/loki.pid"
    fi
done
for n in "${!pids[@]}"; do
    if wait_gone "${pids[$n]}" "node $n" "$CLUSTER_STOP_TIMEOUT"; then
        rm -f "$(node_dir "$n")/loki.pid"
    else
        rc=1
    fi
done
if (( rc == 0 )); then
    log "cluster of $data_dir stopped"
fi
exit "$rc"

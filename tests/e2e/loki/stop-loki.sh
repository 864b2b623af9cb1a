#!/usr/bin/env bash
# Stop the Loki started by start-loki.sh DATA_DIR: SIGTERM, then SIGKILL after
# $LOKI_STOP_TIMEOUT seconds (default 20). Idempotent: nothing running is fine.
#
#   tests/e2e/loki/stop-loki.sh DATA_DIR
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"

want_args 1 1 "DATA_DIR" "$@"
exit_unless_dir "$1"
data_dir="$(cd "$1" && pwd)"
timeout="${LOKI_STOP_TIMEOUT:-20}"

if ! pid="$(loki_pid "$data_dir")"; then
    rm -f "$data_dir/loki.pid"
    log "loki of $data_dir is not running"
    exit 0
fi

log "stopping loki (pid $pid)"
kill -TERM "$pid" 2>/dev/null || true
deadline=$(( $(date +%s) + timeout ))
while kill -0 "$pid" 2>/dev/null; do
    if (( $(date +%s) >= deadline )); then
        log "loki (pid $pid) still running after ${timeout}s; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
        break
    fi
    sleep 0.2
done
rm -f "$data_dir/loki.pid"
log "loki stopped"

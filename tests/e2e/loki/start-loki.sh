#!/usr/bin/env bash
# Start a throw-away single-binary Loki for tests, in the background.
#
#   tests/e2e/loki/start-loki.sh DATA_DIR [HTTP_PORT=3100] [GRPC_PORT=9096]
#
# Builds Loki if needed (build-loki.sh), writes DATA_DIR/loki-config.yaml,
# starts Loki (log: DATA_DIR/loki.log, pid: DATA_DIR/loki.pid) and waits until
# GET /ready answers 200 (at most $LOKI_START_TIMEOUT seconds, default 60).
# Prints the base URL (http://127.0.0.1:PORT) as its last stdout line.
# Idempotent: if the Loki of DATA_DIR is already running and ready, it just
# prints the URL. Stop with stop-loki.sh DATA_DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"

want_args 1 3 "DATA_DIR [HTTP_PORT] [GRPC_PORT]" "$@"
http_port="${2:-3100}"
grpc_port="${3:-9096}"
for p in "$http_port" "$grpc_port"; do
    if ! valid_port "$p"; then
        echo "$0: bad port '$p'" >&2
        exit 2
    fi
done
mkdir -p "$1"
data_dir="$(cd "$1" && pwd)"
timeout="${LOKI_START_TIMEOUT:-60}"
url="http://127.0.0.1:$http_port"
pid_file="$data_dir/loki.pid"
log_file="$data_dir/loki.log"
cfg_file="$data_dir/loki-config.yaml"

is_ready() { [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/ready" || true)" == 200 ]]; }
log_tail() { log "last lines of $log_file:"; tail -n 40 "$log_file" >&2 || true; }

# Already running for this DATA_DIR?
if pid="$(loki_pid "$data_dir")"; then
    if grep -q -- "^  http_listen_port: $http_port\$" "$cfg_file" 2>/dev/null; then
        for _ in $(seq 1 "$timeout"); do
            if is_ready; then
                log "loki already running (pid $pid) at $url"
                printf '%s\n' "$url"
                exit 0
            fi
            sleep 1
        done
        log "loki (pid $pid) is running but $url/ready is not 200 after ${timeout}s"
        log_tail
        exit 1
    fi
    log "loki (pid $pid) already runs for $data_dir on another port; stop it first"
    exit 1
fi
rm -f "$pid_file"

bin="$("$here/build-loki.sh" | tail -n 1)"

for p in "$http_port" "$grpc_port"; do
    if port_busy "$p"; then
        log "port 127.0.0.1:$p is already in use"
        exit 1
    fi
done

esc="$(printf '%s' "$data_dir" | sed 's/[|&\\]/\\&/g')"
sed -e "s|@DATA_DIR@|$esc|g" -e "s|@HTTP_PORT@|$http_port|g" -e "s|@GRPC_PORT@|$grpc_port|g" \
    "$here/loki-config.yaml" > "$cfg_file"

log "starting loki $LOKI_VERSION at $url (data: $data_dir)"
printf '\n=== %s start-loki: %s -config.file=%s\n' "$(date -u +%FT%TZ)" "$bin" "$cfg_file" >> "$log_file"
# setsid: own session, so Loki survives (and is not signalled with) the caller's process group.
setsid "$bin" -config.file="$cfg_file" >> "$log_file" 2>&1 < /dev/null &
pid=$!
echo "$pid" > "$pid_file"

deadline=$(( $(date +%s) + timeout ))
while :; do
    if is_ready; then
        log "loki ready (pid $pid) after $(( timeout - (deadline - $(date +%s)) ))s"
        printf '%s\n' "$url"
        exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        log "loki exited during startup"
        rm -f "$pid_file"
        log_tail
        exit 1
    fi
    if (( $(date +%s) >= deadline )); then
        log "loki not ready after ${timeout}s; stopping it"
        log_tail
        "$here/stop-loki.sh" "$data_dir" || true
        exit 1
    fi
    sleep 0.5
done

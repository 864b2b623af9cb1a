# Shared helpers for the Loki test scripts. Source, don't run.
# shellcheck shell=bash

# Go may not be on PATH on a fresh machine.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
    export PATH="$PATH:/usr/local/go/bin"
fi

SKALD_CACHE="${SKALD_CACHE_DIR:-$HOME/.cache/skald}"
LOKI_MODULE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The pinned version is whatever go.mod requires.
LOKI_VERSION="$(awk '$1 == "github.com/grafana/loki/v3" && $2 ~ /^v/ { print $2; exit }
                     $1 == "require" && $2 == "github.com/grafana/loki/v3" { print $3; exit }' \
                "$LOKI_MODULE_DIR/go.mod")"
if [[ -z "$LOKI_VERSION" ]]; then
    echo "cannot find the github.com/grafana/loki/v3 version in $LOKI_MODULE_DIR/go.mod" >&2
    exit 1
fi

log() { printf '[skald-loki] %s\n' "$*" >&2; }

require_go() {
    if ! command -v go >/dev/null 2>&1; then
        log "go not found (looked on PATH and in /usr/local/go/bin)"
        exit 1
    fi
}

# loki_pid DATA_DIR: print the pid from DATA_DIR/loki.pid and succeed only if
# that process is alive and really is the Loki started with DATA_DIR's config
# (guards against a stale pid file whose pid was reused).
loki_pid() {
    local pid_file="$1/loki.pid" pid
    [[ -s "$pid_file" ]] || return 1
    pid="$(tr -dc '0-9' < "$pid_file")"
    [[ -n "$pid" ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-config.file=$1/loki-config.yaml" || return 1
    printf '%s\n' "$pid"
}

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

# want_args MIN MAX USAGE "$@": exit 2 with "usage: SCRIPT USAGE" unless MIN to MAX arguments follow.
want_args() {
    local min="$1" max="$2" usage="$3"
    shift 3
    if (( $# < min || $# > max )); then
        echo "usage: $0 $usage" >&2
        exit 2
    fi
}

# exit_unless_dir DIR: a stop script's DATA_DIR that does not exist has nothing to stop.
exit_unless_dir() {
    if [[ ! -d "$1" ]]; then
        log "no such directory $1; nothing to stop"
        exit 0
    fi
}

valid_port() { [[ "$1" =~ ^[0-9]+$ ]] && (( $1 >= 1 && $1 <= 65535 )); }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

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

# go_build_cached OUT_BIN PACKAGE: build PACKAGE (from the tools module) into
# OUT_BIN unless OUT_BIN already exists. Static (CGO_ENABLED=0, as Loki's own
# Makefile builds it); both binaries use the same flags so the second build
# reuses the Go build cache of the first. Build output goes to stderr.
go_build_cached() {
    local bin="$1" pkg="$2" start tmp
    if [[ -x "$bin" ]]; then
        log "already built: $bin"
        return 0
    fi
    require_go
    mkdir -p "$(dirname "$bin")"
    # One build at a time per binary (e.g. two test processes starting at once).
    exec 9>"$bin.lock"
    if ! flock -n 9; then
        log "another build of $bin is running; waiting for it"
        flock 9
    fi
    if [[ -x "$bin" ]]; then
        log "built meanwhile: $bin"
        return 0
    fi
    log "building $pkg@$LOKI_VERSION into $bin (a first build takes many minutes) ..."
    start=$(date +%s)
    tmp="$bin.tmp.$$"
    (
        cd "$LOKI_MODULE_DIR"
        local v=github.com/grafana/loki/v3/pkg/util/build
        CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" \
            go build -trimpath \
            -ldflags "-s -w -X $v.Version=$LOKI_VERSION -X $v.Branch=$LOKI_VERSION -X $v.Revision=module-proxy" \
            -o "$tmp" "$pkg"
    ) >&2 || { rm -f "$tmp"; log "build of $pkg failed"; return 1; }
    mv -f "$tmp" "$bin"
    log "built $bin in $(( $(date +%s) - start ))s"
}

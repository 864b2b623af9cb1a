#!/usr/bin/env bash
# Build (once) the pinned Grafana Loki binary and print its path.
#
#   tests/e2e/loki/build-loki.sh            -> last stdout line: /path/to/loki
#
# Binary: ${SKALD_CACHE_DIR:-$HOME/.cache/skald}/loki-<version>/loki
# Builds only if that file is missing (idempotent). Needs Go and the module
# proxy; the version is the one pinned in tests/e2e/loki/go.mod.
# Everything except the final path goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"

out_dir="$SKALD_CACHE/loki-$LOKI_VERSION"
bin="$out_dir/loki"

if [[ -x "$bin" ]]; then
    log "loki $LOKI_VERSION already built: $bin"
else
    require_go
    mkdir -p "$out_dir"
    log "building loki $LOKI_VERSION into $bin (first build takes several minutes) ..."
    start=$(date +%s)
    tmp="$bin.tmp.$$"
    trap 'rm -f "$tmp"' EXIT
    (
        cd "$here"
        GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" \
            go build -trimpath \
            -ldflags "-s -w -X github.com/grafana/loki/v3/pkg/util/build.Version=$LOKI_VERSION -X github.com/grafana/loki/v3/pkg/util/build.Branch=release -X github.com/grafana/loki/v3/pkg/util/build.Revision=proxy" \
            -o "$tmp" github.com/grafana/loki/v3/cmd/loki
    ) >&2
    mv -f "$tmp" "$bin"
    trap - EXIT
    log "built loki $LOKI_VERSION in $(( $(date +%s) - start ))s"
fi

printf '%s\n' "$bin"

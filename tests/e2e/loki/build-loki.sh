#!/usr/bin/env bash
# Build (once) the pinned Grafana Loki binary and print its path.
#
#   tests/e2e/loki/build-loki.sh            -> last stdout line: /path/to/loki
#
# Binary: ${SKALD_CACHE_DIR:-$HOME/.cache/skald}/loki-<version>/loki, built
# only if missing (idempotent). Needs only Go and the module proxy; the version
# is the one pinned in tests/e2e/loki/go.mod. Everything else goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"

bin="$SKALD_CACHE/loki-$LOKI_VERSION/loki"
go_build_cached "$bin" github.com/grafana/loki/v3/cmd/loki
printf '%s\n' "$bin"

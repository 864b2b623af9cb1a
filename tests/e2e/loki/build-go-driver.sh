#!/usr/bin/env bash
# Build (once) Grafana's Go Loki Docker logging driver (the reference skald is
# benchmarked against) and print its path.
#
#   tests/e2e/loki/build-go-driver.sh       -> last stdout line: /path/to/docker-driver
#
# Binary: ${SKALD_CACHE_DIR:-$HOME/.cache/skald}/docker-driver-<version>/docker-driver,
# static (CGO_ENABLED=0), from github.com/grafana/loki/v3/clients/cmd/docker-driver
# at the Loki version pinned in go.mod. Built only if missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"

bin="$SKALD_CACHE/docker-driver-$LOKI_VERSION/docker-driver"
go_build_cached "$bin" github.com/grafana/loki/v3/clients/cmd/docker-driver
printf '%s\n' "$bin"

#!/usr/bin/env bash
# Differential fuzzing of skald's pipeline stages against Promtail's own stages (the pinned
# Loki's clients/pkg/logentry/stages): random pipelines and input lines run through both, and
# every difference that pipeline_stages/README.md does not list as deliberate is printed,
# shrunk to a small case (difffuzz/main.go says what is compared). Exits 1 when there is one.
#
#   tests/e2e/loki/diff-fuzz.sh [difffuzz flags...]   e.g. -report-only, -max-print 5, -case N
#
# FUZZ_SEED (default 1) and FUZZ_SECONDS (default 60) set -seed and -seconds; the skald side is
# $SKALD_STAGE_ORACLE, or build/tests/tools/skald-stage-oracle (cmake --build build --target
# skald-stage-oracle).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"
require_go
repo="$(cd "$here/../../.." && pwd)"
oracle="${SKALD_STAGE_ORACLE:-$repo/build/tests/tools/skald-stage-oracle}"
if [[ ! -x "$oracle" ]]; then
    log "no skald-stage-oracle at $oracle (cmake --build build --target skald-stage-oracle, or set SKALD_STAGE_ORACLE)"
    exit 1
fi
bin="$SKALD_CACHE/difffuzz-$LOKI_VERSION/difffuzz"
mkdir -p "$(dirname "$bin")"
# Rebuilt every time (the Go build cache makes that a link once Loki was built).
(cd "$here" && CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" \
  go build -trimpath -o "$bin" ./difffuzz) >&2
"$bin" -oracle "$oracle" -readme "$repo/pipeline_stages/README.md" -seed "${FUZZ_SEED:-1}" -seconds "${FUZZ_SECONDS:-60}" "$@"

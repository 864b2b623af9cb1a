#!/usr/bin/env bash
# Runs skald's pipeline-stage corpus (tests/pipeline_stages/corpus) through Promtail's own
# stages (the pinned Loki's clients/pkg/logentry/stages) and prints every case whose outcome
# differs from the case's expectation, then "N of M cases as Promtail". Cases that depend on
# skald's fake clock (now/flush inputs, older_than, limit, sampling, pack's ingest_timestamp)
# are listed as skipped. The known differences are listed in pipeline_stages/README.md.
#
#   tests/e2e/loki/check-corpus.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$here/common.sh"
require_go
src="$(cd "$here/../../pipeline_stages" && pwd)"
bin="$SKALD_CACHE/corpuscheck-$LOKI_VERSION/corpuscheck"
mkdir -p "$(dirname "$bin")"
# Rebuilt every time (the Go build cache makes that a link once Loki was built).
(cd "$here" && CGO_ENABLED=0 GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" \
  go build -trimpath -o "$bin" ./corpuscheck) >&2
"$bin" "$src/corpus" "$src/geoip"

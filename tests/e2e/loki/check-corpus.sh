#!/usr/bin/env bash
# Runs skald's pipeline-stage corpus (tests/pipeline_stages/corpus, and peer_corpus: the cases
# imported from Promtail's own stage tests) through Promtail's own stages (the pinned Loki's
# clients/pkg/logentry/stages) and prints every case whose outcome differs from the case's
# expectation (its `promtail:` block where skald deliberately differs), then "N of M cases as
# Promtail"; exits 1 when one differs. Cases that depend on skald's fake clock (now/flush
# inputs, older_than, limit, sampling, pack's ingest_timestamp) are listed as skipped.
#
#   tests/e2e/loki/check-corpus.sh [CORPUS_DIR_OR_FILE...]   (default: both corpora)
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
# Where the pinned Loki's source is: each imported file's list of Go tests is checked against it.
LOKI_SRC="$(cd "$here" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/grafana/loki/v3)"
export LOKI_SRC
if (($# == 0)); then set -- "$src/corpus" "$src/peer_corpus"; fi
"$bin" "$src/geoip" "$@"

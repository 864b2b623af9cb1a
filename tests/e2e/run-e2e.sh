#!/usr/bin/env bash
# Runs the end-to-end suites (`ctest -L e2e` in BUILD) against a copy of the plugin of their
# own: BUNDLE created as skald-e2e, with its own metrics port (its journals are in the
# directory Docker keeps for it), so that an installed `skald` is left as it is. Afterwards
# the copy, its journals and the containers the tests made are removed, whatever the outcome.
#   tests/e2e/run-e2e.sh BUNDLE BUILD [CTEST_ARGS...]
# CTEST_ARGS go to ctest, e.g. -R 'e2e\.Pipeline$' for one suite. SKALD_E2E_PLUGIN,
# SKALD_E2E_METRICS_PORT and SKALD_E2E_LABELS (a ctest -L regex, default the label e2e) are for
# run-e2e-arm64.sh.
set -euo pipefail
bundle=$(cd "${1:?bundle directory}" && pwd)
build=${2:?build directory}
shift 2
plugin=${SKALD_E2E_PLUGIN:-skald-e2e}
metrics_port=${SKALD_E2E_METRICS_PORT:-9655}

cleanup() {
  local ids
  ids=$(docker ps -aq --filter name=e2e- 2>/dev/null || true)
  [ -z "$ids" ] || docker rm -f $ids >/dev/null 2>&1 || true
  docker plugin disable -f "$plugin" >/dev/null 2>&1 || true
  docker plugin rm -f "$plugin" >/dev/null 2>&1 || true  # its journals with it
}
trap cleanup EXIT
cleanup
docker plugin create "$plugin" "$bundle"
docker plugin set "$plugin" "METRICS_ADDR=127.0.0.1:$metrics_port"
docker plugin enable --timeout 0 "$plugin"
cd "$build"
SKALD_E2E_DRIVER=$plugin SKALD_E2E_METRICS_PORT=$metrics_port SKALD_E2E_BUNDLE=$bundle \
  ctest -L "${SKALD_E2E_LABELS:-^e2e\$}" --no-tests=error --output-on-failure "$@"

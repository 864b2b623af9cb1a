#!/usr/bin/env bash
# The negative test of `make tsan`'s suppressions: tsan_handler_race races on purpose inside a
# handler cpp-httplib's server runs; with tests/sanitize/tsan.supp, ThreadSanitizer must still
# report it (exit status 66, a report naming RacyHandler). A suppression that matches any frame
# of cpp-httplib's library (as `race:libcpp-httplib.so` did) hides it, and this fails.
#   tsan_must_report.sh PROGRAM SUPPRESSIONS
set -euo pipefail
program=${1:?program}
supp=${2:?suppressions file}
dir=$(mktemp -d /tmp/skald-tsan-negative.XXXXXX)
trap 'rm -rf "$dir"' EXIT
rc=0
TSAN_OPTIONS="suppressions=$supp:log_path=$dir/report:exitcode=66" "$program" || rc=$?
shopt -s nullglob
reports=("$dir"/report*)
if [[ $rc -ne 66 || ${#reports[@]} -eq 0 ]] || ! grep -q 'RacyHandler' "${reports[@]}"; then
  echo "FAIL: the race in RacyHandler was not reported (exit $rc, ${#reports[@]} report(s))" >&2
  for r in "${reports[@]}"; do head -40 "$r" >&2; done
  exit 1
fi
echo "ok: ThreadSanitizer reported the race in RacyHandler (exit $rc)"
grep -m1 'WARNING: ThreadSanitizer' "${reports[@]}"

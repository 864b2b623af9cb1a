#!/usr/bin/env bash
# `make asan` / `make tsan`: builds the tests with clang and a sanitizer and runs them; fails on
# a failing test or on any sanitizer report (one written by a test program or by a plugin the
# integration tests started).
#   asan  the unit and integration tests under AddressSanitizer, LeakSanitizer and UBSan, in the
#         clang build directory that `make fuzz` and `make thread-safety` share
#         (tests/sanitize/configure.sh)
#   tsan  the concurrent parts under ThreadSanitizer, in a build directory of its own: the unit
#         tests of the code that runs on several threads, a program of their own
#         (plugin_tsan_tests, tests/CMakeLists.txt), and what it links, nothing else
# Prints how long the build and the run took.
#
# Environment (all optional):
#   SAN_BUILD   build directory (build-clang / build-tsan)
#   SAN_JOBS    ninja -j and ctest -j (2)
#   SAN_TESTS   a ctest -R regex narrowing the tests run
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
kind="${1:?usage: run-sanitizer.sh asan|tsan}"
jobs="${SAN_JOBS:-2}"

case "$kind" in
  asan)
    build="${SAN_BUILD:-build-clang}"
    tests/sanitize/configure.sh "$build" clang
    targets=(skald plugin_unit_tests pipeline_stages_tests fake_loki_tests integration_tests)
    ctest_args=(-L '^(unit|integration)$')
    ;;
  tsan)
    build="${SAN_BUILD:-build-tsan}"
    tests/sanitize/configure.sh "$build" tsan
    targets=(plugin_tsan_tests tsan_handler_race)
    ctest_args=(-L '^tsan$')
    ;;
  *)
    echo "usage: run-sanitizer.sh asan|tsan" >&2
    exit 2
    ;;
esac

log() { printf '[%s] %s\n' "$kind" "$*" >&2; }

build_start=$(date +%s)
ninja -C "$build" -j"$jobs" "${targets[@]}"
build_s=$(($(date +%s) - build_start))
log "built in ${build_s} s"

# Every report goes to a file of its own, report.PID (test programs and the plugins they start
# alike; one log_path for ASan and UBSan, which share it); the test that hit one fails as well
# (ASan and UBSan stop the process, TSan exits with 66).
# ASan's quarantine (freed memory held back to catch a use after free) is 16 MB rather than
# 256: the integration tests bound the plugin's peak RSS (100 MB), and the default quarantine
# alone took it to 136 MB for a 64 MiB line sent in pieces (62 MB with 16).
reports="$root/$build/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
if [[ $kind == asan ]]; then
  export ASAN_OPTIONS="log_path=$reports/report:quarantine_size_mb=16:detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
  export UBSAN_OPTIONS="log_path=$reports/report:print_stacktrace=1:halt_on_error=1"
else
  unset UBSAN_OPTIONS  # TSan reads it too
  export TSAN_OPTIONS="log_path=$reports/report:suppressions=$root/tests/sanitize/tsan.supp:second_deadlock_stack=1"
fi

run_start=$(date +%s)
rc=0
(cd "$build" && ctest "${ctest_args[@]}" ${SAN_TESTS:+-R "$SAN_TESTS"} --no-tests=error --output-on-failure \
  -j"$jobs" --timeout 900) || rc=$?
run_s=$(($(date +%s) - run_start))
log "tests ran in ${run_s} s (build ${build_s} s)"

shopt -s nullglob
found=("$reports"/*)
if [[ ${#found[@]} -gt 0 ]]; then
  log "${#found[@]} sanitizer report(s) in $reports:"
  for f in "${found[@]}"; do
    echo "=== $f"
    head -80 "$f"
  done
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  log "tests failed"
  exit "$rc"
fi
log "no sanitizer reports"

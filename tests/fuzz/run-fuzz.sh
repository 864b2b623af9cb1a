#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of tests/fuzz (clang; ASan, UBSan) in the clang
# build directory that `make asan` and `make thread-safety` share (tests/sanitize/configure.sh:
# the product is compiled once for the three) and runs each for FUZZ_SECONDS on a scratch copy
# of its seed corpus (tests/fuzz/corpus/<name>/ is never modified). Prints per target the
# executions, libFuzzer's final coverage (cov: edges, ft: features) and the corpus size; fails
# when any target found a crash, a leak, a timeout or an out-of-memory (the input is saved in
# the run directory).
#
# Environment (all optional):
#   FUZZ_BUILD     build directory (build-clang)
#   FUZZ_SECONDS   seconds per target (60)
#   FUZZ_TARGETS   names to run, e.g. "go_template relabel" (every target)
#   FUZZ_JOBS      ninja -j (2)
#   FUZZ_RUNS      where runs go: <dir>/<name>/{corpus,crashes,log} (FUZZ_BUILD/runs)
#   FUZZ_SEED      libFuzzer's -seed (random): with one given, a run on the same build repeats
#                  the same inputs in the same order (as many as fit in FUZZ_SECONDS)
#
# A failing input is also printed in base64 (and its first bytes escaped), so a CI log is
# enough to reproduce a failure found on another machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build="${FUZZ_BUILD:-build-clang}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-2}"
runs="${FUZZ_RUNS:-$build/runs}"

log() { printf '[fuzz] %s\n' "$*" >&2; }

names=()
if [[ -n "${FUZZ_TARGETS:-}" ]]; then
  read -r -a names <<<"$FUZZ_TARGETS"
else
  for src in tests/fuzz/*_fuzz.cc; do
    n="$(basename "$src" .cc)"
    names+=("${n%_fuzz}")
  done
fi

tests/sanitize/configure.sh "$build" clang
build_start=$(date +%s)
ninja -C "$build" -j"$jobs" "${names[@]/%/_fuzz}"
log "built in $(($(date +%s) - build_start)) s"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

rows=()
failed=()
for name in "${names[@]}"; do
  bin="$build/tests/fuzz/${name}_fuzz"
  seeds="tests/fuzz/corpus/$name"
  [[ -x "$bin" ]] || { log "$name: no binary $bin"; exit 2; }
  [[ -d "$seeds" ]] || { log "$name: no seed corpus $seeds"; exit 2; }
  dir="$runs/$name"
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/crashes"
  cp -a "$seeds/." "$dir/corpus/"
  args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=30 -rss_limit_mb=2048
    -artifact_prefix="$dir/crashes/")
  [[ -f "tests/fuzz/$name.dict" ]] && args+=(-dict="tests/fuzz/$name.dict")
  [[ -n "${FUZZ_SEED:-}" ]] && args+=(-seed="$FUZZ_SEED")
  log "$name: ${seconds} s"
  rc=0
  # Scratch files (fuzz_support.h ScratchDir) go under the run's own TMPDIR: libFuzzer ends a
  # timed run without the destructors that would remove them.
  rm -rf "$dir/tmp" && mkdir -p "$dir/tmp"
  TMPDIR="$dir/tmp" "$bin" "${args[@]}" "$dir/corpus" >"$dir/log" 2>&1 || rc=$?
  rm -rf "$dir/tmp"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)"
  final="$(grep -E '^#[0-9]+.*cov: [0-9]+' "$dir/log" | tail -1 || true)"
  cov="$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$final")"
  ft="$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$final")"
  corp="$(sed -n 's/.*corp: \([0-9]*\).*/\1/p' <<<"$final")"
  result=ok
  if [[ $rc -ne 0 ]]; then
    result="FAILED (exit $rc)"
    failed+=("$name")
    log "$name: FAILED; input and log in $dir:"
    ls "$dir/crashes" >&2 || true
    grep -E 'ERROR:|runtime error:|invariant failed|deadly signal|uncaught|SUMMARY' "$dir/log" \
      | head -20 >&2 || true
    grep -E '^ *#[0-9]+ 0x' "$dir/log" | head -25 >&2 || true
    for input in "$dir"/crashes/*; do
      [[ -f "$input" ]] || continue
      log "$(basename "$input") ($(stat -c %s "$input") bytes), base64 (decode with base64 -d):"
      head -c 65536 "$input" | base64 -w 100 >&2
    done
  fi
  rows+=("| $name | $seconds | ${execs:-?} | ${speed:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $result |")
done

echo
echo "| target | seconds | executions | exec/s | cov | ft | corpus | result |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  log "crashes in: ${failed[*]} (reproduce: $build/tests/fuzz/<name>_fuzz <input>)"
  exit 1
fi

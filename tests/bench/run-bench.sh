#!/usr/bin/env bash
# `make bench`: builds what the benchmarks need, runs the parts, prints markdown tables with the
# issues' targets and writes $BENCH_OUT/results.json. Exits non-zero, naming each, when a
# benchmark program fails, a part asked for is skipped, or a target is missed (bench_report:
# a figure over its bound, or none from a part that ran).
#
#   1. micro    Google Benchmark: frame decode, reassembly, pipeline, labels, batch encoding
#   2. load     the real skald binary driven by a load generator, no Docker (plugin_load_bench)
#   3. docker   the real dockerd: none, json-file, skald, Grafana's Go driver -> one real Loki
#               (CPU, wall time, pushes per 10k lines), a plugin that only drains its FIFO (the
#               floor of a plugin's app time), then each plugin's freshness: a line on
#               a quiet stream, from its write to queryable (p50/p99 of 30 lines 1.5 s apart)
#   4. fleet    many short containers and many retained journals: per-container CPU, idle CPU
#               and wake-ups; first the plugin alone (fleet_bench), then the real dockerd with
#               a copy of skald of its own (skald-bench-fleet, from `make plugin`) and the Go
#               driver side by side (docker_fleet_bench)
#
# Environment (all optional):
#   BENCH_BUILD   build directory (build-bench), configured RelWithDebInfo with benchmarks
#   BENCH_OUT     where the JSON goes (build/bench)
#   BENCH_JOBS    ninja -j (2)
#   BENCH_PARTS   which parts to run ("micro load outage docker fleet"); outage: part 2's Loki
#                 outage run (VmRSS while Loki answers 503 for BENCH_OUTAGE_S, default 60 s)
#   BENCH_LINES   lines per run in parts 2 and 3 (200000)
#   BENCH_REPEAT  runs per variant in part 3 (3); medians are reported
#   BENCH_CONTAINERS  container counts of part 2 (1,10,50,100)
#   BENCH_LOAD_REPEAT runs per configuration in part 2 (3); the median CPU per line is shown
#   BENCH_FLEET_RUNS     the N x M workloads of part 4 (100x10,100x2000)
#   BENCH_FLEET_JOURNALS journals kept for part 4's idle figures (1000)
#   BENCH_FLEET_IDLE_S   seconds of each idle measurement in part 4 (30)
#   BENCH_FLEET_PARALLEL `docker run` at a time when part 4 starts containers (5: with 20,
#                 Debian's dockerd 20.10 was seen to deadlock in libnetwork's set-key hook,
#                 leaving containers Created and dockerd unresponsive until restarted)
#   BENCH_NO_BUILD 1: use the binaries already in BENCH_BUILD (no ninja)
#   BENCH_INSTALL 1 (default): when the installed skald plugin is not the binary just built,
#                 install it (the bundle of BENCH_BUILD's skald, `make bundle`, created as
#                 `skald`); 0: measure whichever skald plugin is installed (reported as such)
# Part 3 replaces the installed `skald` plugin, so it is skipped (and the bench fails) while
# end-to-end tests run. It leaves no container, Loki, Go plugin or skald journal behind.
# Part 4's docker side leaves the installed `skald` alone: it creates skald-bench-fleet and
# skald-bench-go-driver and removes them, their journals and its containers at the end.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build="${BENCH_BUILD:-build-bench}"
out="${BENCH_OUT:-build/bench}"
jobs="${BENCH_JOBS:-2}"
parts="${BENCH_PARTS:-micro load outage docker fleet}"
lines="${BENCH_LINES:-200000}"
repeat="${BENCH_REPEAT:-3}"
containers="${BENCH_CONTAINERS:-1,10,50,100}"
bin="$build/tests/bench"

log() { printf '[bench] %s\n' "$*" >&2; }
has_part() { [[ " $parts " == *" $1 "* ]]; }

mkdir -p "$out"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKALD_BUILD_BENCH=ON >&2
fi
if [[ "${BENCH_NO_BUILD:-0}" != 1 ]]; then
  log "building the benchmark targets in $build"
  ninja -C "$build" -j"$jobs" skald fake-loki pipeline_bench micro_bench plugin_load_bench \
    docker_bench drain_plugin fleet_bench docker_fleet_bench bench_report >&2
fi

report_args=()
failures=()  # what failed, for the exit status
# Runs a benchmark program; a failure is recorded (the other parts still run).
run_program() {
  local what=$1
  shift
  local rc=0
  "$@" || rc=$?
  if [[ $rc -ne 0 ]]; then
    log "$what failed (exit $rc)"
    failures+=("$what exited $rc")
  fi
}

if has_part micro; then
  log "part 1: micro benchmarks"
  gbench=(--benchmark_repetitions=3 --benchmark_report_aggregates_only=true
          --benchmark_min_time=0.2 --benchmark_format=json)
  run_program micro_bench "$bin/micro_bench" "${gbench[@]}" >"$out/micro.json"
  run_program pipeline_bench "$bin/pipeline_bench" "${gbench[@]}" >"$out/pipeline.json"
  report_args+=(--micro "$out/micro.json" --micro "$out/pipeline.json")
fi

if has_part load || has_part outage; then
  load_args=(--containers "")
  has_part load && load_args=(--containers "$containers")
  has_part outage && load_args+=(--outage-s "${BENCH_OUTAGE_S:-60}")
  log "part 2: plugin alone (${load_args[*]})"
  rm -f "$out/plugin_alone.json"
  run_program plugin_load_bench "$bin/plugin_load_bench" --skald "$build/plugin/skald" \
    "${load_args[@]}" --lines "$lines" --repeat "${BENCH_LOAD_REPEAT:-3}" \
    --json "$out/plugin_alone.json"
  report_args+=(--load "$out/plugin_alone.json")
fi

# The sha256 of the skald binary inside the installed plugin's rootfs ("" when not installed).
installed_skald_sum() {
  local id root
  id="$(docker plugin inspect --format '{{.Id}}' skald 2>/dev/null)" || return 0
  root="$(docker info --format '{{.DockerRootDir}}')"
  sha256sum "$root/plugins/$id/rootfs/usr/bin/skald" 2>/dev/null | cut -d' ' -f1
}

if has_part docker; then
  rm -f "$out/docker.json"
  skip=""
  if pgrep -f 'e2e_tests' >/dev/null; then
    skip="end-to-end tests are running (they use the installed skald plugin); run later with BENCH_PARTS=docker make bench"
  elif ! docker info >/dev/null 2>&1; then
    skip="dockerd is not reachable"
  fi
  # The bundle of the binary just built: its (stripped) skald is what an install holds.
  bench_bundle="$build/plugin-bundle"
  make --no-print-directory bundle BUNDLE_BUILD="$build" BUNDLE="$bench_bundle" >&2
  built_sum="$(sha256sum "$bench_bundle/rootfs/usr/bin/skald" | cut -d' ' -f1)"
  if [[ -z "$skip" && "${BENCH_INSTALL:-1}" == 1 && "$(installed_skald_sum)" != "$built_sum" ]]; then
    log "part 3: installing the skald just built ($bench_bundle as skald)"
    docker plugin disable -f skald >/dev/null 2>&1 || true
    docker plugin rm -f skald >/dev/null 2>&1 || true
    if ! { docker plugin create skald "$bench_bundle" >&2 &&
      docker plugin enable --timeout 0 skald >&2; }; then
      log "installing $bench_bundle as skald failed (see above)"
      failures+=("installing the skald just built")
    fi
  fi
  if [[ -z "$skip" ]] && ! docker plugin inspect skald >/dev/null 2>&1; then
    skip="no skald plugin is installed (make install failed or BENCH_INSTALL=0)"
  fi
  skald_same=false
  [[ "$(installed_skald_sum)" == "$built_sum" ]] && skald_same=true
  if [[ -z "$skip" ]]; then
    log "part 3: real Docker side by side (Go driver: tests/e2e/loki/build-go-driver.sh)"
    go_driver="$(tests/e2e/loki/build-go-driver.sh | tail -n 1)"
    loki_dir="$(mktemp -d /tmp/skald-bench-loki.XXXXXX)"
    cleanup() {
      docker ps -aq --filter label=skald-bench=1 | xargs -r docker rm -f >/dev/null 2>&1 || true
      for p in skald-bench-go-driver skald-bench-drain; do
        docker plugin disable -f "$p" >/dev/null 2>&1 || true
        docker plugin rm -f "$p" >/dev/null 2>&1 || true
      done
      tests/e2e/loki/stop-loki.sh "$loki_dir" >/dev/null 2>&1 || true
      rm -rf "$loki_dir"
    }
    trap cleanup EXIT
    run_program docker_bench "$bin/docker_bench" --go-driver "$go_driver" \
      --drain-plugin "$bin/drain_plugin" --loki-dir "$loki_dir" \
      --lines "$lines" --repeat "$repeat" --skald-is-build "$skald_same" \
      --json "$out/docker.json"
    cleanup
    trap - EXIT
  else
    log "part 3 skipped: $skip"
    failures+=("part 3 (docker) skipped: $skip")
    printf '{"skipped": "%s"}\n' "$skip" >"$out/docker.json"
  fi
  report_args+=(--docker "$out/docker.json")
fi

if has_part fleet; then
  fleet_runs="${BENCH_FLEET_RUNS:-100x10,100x2000}"
  fleet_journals="${BENCH_FLEET_JOURNALS:-1000}"
  fleet_idle="${BENCH_FLEET_IDLE_S:-30}"
  log "part 4: fleet, plugin alone ($fleet_runs; idle with 0 and $fleet_journals journals)"
  rm -f "$out/fleet_alone.json" "$out/fleet_docker.json"
  run_program fleet_bench "$bin/fleet_bench" --skald "$build/plugin/skald" --runs "$fleet_runs" \
    --idle-journals "0,$fleet_journals" --idle-s "$fleet_idle" --json "$out/fleet_alone.json"
  report_args+=(--fleet-alone "$out/fleet_alone.json")
  skip=""
  if pgrep -f 'e2e_tests' >/dev/null; then
    skip="end-to-end tests are running; run later with BENCH_PARTS=fleet make bench"
  elif ! docker info >/dev/null 2>&1; then
    skip="dockerd is not reachable"
  fi
  if [[ -z "$skip" ]]; then
    log "part 4: fleet on real Docker (make plugin; Go driver: tests/e2e/loki/build-go-driver.sh)"
    if make plugin JOBS="$jobs" >&2; then
      go_driver="$(tests/e2e/loki/build-go-driver.sh | tail -n 1)"
      fleet_loki="$(mktemp -d /tmp/skald-bench-fleet-loki.XXXXXX)"
      fleet_cleanup() {
        docker ps -aq --filter label=skald-bench=1 | xargs -r docker rm -f >/dev/null 2>&1 || true
        for p in skald-bench-fleet skald-bench-go-driver; do
          docker plugin disable -f "$p" >/dev/null 2>&1 || true
          docker plugin rm -f "$p" >/dev/null 2>&1 || true
        done
        tests/e2e/loki/stop-loki.sh "$fleet_loki" >/dev/null 2>&1 || true
        rm -rf "$fleet_loki"
      }
      trap fleet_cleanup EXIT
      run_program docker_fleet_bench "$bin/docker_fleet_bench" \
        --skald-bundle "${RELEASE_BUILD:-build-release}/plugin-bundle" \
        --go-driver "$go_driver" --loki-dir "$fleet_loki" --runs "$fleet_runs" \
        --journals "$fleet_journals" --idle-s "$fleet_idle" \
        --parallel "${BENCH_FLEET_PARALLEL:-5}" --json "$out/fleet_docker.json"
      fleet_cleanup
      trap - EXIT
    else
      skip="make plugin failed (see above)"
    fi
  fi
  if [[ -n "$skip" ]]; then
    log "part 4 (docker) skipped: $skip"
    failures+=("part 4 (docker) skipped: $skip")
    printf '{"skipped": "%s"}\n' "$skip" >"$out/fleet_docker.json"
  fi
  report_args+=(--fleet-docker "$out/fleet_docker.json")
fi

report_rc=0
"$bin/bench_report" "${report_args[@]}" --out "$out/results.json" || report_rc=$?
log "results: $out/results.json"
[[ $report_rc -eq 0 ]] || failures+=("bench_report: a target missed or lines lost (exit $report_rc; named above)")
if [[ ${#failures[@]} -gt 0 ]]; then
  log "FAILED:"
  for f in "${failures[@]}"; do log "  - $f"; done
  exit 1
fi

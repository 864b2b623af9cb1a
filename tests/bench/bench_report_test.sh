#!/usr/bin/env bash
# bench_report's verdicts on made-up part results: a target passes only on a figure within its
# bound; a part that ran but left no figure (the plugin died, a start failed, a run not ok)
# misses it; either makes the exit status 1.
#   bench_report_test.sh BENCH_REPORT
set -euo pipefail
report=${1:?bench_report binary}
dir=$(mktemp -d /tmp/skald-bench-report-test.XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0

# expect NAME WANT_EXIT PATTERN ARGS...: bench_report's exit status is WANT_EXIT and its output
# matches PATTERN (grep -E).
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local rc=0
  "$report" "$@" --out "$dir/results.json" >"$dir/out.txt" 2>&1 || rc=$?
  if [[ $rc -ne $want ]] || ! grep -Eq -- "$pattern" "$dir/out.txt"; then
    echo "FAIL $name: exit $rc (want $want), output:" >&2
    cat "$dir/out.txt" >&2
    failed=1
  else
    echo "ok   $name"
  fi
}

idle_ok='{"seconds": 30, "cpu_s": 0.003, "cpu_percent": 0.01, "wakeups_per_s": 0.5, "threads": 9}'
run_ok='{"containers": 100, "lines_per_container": 10, "cpu_s": 0.1, "cpu_ms_per_container": 1.0,
  "delivered_total": 1000, "expected_total": 1000, "streams_ended": true, "ok": true}'
cat >"$dir/alone_ok.json" <<JSON
{"runs": [$run_ok], "idle": [{"journals": 1000, "after_restart": $idle_ok}]}
JSON
expect "a good plugin-alone fleet run passes" 0 \
  'per-container plugin CPU, 100 containers x 10 lines <= 5 ms \| 1.00 ms \| PASS' \
  --fleet-alone "$dir/alone_ok.json"

# The plugin died: no CPU figure, the run not ok.
cat >"$dir/alone_died.json" <<JSON
{"runs": [{"containers": 100, "lines_per_container": 10, "delivered_total": 1000,
  "expected_total": 1000, "streams_ended": true, "ok": false, "error": "the plugin exited"}],
 "idle": [{"journals": 1000, "after_restart": $idle_ok}]}
JSON
expect "a run whose plugin died misses the CPU target" 1 \
  'per-container plugin CPU, 100 containers x 10 lines <= 5 ms \| no figure: the plugin exited \| MISS' \
  --fleet-alone "$dir/alone_died.json"

# The idle window's process was gone (MeasureIdle's error): no figure, not a pass.
cat >"$dir/alone_idle_gone.json" <<JSON
{"runs": [$run_ok], "idle": [{"journals": 1000, "after_restart": {"seconds": 30,
  "error": "the process 123 was gone at the end of the window: no figure"}}]}
JSON
expect "an idle window whose plugin was gone misses the idle target" 1 \
  'idle with 1,000 journals kept .* \| no figure: the process 123 was gone.* \| MISS' \
  --fleet-alone "$dir/alone_idle_gone.json"

# Docker: every line of the containers that started arrived, but three did not start.
cat >"$dir/docker_fleet.json" <<JSON
{"runs_asked": [[100, 10]], "runs": [
  {"driver": "skald", "containers": 100, "lines_per_container": 10, "plugin_cpu_s": 0.2,
   "cpu_ms_per_container": 2.0, "start_failures": 3, "delivered": 970, "expected": 970,
   "streams_ended": true, "all_delivered": true}],
 "idle": {"journals": {"skald": $idle_ok}}}
JSON
expect "start failures miss the docker targets" 1 \
  'every container started \| 0 of 1 runs \| MISS' --fleet-docker "$dir/docker_fleet.json"
expect "start failures are named" 1 '3 containers failed to start \| MISS' \
  --fleet-docker "$dir/docker_fleet.json"

# Docker, 100 x 10 side by side (issue 24): 2.6x the Go driver's cost per container misses even
# at 3 ms; 1.5 ms and 6x passes; 2.5 ms misses although 6x.
fleet_short() {  # SKALD_CPU_S GO_CPU_S
  cat <<JSON
{"runs_asked": [[100, 10]], "runs": [
  {"driver": "skald", "containers": 100, "lines_per_container": 10, "plugin_cpu_s": $1,
   "cpu_ms_per_container": $(awk "BEGIN{print $1*10}"), "start_failures": 0, "delivered": 1000,
   "expected": 1000, "streams_ended": true, "all_delivered": true},
  {"driver": "go", "containers": 100, "lines_per_container": 10, "plugin_cpu_s": $2,
   "cpu_ms_per_container": $(awk "BEGIN{print $2*10}"), "start_failures": 0, "delivered": 1000,
   "expected": 1000, "all_delivered": true}],
 "idle": {"journals": {"skald": $idle_ok}}}
JSON
}
fleet_short 0.30 0.77 >"$dir/fleet_short.json"
expect "100 x 10 at 2.6x the Go driver misses" 1 \
  'skald <= 2 ms per container and the Go driver.s plugin CPU >= 5x skald.s \| 3.00 ms, 2.6x .* \| MISS' \
  --fleet-docker "$dir/fleet_short.json"
fleet_short 0.15 0.90 >"$dir/fleet_short.json"
expect "100 x 10 at 1.5 ms and 6x passes" 0 \
  'skald <= 2 ms per container and the Go driver.s plugin CPU >= 5x skald.s \| 1.50 ms, 6.0x .* \| PASS' \
  --fleet-docker "$dir/fleet_short.json"
fleet_short 0.25 1.50 >"$dir/fleet_short.json"
expect "100 x 10 at 2.5 ms misses although 6x" 1 \
  'skald <= 2 ms per container.* \| 2.50 ms, 6.0x .* \| MISS' --fleet-docker "$dir/fleet_short.json"

# Docker, idle memory (issue 24): a fresh plugin at <= 10 MB peak and, once the runs' clients
# retired, within 2 MB of its fresh RSS with its fresh thread count, passes; 5.8 MB more, two
# threads more or a fresh peak of 12.4 MB misses.
fleet_idle() {  # FRESH_HWM_MB FRESH_THREADS SETTLED_RSS_MB SETTLED_THREADS
  local mb=1048576
  cat <<JSON
{"runs_asked": [], "runs": [], "settle_s": 75, "idle": {
  "empty": {"skald": {"seconds": 30, "cpu_s": 0, "cpu_percent": 0, "wakeups_per_s": 0.5,
            "threads": $2, "rss_bytes": $((8 * mb)), "hwm_bytes": $(awk "BEGIN{print $1*$mb}")}},
  "settled": {"skald": {"seconds": 5, "cpu_s": 0, "cpu_percent": 0, "wakeups_per_s": 0.5,
              "threads": $4, "rss_bytes": $(awk "BEGIN{print $3*$mb}"), "hwm_bytes": $((30 * mb))}},
  "journals": {"skald": $idle_ok}}}
JSON
}
fleet_idle 9.1 4 9.5 4 >"$dir/fleet_idle.json"
expect "back at the fresh figures after the runs passes" 0 \
  'once their Loki clients retired.*\| fresh: VmHWM 9.1 MB, VmRSS 8.0 MB, 4 threads; settled: VmRSS 9.5 MB \(\+1.5 MB\), 4 threads \| PASS' \
  --fleet-docker "$dir/fleet_idle.json"
fleet_idle 9.1 4 13.8 4 >"$dir/fleet_idle.json"
expect "5.8 MB over the fresh RSS after the runs misses" 1 \
  'settled: VmRSS 13.8 MB \(\+5.8 MB\), 4 threads \| MISS' --fleet-docker "$dir/fleet_idle.json"
fleet_idle 9.1 4 9.5 6 >"$dir/fleet_idle.json"
expect "two threads more after the runs misses" 1 'settled: VmRSS 9.5 MB \(\+1.5 MB\), 6 threads \| MISS' \
  --fleet-docker "$dir/fleet_idle.json"
fleet_idle 12.4 4 9.5 4 >"$dir/fleet_idle.json"
expect "a fresh peak over 10 MB misses" 1 'fresh: VmHWM 12.4 MB.* \| MISS' \
  --fleet-docker "$dir/fleet_idle.json"

# Part 2 ran, but its K=1 seed run was not ok (no CPU figure).
cat >"$dir/load.json" <<JSON
{"runs": [{"pipeline": "seed", "containers": 1, "ok": false, "lines": 1000, "delivered": 1000,
  "error": "no CPU figure (the plugin's process was gone)", "idle_hwm_bytes": 7000000}]}
JSON
expect "a load run without a figure misses its target" 1 \
  'K=1: lines per CPU-second.*\| no figure.* \| MISS' --load "$dir/load.json"

# Part 3, side by side: skald 20x cheaper than the Go driver in every run and fresh on a quiet
# stream passes every docker target; a stale line or one run below 15x misses.
# The drain-only plugin's row shows the floor and skald's distance to it.
docker_json() {  # FRESH_P50 FRESH_P99 SKALD_CPU_RUN2 [DRAIN_MEDIAN]
  local drain_median='{"run_s": 1.9, "container_s": 1.4, "plugin_cpu_s": 0.05}'
  [[ $# -ge 4 ]] && drain_median=$4
  cat <<JSON
{"lines": 200000, "repeat": 3, "go_driver_version": "3.7.8", "ok": true, "results": [
 {"driver": "json-file", "pipeline": "none", "plugin": false, "all_delivered": true,
  "median": {"run_s": 2.0, "container_s": 1.5}, "runs": []},
 {"driver": "drain", "pipeline": "none", "plugin": true, "ships": false, "all_delivered": true,
  "median": $drain_median, "runs": []},
 {"driver": "skald", "pipeline": "seed", "plugin": true, "all_delivered": true,
  "median": {"run_s": 2.1, "container_s": 1.6, "plugin_cpu_s": 0.25, "delivered": 200000,
             "pushes": 60},
  "runs": [{"plugin_cpu_s": 0.25, "delivered": 200000}, {"plugin_cpu_s": $3, "delivered": 200000},
           {"plugin_cpu_s": 0.25, "delivered": 200000}]},
 {"driver": "go", "pipeline": "seed", "plugin": true, "all_delivered": true,
  "median": {"run_s": 3.0, "container_s": 2.5, "plugin_cpu_s": 6.0, "delivered": 200000},
  "runs": [{"plugin_cpu_s": 6.0}, {"plugin_cpu_s": 6.0}, {"plugin_cpu_s": 6.0}]}],
 "freshness": [{"driver": "skald", "lines": 30, "interval_ms": 1500, "p50_ms": $1, "p99_ms": $2,
                "max_ms": $2, "delivered": 30, "pushes": 30},
               {"driver": "go", "lines": 30, "interval_ms": 1500, "p50_ms": 1700, "p99_ms": 2100,
                "max_ms": 2100, "delivered": 30, "pushes": 30}]}
JSON
}
docker_json 60 120 0.25 >"$dir/docker_ok.json"
expect "a fresh, cheap skald passes the docker targets" 0 \
  'write -> queryable.*\| p50 60 ms, p99 120 ms \(Go driver: p50 1700 ms, p99 2100 ms\) \| PASS' \
  --docker "$dir/docker_ok.json"
expect "the CPU ratio is judged per run" 0 'median 24.0x \(runs 24.0x / 24.0x / 24.0x' \
  --docker "$dir/docker_ok.json"
expect "skald's app time is shown against the drain-only plugin's" 0 \
  'drains its FIFO: shown \| 1.14x \(1.60 s vs 1.40 s: \+1.00 us per line; json-file 1.50 s\) \| shown' \
  --docker "$dir/docker_ok.json"
expect "the drain-only plugin's row has no delivery figure" 0 \
  '^\| drain \| none \| 1.90 \| 1.40 \| 0.05 \| 4.00M \| -1.00 \| - \| - \| 0.93 \|' \
  --docker "$dir/docker_ok.json"
docker_json 60 120 0.25 '{"run_s": 1.9}' >"$dir/docker_no_drain_figure.json"
expect "a drain-only run without a figure misses the app-time line" 1 \
  'drains its FIFO: shown \| no figure.* \| MISS' --docker "$dir/docker_no_drain_figure.json"
docker_json 300 450 0.25 >"$dir/docker_stale.json"
expect "a stale quiet line misses" 1 'write -> queryable.*\| p50 300 ms, p99 450 ms.*\| MISS' \
  --docker "$dir/docker_stale.json"
docker_json 60 120 0.5 >"$dir/docker_one_slow.json"
expect "one run below 15x misses although the median holds" 1 \
  'median 24.0x \(runs 24.0x / 12.0x / 24.0x.*\| MISS' --docker "$dir/docker_one_slow.json"

# An input that cannot be read (a program that failed before writing it).
expect "an unreadable input fails" 1 'cannot read' --load "$dir/missing.json"

exit $failed

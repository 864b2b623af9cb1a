#!/usr/bin/env bash
# `make profile`: where the real skald binary spends its CPU under load, without Docker, as a
# repeatable table rather than an ad-hoc perf session.
#
# It runs plugin_load_bench (the real binary, a FakeDaemon, an in-process sink that counts every
# entry) twice over the same workload:
#   1. under `perf record` (cpu-clock samples at PROFILE_HZ, following the plugin's process):
#      the plugin's CPU by thread (skald-reader, skald-ship, skald-lane, ...), and each busy
#      thread's top functions as a share of that thread, split into the plugin's own code, the
#      C library (malloc, free, memcpy) and the kernel;
#   2. under `perf record` of the syscall tracepoints: syscalls per 10,000 lines, by thread and
#      call (splice, pread64, futex, epoll_wait, sendto, mprotect, ...).
# Both runs must deliver every line (the bench's own check); the script exits non-zero when one
# does not or perf fails. Samples are shares, not seconds: compare two builds in one sitting,
# and use `make bench` for the figures the issues' targets judge.
#
# Environment (all optional):
#   PROFILE_BUILD       build directory with plugin/skald and tests/bench/plugin_load_bench (build)
#   PROFILE_SKALD       the skald binary to profile (PROFILE_BUILD/plugin/skald); its file name
#                       must be `skald` (the bench finds the process by that name)
#   PROFILE_PIPELINE    none or seed (seed: the issues' json + labels + output pipeline)
#   PROFILE_CONTAINERS  simulated containers (1)
#   PROFILE_LINES       lines in all (400000)
#   PROFILE_HZ          samples per second (4000)
#   PROFILE_TOP         functions shown per thread (12)
#   PROFILE_OUT         where perf's data and the bench's JSON go (a temporary directory,
#                       removed at the end, unless given)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
build="${PROFILE_BUILD:-build}"
skald="${PROFILE_SKALD:-$build/plugin/skald}"
pipeline="${PROFILE_PIPELINE:-seed}"
containers="${PROFILE_CONTAINERS:-1}"
lines="${PROFILE_LINES:-400000}"
hz="${PROFILE_HZ:-4000}"
top="${PROFILE_TOP:-12}"
bench="$build/tests/bench/plugin_load_bench"

fail() {
  printf 'profile: %s\n' "$*" >&2
  exit 1
}
command -v perf >/dev/null || fail "perf is not installed (Debian: apt-get install linux-perf)"
command -v python3 >/dev/null || fail "python3 is not installed"
[[ -x "$bench" ]] || fail "$bench is missing: build it first (make build)"
[[ -x "$skald" ]] || fail "$skald is missing: build it first (make build)"
[[ "$(basename "$skald")" == skald ]] || fail "PROFILE_SKALD must be a file named skald: $skald"
case "$pipeline" in none | seed) ;; *) fail "PROFILE_PIPELINE must be none or seed: $pipeline" ;; esac
for v in containers lines hz top; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || fail "PROFILE_${v^^} must be a positive integer: ${!v}"
done

if [[ -n "${PROFILE_OUT:-}" ]]; then
  out="$PROFILE_OUT"
  mkdir -p "$out"
else
  out="$(mktemp -d /tmp/skald-profile.XXXXXX)"
  trap 'rm -rf "$out"' EXIT
fi

run_bench() {  # $1: the JSON file; the rest: the perf command in front
  local json="$1"
  shift
  if ! "$@" -- "$bench" --skald "$skald" --containers "$containers" --lines "$lines" \
    --pipelines "$pipeline" --repeat 1 --json "$json" >"$out/bench.log" 2>&1; then
    tail -n 20 "$out/bench.log" >&2
    fail "the bench run under perf failed (lost lines, or perf could not record)"
  fi
}

printf '[profile] %s, pipeline %s, %s container(s), %s lines\n' "$skald" "$pipeline" \
  "$containers" "$lines" >&2
run_bench "$out/samples.json" perf record -q -F "$hz" -o "$out/samples.data"
# Syscalls: perf attaches to the plugin's process once it is up, so that the load generator's
# own writes (one per line) are not traced: tracing them slows the writer and changes how much
# the plugin finds per read.
"$bench" --skald "$skald" --containers "$containers" --lines "$lines" --pipelines "$pipeline" \
  --repeat 1 --json "$out/syscalls.json" >"$out/bench.log" 2>&1 &
bench_pid=$!
plugin_pid=""
for _ in $(seq 200); do
  plugin_pid="$(pgrep -P "$bench_pid" -x skald | head -n 1 || true)"
  [[ -n "$plugin_pid" ]] && break
  sleep 0.05
done
if [[ -z "$plugin_pid" ]]; then
  wait "$bench_pid" || true
  fail "the plugin's process did not appear under the bench (pid $bench_pid)"
fi
perf record -q -e 'syscalls:sys_enter_*' -p "$plugin_pid" -o "$out/syscalls.data" \
  >"$out/perf.log" 2>&1 &
perf_pid=$!
if ! wait "$bench_pid"; then
  tail -n 20 "$out/bench.log" >&2
  fail "the bench run for the syscall count failed (lost lines?)"
fi
wait "$perf_pid" || true
if grep -qi 'lost' "$out/perf.log"; then
  printf 'profile: perf lost syscall events (the counts below are too low): %s\n' \
    "$(grep -i 'lost' "$out/perf.log" | head -n 1)" >&2
fi

perf script -i "$out/samples.data" -F comm,ip,sym,dso 2>/dev/null >"$out/samples.txt"
perf script -i "$out/syscalls.data" -F comm,event 2>/dev/null >"$out/syscalls.txt"

python3 - "$out" "$top" "$lines" <<'PY'
import collections, json, re, sys

out, top, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
skald_thread = re.compile(r"^skald(-[a-z-]+)?$")

def bench_figure(name):
    run = json.load(open(f"{out}/{name}"))["runs"][0]
    if not run["ok"] or run["delivered"] != run["lines"]:
        sys.exit(f"profile: {name}: delivered {run['delivered']} of {run['lines']} lines")
    return run

run = bench_figure("samples.json")
bench_figure("syscalls.json")
print(f"## skald under load: {run['pipeline']} pipeline, {run['containers']} container(s), "
      f"{run['lines']:,} lines")
print()
print(f"Run under perf: {run['cpu_s']:.2f} CPU-s ({run['cpu_s_per_million']:.2f} per million "
      f"lines), delivered {run['delivered']:,} of {run['lines']:,}.")
print()

# perf script -F comm,ip,sym,dso: "comm  ip sym (dso)" per sample.
by_thread = collections.Counter()
by_symbol = collections.defaultdict(collections.Counter)
by_kind = collections.defaultdict(collections.Counter)
line_re = re.compile(r"^\s*(\S+)\s+[0-9a-f]+\s+(.*?)\s*\(([^()]*)\)\s*$")
for raw in open(f"{out}/samples.txt", errors="replace"):
    m = line_re.match(raw)
    if not m or not skald_thread.match(m.group(1)):
        continue
    comm, sym, dso = m.group(1), m.group(2) or "[unknown]", m.group(3)
    kind = ("kernel" if "kernel" in dso else
            "C library" if re.search(r"/libc\.so|/ld-linux", dso) else
            "skald" if dso.endswith("/skald") else "other libraries")
    by_thread[comm] += 1
    by_symbol[comm][sym] += 1
    by_kind[comm][kind] += 1
total = sum(by_thread.values())
if total == 0:
    sys.exit("profile: no samples of a skald thread (was the plugin's process followed?)")

print(f"### The plugin's CPU by thread ({total:,} samples)")
print()
print("| thread | share | skald | C library | other libraries | kernel |")
print("|---|---|---|---|---|---|")
for comm, n in by_thread.most_common():
    k = by_kind[comm]
    cells = " | ".join(f"{100 * k[c] / n:.0f}%" for c in
                       ("skald", "C library", "other libraries", "kernel"))
    print(f"| {comm} | {100 * n / total:.1f}% | {cells} |")
print()
for comm, n in by_thread.most_common():
    if n < total * 0.05:
        continue
    print(f"### {comm}: top functions (share of the thread)")
    print()
    for sym, c in by_symbol[comm].most_common(top):
        print(f"- {100 * c / n:5.1f}%  {sym}")
    print()

calls = collections.Counter()
for raw in open(f"{out}/syscalls.txt", errors="replace"):
    m = re.match(r"^\s*(\S+)\s+syscalls:sys_enter_(\w+):", raw)
    if m and skald_thread.match(m.group(1)):
        calls[(m.group(1), m.group(2))] += 1
print(f"### Syscalls per 10,000 lines (the second run)")
print()
print("| thread | call | per 10k lines |")
print("|---|---|---|")
for (comm, call), n in calls.most_common(20):
    print(f"| {comm} | {call} | {n * 10000 / lines:.1f} |")
PY

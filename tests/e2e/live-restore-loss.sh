#!/usr/bin/env bash
# The live-restore experiment, run by hand (not part of `make test`): does a container lose
# lines when dockerd restarts with live-restore while it logs, and with which logging driver?
# For each driver, RUNS times: a container logs 40,000 numbered lines at 5,000 lines/s
# (loggen), dockerd is restarted 3 s in (live-restore on), and once the container exited its
# lines are read back with `docker logs` (every driver here keeps them: json-file, local, and
# skald's journal, which holds exactly the bytes skald read from the FIFOs) and the missing
# sequence numbers counted. Prints one row per run and a table per driver.
#
#   tests/e2e/live-restore-loss.sh BUNDLE [RUNS] [DRIVERS]
# BUNDLE: a skald plugin bundle (created as skald-liverestore, removed at the end, journals
# with it); RUNS: runs per driver (20); DRIVERS: "json-file local skald".
# skald ships to a port nobody listens on (its journal keeps every line for docker logs).
# /etc/docker/daemon.json is put back as found; the containers are removed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bundle=$(cd "${1:?bundle directory}" && pwd)
runs=${2:-20}
drivers=${3:-json-file local skald}
plugin=skald-liverestore
lines=40000
conf=/etc/docker/daemon.json
saved=$(mktemp /tmp/skald-liverestore-daemon-json.XXXXXX)
had_conf=0
if [ -f "$conf" ]; then cp "$conf" "$saved"; had_conf=1; fi
out=$(mktemp -d /tmp/skald-liverestore.XXXXXX)

cleanup() {
  docker ps -aq --filter label=skald-liverestore=1 | xargs -r docker rm -f >/dev/null 2>&1 || true
  docker plugin disable -f "$plugin" >/dev/null 2>&1 || true
  docker plugin rm -f "$plugin" >/dev/null 2>&1 || true
  if [ "$had_conf" = 1 ]; then
    "$here/restart-dockerd.sh" --daemon-json "$saved" >/dev/null
  else
    "$here/restart-dockerd.sh" --no-daemon-json >/dev/null
  fi
  rm -f "$saved"
}
trap cleanup EXIT

image=$("$here/image/build-image.sh" | tail -n 1)
"$here/restart-dockerd.sh" --live-restore true >/dev/null
docker plugin create "$plugin" "$bundle" >/dev/null
docker plugin set "$plugin" METRICS_ADDR=127.0.0.1:9656
docker plugin enable --timeout 0 "$plugin" >/dev/null

printf 'driver\trun\tlogs\tmissing\tmissing seq\n' | tee "$out/rows.tsv"
for driver in $drivers; do
  for run in $(seq 1 "$runs"); do
    name="liverestore-$driver-$run-$$"
    opts=()
    d=$driver
    if [ "$driver" = skald ]; then
      d=$plugin
      opts=(--log-opt loki-url=http://127.0.0.1:9/loki/api/v1/push)
    fi
    docker run -d --name "$name" --label skald-liverestore=1 --network none --log-driver "$d" \
      "${opts[@]}" "$image" loggen --lines "$lines" --json --rate 5000 >/dev/null
    sleep 3
    "$here/restart-dockerd.sh" >/dev/null
    docker wait "$name" >/dev/null
    sleep 1
    docker logs "$name" 2>/dev/null | grep -o '"seq":[0-9]*' | cut -d: -f2 | sort -n -u \
      >"$out/seen"
    got=$(wc -l <"$out/seen")
    missing=$(seq 1 "$lines" | comm -23 - "$out/seen" | tr '\n' ' ')
    n_missing=$(( lines - got ))
    printf '%s\t%d\t%d\t%d\t%s\n' "$driver" "$run" "$got" "$n_missing" "${missing:-none}" |
      tee -a "$out/rows.tsv"
    docker rm -f "$name" >/dev/null
  done
done

echo
echo "| driver | runs | runs with lines missing | lines missing in all | most in one run |"
echo "|---|---:|---:|---:|---:|"
awk -F'\t' 'NR > 1 { runs[$1]++; if ($4 > 0) { bad[$1]++; all[$1] += $4; if ($4 > most[$1]) most[$1] = $4 } }
  END { for (d in runs) printf "| %s | %d | %d | %d | %d |\n", d, runs[d], bad[d] + 0, all[d] + 0, most[d] + 0 }' \
  "$out/rows.tsv"
echo "rows: $out/rows.tsv"

#!/usr/bin/env bash
# Checks the third way of using skald: the daemon-wide default in /etc/docker/daemon.json.
# It RESTARTS dockerd twice (to switch the default to skald and back), so it is not part of
# `make test`; run it by hand on a machine whose daemon nobody else is using:
#   tests/e2e/daemon-default-check.sh
# Needs: the plugin installed (`make install`), the test image (tests/e2e/image/build-image.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
conf=/etc/docker/daemon.json
port=${PORT:-3198}
data=$(mktemp -d /tmp/skald-daemon-default.XXXXXX)
backup="$data/daemon.json.orig"
[ -f "$conf" ] && cp "$conf" "$backup" || echo '{}' >"$backup"

restart_dockerd() {
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
    systemctl restart docker
  else
    local pid
    pid=$(pgrep -x dockerd || true)
    if [ -n "$pid" ]; then
      kill -TERM "$pid"
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    fi
    nohup /usr/sbin/dockerd >>/var/log/dockerd.log 2>&1 &
  fi
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return 0; sleep 1; done
  echo "dockerd did not come back" >&2
  return 1
}

cleanup() {
  cp "$backup" "$conf"
  restart_dockerd || true
  tests/e2e/loki/stop-loki.sh "$data" >/dev/null 2>&1 || true
  rm -rf "$data"
}
trap cleanup EXIT

url=$(tests/e2e/loki/start-loki.sh "$data" "$port" $((port + 1000)) | tail -1)
python3 - "$backup" "$conf" "$url" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["log-driver"] = "skald:latest"
c["log-opts"] = {"loki-url": sys.argv[3] + "/loki/api/v1/push", "loki-batch-wait": "200ms"}
json.dump(c, open(sys.argv[2], "w"))
PY
restart_dockerd
docker info --format 'default log driver: {{.LoggingDriver}}'
name="daemon-default-$$"
docker run --rm --network none --name "$name" skald-test:latest loggen --lines 500 >/dev/null
want=500
for _ in $(seq 1 30); do
  got=$(curl -s -G "$url/loki/api/v1/query" \
    --data-urlencode "query=sum(count_over_time({container_name=\"$name\"}[1h]))" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
  [ "$got" = "$want" ] && break
  sleep 1
done
echo "daemon-wide default: $got of $want lines in Loki"
[ "$got" = "$want" ]

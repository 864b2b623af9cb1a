#!/usr/bin/env bash
# Restarts dockerd (systemd when it manages docker, otherwise /usr/sbin/dockerd by hand) and
# waits until it answers. First, as asked:
#   --live-restore true|false   sets "live-restore" in /etc/docker/daemon.json (other keys kept)
#   --daemon-json FILE          makes FILE /etc/docker/daemon.json
#   --no-daemon-json            removes /etc/docker/daemon.json
# Used by the Restarts and Distribution e2e suites.
set -euo pipefail
conf=/etc/docker/daemon.json
if [ "${1:-}" = "--daemon-json" ]; then
  mkdir -p "$(dirname "$conf")"
  cp "${2:?file}" "$conf"
elif [ "${1:-}" = "--no-daemon-json" ]; then
  rm -f "$conf"
elif [ "${1:-}" = "--live-restore" ]; then
  value=${2:?true or false}
  [ -f "$conf" ] || echo '{}' >"$conf"
  python3 - "$conf" "$value" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["live-restore"] = sys.argv[2] == "true"
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
fi
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
  systemctl restart docker
else
  pid=$(pgrep -x dockerd || true)
  if [ -n "$pid" ]; then
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  nohup /usr/sbin/dockerd >>/var/log/dockerd.log 2>&1 </dev/null &
fi
for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && exit 0; sleep 0.5; done
echo "dockerd did not come back" >&2
exit 1

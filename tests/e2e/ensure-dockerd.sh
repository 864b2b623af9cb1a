#!/usr/bin/env bash
# Makes sure a Docker daemon answers. Where `docker info` fails (a fresh machine without a
# running engine), installs Debian's docker.io and starts dockerd in the background.
set -euo pipefail
if docker info >/dev/null 2>&1; then
  echo "dockerd: running ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
  exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "dockerd: not installed; installing Debian's docker.io" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >&2
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start docker >/dev/null 2>&1; then
  :
else
  log=/var/log/skald-dockerd.log
  echo "dockerd: starting it (log: $log)" >&2
  nohup dockerd >"$log" 2>&1 &
fi
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd: started"
    exit 0
  fi
  sleep 1
done
echo "dockerd: did not start within 60 s; see /var/log/skald-dockerd.log" >&2
exit 1

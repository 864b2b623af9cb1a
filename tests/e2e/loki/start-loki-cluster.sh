#!/usr/bin/env bash
# Start a throw-away replicated Loki cluster on 127.0.0.1, in the background:
# three single-binary Loki nodes (-target=all) in one memberlist ring with
# replication factor 3 and one shared filesystem object store, behind an nginx
# gateway that spreads pushes round robin over the nodes and retries a push on
# the next node when one is down.
#
#   tests/e2e/loki/start-loki-cluster.sh DATA_DIR [BASE_PORT]
#
# Ports: the gateway listens on BASE_PORT; node N on BASE_PORT+N (HTTP),
# BASE_PORT+10+N (gRPC) and BASE_PORT+20+N (memberlist). BASE_PORT: the
# argument, else $LOKI_CLUSTER_BASE_PORT, else the one DATA_DIR's cluster used
# last time, else the first of 3200, 3230, 3260, ... whose 10 ports are free.
#
# Builds Loki if needed (build-loki.sh), writes DATA_DIR/nodeN/loki-config.yaml
# (from loki-cluster-config.yaml) and DATA_DIR/nginx/nginx.conf (from
# loki-cluster-nginx.conf), starts what is not running, and waits (at most
# $LOKI_CLUSTER_START_TIMEOUT s, default 120) until every node answers /ready
# with 200 and sees the three ingesters ACTIVE in its ring, and the gateway
# answers. Writes the ports and URLs to DATA_DIR/cluster.env. Prints the
# gateway URL (http://127.0.0.1:BASE_PORT) as its last stdout line.
# Idempotent. Nodes and gateway: loki-cluster.sh; stop: stop-loki-cluster.sh.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=cluster-common.sh
. "$here/cluster-common.sh"

want_args 1 2 "DATA_DIR [BASE_PORT]" "$@"
want="${2:-${LOKI_CLUSTER_BASE_PORT:-}}"
if [[ -n "$want" ]] && { ! valid_port "$want" || (( want + 23 > 65535 )); }; then
    echo "$0: bad base port '$want'" >&2
    exit 2
fi
cluster_init "$1"
t0=$(date +%s%N)

anything_running() { [[ -n "$(running_nodes)" ]] || gateway_pid >/dev/null; }

if load_cluster_env && anything_running; then
    # Part of this cluster runs: keep its ports.
    if [[ -n "$want" && "$want" != "$base_port" ]]; then
        log "the cluster of $data_dir runs on base port $base_port, not $want; stop it first"
        exit 1
    fi
elif [[ -n "$want" ]]; then
    set_base_port "$want"
    if ! ports_free "$base_port"; then
        log "a port of base $base_port is in use: $(cluster_ports "$base_port" | tr '\n' ' ')"
        exit 1
    fi
elif load_cluster_env && ports_free "$base_port"; then
    :   # the ports of last time
else
    found=
    for b in $(seq 3200 30 4670); do
        if ports_free "$b"; then found="$b"; break; fi
    done
    if [[ -z "$found" ]]; then
        log "no free block of ports found in 3200-4693; pass a BASE_PORT"
        exit 1
    fi
    set_base_port "$found"
fi
write_cluster_env

# Build first (it can take long); the nodes' starts then reuse the binary.
loki_bin="$("$here/build-loki.sh" | tail -n 1)"
t_started=$(date +%s%N)

log "cluster of $data_dir: gateway $gateway_url; object store $store_dir"
for n in "${CLUSTER_NODES[@]}"; do
    if ! start_node "$n"; then
        log "node $n did not start; stopping the cluster"
        "$here/stop-loki-cluster.sh" "$data_dir" || true
        exit 1
    fi
done
if ! wait_settled "start"; then
    log "cluster did not start; stopping it"
    "$here/stop-loki-cluster.sh" "$data_dir" || true
    exit 1
fi
if ! start_gateway; then
    "$here/stop-loki-cluster.sh" "$data_dir" || true
    exit 1
fi
if ! gateway_ready; then
    log "gateway answers but $gateway_url/ready is $(http_code "$gateway_url/ready")"
    exit 1
fi
for n in "${CLUSTER_NODES[@]}"; do
    log "node $n: pid $(node_pid "$n"), $(node_url "$n"), grpc 127.0.0.1:$(node_grpc_port "$n"), memberlist 127.0.0.1:$(node_memberlist_port "$n")"
done
log "gateway: pid $(gateway_pid), $gateway_url"
log "cluster ready in $(( ($(date +%s%N) - t_started) / 1000000 )) ms (with build check: $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
printf '%s\n' "$gateway_url"

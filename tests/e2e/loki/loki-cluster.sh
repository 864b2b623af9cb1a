#!/usr/bin/env bash
# Operate on the running cluster of start-loki-cluster.sh DATA_DIR.
#
#   tests/e2e/loki/loki-cluster.sh DATA_DIR COMMAND [N]
#
# Commands (N is 1, 2 or 3):
#   status           each node's pid, /ready and ring as it sees it; the gateway (stdout)
#   urls             "gateway URL" and "nodeN URL" lines (stdout)
#   ring [N]         the ingester ring as node N (default: the first running) sees it,
#                    one "ID STATE" line per instance (stdout)
#   kill-node N      SIGKILL node N (a crash) and wait until it is gone
#   stop-node N      SIGTERM node N (graceful: it leaves the ring) and wait until it is gone
#   start-node N     start node N (same ports, same data) and wait until every
#                    running node answers /ready and sees every running node ACTIVE
#   restart-node N   stop-node N, then start-node N (one step of a rolling restart)
#   kill-gateway     SIGKILL nginx (and its worker)
#   start-gateway    start nginx and wait until it answers
#   restart-gateway  SIGQUIT nginx (finishes requests in flight), wait until it is gone,
#                    start it again (connections are refused meanwhile)
#   reload-gateway   rewrite nginx.conf and SIGHUP nginx: a new worker takes over, the
#                    listening socket stays open (no connection is refused)
# Waits are bounded by $LOKI_CLUSTER_START_TIMEOUT (120 s) and $LOKI_STOP_TIMEOUT
# (20 s, then SIGKILL). Logs go to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=cluster-common.sh
. "$here/cluster-common.sh"

usage() {
    echo "usage: $0 DATA_DIR status|urls|ring [N]|kill-node N|stop-node N|start-node N|restart-node N|kill-gateway|start-gateway|restart-gateway|reload-gateway" >&2
    exit 2
}
[[ $# -ge 2 && $# -le 3 ]] || usage
if [[ ! -d "$1" ]]; then
    log "no such directory $1"
    exit 1
fi
cluster_init "$1"
if ! load_cluster_env; then
    log "no cluster.env in $data_dir; start the cluster with start-loki-cluster.sh first"
    exit 1
fi
cmd="$2"
arg="${3:-}"

case "$cmd" in
    status)
        for n in "${CLUSTER_NODES[@]}"; do
            if pid="$(node_pid "$n")"; then
                printf 'node%s pid=%s url=%s ready=%s ring=%s\n' "$n" "$pid" "$(node_url "$n")" \
                    "$(http_code "$(node_url "$n")/ready")" \
                    "$(ring_states "$(node_url "$n")" | tr ' \n' ':,' | sed 's/,$//')"
            else
                printf 'node%s down url=%s\n' "$n" "$(node_url "$n")"
            fi
        done
        if pid="$(gateway_pid)"; then
            printf 'gateway pid=%s url=%s ready=%s\n' "$pid" "$gateway_url" "$(http_code "$gateway_url/ready")"
        else
            printf 'gateway down url=%s\n' "$gateway_url"
        fi
        ;;
    urls)
        printf 'gateway %s\n' "$gateway_url"
        for n in "${CLUSTER_NODES[@]}"; do printf 'node%s %s\n' "$n" "$(node_url "$n")"; done
        ;;
    ring)
        if [[ -n "$arg" ]]; then
            check_node_arg "$arg"
        else
            arg="$(running_nodes | head -n 1)"
            [[ -n "$arg" ]] || { log "no node runs"; exit 1; }
        fi
        ring_states "$(node_url "$arg")"
        ;;
    kill-node)
        check_node_arg "$arg"
        stop_node "$arg" KILL
        ;;
    stop-node)
        check_node_arg "$arg"
        stop_node "$arg" TERM
        ;;
    start-node)
        check_node_arg "$arg"
        start_node "$arg"
        wait_settled "start-node $arg"
        ;;
    restart-node)
        check_node_arg "$arg"
        stop_node "$arg" TERM
        start_node "$arg"
        wait_settled "restart-node $arg"
        ;;
    kill-gateway)
        [[ -z "$arg" ]] || usage
        stop_gateway KILL
        ;;
    start-gateway)
        [[ -z "$arg" ]] || usage
        start_gateway
        ;;
    restart-gateway)
        [[ -z "$arg" ]] || usage
        t=$(date +%s%N)
        stop_gateway QUIT
        start_gateway
        log "gateway restarted in $(( ($(date +%s%N) - t) / 1000000 )) ms"
        ;;
    reload-gateway)
        [[ -z "$arg" ]] || usage
        if ! pid="$(gateway_pid)"; then
            log "gateway is not running"
            exit 1
        fi
        write_gateway_config
        "$NGINX_BIN" -t -q -p "$nginx_dir" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log"
        log "gateway (pid $pid): SIGHUP"
        kill -HUP "$pid"
        ;;
    *)
        usage
        ;;
esac

# Shared helpers for the replicated Loki cluster scripts (start-loki-cluster.sh,
# stop-loki-cluster.sh, loki-cluster.sh). Source, don't run.
# shellcheck shell=bash
#
# Layout of DATA_DIR:
#   cluster.env              ports and URLs (shell variables; tests may source it)
#   store/                   the object store shared by the three nodes (chunks, index, rules)
#   node1/ node2/ node3/     each node's loki-config.yaml, loki.log, loki.pid and
#                            its own WAL, tsdb shipper and compactor directories
#   nginx/                   the gateway's nginx.conf, nginx.pid, error.log, access.log, tmp/
#
# Ports, from BASE (the gateway's port):
#   gateway BASE; node N: HTTP BASE+N, gRPC BASE+10+N, memberlist BASE+20+N.

cluster_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
. "$cluster_here/common.sh"

CLUSTER_NODES=(1 2 3)
NGINX_BIN="${NGINX_BIN:-/usr/sbin/nginx}"
CLUSTER_START_TIMEOUT="${LOKI_CLUSTER_START_TIMEOUT:-120}"
CLUSTER_STOP_TIMEOUT="${LOKI_STOP_TIMEOUT:-20}"

# cluster_init DATA_DIR: create DATA_DIR if needed and set the path variables.
cluster_init() {
    mkdir -p "$1"
    data_dir="$(cd "$1" && pwd)"
    store_dir="$data_dir/store"
    nginx_dir="$data_dir/nginx"
    env_file="$data_dir/cluster.env"
}


# cluster_ports BASE: every port of a cluster whose gateway listens on BASE.
cluster_ports() {
    local b="$1" n
    printf '%s\n' "$b"
    for n in "${CLUSTER_NODES[@]}"; do
        printf '%s\n%s\n%s\n' $(( b + n )) $(( b + 10 + n )) $(( b + 20 + n ))
    done
}

# ports_free BASE: succeed if no port of the cluster at BASE is in use.
ports_free() {
    local p
    (( $1 >= 1 && $1 + 23 <= 65535 )) || return 1
    for p in $(cluster_ports "$1"); do
        if port_busy "$p"; then return 1; fi
    done
}

# set_base_port BASE: set the port and URL variables.
set_base_port() {
    base_port="$1"
    gateway_port="$base_port"
    gateway_url="http://127.0.0.1:$gateway_port"
}
node_http_port() { echo $(( base_port + $1 )); }
node_grpc_port() { echo $(( base_port + 10 + $1 )); }
node_memberlist_port() { echo $(( base_port + 20 + $1 )); }
node_url() { echo "http://127.0.0.1:$(node_http_port "$1")"; }
node_dir() { echo "$data_dir/node$1"; }

# load_cluster_env: read BASE_PORT back from cluster.env (written at start).
load_cluster_env() {
    local b
    [[ -s "$env_file" ]] || return 1
    b="$(sed -n 's/^BASE_PORT=\([0-9][0-9]*\)$/\1/p' "$env_file")"
    [[ -n "$b" ]] || return 1
    set_base_port "$b"
}

write_cluster_env() {
    local n
    {
        echo "# written by start-loki-cluster.sh"
        echo "BASE_PORT=$base_port"
        echo "GATEWAY_URL=$gateway_url"
        for n in "${CLUSTER_NODES[@]}"; do
            echo "NODE${n}_URL=$(node_url "$n")"
            echo "NODE${n}_GRPC=127.0.0.1:$(node_grpc_port "$n")"
            echo "NODE${n}_MEMBERLIST=127.0.0.1:$(node_memberlist_port "$n")"
        done
    } > "$env_file.tmp"
    mv -f "$env_file.tmp" "$env_file"
}

check_node_arg() {
    if ! [[ "${1:-}" =~ ^[1-3]$ ]]; then
        log "node must be 1, 2 or 3 (got '${1:-}')"
        exit 2
    fi
}

# node_pid N: the pid of node N's Loki, only if it really runs with node N's config.
node_pid() { loki_pid "$(node_dir "$1")"; }

# gateway_pid: the pid of the gateway's nginx master, only if it really is the
# nginx started with DATA_DIR's nginx.conf (a stale pid is never trusted).
gateway_pid() {
    local pid_file="$nginx_dir/nginx.pid" pid
    [[ -s "$pid_file" ]] || return 1
    pid="$(tr -dc '0-9' < "$pid_file")"
    [[ -n "$pid" ]] || return 1
    proc_alive "$pid" || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "-c $nginx_dir/nginx.conf" || return 1
    printf '%s\n' "$pid"
}

http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@" || true; }
node_ready() { [[ "$(http_code "$(node_url "$1")/ready")" == 200 ]]; }

# ring_states URL: "ID STATE" per instance of the ingester ring as the node at
# URL sees it (STATE is UNHEALTHY when the heartbeat is too old).
ring_states() {
    curl -s --max-time 2 -H 'Accept: application/json' "$1/ring" 2>/dev/null |
        grep -o '"id":"[^"]*","state":"[^"]*"' |
        sed 's/^"id":"\([^"]*\)","state":"\([^"]*\)"$/\1 \2/' || true
}

# running_nodes: the nodes whose Loki process runs.
running_nodes() {
    local n
    for n in "${CLUSTER_NODES[@]}"; do
        if node_pid "$n" >/dev/null; then echo "$n"; fi
    done
}

# cluster_settled: every running node answers /ready with 200 and sees every
# running node ACTIVE in its ring; at least one node runs.
cluster_settled() {
    local running n m states
    running="$(running_nodes)"
    [[ -n "$running" ]] || return 1
    for n in $running; do
        node_ready "$n" || return 1
        states="$(ring_states "$(node_url "$n")")"
        for m in $running; do
            grep -qx "node$m ACTIVE" <<<"$states" || return 1
        done
    done
}

# wait_settled WHAT: wait (CLUSTER_START_TIMEOUT) for cluster_settled; on
# timeout print the rings and the nodes' last log lines and fail.
wait_settled() {
    local what="$1" start deadline n
    start=$(date +%s)
    deadline=$(( start + CLUSTER_START_TIMEOUT ))
    while ! cluster_settled; do
        for n in "${CLUSTER_NODES[@]}"; do
            if [[ -f "$(node_dir "$n")/loki.pid" ]] && ! node_pid "$n" >/dev/null; then
                log "node $n exited; last lines of $(node_dir "$n")/loki.log:"
                tail -n 30 "$(node_dir "$n")/loki.log" >&2 || true
                rm -f "$(node_dir "$n")/loki.pid"
                return 1
            fi
        done
        if (( $(date +%s) >= deadline )); then
            log "$what: cluster not settled after ${CLUSTER_START_TIMEOUT}s"
            for n in $(running_nodes); do
                log "node $n /ready: $(http_code "$(node_url "$n")/ready"); ring: $(ring_states "$(node_url "$n")" | tr '\n' ' ')"
                tail -n 15 "$(node_dir "$n")/loki.log" >&2 || true
            done
            return 1
        fi
        sleep 0.5
    done
    log "$what: settled after $(( $(date +%s) - start ))s; ring: $(ring_states "$(node_url "$(running_nodes | head -n 1)")" | tr '\n' ' ')"
}

# strip_template_header FROM: copy stdin to stdout without the template's
# leading comment block (it names the placeholders, which are filled in now),
# with one "generated by FROM" line instead.
strip_template_header() {
    printf '# Generated by %s.\n' "$1"
    awk 'body || !/^#/ { body = 1; print }'
}

# write_node_config N
write_node_config() {
    local n="$1" dir esc_dir esc_store join="" m label
    dir="$(node_dir "$n")"
    mkdir -p "$dir" "$store_dir"
    for m in "${CLUSTER_NODES[@]}"; do
        join+="${join:+, }127.0.0.1:$(node_memberlist_port "$m")"
    done
    # Unique per DATA_DIR: a cluster never gossips with another one on this host.
    label="skald-$(printf '%s' "$data_dir" | cksum | cut -d' ' -f1)"
    esc_dir="$(printf '%s' "$dir" | sed 's/[|&\\]/\\&/g')"
    esc_store="$(printf '%s' "$store_dir" | sed 's/[|&\\]/\\&/g')"
    sed -e "s|@NODE_DIR@|$esc_dir|g" -e "s|@STORE_DIR@|$esc_store|g" \
        -e "s|@NODE@|$n|g" -e "s|@HTTP_PORT@|$(node_http_port "$n")|g" \
        -e "s|@GRPC_PORT@|$(node_grpc_port "$n")|g" \
        -e "s|@MEMBERLIST_PORT@|$(node_memberlist_port "$n")|g" \
        -e "s|@JOIN_MEMBERS@|$join|g" -e "s|@CLUSTER_LABEL@|$label|g" \
        -e "s|@AUTH_ENABLED@|${LOKI_CLUSTER_AUTH_ENABLED:-false}|g" \
        "$cluster_here/loki-cluster-config.yaml" | strip_template_header \
        "start-loki-cluster.sh, node $n, from tests/e2e/loki/loki-cluster-config.yaml" > "$dir/loki-config.yaml"
}

# start_node N: start node N in the background unless it runs (does not wait).
start_node() {
    local n="$1" dir pid bin p
    dir="$(node_dir "$n")"
    if pid="$(node_pid "$n")"; then
        log "node $n already running (pid $pid)"
        return 0
    fi
    rm -f "$dir/loki.pid"
    for p in "$(node_http_port "$n")" "$(node_grpc_port "$n")" "$(node_memberlist_port "$n")"; do
        if port_busy "$p"; then
            log "node $n: port 127.0.0.1:$p is already in use"
            return 1
        fi
    done
    # Build (or find) the binary once per script run.
    if [[ -z "${loki_bin:-}" ]]; then
        loki_bin="$("$cluster_here/build-loki.sh" | tail -n 1)"
    fi
    bin="$loki_bin"
    write_node_config "$n"
    log "starting node $n: $(node_url "$n") grpc 127.0.0.1:$(node_grpc_port "$n") memberlist 127.0.0.1:$(node_memberlist_port "$n")"
    printf '\n=== %s start node %s: %s -target=all -config.file=%s\n' \
        "$(date -u +%FT%TZ)" "$n" "$bin" "$dir/loki-config.yaml" >> "$dir/loki.log"
    # setsid: own session, so the node survives (and is not signalled with) the caller's process group.
    setsid "$bin" -target=all -config.file="$dir/loki-config.yaml" >> "$dir/loki.log" 2>&1 < /dev/null &
    echo "$!" > "$dir/loki.pid"
}

# proc_alive PID: PID runs (a zombie, exited but not yet reaped by its new
# parent, does not count).
proc_alive() {
    local stat
    kill -0 "$1" 2>/dev/null || return 1
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ "${stat:0:1}" != Z ]]
}

# wait_gone PID NAME TIMEOUT: wait until PID exited; SIGKILL after TIMEOUT s.
wait_gone() {
    local pid="$1" name="$2" timeout="$3" deadline
    deadline=$(( $(date +%s) + timeout ))
    while proc_alive "$pid"; do
        if (( $(date +%s) >= deadline )); then
            log "$name (pid $pid) still running after ${timeout}s; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            deadline=$(( $(date +%s) + 5 ))
            while proc_alive "$pid" && (( $(date +%s) < deadline )); do sleep 0.1; done
            break
        fi
        sleep 0.1
    done
    if proc_alive "$pid"; then
        log "$name (pid $pid) did not exit"
        return 1
    fi
}

# stop_node N SIGNAL: send SIGNAL (TERM: graceful, KILL: crash) to node N and
# wait until it is gone. Nothing running is fine.
stop_node() {
    local n="$1" sig="$2" pid start
    if ! pid="$(node_pid "$n")"; then
        rm -f "$(node_dir "$n")/loki.pid"
        log "node $n is not running"
        return 0
    fi
    start=$(date +%s%N)
    log "node $n (pid $pid): SIG$sig"
    kill -"$sig" "$pid" 2>/dev/null || true
    wait_gone "$pid" "node $n" "$CLUSTER_STOP_TIMEOUT" || return 1
    rm -f "$(node_dir "$n")/loki.pid"
    log "node $n stopped after $(( ($(date +%s%N) - start) / 1000000 )) ms"
}

gateway_ready() { [[ "$(http_code "$gateway_url/ready")" == 200 ]]; }

write_gateway_config() {
    local user="" esc
    mkdir -p "$nginx_dir/tmp"
    # Run as root (a CI container): keep the worker as root too, or it would
    # switch to nginx's default user, which cannot write under DATA_DIR.
    if [[ "$(id -u)" == 0 ]]; then user="user $(id -un) $(id -gn);"; fi
    esc="$(printf '%s' "$nginx_dir" | sed 's/[|&\\]/\\&/g')"
    sed -e "s|@NGINX_DIR@|$esc|g" -e "s|@GATEWAY_PORT@|$gateway_port|g" \
        -e "s|@NODE1@|127.0.0.1:$(node_http_port 1)|g" \
        -e "s|@NODE2@|127.0.0.1:$(node_http_port 2)|g" \
        -e "s|@NODE3@|127.0.0.1:$(node_http_port 3)|g" \
        -e "s|^@USER@\$|$user|" \
        "$cluster_here/loki-cluster-nginx.conf" | strip_template_header \
        "start-loki-cluster.sh from tests/e2e/loki/loki-cluster-nginx.conf" > "$nginx_dir/nginx.conf"
}

# start_gateway: start nginx unless it runs, and wait until it answers.
start_gateway() {
    local pid deadline
    if [[ ! -x "$NGINX_BIN" ]]; then
        log "$NGINX_BIN not found (apt-get install nginx-light, or set NGINX_BIN)"
        return 1
    fi
    if pid="$(gateway_pid)"; then
        log "gateway already running (pid $pid) at $gateway_url"
    else
        rm -f "$nginx_dir/nginx.pid"
        if port_busy "$gateway_port"; then
            log "gateway: port 127.0.0.1:$gateway_port is already in use"
            return 1
        fi
        write_gateway_config
        "$NGINX_BIN" -t -q -p "$nginx_dir" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log" ||
            { log "nginx -t failed for $nginx_dir/nginx.conf"; return 1; }
        log "starting gateway (nginx) at $gateway_url"
        setsid "$NGINX_BIN" -p "$nginx_dir" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log" \
            >> "$nginx_dir/nginx.out" 2>&1 < /dev/null &
        pid=$!
        # nginx writes the pid file itself (the same pid: daemon off); write it
        # now too so that a stop right after this start finds it.
        echo "$pid" > "$nginx_dir/nginx.pid"
    fi
    deadline=$(( $(date +%s) + 10 ))
    # The gateway answers: a listening nginx gives some HTTP status even with
    # every node down (502); 000 means nothing listens yet.
    while [[ "$(http_code "$gateway_url/ready")" == 000 ]]; do
        if ! proc_alive "$pid"; then
            log "nginx exited; $nginx_dir/error.log:"
            tail -n 20 "$nginx_dir/error.log" >&2 || true
            rm -f "$nginx_dir/nginx.pid"
            return 1
        fi
        if (( $(date +%s) >= deadline )); then
            log "gateway not answering after 10s"
            return 1
        fi
        sleep 0.1
    done
}

# stop_gateway [QUIT|TERM|KILL]: QUIT (default) lets nginx finish the requests
# in flight; wait until it is gone.
stop_gateway() {
    local sig="${1:-QUIT}" pid
    if ! pid="$(gateway_pid)"; then
        rm -f "$nginx_dir/nginx.pid"
        log "gateway is not running"
        return 0
    fi
    log "gateway (pid $pid): SIG$sig"
    kill -"$sig" "$pid" 2>/dev/null || true
    wait_gone "$pid" gateway "$CLUSTER_STOP_TIMEOUT" || return 1
    # A master that was SIGKILLed leaves its worker behind, still listening;
    # the worker is in the master's session (started by setsid).
    local left
    left="$(ps -o pid=,stat= -s "$pid" 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }' || true)"
    if [[ -n "$left" ]]; then
        log "gateway: killing what is left of its session: $(tr "\n" " " <<<"$left")"
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null || true
        sleep 0.2
    fi
    rm -f "$nginx_dir/nginx.pid"
    log "gateway stopped"
}

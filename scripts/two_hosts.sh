#!/usr/bin/env bash
# Two simulated hosts on this machine for trying framebus on a Ray cluster (docs/scale.md):
# network namespaces fbhostA (198.18.0.1) and fbhostB (198.18.0.2), and an outsider fbhostC
# (198.18.0.3) that is on the same link but in no cluster, joined by a bridge in a fourth namespace
# (the "switch"); a Ray head in A (resource hostA) and a Ray worker in B (resource hostB).
# Addresses are RFC 2544's test range and exist only inside the namespaces. Needs root and iproute2.
#
#   scripts/two_hosts.sh up          # namespaces, link, Ray head and worker
#   scripts/two_hosts.sh run ARGS    # `launch ARGS` inside host A, e.g. run hello.yaml --backend ray --address 198.18.0.1:6379
#   scripts/two_hosts.sh on HOST CMD # any command inside host A, B or C (the outsider)
#   scripts/two_hosts.sh blip S      # host A's link down for S seconds
#   scripts/two_hosts.sh down        # stop Ray, remove the namespaces (also after a failed up)
#
# FB_CPUS_A / FB_CPUS_B (e.g. 0 and 1) pin each host's processes to its own cores (taskset), so two
# hosts on one machine do not share a core: host A's Ray and `run`, host B's Ray.
set -euo pipefail
A=${FB_HOST_A:-fbhostA}
B=${FB_HOST_B:-fbhostB}
C=${FB_HOST_C:-fbhostC}
SW=${FB_SWITCH:-fbswitch}
IP_A=${FB_IP_A:-198.18.0.1}
IP_B=${FB_IP_B:-198.18.0.2}
IP_C=${FB_IP_C:-198.18.0.3}
PORT=${FB_RAY_PORT:-6379}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RAY="${FB_RAY:-$ROOT/.venv/bin/ray}"
LAUNCH="${FB_LAUNCH:-$ROOT/.venv/bin/launch}"
TMP=${FB_RAY_TMP:-/tmp/fb-two-hosts}
export RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
pin() { [ -z "$1" ] || echo "taskset -c $1"; }  # the prefix that pins a command to cores CPUS, if any

attach() {  # attach NS IP: a veth from the namespace to the switch's bridge
    local ns=$1 ip=$2
    ip netns add "$ns"
    ip link add "${ns}0" type veth peer name "${ns}p"
    ip link set "${ns}0" netns "$ns"
    ip link set "${ns}p" netns "$SW"
    ip -n "$SW" link set "${ns}p" master br0
    ip -n "$SW" link set "${ns}p" up
    ip -n "$ns" addr add "$ip/24" dev "${ns}0"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "${ns}0" up
}

up() {
    ip netns add "$SW"
    ip -n "$SW" link add br0 type bridge
    ip -n "$SW" link set br0 up
    attach "$A" "$IP_A"
    attach "$B" "$IP_B"
    attach "$C" "$IP_C"
    mkdir -p "$TMP/a" "$TMP/b"
    in_ns "$A" $(pin "${FB_CPUS_A:-}") "$RAY" start --head --node-ip-address "$IP_A" --port "$PORT" --resources '{"hostA": 1}' \
        --num-cpus 4 --temp-dir "$TMP/a" --include-dashboard false --disable-usage-stats >"$TMP/a.log" 2>&1
    in_ns "$B" $(pin "${FB_CPUS_B:-}") "$RAY" start --address "$IP_A:$PORT" --node-ip-address "$IP_B" --resources '{"hostB": 1}' \
        --num-cpus 4 --temp-dir "$TMP/b" --disable-usage-stats >"$TMP/b.log" 2>&1
    echo "hosts up: $A ($IP_A, Ray head at $IP_A:$PORT), $B ($IP_B), outsider $C ($IP_C)"
}

down() {
    for ns in "$B" "$A" "$C" "$SW"; do
        if ip netns list | grep -qw "$ns"; then
            # the processes in this namespace only (`ray stop` would end every Ray on the machine)
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            if [ -n "$pids" ]; then
                kill $pids 2>/dev/null || true
                for _ in 1 2 3 4 5 6 7 8 9 10; do
                    [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
                    sleep 0.3
                done
                kill -9 $(ip netns pids "$ns" 2>/dev/null) 2>/dev/null || true
            fi
            ip netns del "$ns"  # its veth ends go with it
        fi
    done
    rm -rf "$TMP"
    echo "hosts down"
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    run) shift; in_ns "$A" $(pin "${FB_CPUS_A:-}") $LAUNCH "$@" ;;  # FB_LAUNCH may be a command with arguments
    on) host=$2; shift 2; case "$host" in A) in_ns "$A" "$@" ;; B) in_ns "$B" "$@" ;; C) in_ns "$C" "$@" ;;
                                          *) echo "on: host A, B or C, not $host" >&2; exit 2 ;; esac ;;
    blip) ip -n "$A" link set "${A}0" down; sleep "${2:-5}"; ip -n "$A" link set "${A}0" up ;;
    *) echo "usage: $0 up | down | run LAUNCH-ARGS... | on A|B|C CMD... | blip SECONDS" >&2; exit 2 ;;
esac

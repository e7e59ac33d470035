#!/usr/bin/env bash
# Two simulated hosts on this machine for trying framebus on a Ray cluster (docs/scale.md):
# network namespaces fbhostA (198.18.0.1) and fbhostB (198.18.0.2) joined by a veth link, a Ray head
# in A (resource hostA) and a Ray worker in B (resource hostB). Addresses are RFC 2544's test range
# and exist only inside the namespaces. Needs root and iproute2.
#
#   scripts/two_hosts.sh up        # namespaces, link, Ray head and worker
#   scripts/two_hosts.sh run ARGS  # `launch ARGS` inside host A, e.g. run hello.yaml --backend ray --address 198.18.0.1:6379
#   scripts/two_hosts.sh blip S    # the link down for S seconds
#   scripts/two_hosts.sh down      # stop Ray in both, remove the namespaces (also after a failed up)
set -euo pipefail
A=${FB_HOST_A:-fbhostA}
B=${FB_HOST_B:-fbhostB}
IP_A=${FB_IP_A:-198.18.0.1}
IP_B=${FB_IP_B:-198.18.0.2}
PORT=${FB_RAY_PORT:-6379}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RAY="${FB_RAY:-$ROOT/.venv/bin/ray}"
LAUNCH="${FB_LAUNCH:-$ROOT/.venv/bin/launch}"
TMP=${FB_RAY_TMP:-/tmp/fb-two-hosts}
export RAY_AUTH_MODE=disabled RAY_USAGE_STATS_ENABLED=0

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

up() {
    ip netns add "$A"
    ip netns add "$B"
    ip link add "${A}0" type veth peer name "${B}0"
    ip link set "${A}0" netns "$A"
    ip link set "${B}0" netns "$B"
    ip -n "$A" addr add "$IP_A/24" dev "${A}0"
    ip -n "$B" addr add "$IP_B/24" dev "${B}0"
    for ns in "$A" "$B"; do
        ip -n "$ns" link set lo up
        ip -n "$ns" link set "${ns}0" up
    done
    mkdir -p "$TMP/a" "$TMP/b"
    in_ns "$A" "$RAY" start --head --node-ip-address "$IP_A" --port "$PORT" --resources '{"hostA": 1}' \
        --num-cpus 4 --temp-dir "$TMP/a" --include-dashboard false --disable-usage-stats >"$TMP/a.log" 2>&1
    in_ns "$B" "$RAY" start --address "$IP_A:$PORT" --node-ip-address "$IP_B" --resources '{"hostB": 1}' \
        --num-cpus 4 --temp-dir "$TMP/b" --disable-usage-stats >"$TMP/b.log" 2>&1
    echo "hosts up: $A ($IP_A, Ray head at $IP_A:$PORT) and $B ($IP_B)"
}

down() {
    for ns in "$B" "$A"; do
        if ip netns list | grep -qw "$ns"; then
            in_ns "$ns" "$RAY" stop --force >/dev/null 2>&1 || true
            # whatever is left in the namespace (a raylet that ignored the stop) goes with it
            for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
            ip netns del "$ns"
        fi
    done
    ip link del "${A}0" 2>/dev/null || true
    rm -rf "$TMP"
    echo "hosts down"
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    run) shift; in_ns "$A" $LAUNCH "$@" ;;  # FB_LAUNCH may be a command with arguments
    blip) ip -n "$A" link set "${A}0" down; sleep "${2:-5}"; ip -n "$A" link set "${A}0" up ;;
    *) echo "usage: $0 up | down | run LAUNCH-ARGS... | blip SECONDS" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# framebus setup: installs what a fresh Debian machine lacks, builds .venv, then runs what you ask.
#
#   bash setup.sh demo    set up, then run the demo graph
#   bash setup.sh test    set up, then run the test suite (its exit code is pytest's)
#   bash setup.sh         set up only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# Debian packages the project needs at run or test time; installed only if missing.
APT_PACKAGES=(python3 python3-venv python3-dev)

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null; then
        log "not a Debian system: please install ${missing[*]} yourself"; return 0
    fi
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

pick_python() {
    for py in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
        [ -n "$py" ] && command -v "$py" >/dev/null || continue
        if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$py"; return 0
        fi
    done
    log "framebus needs Python 3.11 or newer"; exit 1
}

# A Python from pyenv or similar already brings venv; only a bare Debian python3 needs the packages.
PY=$(pick_python)
if ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
    apt_install "${APT_PACKAGES[@]}"
fi

if [ ! -x .venv/bin/python ]; then
    log "creating .venv with $("$PY" --version)"
    "$PY" -m venv .venv
fi
log "installing framebus into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"

case "${1:-}" in
    demo)
        shift
        log "running the demo: launch run hello.yaml"
        exec .venv/bin/launch run hello.yaml "$@" ;;
    test)
        shift
        log "running the tests"
        exec .venv/bin/python -m pytest "$@" ;;
    "") log "ready: activate with 'source .venv/bin/activate', then 'launch ls'" ;;
    *) log "unknown command '$1'; use: demo, test, or nothing"; exit 2 ;;
esac

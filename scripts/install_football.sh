#!/usr/bin/env bash
# Installs Google Research Football (gfootball 2.10.2) into .venv for the football pack.
#
#   bash scripts/install_football.sh           (from anywhere; works on the repo's .venv)
#
# Idempotent: does nothing when `import gfootball` already works in .venv. Otherwise it
#   1. installs the Debian build dependencies that are missing (dpkg -s decides),
#   2. builds a gfootball wheel once, in a throwaway build venv, into a cache folder (under a lock:
#      a second setup at the same time waits and reuses the wheel)
#      (the engine's build needs setuptools<60 and psutil, and its shell script calls whatever
#      `python3` is first on PATH, so the build venv goes first on PATH; the main .venv keeps its
#      modern setuptools),
#   3. installs that wheel plus gym==0.25.2 and six (an undeclared runtime dependency) into .venv.
# The C++ build takes about 15 minutes on 2 cores; later runs reuse the cached wheel in seconds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GFOOTBALL_VERSION="2.10.2"
VENV_PY="${VENV_PY:-.venv/bin/python}"
CACHE_DIR="${FRAMEBUS_FOOTBALL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/framebus/gfootball}"
WHEEL_DIR="$CACHE_DIR/wheels"
BUILD_VENV="$CACHE_DIR/build-venv"
APT_PACKAGES=(git cmake build-essential libgl1-mesa-dev libsdl2-dev libsdl2-image-dev libsdl2-ttf-dev
              libsdl2-gfx-dev libboost-all-dev libdirectfb-dev libst-dev mesa-utils xvfb)

log() { printf '\033[1m[football]\033[0m %s\n' "$*" >&2; }
# import gfootball (which imports gym, whose unmaintained-notice on stderr is muted; real errors still show)
CHECK='import contextlib, io
with contextlib.redirect_stderr(io.StringIO()):
    import gfootball.env, gfootball_engine'

if [ ! -x "$VENV_PY" ]; then
    log "no $VENV_PY: run setup.sh first"; exit 1
fi
if "$VENV_PY" -c "$CHECK" 2>/dev/null; then
    log "gfootball already importable in $VENV_PY; nothing to do"; exit 0
fi

apt_missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || apt_missing+=("$pkg")
done
if [ ${#apt_missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        log "not a Debian system: install ${apt_missing[*]} yourself, then run this again"; exit 1
    fi
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing Debian build dependencies: ${apt_missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${apt_missing[@]}" >/dev/null
fi

mkdir -p "$WHEEL_DIR"
# Two setups at once (two clones on one machine) share the cache: the second waits for the first's
# build and then uses its wheel, instead of deleting the build venv the first is compiling with.
exec 9>"$CACHE_DIR/.build.lock"
if ! flock -n 9; then
    log "another setup is building the gfootball wheel; waiting for it"
    flock 9
fi
wheel=$(ls "$WHEEL_DIR"/gfootball-"$GFOOTBALL_VERSION"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
    log "building the gfootball $GFOOTBALL_VERSION wheel (C++ engine, about 15 minutes on 2 cores)"
    rm -rf "$BUILD_VENV"
    # The build venv must run the same Python version as .venv so the wheel's tag fits it.
    base_py=$("$VENV_PY" -c 'import sys; print(sys._base_executable)')
    "$base_py" -m venv "$BUILD_VENV"
    BP="$BUILD_VENV/bin/python -m pip install -q --disable-pip-version-check"
    $BP "setuptools<60" wheel psutil "gym==0.25.2"
    # build_game_engine.sh runs `python3 -c 'import psutil'`: the build venv must come first on PATH.
    PATH="$BUILD_VENV/bin:$PATH" "$BUILD_VENV/bin/python" -m pip wheel --disable-pip-version-check \
        --no-build-isolation --no-deps "gfootball==$GFOOTBALL_VERSION" -w "$WHEEL_DIR"
    rm -rf "$BUILD_VENV"
    wheel=$(ls "$WHEEL_DIR"/gfootball-"$GFOOTBALL_VERSION"-*.whl | head -1)
fi
flock -u 9

log "installing $(basename "$wheel") into $VENV_PY"
"$VENV_PY" -m pip install -q --disable-pip-version-check "$wheel" "gym==0.25.2" six
"$VENV_PY" -c "$CHECK" || { log "gfootball was installed but does not import"; exit 1; }
log "gfootball $GFOOTBALL_VERSION ready"

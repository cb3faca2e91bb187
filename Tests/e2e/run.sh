#!/usr/bin/env bash
# make e2e: LiveBridge against a real Home Assistant 2025.4.4.
# The Python 3.13 venv is created once in a cache folder outside the repo and reused.
set -euo pipefail
cd "$(dirname "$0")/../.."
HA_VERSION=2025.4.4
CACHE="${LIVEBRIDGE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/livebridge-e2e}"
VENV="$CACHE/venv-$HA_VERSION"

find_python() {
    if command -v python3.13 >/dev/null 2>&1 && python3.13 --version >/dev/null 2>&1; then echo python3.13; return; fi
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13; do
        [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
    echo "e2e: Python 3.13 not found (install it, or pyenv install 3.13)" >&2
    exit 1
}

if [ ! -x "$VENV/bin/hass" ]; then
    PYTHON="$(find_python)"
    echo "e2e: creating $VENV with homeassistant==$HA_VERSION (once; takes a few minutes)"
    rm -rf "$VENV"
    mkdir -p "$CACHE"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet "homeassistant==$HA_VERSION"
fi
exec "$VENV/bin/python" Tests/e2e/homeassistant_e2e.py

#!/usr/bin/env bash
# make e2e: LiveBridge against a real Home Assistant core (2026.11.0, the current release).
# Core 2026.3+ needs Python >= 3.14.2: it runs in a Debian testing root built once in a cache outside the repo
# (core-root.sh; needs root). The driver runs on the host, in a small venv with aiohttp and PyYAML, and starts
# LiveBridge on the host and core in the root; both share 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
export HA_VERSION="${HA_VERSION:-2026.11.0}"
CACHE="${LIVEBRIDGE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/livebridge-e2e}"
DRIVER="$CACHE/driver-venv"

LIVEBRIDGE_E2E_ROOT="$(Tests/e2e/core-root.sh)"
export LIVEBRIDGE_E2E_ROOT LIVEBRIDGE_E2E_HASS="/opt/ha-$HA_VERSION/bin/hass"

if [ ! -x "$DRIVER/bin/python" ] || ! "$DRIVER/bin/python" -c 'import aiohttp, yaml' 2>/dev/null; then
    echo "e2e: creating the driver's venv in $DRIVER (once)"
    python3 -c 'import venv' 2>/dev/null && python3 -m venv "$DRIVER" 2>/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv && python3 -m venv "$DRIVER"; }
    "$DRIVER/bin/pip" install --quiet aiohttp pyyaml
fi
exec "$DRIVER/bin/python" Tests/e2e/homeassistant_e2e.py

#!/usr/bin/env sh
# Add-on entry point: reads the options Home Assistant's supervisor writes and runs LiveBridge with them.
# The supervisor's token ($SUPERVISOR_TOKEN) reaches Home Assistant at ws://supervisor/core/websocket; a rules
# file may use it with `token: !env_var SUPERVISOR_TOKEN` and `url: ws://supervisor/core/websocket`.
set -eu
OPTIONS=/data/options.json
RULES=$(sed -n 's/.*"rules"[^"]*"\([^"]*\)".*/\1/p' "$OPTIONS")
LEVEL=$(sed -n 's/.*"log_level"[^"]*"\([^"]*\)".*/\1/p' "$OPTIONS")
DRY=""
grep -q '"dry_run": *true' "$OPTIONS" && DRY="--dry-run"
exec /usr/local/bin/livebridge run --config "${RULES:-/config/livebridge.yaml}" --data-dir /data --log-level "${LEVEL:-info}" $DRY

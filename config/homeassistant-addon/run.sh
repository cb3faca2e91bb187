#!/bin/sh
# The add-on's entry point. The Supervisor writes the user's options to /data/options.json, maps the add-on's config
# folder at /config, and sets $SUPERVISOR_TOKEN (LiveBridge then reaches Home Assistant through the Supervisor when the
# rules file names no url/token). The status page listens on the ingress port. The variables below are only for
# tests run outside a container.
set -eu
LIVEBRIDGE=${LIVEBRIDGE:-/usr/local/bin/livebridge}
DATA=${LIVEBRIDGE_DATA:-/data}
LISTEN=${LIVEBRIDGE_STATUS_LISTEN:-0.0.0.0:8099}
# First start: no rules file yet. Propose one from Home Assistant's states (its schema keeps the path free of quotes).
RULES=$(sed -n 's/.*"rules": *"\([^"]*\)".*/\1/p' "$DATA/options.json")
if [ -n "$RULES" ] && [ ! -e "$RULES" ]; then
    echo "no rules file at $RULES yet: writing a proposal from Home Assistant's states (livebridge suggest); edit it, then restart" >&2
    "$LIVEBRIDGE" suggest --output "$RULES" || true
fi
exec "$LIVEBRIDGE" run --addon-options "$DATA/options.json" --data-dir "$DATA" --status-listen "$LISTEN"

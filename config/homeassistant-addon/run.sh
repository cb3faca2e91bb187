#!/bin/sh
# The add-on's entry point. The Supervisor writes the user's options to /data/options.json, maps the add-on's config
# folder at /config, and sets $SUPERVISOR_TOKEN (LiveBridge then reaches Home Assistant through the Supervisor when the
# rules file names no url/token). The status page listens on the ingress port. The variables below are only for
# tests run outside a container. On a first start, with no rules file yet, `run` writes suggest's proposal there.
set -eu
# Under s6-overlay (Home Assistant's base images, /init as the entry point) the container's variables are also kept in
# /run/s6/container_environment: taken from there when the program's own environment was reset.
if [ -z "${SUPERVISOR_TOKEN:-}" ] && [ -r /run/s6/container_environment/SUPERVISOR_TOKEN ]; then
    SUPERVISOR_TOKEN=$(cat /run/s6/container_environment/SUPERVISOR_TOKEN)
    export SUPERVISOR_TOKEN
fi
LIVEBRIDGE=${LIVEBRIDGE:-/usr/local/bin/livebridge}
DATA=${LIVEBRIDGE_DATA:-/data}
LISTEN=${LIVEBRIDGE_STATUS_LISTEN:-0.0.0.0:8099}
exec "$LIVEBRIDGE" run --addon-options "$DATA/options.json" --data-dir "$DATA" --status-listen "$LISTEN"

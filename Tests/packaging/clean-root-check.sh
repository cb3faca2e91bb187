#!/usr/bin/env bash
# make dist's check: the tarball unpacked, as the README installs it, in fresh debootstrapped roots of Debian 12
# (bookworm), 13 (trixie) and testing with nothing else installed: in a chroot the binary must start (`--version`:
# every shared library resolved from its own lib/ or the system's glibc), `check` the example rules, `render` them
# against the example states, and `run` against the demo household's simulator pushing to the preview server (both
# started on the host's 127.0.0.1, which the chroot shares). The roots are cached outside the work tree
# (debian-root.sh). Needs root (or sudo). DIST_SUITES overrides the suites.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARBALL=$(realpath "$1")
NAME=$(basename "$TARBALL" .tar.gz)
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
SUITES=${DIST_SUITES:-bookworm trixie testing}
WORK=$PWD/.build/dist
BIN=$PWD/.build/release/livebridge
ROOT=
HOST_PIDS=
cleanup() {
    for pid in $HOST_PIDS; do kill "$pid" 2>/dev/null || true; done
    [ -z "$ROOT" ] || { $SUDO umount "$ROOT/proc" 2>/dev/null || true; $SUDO rm -rf "$ROOT"; }
}
trap cleanup EXIT
# The port a server started with --port 0 names in its log ("…://127.0.0.1:PORT…"), within 30 s: a port found free
# here and handed over could be taken before the server listens.
port_in() {
    local port
    for _ in $(seq 300); do
        # The port and the character after it: a line still being written gives no half a number.
        port=$(grep -o -m1 '://127\.0\.0\.1:[0-9]\+[/ ]' -- "$1" | sed 's/.*:\([0-9]*\).$/\1/' || true)
        [ -n "$port" ] && { echo "$port"; return 0; }
        sleep 0.1
    done
    echo "dist: $1 names no port after 30 s:" >&2; cat -- "$1" >&2; return 1
}
for SUITE in $SUITES; do
    BASE=$(Tests/packaging/debian-root.sh "$SUITE")
    ROOT=$WORK/clean-root-$SUITE
    LOG=$WORK/clean-root-$SUITE.log
    $SUDO rm -rf "$ROOT"
    $SUDO cp -a "$BASE" "$ROOT"
    $SUDO mount -t proc proc "$ROOT/proc"
    # As the README installs it: the folder under /opt, the command a link to it.
    $SUDO mkdir -p "$ROOT/opt/livebridge"
    $SUDO tar -C "$ROOT/opt/livebridge" --strip-components=1 -xzf "$TARBALL"
    $SUDO ln -sf /opt/livebridge/livebridge "$ROOT/usr/local/bin/livebridge"
    # The household and the fake push services on the host's loopback.
    LIVEBRIDGE_HA_TOKEN=dist-token "$BIN" simulator --port 0 --cycle 6 > "$WORK/simulator-$SUITE.log" 2>&1 &
    HOST_PIDS="$HOST_PIDS $!"
    "$BIN" preview-server --port 0 > "$WORK/preview-$SUITE.log" 2>&1 &
    HOST_PIDS="$HOST_PIDS $!"
    HA_PORT=$(port_in "$WORK/simulator-$SUITE.log"); PUSH_PORT=$(port_in "$WORK/preview-$SUITE.log")
    $SUDO tee "$ROOT/opt/livebridge/run.yaml" > /dev/null <<RULES
homeassistant: { url: "ws://127.0.0.1:$HA_PORT/api/websocket", token: dist-token }
backends: { aivi: { type: aivi, token: t, base_url: "http://127.0.0.1:$PUSH_PORT" } }
defaults: { backend: aivi, debounce: 100ms, max_wait: 1s, min_interval: 200ms, max_updates_per_hour: 900 }
activities:
  washer:
    active_when: "{{ is_state('sensor.washer_status', 'running') }}"
    template: progress
    header_left: Washing
    progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
RULES
    $SUDO chroot "$ROOT" sh -ec "
        cd /opt/livebridge
        livebridge --version
        sed 's/replace-with-your-aivi-token/aivi-token-of-the-user/' secrets.example.yaml > secrets.yaml
        livebridge check livebridge.example.yaml
        livebridge render livebridge.example.yaml --states states.example.json --at 2026-11-22T12:00:00Z > render.out
        grep -q '^washer: active, start' render.out
        mkdir -p /tmp/lb-data
        timeout 20 livebridge run --config run.yaml --data-dir /tmp/lb-data > run.log 2>&1 || true
        grep -q 'msg=push.*outcome=delivered' run.log || { tail -n 20 run.log; exit 1; }
    " > "$LOG" 2>&1 || { tail -n 30 "$LOG"; echo "dist: FAILED in the clean Debian $SUITE root"; exit 1; }
    for pid in $HOST_PIDS; do kill "$pid" 2>/dev/null || true; done
    HOST_PIDS=
    $SUDO umount "$ROOT/proc"
    $SUDO rm -rf "$ROOT"
    ROOT=
    echo "dist: PASSED in a clean Debian $SUITE root ($(head -c 64 "$LOG" | head -n 1)): --version, check, render, run pushing to the fake"
done
echo "dist: $NAME.tar.gz ($(du -h "$TARBALL" | cut -f1)) runs in clean roots of Debian $SUITES with nothing installed"

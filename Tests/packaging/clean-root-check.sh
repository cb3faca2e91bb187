#!/usr/bin/env bash
# make dist's check: the tarball unpacked in a fresh Debian bookworm root (debootstrap minbase) with only the three
# runtime libraries installed (libwebsockets17 libcurl4 libyaml-0-2); in a chroot the binary must start
# (`--version`: every shared library resolved), `check` the example rules and `render` them against the example
# states. Needs root (or sudo).
set -euo pipefail
cd "$(dirname "$0")/../.."
TARBALL=$(realpath "$1")
NAME=$(basename "$TARBALL" .tar.gz)
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
BASE=$(Tests/packaging/debian-root.sh)
ROOT=$PWD/.build/dist/clean-root
LOG=$PWD/.build/dist/clean-root.log
cleanup() { $SUDO umount "$ROOT/proc" 2>/dev/null || true; $SUDO rm -rf "$ROOT"; }
trap cleanup EXIT
cleanup
$SUDO cp -a "$BASE" "$ROOT"
$SUDO cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
$SUDO mount -t proc proc "$ROOT/proc"
$SUDO chroot "$ROOT" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libwebsockets17 libcurl4 libyaml-0-2' \
    > "$LOG" 2>&1 || { tail -n 20 "$LOG"; echo "dist: FAILED installing the runtime libraries in the clean root"; exit 1; }
$SUDO tar -C "$ROOT/opt" -xzf "$TARBALL"
$SUDO chroot "$ROOT" sh -ec "
    cd /opt/$NAME
    ./livebridge --version
    sed 's/replace-with-your-aivi-token/aivi-token-of-the-user/' secrets.example.yaml > secrets.yaml
    ./livebridge check livebridge.example.yaml
    ./livebridge render livebridge.example.yaml --states states.example.json --at 2026-11-22T12:00:00Z > render.out
    grep -q '^washer: active, start' render.out
" || { echo "dist: FAILED in the clean root"; exit 1; }
echo "dist: PASSED $NAME.tar.gz ($(du -h "$TARBALL" | cut -f1)): --version, check and render in a clean Debian bookworm root with only libwebsockets17 libcurl4 libyaml-0-2"

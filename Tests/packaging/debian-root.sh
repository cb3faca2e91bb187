#!/usr/bin/env bash
# Prints the path of a pristine Debian root of SUITE (default bookworm; also trixie, testing), debootstrap
# --variant=minbase (~200 MB, ~1 min the first time), made once into ~/.cache/livebridge-roots/SUITE (outside the work
# tree, so a fresh clone reuses it) and never changed: `make dist` copies one to check the tarball in a clean system,
# `make images` imports bookworm's as the images' base (no registry is reachable here). Needs root (or sudo) and
# debootstrap; a suite newer than the host's debootstrap knows is made with its sid script.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUITE=${1:-bookworm}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
CACHE=${LIVEBRIDGE_ROOTS:-$HOME/.cache/livebridge-roots}
ROOT=$CACHE/$SUITE
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -x "$ROOT/bin/sh" ]; then
    command -v debootstrap >/dev/null || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq debootstrap; } >&2
    mkdir -p "$CACHE"
    $SUDO rm -rf "$ROOT.partial"
    SCRIPT=
    [ -e "/usr/share/debootstrap/scripts/$SUITE" ] || SCRIPT=/usr/share/debootstrap/scripts/sid
    echo "debootstrap: Debian $SUITE (minbase) into $ROOT" >&2
    $SUDO debootstrap --variant=minbase "$SUITE" "$ROOT.partial" "$MIRROR" $SCRIPT > "$CACHE/$SUITE.log" 2>&1 \
        || { tail -n 20 "$CACHE/$SUITE.log" >&2; exit 1; }
    $SUDO mv "$ROOT.partial" "$ROOT"
fi
echo "$ROOT"

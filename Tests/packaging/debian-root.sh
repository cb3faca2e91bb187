#!/usr/bin/env bash
# Prints the path of a pristine Debian bookworm root (debootstrap --variant=minbase, ~200 MB, ~30 s the first time),
# made once into .build/debian-bookworm and reused: `make dist` copies it to check the tarball in a clean root,
# `make images` imports it as the images' base (no registry is reachable here). Needs root (or sudo) and debootstrap.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
ROOT=$PWD/.build/debian-bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -x "$ROOT/bin/sh" ]; then
    command -v debootstrap >/dev/null || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq debootstrap; } >&2
    $SUDO rm -rf "$ROOT.partial"
    echo "debootstrap: Debian bookworm (minbase) into $ROOT" >&2
    $SUDO debootstrap --variant=minbase bookworm "$ROOT.partial" "$MIRROR" > .build/debootstrap.log 2>&1 \
        || { tail -n 20 .build/debootstrap.log >&2; exit 1; }
    $SUDO mv "$ROOT.partial" "$ROOT"
fi
echo "$ROOT"

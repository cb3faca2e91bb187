#!/usr/bin/env bash
# Prints the path of a Debian testing root holding Python 3.14 and a venv with homeassistant==$HA_VERSION, building it
# once in the cache (outside the work tree; about 2 GB, 2–5 minutes from nothing): core 2026.3+ needs Python >= 3.14.2,
# which bookworm does not have. Needs root (debootstrap, chroot). Everything comes from Debian's archive and PyPI.
set -euo pipefail
HA_VERSION="${HA_VERSION:-2026.11.0}"
CACHE="${LIVEBRIDGE_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/livebridge-e2e}"
ROOT="$CACHE/forky-root"
VENV=/opt/ha-$HA_VERSION
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
log() { echo "e2e: $*" >&2; }

mounted() { mountpoint -q "$ROOT/$1"; }
mount_all() {
    mounted proc || mount -t proc proc "$ROOT/proc"
    mounted sys || mount -t sysfs sys "$ROOT/sys"
    mounted dev || mount --bind /dev "$ROOT/dev"
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
    # The host's trust store (it may hold a proxy's CA), beside the root's own.
    cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/host-ca-certificates.crt" 2>/dev/null || true
}
CA=/etc/host-ca-certificates.crt
inroot() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    SSL_CERT_FILE=$CA PIP_CERT=$CA REQUESTS_CA_BUNDLE=$CA PIP_DEFAULT_TIMEOUT=180 PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"; }

if [ ! -x "$ROOT/usr/bin/python3.14" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
    log "building a Debian testing root with Python 3.14 in $ROOT (once)"
    rm -rf "$ROOT.partial"
    mkdir -p "$CACHE"
    debootstrap --variant=minbase forky "$ROOT.partial" "$MIRROR" /usr/share/debootstrap/scripts/sid >&2
    mv "$ROOT.partial" "$ROOT"
    mount_all
    inroot apt-get -o Acquire::Check-Valid-Until=false update -qq >&2
    DEBIAN_FRONTEND=noninteractive inroot apt-get -o Acquire::Check-Valid-Until=false install -y -qq --no-install-recommends \
        python3.14 python3.14-venv python3.14-dev ca-certificates tzdata curl gcc g++ make pkg-config libffi-dev libssl-dev \
        libjpeg-dev zlib1g-dev >&2
fi
mount_all
if [ ! -x "$ROOT$VENV/bin/hass" ]; then
    log "installing homeassistant==$HA_VERSION into $ROOT$VENV (once)"
    rm -rf "$ROOT$VENV"
    inroot python3.14 -m venv "$VENV" >&2
    inroot "$VENV/bin/pip" install --quiet --upgrade pip >&2
    inroot "$VENV/bin/pip" install --quiet "homeassistant==$HA_VERSION" >&2
fi
echo "$ROOT"

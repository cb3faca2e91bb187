#!/usr/bin/env bash
# make images: the add-on's image (config/homeassistant-addon/Dockerfile) and the container's
# (config/Dockerfile) built and run here. No registry is reachable, so the base is a debootstrapped Debian bookworm
# imported into Docker and passed as BUILD_FROM / RUNTIME_IMAGE, and the binary is the host's release build
# (the add-on's Dockerfile always takes it from its context, as the GitHub workflow gives it; the container's with
# BINARY_FROM=prebuilt, since its from-source stage needs the Swift image). ContainerImageTests then runs each image against
# the simulator and a fake Aivi. Needs root (or sudo) and docker.io (installed when missing); starts dockerd with the
# vfs storage driver when none is running, and stops it again.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
# docker.io's own CLI: its builder is BuildKit without the buildx plugin, which newer CLIs need.
DOCKER="$SUDO /usr/bin/docker"
dpkg -s docker.io >/dev/null 2>&1 || { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq docker.io; }
WORK=$PWD/.build/images
mkdir -p "$WORK"
DOCKERD=
stop_dockerd() { [ -z "$DOCKERD" ] || { $SUDO kill "$DOCKERD" 2>/dev/null; wait "$DOCKERD" 2>/dev/null || true; }; }
trap stop_dockerd EXIT
if ! $DOCKER info >/dev/null 2>&1; then
    $SUDO dockerd --storage-driver=vfs > "$WORK/dockerd.log" 2>&1 &
    DOCKERD=$!
    for _ in $(seq 300); do $DOCKER info >/dev/null 2>&1 && break; sleep 0.2; done
    $DOCKER info >/dev/null 2>&1 || { tail -n 20 "$WORK/dockerd.log"; echo "images: FAILED: dockerd did not start"; exit 1; }
fi
VERSION=$(.build/release/livebridge --version | cut -d' ' -f2)
BASE=livebridge-build/debian:bookworm
if ! $DOCKER image inspect "$BASE" >/dev/null 2>&1; then
    ROOT=$(Tests/packaging/debian-root.sh)
    $SUDO tar -C "$ROOT" -c . | $DOCKER import - "$BASE" >/dev/null
fi
# build IMAGE DOCKERFILE FOLDER BUILD-ARGS…: FOLDER's files and the release binary as the context.
build() {
    local image=$1 dockerfile=$2 folder=$3 context=$WORK/context; shift 3
    rm -rf "$context" && mkdir -p "$context"
    [ -z "$folder" ] || cp -r "$folder"/. "$context/"
    cp .build/release/livebridge "$context/"
    DOCKER_BUILDKIT=1 $DOCKER build --network host --build-arg BINARY_FROM=prebuilt "$@" -f "$dockerfile" -t "$image" "$context" \
        > "$WORK/build.log" 2>&1 || { tail -n 30 "$WORK/build.log"; echo "images: FAILED building $image"; exit 1; }
    rm -rf "$context"
    echo "images: built $image ($($DOCKER image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
}
ADDON=livebridge-build/addon:$VERSION
CONTAINER=livebridge-build/container:$VERSION
build "$ADDON" config/homeassistant-addon/Dockerfile config/homeassistant-addon \
    --build-arg BUILD_FROM="$BASE" --build-arg BUILD_VERSION="$VERSION"
build "$CONTAINER" config/Dockerfile "" --build-arg RUNTIME_IMAGE="$BASE"
swift build --build-tests
LIVEBRIDGE_DOCKER=/usr/bin/docker LIVEBRIDGE_ADDON_IMAGE="$ADDON" LIVEBRIDGE_CONTAINER_IMAGE="$CONTAINER" \
    swift test --skip-build --filter ContainerImageTests

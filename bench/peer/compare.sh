#!/usr/bin/env bash
# compare.sh: LiveBridge (release build) side by side with a Python asyncio peer (peer.py) and a C floor (floor.c:
# libwebsockets + simdjson, receive and parse only; and for the floods the same floor making their pushes too, with one
# blocking libcurl handle), against the same Home Assistant-like server and push backend (hasim.py), on 127.0.0.1. Prints a table with ranges over REPS repetitions, clients alternating within each.
#
#   bench/peer/compare.sh            # about 5-6 minutes on the 2-vCPU development VM
#   REPS=5 SCENARIOS="flood flood1s" bench/peer/compare.sh
#   COALESCE=1 bench/peer/compare.sh   # floods framed as Home Assistant frames them for coalesce_messages clients
#
# Builds what it needs: the release binary in $WORK/main (a copy of $MAIN; `nice -n 5 make release`, several minutes
# if not built yet, not counted in the 10-minute budget), the floor in $WORK/peer-build, and a venv for the peer if
# PEER_PYTHON lacks aiohttp, jinja2 or PyYAML. Never touches $MAIN. Every run is bounded by `timeout`.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MAIN=${MAIN:-$PWD}
WORK=${WORK:-/tmp/perf}
REPS=${REPS:-3}
CHANGES=${CHANGES:-100000}
SCENARIOS=${SCENARIOS:-"idle flood flood1s paced paced1s"}
EACH=${EACH:-1}            # one run of peer --render-each on the unbudgeted flood (about 25 s)
BUDGET_S=${BUDGET_S:-560}  # stop starting runs after this many seconds
OUT=${OUT:-$WORK/compare-$(date +%Y%m%d-%H%M%S)}
export LIVEBRIDGE=${LIVEBRIDGE:-$WORK/main/.build/release/livebridge}
export BUILD=${BUILD:-$WORK/peer-build}
mkdir -p "$WORK" "$OUT" "$BUILD"

# Python for the server and the peer: PEER_PYTHON when it has aiohttp, jinja2 and PyYAML, else a venv of our own.
PY=${PEER_PYTHON:-$WORK/venv/bin/python}
if ! timeout 60 "$PY" -c 'import aiohttp, jinja2, yaml' 2>/dev/null; then
    PY=$WORK/venv/bin/python
    if ! timeout 60 "$PY" -c 'import aiohttp, jinja2, yaml' 2>/dev/null; then
        echo "creating $WORK/venv (aiohttp, jinja2, PyYAML, orjson)"
        timeout 120 python3 -m venv "$WORK/venv"
        timeout 600 "$WORK/venv/bin/pip" install -q aiohttp jinja2 pyyaml orjson
    fi
fi
export PEER_PYTHON=$PY

# LiveBridge, release as deployed.
if [ ! -x "$LIVEBRIDGE" ]; then
    [ -d "$WORK/main" ] || cp -a "$MAIN" "$WORK/main"
    echo "building LiveBridge release in $WORK/main (several minutes)"
    (cd "$WORK/main" && timeout 1800 nice -n 5 make release)
fi

# The floor.
if [ ! -x "$BUILD/floor-push" ] || [ "$HERE/floor.c" -nt "$BUILD/floor" ] || [ "$HERE/floor_simdjson.cpp" -nt "$BUILD/floor" ]; then
    for p in libwebsockets-dev libsimdjson-dev libjansson-dev libcurl4-openssl-dev; do
        dpkg -s $p >/dev/null 2>&1 || { timeout 300 apt-get install -y -qq $p >/dev/null; }
    done
    timeout 300 g++ -O2 -std=c++17 -c "$HERE/floor_simdjson.cpp" -o "$BUILD/floor_simdjson.o"
    timeout 120 gcc -O2 -c "$HERE/floor.c" -o "$BUILD/floor.o"
    g++ -o "$BUILD/floor" "$BUILD/floor.o" "$BUILD/floor_simdjson.o" -lwebsockets -ljansson -lsimdjson -lm
    # The pushing floor, apart: linked with libcurl, whose pages would otherwise count in the receive-only floor's RSS.
    timeout 120 gcc -O2 -DFLOOR_PUSH -c "$HERE/floor.c" -o "$BUILD/floor-push.o"
    g++ -o "$BUILD/floor-push" "$BUILD/floor-push.o" "$BUILD/floor_simdjson.o" -lwebsockets -ljansson -lsimdjson -lcurl -lm
fi

start=$(date +%s)
results=$OUT/results.jsonl
: > "$results"
run() {  # run REP SCENARIO CLIENT
    local elapsed=$(( $(date +%s) - start ))
    if [ "$elapsed" -gt "$BUDGET_S" ]; then echo "  (time budget spent: skipping $3 $2)"; return; fi
    local line
    line=$(timeout 240 "$PY" "$HERE/hasim.py" --rep "$1" --scenario "$2" --client "$3" --changes "$CHANGES" --out "$OUT" ${COALESCE:+--coalesce} \
        || echo "{\"rep\": $1, \"scenario\": \"$2\", \"client\": \"$3\", \"error\": \"hasim exited $?\"}")
    echo "$line" >> "$results"
    printf '  rep %s %-8s %-15s %s\n' "$1" "$2" "$3" "$(echo "$line" | "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r.get("error") or "CPU %s s/100k, %s changes/s, RSS %s MiB, pushes %s" % (r.get("cpu_s_per_100k", r.get("startup_cpu_s")), r.get("changes_per_s", "-"), r.get("rss_mib"), r.get("pushes")))')"
}

echo "load before: $(cat /proc/loadavg)"
echo "LiveBridge: $LIVEBRIDGE"
echo "peer: $PY $HERE/peer.py"
echo "results: $OUT"
for rep in $(seq 1 "$REPS"); do
    # Rotate the order every repetition, so no client always runs first or after the same neighbour.
    case $(( rep % 3 )) in
        1) order="livebridge peer floor-simdjson floor-push" ;;
        2) order="peer floor-simdjson floor-push livebridge" ;;
        0) order="floor-simdjson floor-push livebridge peer" ;;
    esac
    for scenario in $SCENARIOS; do
        # The pushing floor only for the floods (it knows their activities); idle has no pushes to make.
        for client in $order; do [ "$client" = floor-push ] && [ "$scenario" = idle ] && continue; run "$rep" "$scenario" "$client"; done
        if [ "$scenario" = flood ]; then
            run "$rep" flood floor-jansson
            run "$rep" flood floor-none
        fi
    done
done
if [ "$EACH" = 1 ] && [[ " $SCENARIOS " == *" flood "* ]]; then run 1 flood peer-each; fi
echo "total $(( $(date +%s) - start )) s; load after: $(cat /proc/loadavg)"
echo
"$PY" "$HERE/summarize.py" "$OUT" | tee "$OUT/table.txt"

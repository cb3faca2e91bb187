#!/usr/bin/env bash
# Runs a Swift Testing binary with a time bound, its verbose output kept in a log, and says what went wrong at the end
# of its own output (CI shows the tail): the failed tests and their issues, or, when the bound is reached, the threads'
# stacks (gdb) and the tests that started and did not finish. A hang then costs the bound (and at most a minute for
# the stacks), not CI's whole budget, and names itself.
#
# usage: bounded-tests.sh SECONDS LOG BINARY [ARGUMENT...]   (--verbose is added)
set -uo pipefail
bound=$1 log=$2
shift 2
# A newline in the log's path would be cut by $(…) below, and the scratch folder worked out from it could be another.
case "$log" in *$'\n'*) echo "bounded-tests.sh: a log path with a newline is refused: ${log@Q}" >&2; exit 2 ;; esac
# A relative path from ./ on: a log in a folder named - would otherwise be cd's "the folder before" ($OLDPWD), and a
# log named -x an option to tail and grep.
case "$log" in /*) ;; *) log=./$log ;; esac
mkdir -p -- "$(dirname -- "$log")"

# The tests' temporary files and folders (Foundation's temporaryDirectory reads TMPDIR) go to a folder beside the log,
# emptied at each run and removed after one that passed (a failed run's are kept for a look until the next): left in
# /tmp, each run added ~370 entries, 49,000 on a machine that had run the suites for a few weeks.
unset CDPATH
folder=$(cd -P -- "$(dirname -- "$log")" > /dev/null && pwd -P && echo .) || exit 1
folder=${folder%$'\n.'}
case "$folder" in *$'\n'*) echo "bounded-tests.sh: the log's folder has a newline in its path: ${folder@Q}" >&2; exit 2 ;; esac
scratch="${folder%/}/$(basename -- "${log%.log}").tmp"
# A fresh folder made because the usual one could not be emptied holds this file: only such folders are emptied later.
marker=.bounded-tests-scratch

# Empties a scratch folder. A run killed mid-test (past its bound, interrupted) skips the tests' own cleanup: the
# resilience suite's full-disk tmpfs and its immutable data folder (chattr +i, as root) are then still there, so the
# mounts in it or on it are undone first (chattr -R would otherwise reach into them), then the flag. A folder with a mount still in
# it is left alone (rm --one-file-system would descend into a bind mount of the same file system); so is one whose
# mounts cannot be listed, and one that will not go: the run then takes a fresh one beside it.
mounts_under() {
    # /proc/mounts writes a tab, a newline, a space and a backslash as \011, \012, \040 and \134 (the backslash last,
    # so that \134040 stays the text \040); the prefix comes through the environment (awk -v would apply escapes).
    # A mount whose path holds a newline cannot be listed a line each: the status is then 1 (and 2 when /proc/mounts
    # cannot be read), and the folder is not touched.
    FOLDER="$1" PREFIX="$1/" awk '{ path = $2; gsub(/\\011/, "\t", path); gsub(/\\012/, "\n", path); gsub(/\\040/, " ", path)
        gsub(/\\134/, "\\\\", path) }
        path == ENVIRON["FOLDER"] || index(path, ENVIRON["PREFIX"]) == 1 { if (index(path, "\n")) odd = 1; else print path }
        END { exit odd }' /proc/mounts
}
clear_folder() {
    [ -e "$1" ] || return 0
    local mounts
    mounts=$(mounts_under "$1") || return 1
    if [ "$(id -u)" = 0 ]; then
        while IFS= read -r mount; do
            case "$mount" in "$1" | "$1"/*) umount -l -- "$mount" 2> /dev/null ;; esac
        done <<< "$(printf '%s\n' "$mounts" | sort -r)"
        mounts=$(mounts_under "$1") || return 1
        [ -z "$mounts" ] || return 1
        command -v chattr > /dev/null && chattr -R -i -- "$1" 2> /dev/null
    fi
    mounts=$(mounts_under "$1") || return 1
    [ -z "$mounts" ] || return 1
    rm -rf --one-file-system -- "$1"
}
clear_scratch() { clear_folder "$scratch"; }
clear_scratch
for earlier in "$scratch".??????; do [ -f "$earlier/$marker" ] && clear_folder "$earlier"; done
if [ -e "$scratch" ] || ! mkdir -p -- "$scratch"; then
    echo "bounded-tests.sh: $scratch could not be emptied; the tests' temporary files go to a new folder beside it" >&2
    scratch=$(mktemp -d -- "$scratch.XXXXXX") || exit 1
    : > "$scratch/$marker"
fi
export TMPDIR="$scratch"

# A session of its own, so that what the tests started goes with it when it is killed (past the bound, or when this
# script is interrupted or stopped): a child may put itself in a process group of its own, but it stays in the session.
setsid "$@" --verbose > "$log" 2>&1 &
pid=$!
# Whether the tests' process runs, by bash's own job table: bash reaps a background child the moment it exits, and
# its number could then be another process's (kill -0 would find that one).
running() { [ -n "$(jobs -rp)" ]; }
# Kills the session and waits (5 s at most) until none of it is left; the leader itself only while it runs.
stop_tests() {
    pkill -KILL -s "$pid" 2>/dev/null
    running && kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 50); do pgrep -s "$pid" > /dev/null || return 0; sleep 0.1; done
}
trap 'stop_tests; exit 130' INT
trap 'stop_tests; exit 143' TERM
trap 'stop_tests' EXIT
start=$SECONDS
while running && (( SECONDS - start < bound )); do sleep 1; done

# Tests started and not finished, by name (a name may repeat across suites: counted, not matched). A skipped test
# never starts, so its line is not counted. -a: a NUL or a stray byte in a test's output must not end the reading.
unfinished() {
    grep -av '^. Test case passing ' "$log" \
        | sed -nE 's/^◇ Test (.*) started\.$/S \1/p; s/^(✔|✘) Test (.*) (passed|failed) after .*$/E \2/p' \
        | sed -E 's/ with [0-9]+ test cases?$//' \
        | awk '$1 == "S" { n[substr($0, 3)]++ } $1 == "E" { n[substr($0, 3)]-- } END { for (t in n) if (n[t] > 0 && t != "run") print "  " t }' \
        | sort | cut -c1-300
}

if running; then
    echo "$*: still running after ${bound} s; the threads of process $pid:"
    if command -v gdb > /dev/null; then
        # Function names only, demangled when the toolchain's demangler is there.
        demangle=cat
        command -v swift-demangle > /dev/null && demangle="swift-demangle --simplified"
        stacks=$(timeout -k 5 60 gdb -p "$pid" -batch -ex "thread apply all bt 40" 2>&1)
        printf '%s\n' "$stacks" \
            | sed -nE 's/^(Thread [0-9]+) .*"(.*)"\).*/\1 \2:/p; s/^#([0-9]+) +(0x[0-9a-f]+ in )?([^ (]+).*/  \3/p' \
            | $demangle | grep -avE '^  (__|_lws|lws_|asan_|clone|start_thread|poll|epoll)' | cut -c1-200 | head -400
        printf '%s\n' "$stacks" | grep -q '^Thread ' || { echo "(gdb gave no stacks:)"; printf '%s\n' "$stacks" | tail -n 5; }
    else
        echo "(gdb is not installed: no stacks)"
    fi
    stop_tests
    wait "$pid" 2>/dev/null
    echo
    echo "the last lines of $log:"
    tail -n 15 "$log" | cut -c1-400
    echo
    echo "tests started and not finished after ${bound} s:"
    unfinished
    echo "(the tests' temporary files are kept in $scratch)"
    exit 124
fi

wait "$pid"
status=$?
if (( status == 0 )); then
    # What the tests started is stopped first: nothing writes there while it goes.
    stop_tests
    clear_scratch
fi
if (( status != 0 )); then
    echo "$*: exit status $status. Failures and issues (whole output in $log; the tests' temporary files in $scratch):"
    grep -aE '^✘|recorded an issue|ERROR: (AddressSanitizer|ThreadSanitizer)|WARNING: ThreadSanitizer|Fatal error|Program crashed|SUMMARY: ' "$log" | cut -c1-400 | head -200
    echo
    echo "the last lines of $log:"
    tail -n 40 "$log" | cut -c1-400
    echo
    left=$(unfinished)
    [ -z "$left" ] || { echo "tests started and not finished:"; echo "$left"; }
    exit "$status"
fi
tail -n 1 "$log" | cut -c1-400

#!/bin/sh
# run.sh — run every test: unit binaries (build/tests/test_*), CLI scripts (tests/cli/*.sh) and
# numpy reference tests (tests/py/test_*.py). Prints one line per test and the closing
# "N passed, N failed" line. A test script exits 0 (pass), 77 (skip) or anything else (fail).
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
JSMF=$(cd "$BUILD" && pwd)/jsmf
export JSMF PYTHON BUILD
ROOT=$(pwd)
export ROOT
# The shared real corpora sit beside the checkout (CI lays them out so); tests that need them
# skip (exit 77) when they are absent.
if [ -z "${JSMF_CORPORA:-}" ]; then
    JSMF_CORPORA=$ROOT/../shared/corpora
    [ -d "$JSMF_CORPORA" ] || JSMF_CORPORA=/work/shared/corpora
fi
export JSMF_CORPORA
pass=0; fail=0; skip=0; failed=""
logdir=$BUILD/test-logs
mkdir -p "$logdir"
run_one() {
    name=$1; shift
    log="$logdir/$(echo "$name" | tr '/' '_').log"
    start=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "PASS  $name (${secs}s)"
    elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")"
    else fail=$((fail + 1)); failed="$failed $name"; echo "FAIL  $name (exit $rc, ${secs}s)"; tail -n 30 "$log" | sed 's/^/      /'
    fi
}
filter=${TESTS:-}
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    case "$t" in *"$filter"*) run_one "unit/$(basename "$t")" "$t" ;; esac
done
for t in tests/cli/*.sh; do
    [ -f "$t" ] || continue
    case "$t" in *"$filter"*) run_one "cli/$(basename "$t")" sh "$t" ;; esac
done
for t in tests/py/test_*.py; do
    [ -f "$t" ] || continue
    case "$t" in *"$filter"*) run_one "py/$(basename "$t")" "$PYTHON" "$t" ;; esac
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

#!/bin/sh
# fdm_cli.sh — 'jsmf fdm' command-line manners: --help (exit 0), usage errors (exit 2), an
# existing MODEL refused without --force, --device auto falling back to the CPU with a note when
# no GPU answers, --device cuda failing clearly (exit 1) without a GPU or without CUDA; pairs/s
# right when the random starts' probes use up --time.
set -u
JSMF=${JSMF:-build/jsmf}
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=${ROOT:-.}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
expect() { # expect CODE DESCRIPTION CMD...
    want=$1 what=$2; shift 2
    "$@" >"$d/out" 2>"$d/err"
    got=$?
    [ "$got" -eq "$want" ] || { echo "FAIL $what: exit $got, want $want"; cat "$d/err"; fail=1; }
}
"$PYTHON" -c "
import sys; sys.path.insert(0, '$ROOT/tests/py'); import fdm_synth
B, A, C = fdm_synth.planted(n=30, k=3, seed=1); fdm_synth.write_input('$d', C)" || exit 1
in=$d/C.npy
q="--steps 20 --batch 256 --eval-every 10 --heldout 500 --threads 1"

expect 0 "--help" "$JSMF" fdm --help
grep -q -- "--checkpoint-every" "$d/out" || { echo "FAIL --help lacks --checkpoint-every"; fail=1; }
expect 2 "unknown option" "$JSMF" fdm "$in" -k 3 -o "$d/m" --bogus
expect 2 "missing -k" "$JSMF" fdm "$in" -o "$d/m"
expect 2 "missing -o" "$JSMF" fdm "$in" -k 3
expect 2 "bad device" "$JSMF" fdm "$in" -k 3 -o "$d/m" --device tpu
expect 2 "bad number" "$JSMF" fdm "$in" -k x3 -o "$d/m"
expect 2 "--lr 0" "$JSMF" fdm "$in" -k 3 -o "$d/m" --lr 0
expect 1 "missing input" "$JSMF" fdm "$d/nothing.npy" -k 3 -o "$d/m"
grep -q "nothing.npy" "$d/err" || { echo "FAIL: error does not name the input"; fail=1; }

expect 0 "cpu run" "$JSMF" fdm "$in" -k 3 -o "$d/m" --device cpu $q -q
[ -s "$d/err" ] && { echo "FAIL: --quiet printed:"; cat "$d/err"; fail=1; }
for f in B.npy A.npy vocab.txt summary.json; do
    [ -f "$d/m/$f" ] || { echo "FAIL: model lacks $f"; fail=1; }
done
expect 1 "existing model" "$JSMF" fdm "$in" -k 3 -o "$d/m" --device cpu $q
grep -q "exists" "$d/err" || { echo "FAIL: no 'exists' message"; fail=1; }
expect 0 "--force" "$JSMF" fdm "$in" -k 3 -o "$d/m" --device cpu $q --force

# the random starts' probes use up --time: the run trains no step of its own, but pairs/s counts
# the probes' pairs (it printed and recorded 0)
expect 0 "probes use up --time" "$JSMF" fdm "$in" -k 3 -o "$d/t" --device cpu --init none \
    --starts 4 --time 1e-9s --batch 256 --eval-every 10 --heldout 500 --threads 1
grep -q " 0 pairs/s" "$d/err" && { echo "FAIL: 0 pairs/s printed"; cat "$d/err"; fail=1; }
grep -q "[1-9][0-9]* pairs/s" "$d/err" || { echo "FAIL: no pairs/s line"; cat "$d/err"; fail=1; }
"$PYTHON" -c "
import json, sys; f = json.load(open('$d/t/summary.json'))['fdm']
sys.exit(0 if f['pairs_per_second'] > 0 else 1)" ||
    { echo "FAIL: summary.json pairs_per_second: $(grep -o '"pairs_per_second": [^,]*' "$d/t/summary.json")"; fail=1; }

gpu=0
"$JSMF" --version | grep -q cuda && [ -f "$ROOT/build/tests/test_fdm_cuda" ] &&
    "$ROOT/build/tests/test_fdm_cuda" >/dev/null 2>&1 && gpu=1
if [ $gpu -eq 0 ]; then
    expect 0 "auto without GPU" "$JSMF" fdm "$in" -k 3 -o "$d/a" --device auto $q
    grep -q "using the CPU" "$d/err" || { echo "FAIL: auto gave no fallback note"; cat "$d/err"; fail=1; }
    grep -q '"device": "cpu' "$d/a/summary.json" || { echo "FAIL: summary device"; fail=1; }
    expect 1 "cuda without GPU" "$JSMF" fdm "$in" -k 3 -o "$d/c" --device cuda $q
    grep -qi "cuda" "$d/err" || { echo "FAIL: unclear --device cuda message"; cat "$d/err"; fail=1; }
    [ -e "$d/c" ] && { echo "FAIL: a model was written"; fail=1; }
fi
[ $fail -eq 0 ] && echo "fdm cli ok (gpu=$gpu)"
exit $fail

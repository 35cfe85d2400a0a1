#!/bin/sh
# fdm_resume.sh — a run stopped after step N (checkpoint written, as if killed) and rerun with
# the same command ends with the same B.npy and A.npy bytes as an uninterrupted run of 2N steps
# (CPU, fixed thread count); the same after a real SIGKILL at a random moment; SIGTERM stops
# with a checkpoint and exit 130; a checkpoint of another run is refused without --force.
set -u
JSMF=${JSMF:-build/jsmf}
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=${ROOT:-.}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
"$PYTHON" -c "
import sys; sys.path.insert(0, '$ROOT/tests/py'); import fdm_synth
B, A, C = fdm_synth.planted(n=80, k=5, seed=2); fdm_synth.write_input('$d', C)" || exit 1
in=$d/C.npy
opts="-k 5 --device cpu --seed 9 --batch 512 --lr 0.02 --eval-every 10 --heldout 2000 --patience 0 --threads 2 -q"

"$JSMF" fdm "$in" -o "$d/full" --steps 200 --checkpoint-every 50 $opts || { echo "FAIL full run"; exit 1; }
[ -e "$d/full.ckpt" ] && { echo "FAIL: checkpoint left after a finished run"; fail=1; }

# stopped after step 100 (a checkpoint boundary) and after 73 (between two), then resumed
for n in 100 73; do
    JSMF_TEST_FDM_STOP_AFTER=$n "$JSMF" fdm "$in" -o "$d/r$n" --steps 200 --checkpoint-every 50 $opts
    rc=$?
    [ $rc -eq 130 ] || { echo "FAIL: stopped after $n: exit $rc, want 130"; fail=1; }
    [ -f "$d/r$n.ckpt" ] || { echo "FAIL: no checkpoint after stop"; fail=1; }
    [ -e "$d/r$n" ] && { echo "FAIL: a model was written by a stopped run"; fail=1; }
    "$JSMF" fdm "$in" -o "$d/r$n" --steps 200 --checkpoint-every 50 $opts || { echo "FAIL resume"; fail=1; }
    for f in B.npy A.npy; do
        cmp -s "$d/full/$f" "$d/r$n/$f" || { echo "FAIL: resumed $f (stop at $n) differs"; fail=1; }
    done
    grep -q '"resumed_from": '$n "$d/r$n/summary.json" || { echo "FAIL: resumed_from not $n"; fail=1; }
done
# the curve of the resumed run equals the uninterrupted one
"$PYTHON" - "$d/full/summary.json" "$d/r73/summary.json" <<'PY' || fail=1
import json, sys
a, b = (json.load(open(p))["fdm"]["curve"] for p in sys.argv[1:])
assert a == b, "loss curves differ"
PY

# a checkpoint of another run (other seed) is refused, and replaced with --force
JSMF_TEST_FDM_STOP_AFTER=60 "$JSMF" fdm "$in" -o "$d/x" --steps 200 --checkpoint-every 50 $opts
"$JSMF" fdm "$in" -o "$d/x" --steps 200 --checkpoint-every 50 $opts --seed 10 2>"$d/err"
rc=$?
[ $rc -eq 1 ] && grep -q "checkpoint" "$d/err" || { echo "FAIL: foreign checkpoint not refused ($rc)"; cat "$d/err"; fail=1; }
"$JSMF" fdm "$in" -o "$d/x" --steps 200 --checkpoint-every 50 $opts --seed 10 --force || { echo "FAIL --force"; fail=1; }

# SIGTERM: checkpoint and exit 130, then resume to the same result
"$JSMF" fdm "$in" -o "$d/t" --steps 100000 --checkpoint-every 1000 $opts &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || { echo "FAIL: SIGTERM exit $rc, want 130"; fail=1; }
[ -f "$d/t.ckpt" ] || { echo "FAIL: no checkpoint after SIGTERM"; fail=1; }

# a real SIGKILL at some moment: rerunning the same command ends like the uninterrupted run
"$JSMF" fdm "$in" -o "$d/k" --steps 200 --checkpoint-every 20 $opts &
pid=$!
sleep 0.3
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
if [ ! -e "$d/k" ]; then
    "$JSMF" fdm "$in" -o "$d/k" --steps 200 --checkpoint-every 20 $opts || { echo "FAIL resume after kill"; fail=1; }
fi
cmp -s "$d/full/B.npy" "$d/k/B.npy" || { echo "FAIL: B.npy after kill and resume differs"; fail=1; }
[ $fail -eq 0 ] && echo "fdm resume ok"
exit $fail

#!/bin/sh
# fit_resume.sh — a fit killed (SIGKILL) after its eigendecomposition of C, or within it after one
# of its cycles, resumes from MODEL.ckpt:
# the same command writes the model an uninterrupted fit writes, byte for byte, and says it
# resumed; the checkpoint is gone once the model is written; a checkpoint of other options (another
# seed) or of another store (an append since) is ignored, and the fit is the cold one.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-fit-resume-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; rm -rf "$T"' EXIT

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
zstd -dc "$K/kjv.txt.zst" | head -n 1000 >"$T/a.txt"
zstd -dc "$K/kjv.txt.zst" | tail -n +1001 >"$T/b.txt"
"$J" vocab "$T/a.txt" -o "$T/v.txt" --max-words 1200 -q || fail "vocab"
"$J" ingest "$T/s" "$T/a.txt" --vocab "$T/v.txt" -q || fail "ingest"
# many steps after the eigendecomposition, so that the kill lands among them
opts="-k 12 --rectify-tol 1e-15 --rectify-iters 80 --refine 0 -q"
"$J" fit "$T/s" -o "$T/full" $opts || fail "uninterrupted fit"
[ -e "$T/full.ckpt" ] && fail "checkpoint left after a finished fit"

# start a fit, SIGKILL it once its checkpoint is complete (key.txt is written last)
killed_fit() { # OUT [options...]
    out=$1; shift
    "$J" fit "$T/s" -o "$out" "$@" &
    pid=$!
    i=0
    while [ ! -f "$out.ckpt/key.txt" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
    kill -KILL $pid 2>/dev/null
    wait $pid
    rc=$?
    pid=
    [ $rc -eq 137 ] || fail "the fit was not killed (exit $rc): no checkpoint in time?"
    [ -f "$out.ckpt/U.npy" ] && [ -f "$out.ckpt/lam.npy" ] || fail "checkpoint incomplete"
    [ -e "$out" ] && fail "a killed fit wrote its model"
}

killed_fit "$T/r" $opts
"$J" fit "$T/s" -o "$T/r" $opts || fail "resumed fit"
for f in B.npy A.npy alpha.npy anchors.txt vocab.txt c_factor.npy; do
    cmp -s "$T/full/$f" "$T/r/$f" || fail "resumed $f differs from the uninterrupted fit's"
done
grep -q '"eig_start": "checkpoint"' "$T/r/summary.json" || fail "the fit did not resume"
[ -e "$T/r.ckpt" ] && fail "checkpoint left after the resumed fit"

# a kill within the eigendecomposition, once its first cycle is kept (every cycle kept by the
# test switch; by default those of 30 s or more): the rerun goes on from that cycle
JSMF_TEST_FIT_CKPT_CYCLES=1 JSMF_TEST_EXIT_AFTER_CYCLE=1 "$J" fit "$T/s" -o "$T/c" $opts
rc=$?
[ $rc -eq 99 ] || fail "the fit did not stop after its first cycle (exit $rc)"
[ -f "$T/c.ckpt/cycle.bin" ] || fail "no cycle kept"
[ -e "$T/c.ckpt/U.npy" ] && fail "the eigendecomposition was done before the kill"
"$J" fit "$T/s" -o "$T/c" $opts || fail "fit resumed within the eigendecomposition"
for f in B.npy A.npy alpha.npy anchors.txt c_factor.npy; do
    cmp -s "$T/full/$f" "$T/c/$f" || fail "resumed within the eigendecomposition: $f differs"
done
grep -q '"eig_cycles_resumed": 1' "$T/c/summary.json" || fail "the fit did not resume its cycle"
[ -e "$T/c.ckpt" ] && fail "checkpoint left after the fit resumed within the eigendecomposition"

# other options: the checkpoint (seed 1) is ignored, replaced and removed at the end
killed_fit "$T/o" $opts
"$J" fit "$T/s" -o "$T/o" $opts --seed 2 || fail "fit with another seed"
grep -q '"eig_start": "random"' "$T/o/summary.json" || fail "a checkpoint of another seed was used"
[ -e "$T/o.ckpt" ] && fail "checkpoint left after the fit with another seed"

# another store: documents appended after the kill
killed_fit "$T/g" $opts
"$J" ingest "$T/s" "$T/b.txt" -q || fail "append"
"$J" fit "$T/s" -o "$T/g" $opts || fail "fit after the append"
grep -q '"eig_start": "random"' "$T/g/summary.json" || fail "a checkpoint of the old store was used"
exit $fails

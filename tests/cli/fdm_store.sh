#!/bin/sh
# fdm_store.sh — 'jsmf fdm' on a real store (a slice of the shipped KJV passages): a random start
# and a warm start from 'jsmf fit' both write a model that 'topics', 'eval' and 'report' read;
# the warm start begins at a lower held-out loss than the random one; C exported from the same
# store as .npy or MatrixMarket gives the same model as the store itself (a store of rows: one
# holding its documents draws its pairs through them, another stream of the same C).
set -u
JSMF=${JSMF:-build/jsmf}
ROOT=${ROOT:-.}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
zstd -dc "$ROOT/examples/kjv-passages.txt.zst" | head -n 1500 >"$d/corpus.txt"
"$JSMF" vocab "$d/corpus.txt" -o "$d/vocab.txt" --stopwords en --min-df 10 --max-df-frac 0.5 -q &&
"$JSMF" ingest "$d/store" "$d/corpus.txt" --vocab "$d/vocab.txt" --hold rows -q || { echo "FAIL: ingest"; exit 1; }
"$JSMF" fit "$d/store" -k 8 -o "$d/fit" -q || { echo "FAIL: fit"; exit 1; }
opts="--device cpu --steps 300 --batch 2048 --lr 0.01 --eval-every 50 --heldout 5000 --threads 2 -q"
"$JSMF" fdm "$d/store" -k 8 --init none -o "$d/rand" $opts || { echo "FAIL: fdm random start"; fail=1; }
"$JSMF" fdm "$d/store" --init "$d/fit" -o "$d/warm" $opts || { echo "FAIL: fdm warm start"; fail=1; }
for m in rand warm; do
    "$JSMF" topics "$d/$m" --top 5 >"$d/$m.topics" || { echo "FAIL: topics on $m"; fail=1; }
    [ "$(grep -c . "$d/$m.topics")" -ge 8 ] || { echo "FAIL: few topic lines for $m"; cat "$d/$m.topics"; fail=1; }
    "$JSMF" eval "$d/$m" --store "$d/store" --json -q >"$d/$m.json" || { echo "FAIL: eval on $m"; fail=1; }
    "$JSMF" report "$d/$m" -o "$d/$m.html" -q || { echo "FAIL: report on $m"; fail=1; }
done
"${PYTHON:-/usr/bin/python3}" - "$d" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/rand/summary.json"))
w = json.load(open(d + "/warm/summary.json"))
assert r["kind"] == w["kind"] == "fdm"
assert r["store"]["fingerprint"] and r["store"]["docs"] > 0
assert w["parameters"]["init"].endswith("/fit")
hr, hw = r["fdm"]["curve"]["heldout_loss"], w["fdm"]["curve"]["heldout_loss"]
print("held-out pair loss: random %.4f -> %.4f, warm start %.4f -> %.4f" % (hr[0], hr[-1], hw[0], hw[-1]))
assert hr[-1] < hr[0], "random start did not improve"
assert hw[0] < hr[0], "warm start no better than random at the first evaluation"
PY
# the exported .npy of the store is the same input
"$JSMF" export "$d/store" -o "$d/C.npy" --format npy -q || { echo "FAIL: export"; fail=1; }
"$JSMF" fdm "$d/C.npy" -k 8 --init none -o "$d/npy" $opts || { echo "FAIL: fdm on npy"; fail=1; }
cmp -s "$d/rand/B.npy" "$d/npy/B.npy" || { echo "FAIL: .npy input gives another model than the store"; fail=1; }
"$JSMF" export "$d/store" -o "$d/C.mtx" -q || { echo "FAIL: export mm"; fail=1; }
"$JSMF" fdm "$d/C.mtx" -k 8 --init none -o "$d/mtx" $opts || { echo "FAIL: fdm on MatrixMarket"; fail=1; }
cmp -s "$d/rand/B.npy" "$d/mtx/B.npy" || { echo "FAIL: MatrixMarket input gives another model than the store"; fail=1; }
printf '%%%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n3 1 0.5\n' >"$d/bad.mtx"
printf 'a\nb\n' >"$d/bad.mtx.vocab.txt"
"$JSMF" fdm "$d/bad.mtx" -k 1 --init none -o "$d/bad" $opts 2>"$d/err"
[ $? -eq 1 ] && grep -q "bad.mtx:3" "$d/err" || { echo "FAIL: bad MatrixMarket line not named"; cat "$d/err"; fail=1; }
[ $fail -eq 0 ] && echo "fdm on a store ok"
exit $fail

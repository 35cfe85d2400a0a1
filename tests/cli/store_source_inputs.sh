#!/bin/sh
# store_source_inputs.sh — fit, eval and fdm read a store and what 'jsmf export' writes of it (the
# default MatrixMarket .mtx, and .npy) alike, recognised by content (jsmf_source_open): B within
# 1e-12, the same eval metrics (1e-9); bad matrix files are named with their line, exit 1.
. "$(dirname "$0")/common.inc"
PY=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d /tmp/jsmf-source-XXXXXX)
trap 'rm -rf "$T"' EXIT

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
zstd -dc "$K/kjv.txt.zst" | head -n 300 >"$T/docs.txt"
"$J" vocab "$T/docs.txt" -o "$T/vocab.txt" --max-words 300 -q || fail "vocab"
"$J" ingest "$T/store" "$T/docs.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$J" export "$T/store" -o "$T/C.mtx" -q || fail "export (default: MatrixMarket)"
"$J" export "$T/store" -o "$T/C.dense" --format npy -q || fail "export npy"
head -c 14 "$T/C.mtx" | grep -q '%%MatrixMarket' || fail "export's default is not MatrixMarket"

# the same fit from all three; the .npy is named without .npy: recognised by its content
for in in store C.mtx C.dense; do
    "$J" fit "$T/$in" -k 6 -o "$T/m-$in" --refine 0 -q || fail "fit $in"
done
"$PY" - "$T" <<'PYEOF' || fail "fits differ"
import sys, numpy as np
t = sys.argv[1]
ref = np.load(t + "/m-store/B.npy")
for other in ("C.mtx", "C.dense"):
    B = np.load(t + "/m-%s/B.npy" % other)
    d = np.abs(B - ref).max()
    assert d <= 1e-12, "%s: max |B - B_store| = %g" % (other, d)
    words = lambda m: [l.rstrip("\n").split("\t")[0] for l in open(t + "/m-%s/vocab.txt" % m)]
    assert words(other) == words("store"), "%s: other words" % other
PYEOF
grep -q '"kind": "mtx"' "$T/m-C.mtx/summary.json" || fail "summary.json does not name the mtx input"

# eval --store: the same metrics against the store and against its export (within 1e-9: the
# store's products go through its documents, the same sums in another order)
for in in store C.mtx; do
    "$J" eval "$T/m-store" --store "$T/$in" --json >"$T/e-$in.json" || fail "eval $in"
done
"$PY" - "$T" <<'PYEOF' || fail "eval differs"
import sys, json
t = sys.argv[1]
a, b = (json.load(open(t + "/e-%s.json" % x)) for x in ("store", "C.mtx"))
for key in ("recovery", "approximation", "dominancy", "specificity", "sparsity", "entropy"):
    assert abs(a[key] - b[key]) <= 1e-9 * max(1, abs(a[key])), (key, a[key], b[key])
PYEOF

# a matrix of another tool without its vocabulary: fit names the rows, fdm needs the words
grep -v '^%' "$T/C.mtx" | { echo '%%MatrixMarket matrix coordinate real symmetric'; cat; } >"$T/bare.mm"
"$J" fit "$T/bare.mm" -k 6 -o "$T/m-bare" -q || fail "fit without a vocabulary"
head -n 1 "$T/m-bare/vocab.txt" | grep -q '^w0' || fail "rows of a matrix without words are not w0, w1 ..."
"$J" fdm "$T/bare.mm" -k 3 -o "$T/f" --init none --steps 5 -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "bare.vocab.txt\|bare.mm.vocab.txt\|vocabulary of" "$T/err" \
    || fail "fdm without a vocabulary: $(cat "$T/err")"

# bad matrices: exit 1, the file and line named; eval against a matrix of other words refused
printf '%%%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n' >"$T/rect.mtx"
"$J" fit "$T/rect.mtx" -k 2 -o "$T/x" -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "rect.mtx:2:" "$T/err" || fail "non-square: $(cat "$T/err")"
printf '%%%%MatrixMarket matrix coordinate real general\n%% c\n3 3 2\n1 1 1\n4 1 1\n' >"$T/bad.mtx"
"$J" fit "$T/bad.mtx" -k 2 -o "$T/x" -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "bad.mtx:5:" "$T/err" || fail "entry out of range: $(cat "$T/err")"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.5\n2 1 nan\n' >"$T/nan.mtx"
"$J" fit "$T/nan.mtx" -k 2 -o "$T/x" -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "nan.mtx:4: the value is not a finite number" "$T/err" || fail "NaN: $(cat "$T/err")"
"$PY" -c "import numpy as np; C = np.eye(3); C[1, 2] = np.inf; np.save('$T/inf.npy', C)"
"$J" fit "$T/inf.npy" -k 2 -o "$T/x" -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "inf.npy: entry (1, 2) is not a finite number" "$T/err" || fail "Inf: $(cat "$T/err")"
echo "just text" >"$T/text.dat"
"$J" fit "$T/text.dat" -k 2 -o "$T/x" -q 2>"$T/err"
[ $? -eq 1 ] && grep -q "text.dat: not a store directory, a .npy matrix or a MatrixMarket" "$T/err" \
    || fail "unknown file: $(cat "$T/err")"
sed '1s/.*/other/' "$T/C.mtx.vocab.txt" >"$T/o.vocab.txt" && cp "$T/C.mtx" "$T/o.mtx"
"$J" eval "$T/m-store" --store "$T/o.mtx" 2>"$T/err" >/dev/null
[ $? -eq 1 ] && grep -q "differ at word 1" "$T/err" || fail "eval of other words: $(cat "$T/err")"
[ -e "$T/x" ] && fail "a failed fit left $T/x"

[ $fails -eq 0 ] && echo "store_source_inputs: ok"
exit $fails

#!/bin/sh
# eval_infer_inputs.sh — 'jsmf infer' over several inputs numbers documents continuously in the order
# given; a malformed input fails with exit 1 and a message naming the file and line; the rows
# already written stay on stdout (streamed), and no row is written for the bad document. A bare
# LDA-C id beyond the model's vocabulary is that error too, as ingest has it (formats/inputs.md),
# not a word out of vocabulary.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$PYTHON" - "$tmp/m" <<'PY' || exit 1
import os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
B = np.array([[0.5, 0.0], [0.5, 0.0], [0.0, 0.5], [0.0, 0.5]])
np.save(d + "/B.npy", B); np.save(d + "/A.npy", np.full((2, 2), 0.25))
open(d + "/vocab.txt", "w").write("apple\nbanana\ncarrot\ndaikon\n")
PY
printf 'apple banana apple\ncarrot daikon\n' >"$tmp/a.txt"
printf 'apple carrot\n\n' >"$tmp/b.txt"
"$JSMF" infer "$tmp/m" "$tmp/a.txt" "$tmp/b.txt" >"$tmp/out" 2>"$tmp/err" || fail "infer failed: $(cat "$tmp/err")"
cut -f1 "$tmp/out" | tr '\n' ' ' | grep -qx "0 1 2 3 " || fail "numbering: $(cut -f1 "$tmp/out" | tr '\n' ' ')"
awk -F '\t' 'NR == 1 && !($2 == 1 && $3 == 0) { exit 1 } NR == 2 && !($2 == 0 && $3 == 1) { exit 1 }
             NR == 3 && !($2 == 0.5 && $3 == 0.5) { exit 1 } NR == 4 && !($2 == 0.5 && $3 == 0.5) { exit 1 }' "$tmp/out" \
    || fail "theta rows: $(cat "$tmp/out")"
grep -q "1 without in-vocabulary words" "$tmp/err" || fail "empty document not reported: $(cat "$tmp/err")"
printf '2 0:1 1:2\n2 0:1 x:2\n' >"$tmp/bad.ldac"
"$JSMF" infer "$tmp/m" "$tmp/bad.ldac" --format ldac >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || fail "malformed LDA-C: expected exit 1"
grep -q "bad.ldac" "$tmp/err" && grep -q ":2" "$tmp/err" || fail "message does not name file and line: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || [ "$(wc -l <"$tmp/out")" -le 1 ] || fail "a row was written for the bad document"
printf '2 0:1 1:2\n1 7:1\n' >"$tmp/range.ldac"
"$JSMF" infer "$tmp/m" "$tmp/range.ldac" --format ldac >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "LDA-C id 7 of a 4-word model: expected exit 1, got $rc ($(cat "$tmp/err"))"
grep -q "range.ldac:2: word id 7 out of range" "$tmp/err" || fail "range message: $(cat "$tmp/err")"
echo ok

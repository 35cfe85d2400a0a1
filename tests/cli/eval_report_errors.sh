#!/bin/sh
# eval_report_errors.sh — 'jsmf report' manners: usage errors exit 2, a missing model exits 1 naming
# it, an unwritable destination exits 1 and leaves no partial page, '-o -' writes the page to
# stdout, and the page is replaced atomically (no temporary file left behind).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$PYTHON" - "$tmp/m" <<'PY' || exit 1
import os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
rng = np.random.default_rng(1)
B = rng.random((40, 3)); B /= B.sum(0)
A = np.full((3, 3), 1 / 9)
np.save(d + "/B.npy", B); np.save(d + "/A.npy", A)
open(d + "/vocab.txt", "w").write("".join("word" + "abcdefghijklmnopqrstuvwxyz"[i % 26] * (1 + i // 26) + "\n" for i in range(40)))
PY
"$JSMF" report "$tmp/m" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no -o: expected exit 2"
"$JSMF" report -o "$tmp/x.html" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no MODEL: expected exit 2"
"$JSMF" report "$tmp/m" -o "$tmp/x.html" --top >/dev/null 2>&1; [ $? -eq 2 ] || fail "--top without value: expected exit 2"
"$JSMF" report "$tmp/nomodel" -o "$tmp/x.html" 2>"$tmp/err"; [ $? -eq 1 ] || fail "missing model: expected exit 1"
grep -q "nomodel" "$tmp/err" || fail "the message does not name the model: $(cat "$tmp/err")"
[ ! -e "$tmp/x.html" ] || fail "a page was written for a missing model"
"$JSMF" report "$tmp/m" -o "$tmp/no/such/dir/x.html" 2>"$tmp/err"; [ $? -eq 1 ] || fail "unwritable: expected exit 1"
"$JSMF" report "$tmp/m" -o - -q >"$tmp/stdout.html" || fail "-o - failed"
grep -q "</html>" "$tmp/stdout.html" || fail "-o - did not write the page to stdout"
"$JSMF" report "$tmp/m" -o "$tmp/r.html" -q || fail "report failed"
echo "old" >"$tmp/r2.html"
"$JSMF" report "$tmp/m" -o "$tmp/r2.html" -q --metrics "$tmp/nometrics.json" 2>/dev/null; [ $? -eq 1 ] || fail "missing --metrics file: expected exit 1"
[ "$(cat "$tmp/r2.html")" = old ] || fail "a failed run replaced the existing page"
"$JSMF" report "$tmp/m" -o "$tmp/r2.html" -q || fail "replacing a page failed"
cmp -s "$tmp/r.html" "$tmp/r2.html" || fail "the same model gave different pages"
# a pipe (like /dev/null or /dev/stdout) is written into, never replaced by a renamed file
mkfifo "$tmp/pipe"
cat "$tmp/pipe" >"$tmp/from-pipe.html" &
reader=$!
"$JSMF" report "$tmp/m" -o "$tmp/pipe" -q || fail "report into a pipe failed"
if [ -p "$tmp/pipe" ]; then
    wait "$reader"
else
    kill "$reader" 2>/dev/null
    fail "the pipe was replaced by a file"
fi
cmp -s "$tmp/r.html" "$tmp/from-pipe.html" || fail "the page through the pipe differs"
ls "$tmp" | grep -q "tmp-" && fail "temporary file left behind: $(ls "$tmp")"
echo ok

#!/bin/sh
# fit_store.sh — jsmf fit reads a store and the .npy that 'jsmf export' writes of it, with the
# same result (B, A, anchors byte for byte); summary.json carries the store fingerprint and the
# AP trace; levels are written; usage errors exit 2, an existing MODEL is kept without --force.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-fit-store-XXXXXX)
trap 'rm -rf "$T"' EXIT

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
# the first 400 chapters, 600 most widespread words: small and quick
zstd -dc "$K/kjv.txt.zst" | head -n 400 >"$T/docs.txt"
"$J" vocab "$T/docs.txt" -o "$T/vocab.txt" --max-words 600 -q || fail "vocab"
"$J" ingest "$T/store" "$T/docs.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$J" export "$T/store" -o "$T/C.npy" --format npy -q || fail "export"

# C's rows (made from the store's documents) give the exported matrix's fit bit for bit; the
# default multiplies through the documents: the same anchors
"$J" fit "$T/store" -k 8 -o "$T/m1" --levels 3 --products rows --refine 0 -q || fail "fit store"
"$J" fit "$T/C.npy" -k 8 -o "$T/m2" --levels 3 -q || fail "fit npy"
"$J" fit "$T/store" -k 8 -o "$T/m1d" --levels 3 --refine 0 -q || fail "fit store (documents)"
cmp -s "$T/m1d/anchors.txt" "$T/m2/anchors.txt" || fail "anchors differ between the documents' fit and the exported .npy's"
for f in B.npy A.npy anchors.txt alpha.npy level1/B.npy level1/A.npy; do
    cmp -s "$T/m1/$f" "$T/m2/$f" || fail "$f differs between store and exported .npy"
done
[ "$(cut -f1 "$T/m1/vocab.txt")" = "$(cut -f1 "$T/m2/vocab.txt")" ] || fail "vocabularies differ"
fp=$("$J" info "$T/store" --json | tr ',' '\n' | grep '"fingerprint"' | cut -d'"' -f4)
grep -q "\"fingerprint\": \"$fp\"" "$T/m1/summary.json" || fail "summary.json lacks the store fingerprint $fp"
grep -q '"rectify_trace"' "$T/m1/summary.json" || fail "summary.json lacks the AP trace"
# the first anchors made no empty topic here: one round, none replaced (3.1.0's fields)
grep -q '"anchor_rounds": 1,' "$T/m1/summary.json" || fail "summary.json: anchor_rounds is not 1"
grep -q '"anchors_replaced": 0,' "$T/m1/summary.json" || fail "summary.json: anchors_replaced is not 0"
[ -f "$T/m1/level1/B.npy" ] || fail "no level1"
head -n 1 "$T/m1/level1/vocab.txt" | grep -q '^t0' || fail "level1 vocabulary is not topic labels"

# stdout stays empty without --json; --json prints the summary
out=$("$J" fit "$T/store" -k 4 -o "$T/m3" --refine 0 -q)
[ -z "$out" ] || fail "stdout not empty without --json"
"$J" fit "$T/store" -k 4 -o "$T/m4" --refine 0 -q --json | grep -q '"kind": "anchor"' || fail "--json"

# usage errors and refusals
"$J" fit "$T/store" -o "$T/x" -q 2>/dev/null; [ $? -eq 2 ] || fail "missing -k not exit 2"
"$J" fit "$T/store" -k 4 -o "$T/x" --rectify bogus -q 2>/dev/null; [ $? -eq 2 ] || fail "bad --rectify not exit 2"
"$J" fit "$T/store" -k 4 -o "$T/x" --frobnicate 2>/dev/null; [ $? -eq 2 ] || fail "unknown option not exit 2"
"$J" fit "$T/store" -k 4 -o "$T/m1" -q 2>/dev/null; [ $? -eq 1 ] || fail "existing MODEL not refused"
cmp -s "$T/m1/B.npy" "$T/m2/B.npy" || fail "refused fit touched the existing MODEL"
"$J" fit "$T/store" -k 4 -o "$T/m1" -q --force || fail "--force"
"$J" fit "$T/store" -k 600 -o "$T/x" -q 2>/dev/null; [ $? -eq 1 ] || fail "K >= N not exit 1"
"$J" fit "$T/store" -k 4 -o "$T/x" --rectify dr --mode stream -q 2>/dev/null; [ $? -eq 1 ] || fail "DR in streaming mode not refused"
"$J" fit "$T/nope" -k 4 -o "$T/x" -q 2>/dev/null; [ $? -eq 1 ] || fail "missing input not exit 1"
"$J" fit --help | grep -q "rectify" || fail "--help"

[ $fails -eq 0 ] && echo "fit_store: ok"
exit $fails

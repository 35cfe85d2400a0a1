#!/bin/sh
# store_merge.sh — merge(A, B) equals ingest(A then B) exactly: the same export bytes, counters
# and store fingerprint; three-way merges; mismatching vocabularies and an existing OUT refused.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-store-merge-XXXXXX)
counters() { "$J" info "$1" --json | tr ',' '\n' | grep -E '"(docs|docs_dropped|tokens|tokens_dropped|oov_tokens|nnz|fingerprint)"' | head -7; }

awk 'BEGIN { for (i = 0; i < 300; i++) printf "t%dz\n", i }' | tr 0-9 a-j >"$T/vocab.txt"
for part in 1 2 3; do
    awk -v s=$part 'BEGIN { srand(s); for (d = 0; d < 150; d++) { n = 1 + int(rand() * 40);
        for (k = 0; k < n; k++) printf "t%dz ", int(300 * rand() * rand()); print "" } }' |
        tr 0-9 a-j >"$T/p$part.txt"
done

"$J" ingest "$T/all" "$T/p1.txt" "$T/p2.txt" --vocab "$T/vocab.txt" -q --hold rows || fail "ingest all"
JSMF_TEST_SMALL_MEM=1 "$J" ingest "$T/a" "$T/p1.txt" --vocab "$T/vocab.txt" -q --mem 1M --accumulator=hash --hold rows || fail "ingest a"
"$J" ingest "$T/b" "$T/p2.txt" --vocab "$T/vocab.txt" -q --threads 1 || fail "ingest b"
"$J" merge "$T/ab" "$T/a" "$T/b" -q || fail "merge"
"$J" export "$T/all" -o "$T/all.mm" -q && "$J" export "$T/ab" -o "$T/ab.mm" -q
cmp -s "$T/all.mm" "$T/ab.mm" || fail "merge(A,B) export differs from ingest(A then B)"
[ "$(counters "$T/all")" = "$(counters "$T/ab")" ] || fail "counters differ: $(counters "$T/all") vs $(counters "$T/ab")"
"$J" info "$T/ab" | grep -c complete | grep -qx 2 || fail "merged store lacks the two input records"

# three stores, in another order; then ingesting the third input into the merge of two
"$J" ingest "$T/c" "$T/p3.txt" --vocab "$T/vocab.txt" -q
"$J" merge "$T/cba" "$T/c" "$T/b" "$T/a" -q || fail "merge of three"
"$J" ingest "$T/ab" "$T/p3.txt" -q || fail "append to a merged store"
"$J" export "$T/cba" -o "$T/cba.mm" -q && "$J" export "$T/ab" -o "$T/abc.mm" -q
cmp -s "$T/cba.mm" "$T/abc.mm" || fail "merge of three differs from merge + ingest"
# the merged store knows its inputs: p1 is refused
"$J" ingest "$T/ab" "$T/p1.txt" -q 2>"$T/err" && fail "input of a merged shard ingested again"
grep -q "already ingested" "$T/err" || fail "no 'already ingested' message: $(cat "$T/err")"

# refusals
sed 's/^t[a-j]*z$/&/; 5s/.*/other/' "$T/vocab.txt" >"$T/vocab2.txt"
"$J" ingest "$T/d" "$T/p1.txt" --vocab "$T/vocab2.txt" -q
"$J" merge "$T/bad" "$T/a" "$T/d" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "merge of different vocabularies: exit $rc"
grep -q "differ at word 5: 'other'" "$T/err" || fail "mismatch message does not name the word: $(cat "$T/err")"
[ ! -e "$T/bad/data.mdb" ] || fail "a failed merge left an output store"
"$J" merge "$T/ab" "$T/a" "$T/b" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "already exists" "$T/err" || fail "merge into an existing store: exit $rc $(cat "$T/err")"

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

#!/bin/sh
# io_uci_empty_docs.sh — a UCI header's D counts documents that need no line: a 19-byte file saying
# D = 10^12 ends at once (the empty documents are counted as a run, not read one by one) in
# `ingest` and `vocab`, with the same counters as documents read one at a time would give.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-uci-empty-XXXXXX)
printf 'alpha\nbeta\ngamma\n' >"$T/vocab.e.txt"
cp "$T/vocab.e.txt" "$T/vocab.g.txt"
cp "$T/vocab.e.txt" "$T/vocab.s.txt"
# info_has STORE KEY VALUE: `jsmf info --json` says "KEY": VALUE
info_has() {
    "$J" info "$1" --json >"$T/info" || fail "info $1"
    grep -q "\"$2\": $3," "$T/info" || fail "$1: want $2 $3 :: $(grep "\"$2\"" "$T/info")"
}

printf '1000000000000\n3\n0\n' >"$T/docword.e.txt" # no entry line: every document is empty
expect 1 "docword.e.txt: nothing to ingest: all 1000000000000 documents are empty" \
    timeout 20 "$J" ingest "$T/e" "$T/docword.e.txt" --vocab "$T/vocab.e.txt"
[ ! -e "$T/e" ] || fail "a failed first ingest left the store behind"
expect 1 "the inputs give an empty vocabulary (0 documents counted)" \
    timeout 20 "$J" ingest "$T/e" "$T/docword.e.txt"
expect 1 "no words kept: 1000000000000 documents read, 0 counted" \
    timeout 20 "$J" vocab "$T/docword.e.txt" -o "$T/v.txt" --min-df 1

# documents 1 and 999999999999 have words; the runs before, between and after them are empty
printf '1000000000000\n3\n6\n1 1 2\n1 2 3\n1 3 1\n999999999999 1 2\n999999999999 2 1\n999999999999 3 1\n' \
    >"$T/docword.g.txt"
expect 0 "2 documents (+999999999998 dropped)" \
    timeout 20 "$J" ingest "$T/g" "$T/docword.g.txt" --vocab "$T/vocab.g.txt" --min-doc-len 2
info_has "$T/g" docs 2
info_has "$T/g" docs_dropped 999999999998
info_has "$T/g" tokens 10
expect 0 "1000000000000 documents read, 2 counted, 999999999998 too short" \
    timeout 20 "$J" vocab "$T/docword.g.txt" -o "$T/v.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1

# a small file the same way: runs of 1, 2 and 2 empty documents among 3 with words
printf '8\n3\n6\n2 1 2\n2 2 1\n5 1 1\n5 3 1\n6 2 2\n6 3 1\n' >"$T/docword.s.txt"
expect 0 "3 documents (+5 dropped)" \
    "$J" ingest "$T/s" "$T/docword.s.txt" --vocab "$T/vocab.s.txt" --min-doc-len 2
info_has "$T/s" docs 3
info_has "$T/s" docs_dropped 5
info_has "$T/s" next_doc 8

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

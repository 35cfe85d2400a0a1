#!/bin/sh
# store_docs.sh — a store that holds C by its documents (formats/store.md "Documents"): the same
# export bytes and content digest as a store holding rows (kjv passages, and a store grown over
# two nights), rows computed in ranges under a small budget; the same documents whatever the
# threads, --mem, checkpoints, a kill inside a checkpoint, or stdin killed and resumed; info
# names the form; fit, eval and merge work on it (a merge of documents stores keeps them: the
# same as one store of all their inputs); bad input changes nothing.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
T=$(mktemp -d /tmp/jsmf-store-docs-XXXXXX)
trap 'rm -rf "$T"' EXIT
content() { "$J" info --check "$1" 2>&1 | grep -o 'content digest [0-9a-f]*'; }
docs() { "$J" info --check "$1" 2>&1 | grep -o 'documents: .*'; }

zstd -dc "$ROOT/examples/kjv-passages.txt.zst" | head -n 1200 >"$T/kjv.txt"
head -n 500 "$T/kjv.txt" >"$T/night1.txt"
tail -n +501 "$T/kjv.txt" >"$T/night2.txt"
"$J" vocab "$T/kjv.txt" -o "$T/vocab.txt" -q || fail "vocab"

# the three forms of the same inputs: the same C
for h in rows docs both; do
    "$J" ingest "$T/$h" "$T/kjv.txt" --vocab "$T/vocab.txt" --hold $h -q || fail "ingest --hold $h"
    "$J" export "$T/$h" -o "$T/$h.mm" -q || fail "export $h"
done
cmp -s "$T/rows.mm" "$T/docs.mm" || fail "export of a documents store differs from a rows store"
cmp -s "$T/rows.mm" "$T/both.mm" || fail "export of a store holding both differs"
[ "$(content "$T/rows")" = "$(content "$T/docs")" ] || fail "content digests differ: $(content "$T/rows") vs $(content "$T/docs")"
[ -n "$(docs "$T/docs")" ] && [ "$(docs "$T/docs")" = "$(docs "$T/both")" ] || fail "documents differ between docs and both"
[ -z "$(docs "$T/rows")" ] || fail "a rows store reports documents"
JSMF_STORE_DOCS_MEM=300000 "$J" export "$T/docs" -o "$T/ranges.mm" -q || fail "export in row ranges"
cmp -s "$T/rows.mm" "$T/ranges.mm" || fail "rows computed in ranges differ"

# info says which form, text and JSON
"$J" info "$T/docs" | grep -q "C held as *documents" || fail "info text lacks the form"
"$J" info "$T/both" | grep -q "C held as *rows and documents" || fail "info text (both)"
"$J" info "$T/rows" --json | grep -q '"hold": "rows"' || fail "info JSON lacks hold rows"
"$J" info "$T/docs" --json | grep -q '"hold": "docs"' || fail "info JSON lacks hold docs"
"$J" info "$T/docs" --json | grep -q '"doc_nnz": [1-9]' || fail "info JSON lacks doc_nnz"
"$J" info "$T/docs" --json | grep -q '"format_version": 7' || fail "not format 7"
expect 1 "differs from the store's docs" "$J" ingest "$T/docs" "$T/night1.txt" --hold rows -q

# the same documents whatever the threads, --mem, checkpoints or a kill
want=$(docs "$T/docs")
"$J" ingest "$T/t1" "$T/kjv.txt" --vocab "$T/vocab.txt" --hold docs --threads 1 -q || fail "ingest -j1"
"$J" ingest "$T/m64" "$T/kjv.txt" --vocab "$T/vocab.txt" --hold docs --threads 2 --mem 64M -q || fail "ingest 64M"
JSMF_TEST_DOCS_BYTES=20000 "$J" ingest "$T/small" "$T/kjv.txt" --vocab "$T/vocab.txt" --hold docs -q || fail "ingest small windows"
for s in t1 m64 small; do [ "$(docs "$T/$s")" = "$want" ] || fail "$s: $(docs "$T/$s") vs $want"; done
JSMF_TEST_DOCS_BYTES=20000 JSMF_TEST_EXIT_IN_COMMIT=3 "$J" ingest "$T/kill" "$T/kjv.txt" --vocab "$T/vocab.txt" --hold docs -q
[ $? -eq 98 ] || fail "the kill inside a documents checkpoint did not happen"
"$J" info "$T/kill" | grep -q partial || fail "killed store holds no partial input"
JSMF_TEST_DOCS_BYTES=50000 "$J" ingest "$T/kill" "$T/kjv.txt" -q || fail "resume"
[ "$(docs "$T/kill")" = "$want" ] || fail "resumed: $(docs "$T/kill") vs $want"
"$J" export "$T/kill" -o "$T/kill.mm" -q && cmp -s "$T/rows.mm" "$T/kill.mm" || fail "resumed export differs"
# stdin: keyed by fingerprint 0 while read, its blocks move to its final key when it completes
JSMF_TEST_DOCS_BYTES=20000 JSMF_TEST_EXIT_AFTER_COMMIT=2 "$J" ingest "$T/in" - --vocab "$T/vocab.txt" --hold docs -q <"$T/kjv.txt"
[ $? -eq 97 ] || fail "the kill after a stdin checkpoint did not happen"
JSMF_TEST_DOCS_BYTES=20000 "$J" ingest "$T/in" - -q <"$T/kjv.txt" || fail "stdin resumed"
[ "$(docs "$T/in")" = "$want" ] || fail "stdin: $(docs "$T/in") vs $want"
"$J" info "$T/in" | grep -q "complete  - " || fail "stdin record not complete"
"$J" ingest "$T/in" "$T/kjv.txt" -q --force || fail "the file after stdin, forced"
"$J" info --check "$T/in" >/dev/null 2>&1 || fail "check after stdin and file"

# a store grown over two nights: the same C either way
for h in rows docs; do
    "$J" ingest "$T/g$h" "$T/night1.txt" --hold $h -q || fail "night 1 $h"
    "$J" ingest "$T/g$h" "$T/night2.txt" -q || fail "night 2 $h"
    "$J" export "$T/g$h" -o "$T/g$h.mm" -q || fail "export grown $h"
done
"$J" info "$T/gdocs" | grep -q "words admitted .* [1-9][0-9]* since" || fail "the store did not grow"
cmp -s "$T/grows.mm" "$T/gdocs.mm" || fail "grown: export of documents store differs"

# every command works on it
"$J" fit "$T/docs" -k 4 -o "$T/fit" -q || fail "fit on a documents store"
"$J" eval "$T/fit" --store "$T/docs" -q >/dev/null || fail "eval --store on a documents store"
# merge: stores that all hold documents give one that holds them (the same input twice: its
# second record and its documents renumbered), equal to ingesting both into one store; with a
# rows store among them, rows
"$J" merge "$T/merged" "$T/docs" "$T/t1" -q || fail "merge of documents stores"
"$J" info "$T/merged" --json | grep -q '"hold": "docs"' || fail "merge of documents stores does not hold documents"
"$J" ingest "$T/twice" "$T/kjv.txt" "$T/kjv.txt" --force --vocab "$T/vocab.txt" -q --hold docs --freeze
[ -n "$(docs "$T/merged")" ] && [ "$(docs "$T/merged")" = "$(docs "$T/twice")" ] || fail "merged documents: $(docs "$T/merged") vs $(docs "$T/twice")"
[ "$(content "$T/merged")" = "$(content "$T/twice")" ] || fail "merged content digest differs"
"$J" export "$T/merged" -o "$T/merged.mm" -q && "$J" export "$T/twice" -o "$T/twice.mm" -q
cmp -s "$T/merged.mm" "$T/twice.mm" || fail "merge of documents stores differs from ingesting twice"
"$J" ingest "$T/n1" "$T/night1.txt" --vocab "$T/vocab.txt" --freeze -q && \
    "$J" ingest "$T/n2" "$T/night2.txt" --vocab "$T/vocab.txt" --freeze -q || fail "nights as shards"
"$J" merge "$T/n12" "$T/n1" "$T/n2" -q || fail "merge of two shards"
"$J" ingest "$T/n1n2" "$T/night1.txt" "$T/night2.txt" --vocab "$T/vocab.txt" --freeze -q
[ "$(docs "$T/n12")" = "$(docs "$T/n1n2")" ] || fail "shards merged: $(docs "$T/n12") vs $(docs "$T/n1n2")"
"$J" fit "$T/n12" -k 4 -o "$T/fit12" -q && "$J" fit "$T/n1n2" -k 4 -o "$T/fit1n2" -q || fail "fit of merged shards"
cmp -s "$T/fit12/B.npy" "$T/fit1n2/B.npy" || fail "fit of merged shards differs from one store's"
"$J" merge "$T/mixed" "$T/docs" "$T/rows" -q || fail "merge of a documents and a rows store"
"$J" info "$T/mixed" --json | grep -q '"hold": "rows"' || fail "merge with a rows store does not write rows"
"$J" export "$T/mixed" -o "$T/mixed.mm" -q && cmp -s "$T/mixed.mm" "$T/twice.mm" || fail "merge of a documents and a rows store differs"

# bad input: the same error as a rows store, nothing changes
printf '3\n2\n2\n1 1 2\n1 9 1\n' >"$T/bad.uci"
before=$(docs "$T/docs")
expect 1 "bad.uci" "$J" ingest "$T/docs" "$T/bad.uci" --format uci -q
grep -o 'bad.uci.*' "$T/err" >"$T/err.docs"
expect 1 "bad.uci" "$J" ingest "$T/rows" "$T/bad.uci" --format uci -q
grep -o 'bad.uci.*' "$T/err" >"$T/err.rows"
cmp -s "$T/err.docs" "$T/err.rows" || fail "bad input: another message ($(cat "$T/err.docs") vs $(cat "$T/err.rows"))"
[ "$(docs "$T/docs")" = "$before" ] || fail "bad input changed the documents"
exit $fails

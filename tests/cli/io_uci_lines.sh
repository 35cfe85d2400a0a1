#!/bin/sh
# io_uci_lines.sh — UCI errors name the line of the file (header and blank lines counted), the same
# in `vocab` and `ingest` and for the zstd-compressed file, and an out-of-order docID names the
# docID and line it follows; a failed first ingest leaves no store behind.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-uci-lines-XXXXXX)
printf 'alpha\nbeta\ngamma\ndelta\n' >"$T/vocab.u.txt"
# check NAME CONTENT PATTERN: vocab and ingest, plain and zstd, all give PATTERN
check() {
    printf "$2" >"$T/docword.u.txt"
    for f in "$T/docword.u.txt" "$T/docword.u.txt.zst"; do
        [ "$f" = "$T/docword.u.txt.zst" ] && { command -v zstd >/dev/null || continue; zstd -qf "$T/docword.u.txt"; }
        expect 1 "docword.u.txt[.zst]*:$3" "$J" vocab "$f" -o "$T/v.txt" --min-df 1 --min-doc-len 1
        expect 1 "docword.u.txt[.zst]*:$3" "$J" ingest "$T/s" "$f" --vocab "$T/vocab.u.txt" --min-doc-len 1
        [ ! -e "$T/s" ] || { fail "$1: a failed first ingest left the store behind"; rm -rf "$T/s"; }
    done
}
check order '5\n4\n6\n1 1 2\n1 2 1\n3 1 1\n3 4 1\n2 1 1\n5 2 1\n' \
    "8: documents out of order: docID 2 after docID 3 on line 7 (byte 30"
check blank '5\n4\n6\n1 1 2\n\n\n1 2 1\n3 1 1\n3 4 1\n2 1 1\n5 2 1\n' \
    "10: documents out of order: docID 2 after docID 3 on line 9"
check range '5\n4\n6\n1 1 2\n1 2 1\n3 1 1\n3 9 1\n2 1 1\n5 2 1\n' "7: wordID 9 out of range 1..4 (byte 24)"
check count '5\n4\n6\n1 1 2\n1 2 1\n3 1 x\n' "6: count 'x' is not a positive integer"
check nnz '5\n4\n7\n1 1 2\n1 2 1\n3 1 1\n3 4 1\n5 2 1\n' \
    "3: UCI header says NNZ = 7 but the file has 5 docID wordID count lines (it ends at line 8)"
check doc '2\n4\n2\n1 1 2\n3 2 1\n' "5: docID 3 out of range 1..2"

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

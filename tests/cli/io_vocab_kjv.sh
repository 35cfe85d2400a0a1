#!/bin/sh
# io_vocab_kjv.sh — 'jsmf vocab' on the real kjv corpus with curation off agrees with its stats.txt
# (types and tokens of the raw text; vocabulary and tokens of the curated UCI files), and the
# UCI df/tf of every word agree with counts taken from the docword file by awk.
set -u
JSMF=${JSMF:-build/jsmf}
ROOT=${ROOT:-.}
K=${JSMF_CORPORA:-$ROOT/../shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
off="--stopwords none --min-df 1 --max-df-frac 1 --min-doc-len 0 -q"

"$JSMF" vocab "$K/kjv.txt.zst" -o "$t/raw.txt" $off || fail=1
want=$(sed -n 's/^raw: .*tokens \([0-9]*\) .*types \([0-9]*\).*/\2 \1/p' "$K/stats.txt")
got=$(awk -F'\t' '!/^#/ {n++; tf += $3} END {print n, tf}' "$t/raw.txt")
[ "$got" = "$want" ] || { echo "raw text: got '$got' (types tokens), stats.txt says '$want'"; fail=1; }

"$JSMF" vocab "$K/docword.kjv.txt.zst" -o "$t/uci.txt" $off || fail=1
want=$(sed -n 's/^curated: .*vocab \([0-9]*\) tokens \([0-9]*\).*/\1 \2/p' "$K/stats.txt")
got=$(awk -F'\t' '!/^#/ {n++; tf += $3} END {print n, tf}' "$t/uci.txt")
grep -v '^#' "$t/uci.txt" > "$t/uci.words" # without the rule line (formats/vocab.md)
mv "$t/uci.words" "$t/uci.txt"
[ "$got" = "$want" ] || { echo "UCI: got '$got' (words tokens), stats.txt says '$want'"; fail=1; }

# df = lines per wordID, tf = summed counts (kjv repeats no wordID within a document)
zstd -q -dc "$K/docword.kjv.txt.zst" | awk -v V="$K/vocab.kjv.txt" '
    BEGIN { while ((getline w < V) > 0) word[++n] = w }
    NR > 3 { df[$2]++; tf[$2] += $3 }
    END { for (i in df) printf "%s\t%d\t%d\n", word[i], df[i], tf[i] }' | LC_ALL=C sort > "$t/awk.txt"
LC_ALL=C sort "$t/uci.txt" > "$t/uci.sorted"
cmp -s "$t/awk.txt" "$t/uci.sorted" || { echo "UCI df/tf differ from awk's:"; diff "$t/awk.txt" "$t/uci.sorted" | head; fail=1; }
# the output order: df descending, ties by word
LC_ALL=C sort -t "$(printf '\t')" -k2,2nr -k1,1 "$t/uci.txt" | cmp -s - "$t/uci.txt" || { echo "not sorted by df, word"; fail=1; }
exit $fail

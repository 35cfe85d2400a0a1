#!/bin/sh
# io_items.sh — baskets (--format items): ids kept byte for byte (case, digits, punctuation,
# UTF-8, a leading '#' or backslash) through vocab -> ingest -> fit -> topics, the model's
# vocab.txt, the store's vocabulary and export; the items defaults (no stopwords, no max-df cut)
# and what overrides them; stdin and zstd; never sniffed; and bad baskets: an id over 256 bytes
# is an error naming file, line and byte in vocab, ingest and infer, invalid UTF-8 and empty
# baskets get text's warnings, a NUL byte text's error.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-items-XXXXXX)
trap 'rm -rf "$T"' EXIT

long=$(printf 'L%.0s' $(seq 256))   # 256 bytes: the longest id accepted
# 8 ids in every basket but #2's; ids that differ only in case, look like comments or escapes,
# are UTF-8 or long; "the" and "and" would be stopwords of text
i=0
: >"$T/b.txt"
while [ $i -lt 30 ]; do
    printf 'SKU-12 sku-12 #tag \\back spotify:track:4uLU6h 12345 café %s the and\n' "$long" >>"$T/b.txt"
    printf 'a\\b x=1 #tag SKU-12 the <i>&q\n' >>"$T/b.txt"
    i=$((i + 1))
done
ids='#tag SKU-12 the sku-12 \back spotify:track:4uLU6h 12345 café and a\b x=1 <i>&q'

words() { grep -v '^#' "$1" | cut -f1 | sed 's/^\\\([#\\]\)/\1/' | sort; }   # a vocabulary's words, unescaped
want() { for w in $ids "$long"; do printf '%s\n' "$w"; done | sort; }

# --- vocab: every id kept as it is, escaped in the file where a line needs it -----------------
expect 0 "" "$J" vocab --format items "$T/b.txt" -o "$T/v.txt" --min-doc-len 2
[ "$(words "$T/v.txt")" = "$(want)" ] || fail "vocab words: $(cat "$T/v.txt")"
grep -qx '\\#tag	60	60' "$T/v.txt" || fail "#tag not escaped or miscounted: $(cat "$T/v.txt")"
grep -qx '\\\\back	30	30' "$T/v.txt" || fail "\\back not escaped: $(cat "$T/v.txt")"
grep -qx 'a\\b	30	30' "$T/v.txt" || fail "a\\b changed: $(cat "$T/v.txt")"
grep -v '^# jsmf-rule: ' "$T/v.txt" | grep -q '^#' && fail "a word was written as a comment line"
# the text tokenizer makes other words of the same lines
"$J" vocab "$T/b.txt" -o "$T/vt.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1 -q
grep -q "spotify:track" "$T/vt.txt" && fail "text kept an id whole"
# never sniffed: without --format the basket file is text
"$J" vocab "$T/b.txt" -o "$T/vs.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1 -q
cmp -s "$T/vs.txt" "$T/vt.txt" || fail "auto did not read the baskets as text"
# defaults: "the" in every basket is neither a stopword nor cut by max-df; told, they apply
grep -q '^the	60	60$' "$T/v.txt" || fail "items: 'the' dropped by default"
"$J" vocab --format items "$T/b.txt" -o "$T/v5.txt" --min-doc-len 2 --max-df-frac 0.6 -q
grep -q '^the	' "$T/v5.txt" && fail "--max-df-frac 0.6 kept 'the'"
grep -q '^x=1	' "$T/v5.txt" || fail "--max-df-frac 0.6 dropped x=1 (in half the baskets)"
"$J" vocab --format items "$T/b.txt" -o "$T/ve.txt" --min-doc-len 2 --stopwords en -q
grep -q '^the	' "$T/ve.txt" && fail "--stopwords en kept 'the'"
printf 'SKU-12\n' >"$T/stop.txt"   # byte for byte: SKU-12 goes, sku-12 stays
"$J" vocab --format items "$T/b.txt" -o "$T/vf.txt" --min-doc-len 2 --stopwords "$T/stop.txt" -q
grep -q '^SKU-12	' "$T/vf.txt" && fail "stopword SKU-12 kept"
grep -q '^sku-12	' "$T/vf.txt" || fail "stopword SKU-12 dropped sku-12"
# stdin and zstd read the same
"$J" vocab --format items - -o "$T/vi.txt" --min-doc-len 2 -q <"$T/b.txt"
cmp -s "$T/v.txt" "$T/vi.txt" || fail "stdin gives another vocabulary"
if command -v zstd >/dev/null; then
    zstd -q -c "$T/b.txt" >"$T/b.txt.zst"
    "$J" vocab --format items "$T/b.txt.zst" -o "$T/vz.txt" --min-doc-len 2 --threads 4 -q
    cmp -s "$T/v.txt" "$T/vz.txt" || fail "zstd gives another vocabulary"
fi

# --- ingest -> fit -> topics, and every file holding the words ------------------------------
expect 0 "" "$J" ingest "$T/st" --format items --vocab "$T/v.txt" --min-doc-len 2 "$T/b.txt"
"$J" info "$T/st" | grep -q "\[items\]" || fail "info does not name the items input"
"$J" info "$T/st" --json | grep -q '"format": "items"' || fail "info --json: no items format"
# a store's vocabulary equals the file it came from (ingest compares them) and exports as it
expect 0 "" "$J" ingest "$T/st" --format items --vocab "$T/v.txt" --force "$T/b.txt"
expect 0 "" "$J" export "$T/st" -o "$T/c.mtx" --format mm
[ "$(words "$T/c.mtx.vocab.txt")" = "$(want)" ] || fail "export vocabulary: $(cat "$T/c.mtx.vocab.txt")"
grep -v '^#' "$T/v.txt" | cut -f1 | cmp -s - "$T/c.mtx.vocab.txt" || fail "export vocabulary lines differ from vocab's"
# a new store counted from the inputs takes the items defaults too
expect 0 "" "$J" ingest "$T/st2" --format items --min-doc-len 2 "$T/b.txt"
expect 0 "" "$J" export "$T/st2" -o "$T/c2.mtx" --format mm
[ "$(words "$T/c2.mtx.vocab.txt")" = "$(want)" ] || fail "counted store vocabulary: $(cat "$T/c2.mtx.vocab.txt")"
expect 0 "" "$J" fit "$T/st" -k 2 -o "$T/m"
# (its counts are the store's: the baskets were ingested twice)
grep -v '^#' "$T/v.txt" | cut -f1 >"$T/vw.txt"
cut -f1 "$T/m/vocab.txt" | cmp -s "$T/vw.txt" - || fail "model vocab.txt words differ from the vocabulary file's"
"$J" topics "$T/m" --format tsv --top 20 >"$T/top.tsv" || fail "topics"
for w in $ids "$long"; do
    W=$w awk -F'\t' 'NR > 1 { n = split($5, a, " "); for (i = 1; i <= n; i++) if (a[i] == ENVIRON["W"]) f = 1 }
        END { exit !f }' "$T/top.tsv" || fail "topics lack an id (printf: $(printf '%s' "$w" | od -c | head -2))"
done
"$J" topics "$T/m" --format json >"$T/top.json" || fail "topics json"
"$PYTHON" - "$T/top.json" "$long" <<'EOF' || fail "topics json lacks the ids"
import json, sys
t = json.load(open(sys.argv[1]))
got = {w["word"] for topic in t["topics"] for w in topic["words"]}
want = {"#tag", "SKU-12", "sku-12", "\\back", "spotify:track:4uLU6h", "12345", "café", "a\\b",
        "x=1", "the", "and", "<i>&q", sys.argv[2]}
sys.exit(0 if want <= got else print(sorted(want - got)) or 1)
EOF
# an id that is markup stays text in the report
expect 0 "" "$J" report "$T/m" -o "$T/r.html"
grep -qF '<i>&q' "$T/r.html" && fail "report: an id went into the page as markup"
grep -qF '\u003ci\u003e\u0026q' "$T/r.html" || fail "report: the id <i>&q is not in the page's data"
# infer and eval read baskets against the model's ids
expect 0 "" "$J" infer "$T/m" --format items "$T/b.txt" --header
[ "$(wc -l <"$T/out")" -eq 61 ] || fail "infer: expected 60 rows and a header: $(head -3 "$T/out")"
expect 0 "" "$J" eval "$T/m" --format items --corpus "$T/b.txt"
grep -q "0 out-of-vocabulary tokens" "$T/out" || fail "eval --corpus: ids out of vocabulary: $(cat "$T/out")"
# a store's words that no item id can be are told when items are ingested
printf 'new york\nSKU-12\nsku-12\n' >"$T/vb.txt"
expect 0 "vocabulary of $T/st3 can never match item ids, which are split at blanks.*'new york' has a blank" \
    "$J" ingest "$T/st3" --format items --vocab "$T/vb.txt" --min-doc-len 2 "$T/b.txt"
# the same baskets without --format items are text: the warning asks whether they are items
expect 1 "can never match text input.*; the store was fed items before: --format items?" \
    "$J" ingest "$T/st3" --force "$T/b.txt"

# --- bad baskets --------------------------------------------------------------------------
printf 'ok fine\nok x%s y\n' "$long" >"$T/long.txt"   # line 2: a 257-byte id at byte 11
msg="$T/long.txt:2: item id of 257 bytes at byte 11 is longer than the limit of 256 bytes"
expect 1 "$msg" "$J" vocab --format items "$T/long.txt" -o "$T/vl.txt"
[ ! -e "$T/vl.txt" ] || fail "vocab wrote a vocabulary after an over-long id"
expect 1 "$msg" "$J" ingest "$T/stl" --format items --vocab "$T/v.txt" "$T/long.txt"
[ ! -e "$T/stl/data.mdb" ] || fail "ingest left a store after an over-long id"
expect 1 "$msg" "$J" infer "$T/m" --format items "$T/long.txt"
expect 1 "<stdin>:2: item id of 257 bytes" sh -c "'$J' vocab --format items - -o '$T/vl.txt' < '$T/long.txt'"
# the same bytes as text: the long run is dropped, no error
expect 0 "" "$J" vocab "$T/long.txt" -o "$T/vl.txt" --min-df 1 --min-doc-len 1 --max-df-frac 1
# invalid UTF-8: the id is dropped with text's warning, naming file, line and byte
printf 'abc def\nabc caf\351 def\n' >"$T/latin1.txt"
expect 0 "warning: $T/latin1.txt:2: invalid UTF-8 at byte 12: 1 token with invalid UTF-8 dropped" \
    "$J" vocab --format items "$T/latin1.txt" -o "$T/vu.txt" --min-df 1 --min-doc-len 1
grep -q caf "$T/vu.txt" && fail "an invalid UTF-8 id entered the vocabulary"
# empty baskets and blank lines: text's warnings and errors
printf '\n  \n\t\n' >"$T/blank.txt"
expect 1 "warning: $T/blank.txt: all 3 documents are empty" "$J" vocab --format items "$T/blank.txt" -o "$T/vb2.txt"
expect 1 "nothing to ingest" "$J" ingest "$T/stb" --format items --vocab "$T/v.txt" "$T/blank.txt"
: >"$T/empty.txt"
expect 1 "warning: $T/empty.txt: empty input: no documents" "$J" vocab --format items "$T/empty.txt" -o "$T/vb2.txt"
printf 'abc\000def ghi\n' >"$T/nul.txt"
expect 1 "$T/nul.txt:1: binary data (NUL byte)" "$J" vocab --format items "$T/nul.txt" -o "$T/vb2.txt"
expect 2 "--format must be text, uci, ldac, items or auto, not 'basket'" \
    "$J" vocab --format basket "$T/b.txt" -o "$T/vb2.txt"
exit $fails

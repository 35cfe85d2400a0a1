#!/bin/sh
# examples/run.sh — the whole jsmf pipeline on a small real corpus, in about a minute:
# vocabulary, ingest into a store, fit K topics (with a level of super-topics), print the
# topics, infer topic mixtures of a few passages, evaluate, and write the HTML report.
#
# Corpus: kjv-passages.txt.zst (400 KB) — every other chapter of the King James Bible (public
# domain; ../shared/corpora/kjv), each cut into passages of about 100 words: 3,215 documents,
# one per line, lowercase words of 3+ letters. Shipped here so a fresh clone needs nothing else.
#
# usage: sh examples/run.sh      (K=20 topics, 5 super-topics; set K=, LEVELS=, JSMF=, OUT=)
# Everything is written to examples/out/ (removed first).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JSMF=${JSMF:-$root/build/jsmf}
K=${K:-20}
LEVELS=${LEVELS:-5}
corpus=$here/kjv-passages.txt.zst
out=${OUT:-$here/out}

[ -x "$JSMF" ] || make -C "$root" >/dev/null
rm -rf "$out"
mkdir -p "$out"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%6.2f", b - a }'; }
t_start=$(now)
step() { # step NAME CMD...: run one stage and note its time in out/timings.txt
    name=$1; shift
    t0=$(now)
    "$@"
    echo "$name $(since "$t0") s" >>"$out/timings.txt"
}

echo "== vocabulary (English stopwords, words in >= 5 passages and <= 50% of them)"
step vocab "$JSMF" vocab "$corpus" -o "$out/vocab.txt" --stopwords en --min-df 5 --max-df-frac 0.5
echo "== ingest: co-occurrence of $(zstd -dc "$corpus" | wc -l) passages into $out/store"
step ingest "$JSMF" ingest "$out/store" "$corpus" --vocab "$out/vocab.txt"
"$JSMF" info "$out/store"
echo "== fit: K=$K topics, $LEVELS super-topics"
step fit "$JSMF" fit "$out/store" -k "$K" --levels "$LEVELS" -o "$out/model"
echo "== topics"
step topics "$JSMF" topics "$out/model" --top 10
echo "== infer: topic mixtures of the first 3 passages (their two largest topics; all of theta in out/theta.tsv)"
zstd -dc "$corpus" | head -n 3 >"$out/three.txt"
step infer sh -c '"$0" infer "$1" "$2" >"$3"' "$JSMF" "$out/model" "$out/three.txt" "$out/theta.tsv"
"$JSMF" topics "$out/model" --format tsv --top 5 >"$out/topics.tsv"
# For each passage: its two largest topics, with their top words.
awk -F '\t' 'NR == FNR { if (FNR > 1) words[$1] = $5; next }
    { a = 2; for (i = 3; i <= NF; i++) if ($i > $a) a = i
      b = (a == 2) ? 3 : 2; for (i = 2; i <= NF; i++) if (i != a && $i > $b) b = i
      printf "passage %d: %2.0f%% topic %d (%s), %2.0f%% topic %d (%s)\n", $1,
             100 * $a, a - 2, words[a - 2], 100 * $b, b - 2, words[b - 2] }' \
    "$out/topics.tsv" "$out/theta.tsv"
echo "== eval (store metrics, coherence and held-out likelihood over the passages)"
step eval "$JSMF" eval "$out/model" --store "$out/store" --corpus "$corpus"
"$JSMF" eval "$out/model" --store "$out/store" --corpus "$corpus" --json -q >"$out/metrics.json"
echo "== report"
step report "$JSMF" report "$out/model" -o "$out/report.html" --metrics "$out/metrics.json" \
    --title "King James Bible: $K topics"
echo
awk '{ printf "%-8s %s s\n", $1, $2 }' "$out/timings.txt"
echo "total    $(since "$t_start") s"
echo "open $out/report.html in a browser"

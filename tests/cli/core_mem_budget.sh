#!/bin/sh
# core_mem_budget.sh — --mem has one parser and one minimum in every command: below 64M it is a usage
# error naming the minimum (exit 2, nothing created); at the minimum ingest keeps its peak RSS
# (/usr/bin/time -f %M) within it; an ingest whose vocabulary needs more is refused up front
# (exit 1, naming the need, no store left behind).
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-mem-XXXXXX)
trap 'rm -rf "$T"' EXIT
unset JSMF_TEST_SMALL_MEM

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
zstd -dc "$K/kjv.txt.zst" | head -n 400 >"$T/docs.txt"
"$J" vocab "$T/docs.txt" -o "$T/vocab.txt" --max-words 2000 -q || fail "vocab"

for m in 1 1M 63M lots; do
    "$J" ingest "$T/s" "$T/docs.txt" --vocab "$T/vocab.txt" --mem $m -q 2>"$T/err"; rc=$?
    [ $rc -eq 2 ] || fail "ingest --mem $m: exit $rc"
    case $m in lots) grep -q "size like 512M" "$T/err" ;; *) grep -q "minimum, 64M" "$T/err" ;; esac \
        || fail "ingest --mem $m: $(cat "$T/err")"
    [ -e "$T/s" ] && fail "ingest --mem $m created the store"
done
"$J" ingest "$T/s" "$T/docs.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$J" fit "$T/s" -k 5 -o "$T/m" --mem 1 -q 2>"$T/err"
[ $? -eq 2 ] && grep -q "minimum, 64M" "$T/err" || fail "fit --mem 1: $(cat "$T/err")"
"$J" fdm "$T/s" -k 5 -o "$T/f" --mem 1M -q 2>"$T/err"
[ $? -eq 2 ] && grep -q "minimum, 64M" "$T/err" || fail "fdm --mem 1M: $(cat "$T/err")"
[ -e "$T/m" ] || [ -e "$T/f" ] && fail "a refused --mem wrote a model"

# the minimum is kept to: peak resident size of the whole process
if [ -x /usr/bin/time ]; then
    rm -rf "$T/s"
    /usr/bin/time -f %M -o "$T/rss" "$J" ingest "$T/s" "$T/docs.txt" --vocab "$T/vocab.txt" \
        --mem 64M -q || fail "ingest --mem 64M"
    kib=$(tail -n 1 "$T/rss")
    echo "ingest --mem 64M: peak RSS $kib KiB"
    [ "$kib" -le 65536 ] || fail "ingest --mem 64M: peak RSS $kib KiB"
fi

# 150k words need more than 64M: refused before a store exists
awk 'BEGIN { for (i = 0; i < 150000; i++) printf "w%dq\n", i }' | tr 0-9 a-j >"$T/big.txt"
"$J" ingest "$T/b" "$T/docs.txt" --vocab "$T/big.txt" --mem 64M -q 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "an ingest of 150000 words needs" "$T/err" && grep -q "give --mem [0-9]*M" "$T/err" \
    || fail "150k words at --mem 64M: exit $rc, $(cat "$T/err")"
[ -e "$T/b" ] && fail "a refused ingest left $T/b"
# ... and into an existing store of those words, refused before reading
head -n 4000 "$T/big.txt" | paste -d ' ' - - - - - - - - - - >"$T/bigdocs.txt" # 400 documents of its words
"$J" ingest "$T/b" "$T/bigdocs.txt" --vocab "$T/big.txt" -q || fail "ingest 150k words at the default"
"$J" info "$T/b" --json >"$T/before.json"
"$J" ingest "$T/b" "$T/big.txt" --mem 64M -q 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "needs" "$T/err" || fail "existing store at --mem 64M: exit $rc, $(cat "$T/err")"
"$J" info "$T/b" --json | cmp -s - "$T/before.json" || fail "a refused ingest changed the store"

[ $fails -eq 0 ] && echo "core_mem_budget: ok"
exit $fails

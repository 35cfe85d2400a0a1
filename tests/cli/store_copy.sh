#!/bin/sh
# store_copy.sh — jsmf copy (formats/store.md "Copies and backups"): a copy of a finished store
# exports the same C, passes info --check and takes an append as the source does; copies taken
# again and again while an ingest writes (many checkpoints, runs compacted) each pass the check
# and, resumed with the ingest's own command, end as the uninterrupted run's store (so each held
# one committed checkpoint); an existing DEST is refused and left as it was; 'copy STORE -'
# restored as DIR/data.mdb is the same store; a copy killed before its rename (a hook, and kill -9)
# leaves no DEST.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
T=$(mktemp -d /tmp/jsmf-store-copy-XXXXXX)
trap 'rm -rf "$T"' EXIT
digest() { "$J" info --check "$1" 2>&1 | grep -o 'content digest [0-9a-f]*\|documents: .*' | tr '\n' ' '; }
fingerprint() { "$J" info "$1" --json | tr ',' '\n' | grep '"fingerprint"'; }
summary() { # what two stores must share: C (export bytes), documents, counters and records
    "$J" export "$1" -o "$2.mm" -q || fail "export $1"
    { digest "$1"; fingerprint "$1"; } >"$2.sum"
}
same_store() { # $1 $2 label; $1's summary is made once
    [ -e "$T/ref-$(basename "$1").sum" ] || summary "$1" "$T/ref-$(basename "$1")"
    summary "$2" "$T/other"
    cmp -s "$T/ref-$(basename "$1").mm" "$T/other.mm" || fail "$3: export of $2 differs from $1"
    cmp -s "$T/ref-$(basename "$1").sum" "$T/other.sum" ||
        fail "$3: $(cat "$T/ref-$(basename "$1").sum") vs $(cat "$T/other.sum")"
}
forget() { rm -f "$T/ref-$(basename "$1")".*; } # $1 changed

zstd -dc "$ROOT/examples/kjv-passages.txt.zst" >"$T/kjv.txt"
head -n 1500 "$T/kjv.txt" >"$T/a.txt"
tail -n +1501 "$T/kjv.txt" >"$T/b.txt"
"$J" vocab "$T/kjv.txt" -o "$T/vocab.txt" -q || fail "vocab"

# (a) a finished store: the same store, checked, and a working one (an append as into the source)
"$J" ingest "$T/s" "$T/a.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
expect 0 "copied $T/s to $T/c: [0-9]* bytes, the checkpoint of 1500 documents and 1 input records" \
    "$J" copy "$T/s" "$T/c"
grep -q "$T/c: C read and checked" "$T/err" || fail "copy did not report its check: $(cat "$T/err")"
[ -s "$T/c/data.mdb" ] || fail "no data.mdb in the copy"
ls -d "$T"/c.tmp-* >/dev/null 2>&1 && fail "a copy left its temporary directory"
same_store "$T/s" "$T/c" "copy of a finished store"
"$J" info --check "$T/c" >/dev/null 2>&1 || fail "info --check of the copy"
"$J" ingest "$T/s" "$T/b.txt" -q && "$J" ingest "$T/c" "$T/b.txt" -q || fail "append"
forget "$T/s"
same_store "$T/s" "$T/c" "append into the copy"
expect 1 "already ingested" "$J" ingest "$T/c" "$T/a.txt" -q
# --quiet: nothing on stderr; a rows store, and a copy into an empty directory
"$J" ingest "$T/r" "$T/a.txt" --vocab "$T/vocab.txt" --hold rows -q || fail "ingest rows"
mkdir "$T/empty"
expect 0 "" "$J" copy -q "$T/r" "$T/empty/"
[ -s "$T/err" ] && fail "copy -q wrote to stderr: $(cat "$T/err")"
same_store "$T/r" "$T/empty" "copy of a rows store into an empty directory"

# (c) refusals: DEST exists (a file, a store, a directory with anything in it): nothing changes
echo keep >"$T/file"
expect 1 "$T/file: already exists" "$J" copy "$T/s" "$T/file"
[ "$(cat "$T/file")" = keep ] || fail "copy changed an existing file"
cksum "$T/r/data.mdb" >"$T/before"
expect 1 "$T/r: already exists" "$J" copy "$T/s" "$T/r"
cksum "$T/r/data.mdb" | cmp -s - "$T/before" || fail "copy changed an existing store"
mkdir "$T/full" && echo x >"$T/full/x"
expect 1 "already exists" "$J" copy "$T/s" "$T/full"
[ "$(ls "$T/full")" = x ] || fail "copy changed a directory"
expect 1 "no such store" "$J" copy "$T/nothing" "$T/n2"
[ -e "$T/n2" ] && fail "a failed copy made its DEST"
ls -d "$T"/*.tmp-* >/dev/null 2>&1 && fail "a refused copy left a temporary directory"
expect 2 "missing DEST" "$J" copy "$T/s"

# (d) a stream: DIR/data.mdb is the store again; compressed through a pipe; not to a terminal
expect 0 "wrote $T/s to standard output ([1-9][0-9]* bytes)" sh -c "'$J' copy '$T/s' - >'$T/stream.mdb'"
mkdir "$T/restored" && mv "$T/stream.mdb" "$T/restored/data.mdb"
same_store "$T/s" "$T/restored" "a stream restored"
"$J" copy "$T/s" - -q | zstd -q >"$T/s.mdb.zst" || fail "copy - | zstd"
mkdir "$T/unz" && zstd -dq <"$T/s.mdb.zst" >"$T/unz/data.mdb" || fail "zstd -d"
same_store "$T/s" "$T/unz" "a compressed stream restored"
if script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$J' copy '$T/s' -" /dev/null >"$T/tty" 2>&1; rc=$?
    [ $rc -eq 1 ] || fail "copy to a terminal: exit $rc"
    grep -q "standard output is a terminal" "$T/tty" || fail "copy to a terminal: $(cat "$T/tty")"
fi

# (e) a copy ended (as by kill -9) after its data is written, before it is checked and renamed:
# no DEST, only its temporary directory; a later copy to DEST goes ahead
JSMF_TEST_EXIT_IN_COPY=1 "$J" copy "$T/s" "$T/k" 2>/dev/null; rc=$?
[ $rc -eq 95 ] || fail "the copy's exit hook: exit $rc"
[ -e "$T/k" ] && fail "a killed copy left DEST"
ls -d "$T"/k.tmp-* >/dev/null 2>&1 || fail "a killed copy left no temporary directory"
"$J" copy "$T/s" "$T/k" -q || fail "copy after a killed one"
same_store "$T/s" "$T/k" "copy after a killed one"

# (b) copies while an ingest writes: many small checkpoints (hash tables in a tiny budget,
# runs staged in small transactions and compacted), and a documents store in tiny windows. Each
# copy is checked; the first, a middle and the last are resumed with the ingest's command.
ingest_rows() { JSMF_TEST_SMALL_MEM=1 JSMF_STORE_TXN_BYTES=65536 "$J" ingest "$1" "$T/a.txt" \
    "$T/b.txt" --vocab "$T/vocab.txt" --hold rows --mem 1M --accumulator hash -q; }
ingest_docs() { JSMF_TEST_DOCS_BYTES=1000 "$J" ingest "$1" "$T/a.txt" "$T/b.txt" \
    --vocab "$T/vocab.txt" --hold docs -q; }
for kind in rows docs; do
    ingest_$kind "$T/$kind-whole" || fail "$kind: uninterrupted ingest"
    ingest_$kind "$T/$kind-live" & pid=$!
    n=0 copies=""
    while kill -0 $pid 2>/dev/null && [ $n -lt 6 ]; do
        : >"$T/err"
        if [ -e "$T/$kind-live/data.mdb" ] && "$J" copy "$T/$kind-live" "$T/$kind-c$n" -q 2>"$T/err"; then
            copies="$copies $n" n=$((n + 1))
        else
            grep -q "never ingested\|no such store\|not a jsmf store" "$T/err" ||
                [ ! -s "$T/err" ] || fail "$kind: copy $n during the ingest: $(cat "$T/err")"
            sleep 0.05
        fi
    done
    wait $pid || fail "$kind: the ingest copied from failed"
    [ -n "$copies" ] || fail "$kind: no copy was taken while the ingest ran"
    mid=0
    for i in $copies; do
        "$J" info --check "$T/$kind-c$i" >"$T/out" 2>"$T/err" || fail "$kind: copy $i fails info --check: $(cat "$T/err")"
        grep -q "partial" "$T/out" && mid=$((mid + 1))
    done
    set -- $copies
    for i in $1 $(eval echo \${$((($# + 1) / 2))}) $(eval echo \${$#}); do
        ingest_$kind "$T/$kind-c$i" 2>"$T/err" || grep -q "already ingested" "$T/err" ||
            fail "$kind: resuming copy $i: $(cat "$T/err")"
        same_store "$T/$kind-whole" "$T/$kind-c$i" "$kind: copy $i resumed"
    done
    echo "$kind: $# copies taken while the ingest ran, $mid of them inside an input"
done

# (e) and a real kill -9 during a copy of the larger rows store: DEST is whole or absent
"$J" copy "$T/rows-whole" "$T/k9" -q & pid=$!
sleep 0.05; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
if [ -e "$T/k9" ]; then
    same_store "$T/rows-whole" "$T/k9" "a copy that finished before its kill"
else
    echo "killed a copy before its rename: $(ls -d "$T"/k9.tmp-* 2>/dev/null | wc -l) temporary directory left"
fi

[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

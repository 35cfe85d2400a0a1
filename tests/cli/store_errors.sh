#!/bin/sh
# store_errors.sh — the store side of bad input: each case exits non-zero with a message naming
# the file / store and the problem, and leaves the store exactly as at its last checkpoint
# (exports compared byte for byte). Also: appending, refusing a complete input and --force,
# usage errors, map growth from a tiny map, two writers, a newer format version, an unwritable
# directory and a full disk (a 2 MiB tmpfs when mount works, else the test hook).
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-store-errors-XXXXXX)
snap() { "$J" export "$1" -o "$T/snap.mm" -q && cat "$T/snap.mm"; "$J" info "$1" --json | grep -v '"bytes"' | sed 's/"bytes": [0-9]*,//'; }

# a small corpus: 60 documents over 40 words
i=0
while [ $i -lt 40 ]; do echo "word$(printf %02d $i | tr 0-9 a-j)x"; i=$((i + 1)); done >"$T/vocab.txt"
awk 'BEGIN { srand(5); for (d = 0; d < 60; d++) { line = ""; n = 3 + int(rand() * 20);
     for (k = 0; k < n; k++) { w = int(rand() * rand() * 40); line = line sprintf("word%sx ",
     substr("abcdefghij", int(w / 10) + 1, 1) substr("abcdefghij", w % 10 + 1, 1)) }
     print line } }' >"$T/a.txt"
awk 'NR % 2 == 0' "$T/a.txt" >"$T/b.txt"
S=$T/s

# usage errors: exit 2
expect 2 "missing INPUT" "$J" ingest "$S"
expect 2 "unknown option" "$J" ingest "$S" "$T/a.txt" --bogus
expect 2 "--mem" "$J" ingest "$S" "$T/a.txt" --mem lots
expect 2 "format" "$J" ingest "$S" "$T/a.txt" --format csv
expect 2 "missing -o" "$J" export "$S"
expect 2 "npy or mm" "$J" export "$S" -o "$T/x" --format csv
expect 2 "missing STORE" "$J" merge "$T/m"
expect 0 "" "$J" ingest --help
expect 0 "" "$J" info --help
expect 1 "no such store" "$J" info "$T/nothing"

# a new store from stdin needs --vocab
expect 1 "needs --vocab" sh -c "'$J' ingest '$T/stdin.store' - < '$T/a.txt'"

# first ingest, then the same input again: refused; --force adds it again
expect 0 "" "$J" ingest "$S" "$T/a.txt" --vocab "$T/vocab.txt"
m1=$("$J" info "$S" --json | tr ',' '\n' | grep '"docs":' | head -1 | tr -dc 0-9)
[ "$m1" -gt 0 ] || fail "no documents after the first ingest"
snap "$S" >"$T/snap1"
expect 1 "already ingested" "$J" ingest "$S" "$T/a.txt"
snap "$S" >"$T/snap1b"
cmp -s "$T/snap1" "$T/snap1b" || fail "a refused ingest changed the store"
# a differing --vocab or --min-doc-len for an existing store
sed '1d' "$T/vocab.txt" >"$T/vocab2.txt"
expect 1 "differ at word 1" "$J" ingest "$S" "$T/b.txt" --vocab "$T/vocab2.txt"
expect 1 "min-doc-len" "$J" ingest "$S" "$T/b.txt" --min-doc-len 7
# appending a second input later (the nightly case), then forcing the first again
expect 0 "" "$J" ingest "$S" "$T/b.txt"
expect 1 "and so are all the other inputs" "$J" ingest "$S" "$T/a.txt" "$T/b.txt"
head -n 7 "$T/a.txt" >"$T/c.txt"
expect 0 "1 input already in .* skipped" "$J" ingest "$S" "$T/a.txt" "$T/c.txt"
expect 0 "" "$J" ingest "$S" "$T/a.txt" --force --threads 1
"$J" info "$S" | grep -q "ingest #2 of this content" || fail "forced ingest not recorded as a second occurrence"

# bad input in the middle of a file: the store is left as it was
snap "$S" >"$T/before"
{ head -n 30 "$T/a.txt"; printf 'ok line\0binary\n'; tail -n 5 "$T/a.txt"; } >"$T/bad.txt"
expect 1 "bad.txt" "$J" ingest "$S" "$T/bad.txt"
{ i=0; while [ $i -lt 30 ]; do echo "3 1:2 5:1 7:3"; i=$((i + 1)); done; echo "2 3:1 40:2"; } >"$T/bad.ldac"
expect 1 "out of range" "$J" ingest "$S" "$T/bad.ldac" --format ldac
grep -q "bad.ldac:31" "$T/err" || fail "out-of-range id message lacks file:line: $(cat "$T/err")"
: >"$T/empty.txt"
expect 1 "empty" "$J" ingest "$S" "$T/empty.txt"
snap "$S" >"$T/after"
cmp -s "$T/before" "$T/after" || fail "bad inputs changed the store"
# with a tiny budget the bad file checkpoints on the way: the store is at that checkpoint and
# records the file as partial
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "w%dq\n", i }' | tr 0-9 a-j >"$T/v3k.txt"
awk 'BEGIN { srand(9); for (d = 0; d < 400; d++) { for (k = 0; k < 60; k++) printf "w%dq ", int(rand() * 3000); print "" } }' |
    tr 0-9 a-j >"$T/wide.txt"
{ head -n 100 "$T/wide.txt"; printf 'x\0y\n'; } >"$T/long4.txt"
expect 1 "long4.txt" env JSMF_TEST_SMALL_MEM=1 "$J" ingest "$T/p" "$T/long4.txt" --vocab "$T/v3k.txt" --mem 1M --accumulator=hash --hold rows
expect 0 "" "$J" info "$T/p"
grep -q "partial .*long4.txt" "$T/out" || fail "no partial record after a bad file with checkpoints: $(cat "$T/out")"

# two writers: the second fails at once, naming the store
mkfifo "$T/fifo"
("$J" ingest "$T/w" - --vocab "$T/vocab.txt" <"$T/fifo" >/dev/null 2>&1; echo $? >"$T/w1.rc") &
exec 7>"$T/fifo" # hold the pipe open: the first writer waits on stdin with the lock held
k=0; while [ ! -f "$T/w/data.mdb" ] && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
start=$(date +%s)
expect 1 "another jsmf process is writing" "$J" ingest "$T/w" "$T/a.txt"
grep -q "$T/w" "$T/err" || fail "EBUSY message does not name the store"
[ $(( $(date +%s) - start )) -le 2 ] || fail "second writer did not fail fast"
expect 0 "" "$J" info "$T/w" # readers are not blocked
cat "$T/a.txt" >&7
exec 7>&-
wait
[ "$(cat "$T/w1.rc")" = 0 ] || fail "first writer failed"

# map growth from a 64 KiB map gives the same store
expect 0 "" env JSMF_STORE_MAPSIZE=65536 "$J" ingest "$T/g" "$T/a.txt" --vocab "$T/vocab.txt"
"$J" ingest "$T/g2" "$T/a.txt" --vocab "$T/vocab.txt" -q
"$J" export "$T/g" -o "$T/g.mm" -q && "$J" export "$T/g2" -o "$T/g2.mm" -q
cmp -s "$T/g.mm" "$T/g2.mm" || fail "map growth changed the store"

# a store of a newer format version is refused (version 99 written with mdb_load)
if command -v mdb_load >/dev/null 2>&1; then
    cp -r "$T/g" "$T/v"
    printf 'VERSION=3\nformat=print\ntype=btree\nHEADER=END\n version\n c\\00\\00\\00\\00\\00\\00\\00\nDATA=END\n' |
        mdb_load -s meta "$T/v" || fail "mdb_load failed"
    expect 1 "version 99" "$J" info "$T/v"
    expect 1 "version 99" "$J" ingest "$T/v" "$T/b.txt"
    expect 1 "version 99" "$J" export "$T/v" -o "$T/v.mm"

    # an LMDB environment that is not a store: refused before anything is written to it
    mkdir "$T/foreign"
    printf 'VERSION=3\nformat=print\ntype=btree\nHEADER=END\n hello\n world\nDATA=END\n' |
        mdb_load "$T/foreign" || fail "mdb_load failed"
    cp "$T/foreign/data.mdb" "$T/foreign.mdb"
    expect 1 "not a jsmf store" "$J" ingest "$T/foreign" "$T/a.txt" --vocab "$T/vocab.txt"
    cmp -s "$T/foreign/data.mdb" "$T/foreign.mdb" || fail "ingest changed a foreign LMDB file"
    mkdir "$T/foreign2"  # a named 'meta' database that is not a store's
    printf 'VERSION=3\nformat=print\ntype=btree\nHEADER=END\n colour\n blue\nDATA=END\n' |
        mdb_load -s meta "$T/foreign2" || fail "mdb_load failed"
    cp "$T/foreign2/data.mdb" "$T/foreign2.mdb"
    expect 1 "not a jsmf store" "$J" ingest "$T/foreign2" "$T/a.txt" --vocab "$T/vocab.txt"
    cmp -s "$T/foreign2/data.mdb" "$T/foreign2.mdb" || fail "ingest changed a foreign LMDB file"
fi

# an unwritable place for the store
expect 1 "cannot create store directory" "$J" ingest /proc/jsmf-no-such/store "$T/a.txt" --vocab "$T/vocab.txt"
touch "$T/plainfile"
expect 1 "not a store directory" "$J" ingest "$T/plainfile" "$T/a.txt" --vocab "$T/vocab.txt"

# a full disk: the store stays at its last checkpoint and resumes once there is room
mkdir -p "$T/full"
if mount -t tmpfs -o size=1m none "$T/full" 2>/dev/null; then
    # a vocabulary of 3000 words fills 1 MiB quickly
    expect 1 "no space left on device" env JSMF_TEST_SMALL_MEM=1 "$J" ingest "$T/full/s" "$T/wide.txt" --vocab "$T/v3k.txt" --mem 1M --accumulator=hash --hold rows
    expect 0 "" "$J" info "$T/full/s"
    expect 0 "" "$J" export "$T/full/s" -o /dev/null
    umount "$T/full"
else
    expect 1 "no space left on device" env JSMF_TEST_ENOSPC_AT_COMMIT=1 "$J" ingest "$T/f" "$T/a.txt" --vocab "$T/vocab.txt"
    echo "note: mount not permitted; full disk simulated with JSMF_TEST_ENOSPC_AT_COMMIT"
fi

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

#!/bin/sh
# core_output_errors.sh — every file a command writes for the user (vocab -o, report -o, export -o,
# a fitted model) fails with the path the user gave and the system's reason, exit 1: a full
# device gives "write error: No space left on device"; an existing file is left byte for byte as
# it was; a device reached through a symlink is never removed or replaced; a device or a pipe
# gets no FILE.vocab.txt beside it. A small tmpfs (when mount is permitted) checks a full disk
# under a model directory and an existing vocabulary file.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-output-errors-XXXXXX)

# a small corpus, its vocabulary and store, and a model of 3 topics
i=0
while [ $i -lt 30 ]; do echo "word$(printf %02d $i | tr 0-9 a-j)x"; i=$((i + 1)); done >"$T/vocab.txt"
awk 'BEGIN { srand(3); for (d = 0; d < 40; d++) { line = ""; for (k = 0; k < 12; k++) {
     w = int(rand() * 30); a = substr("abcdefghij", int(w / 10) + 1, 1)
     line = line "word" a substr("abcdefghij", w % 10 + 1, 1) "x " } print line } }' >"$T/c.txt"
"$J" ingest "$T/s" "$T/c.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$PYTHON" - "$T/m" <<'PY' || fail "model"
import os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
rng = np.random.default_rng(1)
B = rng.random((30, 3)); B /= B.sum(0)
np.save(d + "/B.npy", B); np.save(d + "/A.npy", np.full((3, 3), 1 / 9))
open(d + "/vocab.txt", "w").write("".join("w" + "abcdefghijklmnopqrstuvwxyz"[i % 26] * (3 + i // 26) + "\n" for i in range(30)))
PY

# a directory that does not exist: the message names the requested path, not a temporary
expect 1 "^jsmf report: /proc/jsmf-x.html: cannot create: No such file or directory" \
    "$J" report "$T/m" -o /proc/jsmf-x.html
expect 1 "^jsmf vocab: /proc/jsmf-v.txt: cannot create" "$J" vocab "$T/c.txt" -o /proc/jsmf-v.txt --min-df 1
expect 1 "^jsmf export: /proc/jsmf-c.mm: cannot create" "$J" export "$T/s" -o /proc/jsmf-c.mm
expect 1 "^jsmf fit: /proc/jsmf-m: cannot create: No such file or directory" \
    "$J" fit "$T/s" -k 2 -o /proc/jsmf-m
grep -q "tmp" "$T/err" && fail "fit names a temporary: $(cat "$T/err")"
expect 1 "$T/m: is a directory" "$J" report "$T/m" -o "$T/m"

# a full device, reached through a symlink: the reason is given, the link and device stay
if [ -c /dev/full ]; then
    ln -s /dev/full "$T/full"
    expect 1 "^jsmf report: $T/full: write error: No space left on device" "$J" report "$T/m" -o "$T/full"
    expect 1 "^jsmf export: $T/full: write error: No space left on device" "$J" export "$T/s" -o "$T/full"
    expect 1 "^jsmf export: $T/full: write error: No space left on device" "$J" export "$T/s" -o "$T/full" --format npy
    expect 1 "^jsmf vocab: $T/full: write error: No space left on device" "$J" vocab "$T/c.txt" -o "$T/full" --min-df 1
    expect 1 "No space left on device" sh -c "'$J' vocab '$T/c.txt' -o - --min-df 1 > /dev/full"
    expect 1 "No space left on device" sh -c "'$J' report '$T/m' -o - > /dev/full"
    [ -L "$T/full" ] || fail "a failed write removed the symlink to /dev/full"
    [ -c /dev/full ] || fail "/dev/full is no longer a device"
    [ ! -e "$T/full.vocab.txt" ] || fail "export wrote a vocabulary beside a device"
else
    echo "note: /dev/full is not a character device here; full-device checks skipped"
fi

# a pipe gets the matrix and no FILE.vocab.txt beside it
mkfifo "$T/pipe"
cat "$T/pipe" >"$T/piped.mm" &
expect 0 "" "$J" export "$T/s" -o "$T/pipe"
wait
grep -q "MatrixMarket" "$T/piped.mm" || fail "export to a pipe wrote no matrix"
[ ! -e "$T/pipe.vocab.txt" ] || fail "export wrote a vocabulary beside a pipe"

# a symlink to a regular file: the file is replaced, the link kept
echo old >"$T/real.txt"
ln -s real.txt "$T/link.txt"
expect 0 "" "$J" vocab "$T/c.txt" -o "$T/link.txt" --min-df 1 -q
[ -L "$T/link.txt" ] || fail "writing through a symlink replaced the link"
grep -q "word" "$T/real.txt" || fail "the symlink's target was not written"

# a failing command leaves an existing output byte for byte as it was
"$J" vocab "$T/c.txt" -o "$T/keep.txt" --min-df 1 -q
cp "$T/keep.txt" "$T/keep.orig"
printf 'ok line\0binary\n' >"$T/bin.txt"
expect 1 "bin.txt" "$J" vocab "$T/c.txt" "$T/bin.txt" -o "$T/keep.txt" --min-df 1
cmp -s "$T/keep.txt" "$T/keep.orig" || fail "a failed vocab changed the existing file"
ls "$T" | grep -q "tmp-" && fail "a temporary file was left behind: $(ls "$T")"

# a full disk: the existing vocabulary stays, a model's message names the model
mkdir "$T/small"
if mount -t tmpfs -o size=24k none "$T/small" 2>/dev/null; then
    awk 'BEGIN { for (i = 0; i < 3000; i++) printf "w%dq\n", i }' | tr 0-9 a-j >"$T/big.txt"
    head -c 2000 "$T/big.txt" >"$T/small/v.txt"
    cp "$T/small/v.txt" "$T/v.orig"
    expect 1 "^jsmf vocab: $T/small/v.txt: write error: No space left on device" \
        "$J" vocab "$T/big.txt" -o "$T/small/v.txt" --min-df 1 --min-doc-len 1 --max-df-frac 1
    cmp -s "$T/small/v.txt" "$T/v.orig" || fail "a full disk truncated the existing vocabulary"
    head -c 16384 /dev/zero >"$T/small/fill" # about one page left
    expect 1 "^jsmf export: $T/small/c.mm: write error: No space left on device" "$J" export "$T/s" -o "$T/small/c.mm"
    [ "$(ls "$T/small" | tr '\n' ' ')" = "fill v.txt " ] || fail "files left on the full disk: $(ls "$T/small")"
    umount "$T/small"
else
    echo "note: mount not permitted; full-disk checks skipped"
fi

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

#!/bin/sh
# choice_tables.sh — a choice is one table entry: in a copy of the tree (the build directory too,
# so make rebuilds only what changed) dummy_rectify.patch adds a rectification method 'dummy' (a
# copy of 'none'), dummy_device.patch an FDM device 'cpu2' (the CPU back end) and
# dummy_refine.patch a refinement method 'cvb0x' (a copy of 'cvb0'), each touching at most 3
# files and none of the CLI. Then:
#  - built with the table entries but the manual left as it was, the build fails, naming the
#    option whose values the page does not list (the --help check reads the tables);
#  - with the patches whole it builds; 'jsmf fit --rectify dummy' gives the model of
#    '--rectify none' and names "dummy" in summary.json; 'jsmf fdm --device cpu2' trains, its
#    summary naming cpu2, with the model of '--device cpu'; 'jsmf refine --method cvb0x' gives
#    the model of '--method cvb0' and names it in summary.json; --help lists the values; a value
#    outside the tables is still refused, listing the table.
# Skips (77) without make, patch or the kjv corpus, or outside a built checkout.
. "$(dirname "$0")/common.inc"
. "$(dirname "$0")/patched_tree.inc"
T=$(mktemp -d /tmp/jsmf-choice-tables-XXXXXX)
trap 'rm -rf "$T"' EXIT
P1=$ROOT/tests/cli/dummy_rectify.patch
P2=$ROOT/tests/cli/dummy_device.patch
P3=$ROOT/tests/cli/dummy_refine.patch

# each patch: at most 3 files, none of them the CLI's (its choices come from the tables)
for p in "$P1" "$P2" "$P3"; do
    files=$(grep '^+++ ' "$p" | awk '{print $2}' | sed 's|^b/||')
    n=$(echo "$files" | grep -c .)
    [ "$n" -le 3 ] || fail "$(basename "$p") touches $n files: $(echo $files)"
    echo "$files" | grep -q '^src/cli/' && fail "$(basename "$p") touches the CLI: $(echo $files)"
done

# the copy: sources and the build directory with their times, so make is incremental
S=$T/tree
mkdir -p "$S"
(cd "$ROOT" && cp -a Makefile src include man tools "$S/") || { echo "copy failed"; exit 1; }
cp -a "$BUILD" "$S/build" || { echo "copy of the build failed"; exit 1; }
(cd "$S" && patch -s -p1 <"$P1" && patch -s -p1 <"$P2" && patch -s -p1 <"$P3") ||
    { echo "a patch does not apply"; exit 1; }
cp "$S/man/jsmf.1" "$T/jsmf.1.patched"
cp "$ROOT/man/jsmf.1" "$S/man/jsmf.1"
touch "$S/man/jsmf.1"
build() { make -C "$S" --no-print-directory -j2 BUILD=build build/jsmf >"$T/make.log" 2>&1; }

# the tables changed, the manual not: the build's --help check refuses it, naming the option
# (fit's first, the first command it checks; then, with fit's value written, fdm's)
if build; then
    fail "the build accepted a manual that lacks the new values"
else
    grep -q "man/jsmf.1 shows --rectify .*, it takes .*dummy" "$T/make.log" ||
        fail "no message on --rectify's values: $(tail -n 3 "$T/make.log")"
fi
sed 's/auto|cpu|cuda|cpu2"/auto|cpu|cuda"/' "$T/jsmf.1.patched" >"$S/man/jsmf.1"
if build; then
    fail "the build accepted a manual that lacks --device cpu2"
else
    grep -q "man/jsmf.1 shows --device .*, it takes .*cpu2" "$T/make.log" ||
        fail "no message on --device's values: $(tail -n 3 "$T/make.log")"
fi
sed 's/em|cvb0|cvb0x"/em|cvb0"/' "$T/jsmf.1.patched" >"$S/man/jsmf.1"
if build; then
    fail "the build accepted a manual that lacks --method cvb0x"
else
    grep -q "man/jsmf.1 shows --method .*, it takes .*cvb0x" "$T/make.log" ||
        fail "no message on --method's values: $(tail -n 3 "$T/make.log")"
fi
cp "$T/jsmf.1.patched" "$S/man/jsmf.1"
build || { cat "$T/make.log"; fail "the patched tree does not build"; exit 1; }
J2=$S/build/jsmf

"$J2" fit --help | grep -q -- "--rectify ap|compressed|dr|none|dummy" || fail "fit --help lacks dummy"
"$J2" fdm --help | grep -q -- "--device auto|cpu|cuda|cpu2" || fail "fdm --help lacks cpu2"
expect 2 "must be ap, dr, none, compressed or dummy, not 'nope'" "$J2" fit x -k 2 -o y --rectify nope
expect 2 "must be auto, cpu, cuda or cpu2, not 'nope'" "$J2" fdm x -k 2 -o y --device nope

# a small store: 200 chapters, 300 words
zstd -dc "$K/kjv.txt.zst" | head -n 200 >"$T/docs.txt"
"$J2" vocab "$T/docs.txt" -o "$T/vocab.txt" --max-words 300 -q || fail "vocab"
"$J2" ingest "$T/store" "$T/docs.txt" --vocab "$T/vocab.txt" -q || fail "ingest"

"$J2" fit "$T/store" -k 6 -o "$T/none" --rectify none --refine 0 --threads 2 -q || fail "fit --rectify none"
"$J2" fit "$T/store" -k 6 -o "$T/dummy" --rectify dummy --refine 0 --threads 2 -q || fail "fit --rectify dummy"
for f in B.npy A.npy alpha.npy anchors.txt; do
    cmp -s "$T/none/$f" "$T/dummy/$f" || fail "--rectify dummy: $f differs from --rectify none's"
done
grep -q '"rectify": "dummy"' "$T/dummy/summary.json" || fail "summary.json does not name dummy"

for d in cpu cpu2; do
    "$J2" fdm "$T/store" -k 4 -o "$T/fdm-$d" --device $d --init none --steps 20 --seed 5 \
        --threads 2 -q || fail "fdm --device $d"
done
cmp -s "$T/fdm-cpu/B.npy" "$T/fdm-cpu2/B.npy" || fail "--device cpu2: B differs from cpu's"
grep -q '"device": "cpu2"' "$T/fdm-cpu2/summary.json" || fail "summary.json does not name cpu2"
grep -q '"device": "cpu2 (2 threads)"' "$T/fdm-cpu2/summary.json" ||
    fail "the run is not named cpu2 (2 threads)"

"$J2" refine --help | grep -q -- "--method em|cvb0|cvb0x" || fail "refine --help lacks cvb0x"
for m in cvb0 cvb0x; do
    "$J2" refine "$T/none" --corpus "$T/docs.txt" -o "$T/refine-$m" --method $m --iters 4 \
        --threads 2 -q || fail "refine --method $m"
done
for f in B.npy A.npy; do
    cmp -s "$T/refine-cvb0/$f" "$T/refine-cvb0x/$f" || fail "--method cvb0x: $f differs from cvb0's"
done
grep -q '"method_name": "cvb0x"' "$T/refine-cvb0x/summary.json" || fail "summary.json does not name cvb0x"
exit $fails

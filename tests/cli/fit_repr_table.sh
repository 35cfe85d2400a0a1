#!/bin/sh
# fit_repr_table.sh — a representation of the rectified C is one file and one table entry: in a
# copy of the tree (the build directory too, so make rebuilds only what changed)
# dummy_rect_repr.patch adds 'copy' (the dense representation under another name, every
# operation handed on to an inner dense matrix), touching only its new file and the table of
# representations (fit_methods.c). Then the steps after the rectification, run through 'copy'
# (JSMF_TEST_FIT_REPR=copy), give the model they give through the dense representation
# (B.npy, A.npy, alpha.npy, anchors.txt byte for byte): for AP's dense path (whose R is dense
# already: also the model of no JSMF_TEST_FIT_REPR), the factored AP iterate and the compressed
# iterate (both made dense first); and an unknown name fails, listing the table.
# Skips (77) without make, patch or the kjv corpus, or outside a built checkout.
. "$(dirname "$0")/common.inc"
. "$(dirname "$0")/patched_tree.inc"
T=$(mktemp -d /tmp/jsmf-repr-table-XXXXXX)
trap 'rm -rf "$T"' EXIT
P=$ROOT/tests/cli/dummy_rect_repr.patch

# the patch: a new file of src/fit/ and the table, nothing else
files=$(grep '^+++ ' "$P" | awk '{print $2}' | sed 's|^b/||' | sort | tr '\n' ' ')
[ "$files" = "src/fit/fit_methods.c src/fit/fit_rect_copy.c " ] ||
    fail "dummy_rect_repr.patch touches $files"
grep -q '^--- /dev/null' "$P" || fail "dummy_rect_repr.patch does not add its file"

S=$T/tree
mkdir -p "$S"
(cd "$ROOT" && cp -a Makefile src include man tools "$S/") || { echo "copy failed"; exit 1; }
cp -a "$BUILD" "$S/build" || { echo "copy of the build failed"; exit 1; }
(cd "$S" && patch -s -p1 <"$P") || { echo "the patch does not apply"; exit 1; }
make -C "$S" --no-print-directory -j2 BUILD=build build/jsmf >"$T/make.log" 2>&1 ||
    { cat "$T/make.log"; fail "the patched tree does not build"; exit 1; }
grep -q "warning:" "$T/make.log" && fail "the patched tree builds with warnings: $(grep warning: "$T/make.log")"
J2=$S/build/jsmf

# a small store: 200 chapters, 300 words
zstd -dc "$K/kjv.txt.zst" | head -n 200 >"$T/docs.txt"
"$J2" vocab "$T/docs.txt" -o "$T/vocab.txt" --max-words 300 -q || fail "vocab"
"$J2" ingest "$T/store" "$T/docs.txt" --vocab "$T/vocab.txt" -q || fail "ingest"

same() { # what, model dir, model dir
    for f in B.npy A.npy alpha.npy anchors.txt; do
        cmp -s "$2/$f" "$3/$f" || fail "$1: $f differs"
    done
}
fit() { # out, env value ('' for none), fit options...
    out=$1 repr=$2; shift 2
    if [ -n "$repr" ]; then
        JSMF_TEST_FIT_REPR=$repr "$J2" fit "$T/store" -k 6 -o "$T/$out" --refine 0 --threads 2 -q "$@" ||
            fail "fit $* through $repr"
    else
        "$J2" fit "$T/store" -k 6 -o "$T/$out" --refine 0 --threads 2 -q "$@" || fail "fit $*"
    fi
}
fit ap "" --rectify ap
fit ap-dense dense --rectify ap
fit ap-copy copy --rectify ap
same "AP, dense path, through dense" "$T/ap" "$T/ap-dense"
same "AP, dense path, through copy" "$T/ap" "$T/ap-copy"
fit fac-dense dense --rectify ap --mode stream --rectify-iters 4
fit fac-copy copy --rectify ap --mode stream --rectify-iters 4
same "AP's factored iterate through copy" "$T/fac-dense" "$T/fac-copy"
fit lr-dense dense
fit lr-copy copy
same "the compressed iterate through copy" "$T/lr-dense" "$T/lr-copy"
JSMF_TEST_FIT_REPR=nope "$J2" fit "$T/store" -k 6 -o "$T/nope" -q 2>"$T/err" &&
    fail "JSMF_TEST_FIT_REPR=nope fitted"
grep -q "no representation 'nope' of the rectified C (dense, copy)" "$T/err" ||
    fail "unknown representation: $(cat "$T/err")"
exit $fails

#!/bin/sh
# refine_cli.sh — 'jsmf refine' and 'jsmf fit --corpus': a small kjv fit refined over its
# documents scores a better held-out likelihood than the spectral fit ('fit --refine' over the
# store's own documents gives the same model), the model is of kind
# refined and every reader takes it (its learned alpha too), the same command gives the same bytes, 'fit --corpus'
# equals fit then refine, the spectral fit (--refine 0) is unchanged by the option's existence;
# the default fit is 'fit --refine 80' where the store holds its documents (the budget's passes
# on few documents) and the spectral fit where it holds only rows or where the refinement would
# not fit --mem (said; asked for, it stops before the fit); bad input names its file and writes
# nothing.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-refine-XXXXXX)
trap 'rm -rf "$T"' EXIT

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
# 330 chapters, 600 words: every tenth chapter held out
zstd -dc "$K/kjv.txt.zst" | head -n 330 | awk 'NR % 10 == 0 {print > "'"$T"'/test.txt"; next} {print}' >"$T/train.txt"
"$J" vocab "$T/train.txt" -o "$T/vocab.txt" --max-words 600 -q || fail "vocab"
"$J" ingest "$T/store" "$T/train.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$J" fit "$T/store" -k 8 -o "$T/fit" --refine 0 -q || fail "fit --refine 0"
grep -q '"kind": "anchor"' "$T/fit/summary.json" || fail "fit --refine 0 is not the spectral fit"
"$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/ref" -j 2 -q || fail "refine"
"$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/ref2" -j 2 -q || fail "refine again"
cmp -s "$T/ref/B.npy" "$T/ref2/B.npy" || fail "two runs on 2 threads differ"
grep -q '"kind": "refined"' "$T/ref/summary.json" || fail "kind is not refined"
grep -q '"start_kind": "anchor"' "$T/ref/summary.json" || fail "start kind not recorded"
grep -q '"objective_per_token"' "$T/ref/summary.json" || fail "no objective curve"
grep -q '"loglik_per_token"' "$T/ref/summary.json" || fail "no log-likelihood curve"
cmp -s "$T/fit/anchors.txt" "$T/ref/anchors.txt" || fail "the refined model lacks its start's anchors"
"$J" topics "$T/ref" >/dev/null || fail "topics of a refined model"
"$J" infer "$T/ref" "$T/test.txt" -q >/dev/null || fail "infer with a refined model"
# chapters of ~300 tokens: --learn-alpha auto learns the prior, written as alpha.npy, which every
# reader takes; --learn-alpha no writes none; --overrelax reaches the summary
grep -q '"alpha_learned": true' "$T/ref/summary.json" || fail "auto did not learn alpha on long documents"
[ -f "$T/ref/alpha.npy" ] || fail "the learned alpha was not written"
"$J" report "$T/ref" -o "$T/ref.html" -q || fail "report of a refined model with alpha"
"$J" topics "$T/ref" --format json | grep -q '"alpha"' || fail "topics --format json lacks the learned alpha"
"$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/refna" --learn-alpha no --overrelax 1 -j 2 -q ||
    fail "refine --learn-alpha no --overrelax 1"
grep -q '"alpha_learned": false' "$T/refna/summary.json" || fail "--learn-alpha no learned"
grep -q '"overrelax": 1,' "$T/refna/summary.json" || fail "--overrelax not recorded"
[ ! -f "$T/refna/alpha.npy" ] || fail "--learn-alpha no wrote alpha.npy"
cmp -s "$T/ref/B.npy" "$T/refna/B.npy" && fail "the defaults equal plain CVB0 with a fixed alpha"
expect 2 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/x" --overrelax 0.5 -q
expect 2 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/x" --learn-alpha maybe -q

ll() { "$J" eval "$1" --corpus "$T/test.txt" --json -q | tr ',' '\n' | grep '"heldout_loglik_per_token"' | cut -d: -f2; }
a=$(ll "$T/fit") b=$(ll "$T/ref")
awk -v a="$a" -v b="$b" 'BEGIN {exit !(b > a + 0.05)}' || fail "held-out LL: refined $b not above fit $a"

# fit --corpus: the fit refined in one command, as fit + refine on the same threads, the fit
# taking the products through the documents and at most 10 rectification steps
"$J" fit "$T/store" -k 8 -o "$T/fitref" --corpus "$T/train.txt" --threads 2 2>"$T/fitref.err" ||
    fail "fit --corpus"
# the fit's metrics that read C again are left out: the refined model replaces the fit's
grep -q "against C left out: the model is refined" "$T/fitref.err" ||
    fail "fit --corpus computed the metrics against C"
"$J" fit "$T/store" -k 8 -o "$T/fitd" --products documents --rectify-iters 10 --refine 0 --threads 2 -q ||
    fail "fit --products documents"
grep -q '"c_products": "documents"' "$T/fitd/summary.json" || fail "--products documents not taken"
grep -q '"c_products": "documents"' "$T/fit/summary.json" || fail "the plain fit does not take the documents (they fit --mem)"
grep -q '"products": "auto"' "$T/fit/summary.json" || fail "the plain fit's products not auto"
"$J" refine "$T/fitd" --corpus "$T/train.txt" -o "$T/refd" -j 2 -q || fail "refine of fitd"
cmp -s "$T/fitref/B.npy" "$T/refd/B.npy" || fail "fit --corpus differs from fit + refine"
# fit --refine N without --corpus: over the documents the store holds, as over the corpus
"$J" fit "$T/store" -k 8 -o "$T/fitst" --refine 80 --threads 2 -q || fail "fit --refine"
cmp -s "$T/fitst/B.npy" "$T/refd/B.npy" || fail "fit --refine over the store differs from --corpus"
# --batches and --tol reach the summary; --tol 1 stops after the third pass
"$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/refb" --batches 4 --tol 1 -j 2 -q ||
    fail "refine --batches --tol"
grep -q '"batches": 4' "$T/refb/summary.json" || fail "batches not recorded"
grep -q '"iterations": 3,' "$T/refb/summary.json" || fail "--tol 1 did not stop at the third pass"
expect 2 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/x" --batches 0 -q
expect 2 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/x" --tol -1 -q
"$J" ingest "$T/rows" "$T/train.txt" --vocab "$T/vocab.txt" --hold rows -q || fail "rows store"
expect 1 "give --corpus" "$J" fit "$T/rows" -k 8 -o "$T/fx" --refine 3 -q
[ ! -e "$T/fx" ] || fail "fit --refine over a rows store wrote a model"
"$J" fit "$T/store" -k 8 -o "$T/fit2" --refine 0 -q || fail "spectral fit"
cmp -s "$T/fit/B.npy" "$T/fit2/B.npy" || fail "the spectral fit changed"
# the default: refined where the store holds its documents, by the budget's passes (80 here:
# few documents), so it is 'fit --refine 80'; the spectral fit alone where it holds only rows
"$J" fit "$T/store" -k 8 -o "$T/fitdef" --threads 2 -q || fail "default fit"
grep -q '"kind": "refined"' "$T/fitdef/summary.json" || fail "the default fit of a documents store is not refined"
cmp -s "$T/fitdef/B.npy" "$T/fitst/B.npy" || fail "the default fit is not fit --refine 80"
# --levels: the refined model's super-topics, fitted from its A (as the fit's are from its own)
"$J" fit "$T/store" -k 8 -o "$T/reflev" --refine 20 --levels 3 --threads 2 -q || fail "fit --refine --levels"
[ -f "$T/reflev/level1/B.npy" ] || fail "fit --refine 20 --levels 3 wrote no level"
[ "$(wc -l <"$T/reflev/level1/vocab.txt")" -eq 8 ] || fail "level1 does not name the 8 topics"
grep -q '^t0:' "$T/reflev/level1/vocab.txt" || fail "level1's topics not named after their anchors"
"$J" fit "$T/rows" -k 8 -o "$T/rowsdef" -q || fail "default fit of a rows store"
grep -q '"kind": "anchor"' "$T/rowsdef/summary.json" || fail "the default fit of a rows store is not the spectral fit"
expect 2 "give one of them" "$J" fit "$T/store" -k 8 -o "$T/fx" --corpus "$T/train.txt" --refine 0 -q
# a --mem the fit cannot keep to: it stops before any work naming what it needs, refined or
# not (a refinement whose thetas do not fit goes on with them in a scratch file:
# tests/cli/fit_memory.sh)
JSMF_TEST_SMALL_MEM=1 expect 1 "give --mem" "$J" fit "$T/store" -k 8 -o "$T/fx" --mem 100K -q
JSMF_TEST_SMALL_MEM=1 expect 1 "give --mem" "$J" fit "$T/store" -k 8 -o "$T/fx" --mem 100K --refine 5 -q
[ ! -e "$T/fx" ] || fail "a fit over --mem wrote a model"

# bad input: nothing written
expect 1 "nope.txt" "$J" refine "$T/fit" --corpus "$T/nope.txt" -o "$T/x" -q
[ ! -e "$T/x" ] || fail "a failed refine wrote its output"
printf 'zzz yyy xxx www vvv\n' >"$T/alien.txt"
expect 1 "no document" "$J" refine "$T/fit" --corpus "$T/alien.txt" -o "$T/x" -q
expect 1 "" "$J" refine "$T/nomodel" --corpus "$T/train.txt" -o "$T/x" -q
expect 2 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/x" --alpha 0 -q
expect 2 "" "$J" refine "$T/fit" -o "$T/x" -q
expect 1 "" "$J" refine "$T/fit" --corpus "$T/train.txt" -o "$T/ref" -q
cmp -s "$T/ref/B.npy" "$T/ref2/B.npy" || fail "a refused refine touched the existing model"
expect 1 "nope.txt" "$J" fit "$T/store" -k 8 -o "$T/fx" --corpus "$T/nope.txt" -q
[ ! -e "$T/fx" ] || fail "fit --corpus with a missing corpus wrote a model"

[ $fails -eq 0 ] && echo "refine_cli: ok"
exit $fails

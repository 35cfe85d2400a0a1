#!/bin/sh
# fdm_init_grown.sh — 'jsmf fdm --init MODEL' after the store's vocabulary has grown: the model's
# words are matched to the store's by string (a model with its rows shuffled and 6 words missing
# gives the run a model in store order with those words missing gives, byte for byte), the words
# it lacks are counted (summary.json parameters.init_new_words) and start at the smoothing floor;
# a model with fewer than half of its words in the store is refused, naming it, nothing written.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-fdm-grown-XXXXXX)
trap 'rm -rf "$T"' EXIT
zstd -dc "$ROOT/examples/kjv-passages.txt.zst" | head -n 800 >"$T/corpus.txt"
"$J" vocab "$T/corpus.txt" -o "$T/vocab.txt" --stopwords en --min-df 10 --max-df-frac 0.5 -q &&
"$J" ingest "$T/store" "$T/corpus.txt" --vocab "$T/vocab.txt" -q || fail "ingest"
"$J" fit "$T/store" -k 5 -o "$T/fit" -q || fail "fit"
"$PYTHON" - "$T" <<'PY' || fail "models over a smaller vocabulary"
import numpy as np, sys, os, shutil
T = sys.argv[1]
lines = open(f"{T}/fit/vocab.txt").readlines()
B = np.load(f"{T}/fit/B.npy")
drop = {3, 10, 17, len(lines) - 1, len(lines) - 2, len(lines) - 3}
keep = [i for i in range(len(lines)) if i not in drop]
Bk = B[keep] / B[keep].sum(0)
perm = np.random.default_rng(5).permutation(len(keep))
for name, order in (("old", list(range(len(keep)))), ("shuffled", perm)):
    d = f"{T}/{name}"; os.makedirs(d)
    open(f"{d}/vocab.txt", "w").writelines(lines[keep[i]] for i in order)
    np.save(f"{d}/B.npy", Bk[order]); shutil.copy(f"{T}/fit/A.npy", d)
d = f"{T}/foreign"; os.makedirs(d)
open(f"{d}/vocab.txt", "w").writelines(lines[:2] + [f"zzq{i}\n" for i in range(5)])
F = np.eye(7)[:, :5] + 0.01; np.save(f"{d}/B.npy", F / F.sum(0)); shutil.copy(f"{T}/fit/A.npy", d)
PY
opts="--device cpu --steps 60 --batch 1024 --eval-every 30 --heldout 2000 --threads 2 -q"
expect 0 "6 words of the input are new to it" "$J" fdm "$T/store" --init "$T/old" -o "$T/a" \
    --device cpu --steps 60 --batch 1024 --eval-every 30 --heldout 2000 --threads 2
"$J" fdm "$T/store" --init "$T/shuffled" -o "$T/b" $opts || fail "fdm --init shuffled"
for f in B.npy A.npy; do cmp -s "$T/a/$f" "$T/b/$f" || fail "words not matched by string ($f)"; done
grep -q '"init_new_words": 6' "$T/a/summary.json" || fail "init_new_words"
expect 1 "foreign: only 2 of the model's 7 words are in the vocabulary" \
    "$J" fdm "$T/store" --init "$T/foreign" -o "$T/c" $opts
[ -e "$T/c" ] && fail "a model was written after the refusal"
exit $fails

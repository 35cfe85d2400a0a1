#!/bin/sh
# tools/bench/infer/run.sh — throughput of 'jsmf infer' and of the 'jsmf eval --corpus' pass, with
# one thread and with all cores, measured in one run: prints documents per second and the
# speedup ratio. Model: K topics (default 100) drawn at random over the kjv curated vocabulary
# (random topics converge more slowly than fitted ones: a pessimistic case for the EM).
# usage: sh tools/bench/infer/run.sh [K]     (needs build/jsmf, /usr/bin/python3 with numpy)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
JSMF=${JSMF:-$root/build/jsmf}
K=${1:-100}
shared=$root/../shared
[ -d "$shared" ] || shared=$root/../../shared   # a worktree one level deeper
corpus=${CORPUS:-$shared/corpora/kjv/kjv.txt.zst}
vocab=${VOCAB:-$shared/corpora/kjv/vocab.kjv.txt}
[ -f "$corpus" ] || corpus=$root/examples/kjv-passages.txt.zst
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -f "$vocab" ]; then cp "$vocab" "$tmp/vocab.txt"; else
    zstd -dc "$corpus" | tr ' ' '\n' | sort | uniq -c | sort -rn | awk 'NR > 50 && NR <= 4050 {print $2}' >"$tmp/vocab.txt"; fi
/usr/bin/python3 - "$tmp" "$K" <<'PY'
import sys, numpy as np
d, K = sys.argv[1], int(sys.argv[2])
N = sum(1 for _ in open(d + "/vocab.txt"))
rng = np.random.default_rng(0)
B = rng.random((N, K)) ** 8; B /= B.sum(0)
import os; os.makedirs(d + "/m")
np.save(d + "/m/B.npy", B); np.save(d + "/m/A.npy", np.full((K, K), 1.0 / K / K))
os.replace(d + "/vocab.txt", d + "/m/vocab.txt")
PY
docs=$(zstd -dc "$corpus" | wc -l)
cores=$(nproc)
secs() { s=$(date +%s.%N); "$@" >/dev/null 2>&1; awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }
i1=$(secs "$JSMF" infer "$tmp/m" "$corpus" --threads 1 -q)
iN=$(secs "$JSMF" infer "$tmp/m" "$corpus" --threads "$cores" -q)
e1=$(secs "$JSMF" eval "$tmp/m" --corpus "$corpus" --threads 1 -q)
eN=$(secs "$JSMF" eval "$tmp/m" --corpus "$corpus" --threads "$cores" -q)
awk -v d="$docs" -v k="$K" -v c="$cores" -v i1="$i1" -v iN="$iN" -v e1="$e1" -v eN="$eN" 'BEGIN {
    printf "corpus: %d documents, K=%d, %d cores\n", d, k, c
    printf "infer:        1 thread %8.0f docs/s   %d threads %8.0f docs/s   speedup %.2fx\n", d / i1, c, d / iN, i1 / iN
    printf "eval corpus:  1 thread %8.0f docs/s   %d threads %8.0f docs/s   speedup %.2fx\n", d / e1, c, d / eN, e1 / eN }'

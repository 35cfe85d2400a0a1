#!/bin/sh
# model_lineage.sh — topics keep their names across refits of the spectral fit (issue 34; --refine 0:
# the refined nightly loop is tests/py/test_nightly_loop.py's): kjv cut 90/10, day 2 fitted
# after day 1 (fit --previous) keeps the index of every topic within l1 0.5 of a day-1 topic,
# and is the cold fit with its topics permuted (B, A, alpha, anchors, level1 alike); with --warm
# it starts from day 1's c_factor.npy (eig_start "previous"; on this small store within mean l1
# 0.05 of the cold fit), the same model from a copy of day 1 whose words are in another order and
# lack a few (mapped by string), and a bad factor is refused; a permuted
# copy of a model is renumbered back exactly, a planted new topic is new and removed ones
# retired (another K); jsmf diff agrees with the recorded lineage in text, TSV and JSON and
# lists new words with their topics; bad previous models fail naming them and write nothing.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-lineage-XXXXXX)
trap 'rm -rf "$T"' EXIT

K=${JSMF_CORPORA:-/work/shared/corpora}/kjv
[ -f "$K/kjv.txt.zst" ] || { echo "kjv corpus not found"; exit 77; }
zstd -dc "$K/kjv.txt.zst" >"$T/all.txt"
n=$(wc -l <"$T/all.txt"); h=$((n * 9 / 10))
head -n "$h" "$T/all.txt" >"$T/d1.txt"
tail -n +"$((h + 1))" "$T/all.txt" >"$T/d2.txt"
"$J" vocab "$T/d1.txt" -o "$T/v.txt" --max-words 1500 -q || fail "vocab"
"$J" ingest "$T/s1" "$T/d1.txt" --vocab "$T/v.txt" -q || fail "ingest day 1"
"$J" fit "$T/s1" -k 20 --refine 0 --levels 4 -o "$T/m1" -q || fail "fit day 1"
cp -r "$T/s1" "$T/s2"
"$J" ingest "$T/s2" "$T/d2.txt" -q || fail "ingest day 2"
"$J" fit "$T/s2" -k 20 --refine 0 --levels 4 -o "$T/cold" -q || fail "cold fit day 2"
expect 0 "lineage: .* topics continue a topic of" \
    "$J" fit "$T/s2" -k 20 --refine 0 --levels 4 -o "$T/m2" --previous "$T/m1"
expect 0 "passes over C from the previous model" \
    "$J" fit "$T/s2" -k 20 --refine 0 --levels 4 -o "$T/w2" --previous "$T/m1" --warm
# day 1 with its words shuffled and the last 3 missing: the same warm start, word by word
"$PYTHON" - "$T" <<'PY' || fail "shuffled day-1 model"
import numpy as np, sys, os, shutil
T = sys.argv[1]; d = f"{T}/m1s"; os.makedirs(d)
lines = open(f"{T}/m1/vocab.txt").readlines()
keep = np.random.default_rng(3).permutation(len(lines) - 3)
open(f"{d}/vocab.txt", "w").writelines(lines[i] for i in keep)
B = np.load(f"{T}/m1/B.npy")[:-3]; B /= B.sum(0)  # the same B as m1t's, in another order
np.save(f"{d}/B.npy", B[keep]); np.save(f"{d}/c_factor.npy", np.load(f"{T}/m1/c_factor.npy")[keep])
shutil.copy(f"{T}/m1/A.npy", d)
PY
"$J" fit "$T/s2" -k 20 --refine 0 --levels 4 -o "$T/w2s" --previous "$T/m1s" --warm -q || fail "warm fit after the shuffled model"
"$PYTHON" - "$T" <<'PY' || fail "warm start checks"
import numpy as np, sys, os, shutil
T = sys.argv[1]; d = f"{T}/m1t"; os.makedirs(d)
lines = open(f"{T}/m1/vocab.txt").readlines()
open(f"{d}/vocab.txt", "w").writelines(lines[:-3])
B = np.load(f"{T}/m1/B.npy")[:-3]; B /= B.sum(0)
np.save(f"{d}/B.npy", B); np.save(f"{d}/c_factor.npy", np.load(f"{T}/m1/c_factor.npy")[:-3])
shutil.copy(f"{T}/m1/A.npy", d)
PY
"$J" fit "$T/s2" -k 20 --refine 0 --levels 4 -o "$T/w2t" --previous "$T/m1t" --warm -q || fail "warm fit after the truncated model"
for f in B.npy A.npy anchors.txt; do
    cmp -s "$T/w2s/$f" "$T/w2t/$f" || fail "warm start: words not mapped by string ($f)"
done
"$PYTHON" - "$T" <<'PY' || fail "warm fit vs cold fit"
import numpy as np, sys, json, itertools
T = sys.argv[1]
s = json.load(open(f"{T}/w2/summary.json"))
ok = s["eig_start"] == "previous"
B, Bc = np.load(f"{T}/w2/B.npy"), np.load(f"{T}/cold/B.npy")
D = np.abs(B[:, :, None] - Bc[:, None, :]).sum(0)
# minimum-cost matching, greedy on the sorted costs is an upper bound of the optimum's mean
used_r, used_c, cost = set(), set(), []
for e in np.argsort(D, axis=None):
    r, c = divmod(int(e), D.shape[1])
    if r not in used_r and c not in used_c:
        used_r.add(r); used_c.add(c); cost.append(D[r, c])
m = float(np.mean(cost))
print(f"kjv day 2 K=20: warm fit within mean l1 {m:.4f} of the cold fit")
if not ok or m > 0.05:
    print("FAIL: warm start", s["eig_start"], s["rectify_trace"][0]["eig_passes"], m); sys.exit(1)
PY

# planted: m1 permuted (p), with topic 3 replaced by a spike on one word and a 21st spike topic
"$PYTHON" - "$T" <<'PY' || fail "planted models"
import numpy as np, sys, os, shutil
T = sys.argv[1]
B = np.load(f"{T}/m1/B.npy"); N, K = B.shape
perm = np.random.default_rng(7).permutation(K)
for name, k2 in (("p", K), ("q", K + 1)):
    d = f"{T}/{name}"; os.makedirs(d)
    shutil.copy(f"{T}/m1/vocab.txt", d)
    Bp = B[:, perm].copy()
    if name == "q":
        Bp[:, 3] = 0; Bp[N - 1, 3] = 1          # no topic is near it: retired
        extra = np.zeros((N, 1)); extra[N - 2, 0] = 1
        Bp = np.hstack([Bp, extra])              # another K: retired too
    np.save(f"{d}/B.npy", Bp)
np.save(f"{T}/perm.npy", perm)
PY
"$J" fit "$T/s1" -k 20 --refine 0 -o "$T/back" --previous "$T/p" -q || fail "fit after the permuted copy"
"$J" fit "$T/s1" -k 20 --refine 0 -o "$T/plant" --previous "$T/q" -q || fail "fit after the planted model"

"$PYTHON" - "$T" <<'PY' || fail "lineage checks"
import numpy as np, sys, json
T = sys.argv[1]
def model(d):
    w = [l.split("\t")[0].rstrip("\n") for l in open(f"{d}/vocab.txt") if not l.startswith("#")]
    return w, np.load(f"{d}/B.npy")
def l1(a, b):  # previous x new, over the union of the words, absent = 0
    (wa, Ba), (wb, Bb) = a, b
    U = {w: i for i, w in enumerate(sorted(set(wa) | set(wb)))}
    X = np.zeros((len(U), Ba.shape[1])); X[[U[w] for w in wa]] = Ba
    Y = np.zeros((len(U), Bb.shape[1])); Y[[U[w] for w in wb]] = Bb
    return np.abs(X[:, :, None] - Y[:, None, :]).sum(0)
bad = 0
def check(cond, msg):
    global bad
    if not cond: print("FAIL:", msg); bad += 1
m1, cold, m2 = model(f"{T}/m1"), model(f"{T}/cold"), model(f"{T}/m2")
D = l1(m1, m2); near = np.where(D.min(0) <= 0.5)[0]
kept = [t for t in near if D[t, t] <= 0.5]
Dc = l1(m1, cold); keptc = sum(1 for t in np.where(Dc.min(0) <= 0.5)[0] if Dc[t, t] <= 0.5)
print(f"kjv 90/10 K=20: {len(near)} topics within l1 0.5 of a day-1 topic; keep their index: "
      f"{keptc} cold, {len(kept)} with --previous")
check(len(kept) == len(near) and len(near) > 0, "a continuing topic lost its index")
lin = json.load(open(f"{T}/m2/summary.json"))["lineage"]
check(lin["previous"]["k"] == 20 and lin["threshold"] == 0.5, "lineage header")
for r in lin["topics"]:
    t, p = r["topic"], r["previous"]
    if p is None:
        check(r["status"] == "new" and (r["l1"] is None or r["l1"] > 0.5), f"topic {t} new")
    else:
        check(p == t and abs(D[p, t] - r["l1"]) < 1e-9, f"topic {t}: previous {p} l1 {r['l1']}")
cont = {r["previous"] for r in lin["topics"] if r["previous"] is not None}
check(sorted(set(range(20)) - cont) == lin["retired"], "retired list")
# m2 is the cold fit renumbered: one permutation for B, A, alpha, anchors, level1
Bc, B2 = cold[1], m2[1]
perm = [int(np.argmin(np.abs(Bc - B2[:, [i]]).sum(0))) for i in range(20)]
check(sorted(perm) == list(range(20)) and np.array_equal(B2, Bc[:, perm]), "B permuted")
A2, Ac = np.load(f"{T}/m2/A.npy"), np.load(f"{T}/cold/A.npy")
check(np.array_equal(A2, Ac[np.ix_(perm, perm)]), "A permuted")
check(np.array_equal(np.load(f"{T}/m2/alpha.npy"), np.load(f"{T}/cold/alpha.npy")[perm]), "alpha")
anc = lambda d: [l.split("\t")[1:] for l in open(f"{d}/anchors.txt") if not l.startswith("#")]
check([anc(f"{T}/cold")[p] for p in perm] == anc(f"{T}/m2"), "anchors permuted")
L2, Lc = np.load(f"{T}/m2/level1/B.npy"), np.load(f"{T}/cold/level1/B.npy")
check(np.array_equal(L2, Lc[perm]), "level1 rows permuted")
# the permuted copy is renumbered back exactly; the planted model: topic 3 new, 3 and 20 retired
check(np.array_equal(np.load(f"{T}/back/B.npy"), np.load(f"{T}/p/B.npy")), "renumbered back")
lp = json.load(open(f"{T}/plant/summary.json"))["lineage"]
new = [r["topic"] for r in lp["topics"] if r["status"] == "new"]
check(new == [3] and lp["retired"] == [3, 20] and lp["previous"]["k"] == 21,
      f"planted: new {new} retired {lp['retired']}")
check(np.array_equal(np.delete(np.load(f"{T}/plant/B.npy"), 3, 1),
                     np.delete(np.load(f"{T}/p/B.npy"), 3, 1)), "planted: the others keep theirs")
sys.exit(bad)
PY

# jsmf diff: the recorded lineage, and the same matching computed from the cold fit
expect 0 "" "$J" diff "$T/m1" "$T/m2"
head -n 1 "$T/out" | grep -q "lineage recorded" || fail "diff does not use the recorded lineage"
"$J" diff "$T/m1" "$T/m2" -f json >"$T/rec.json" || fail "diff json"
"$J" diff "$T/m1" "$T/cold" -f json >"$T/cold.json" || fail "diff json (computed)"
"$J" diff "$T/m1" "$T/m2" -f tsv >"$T/d.tsv" || fail "diff tsv"
"$PYTHON" - "$T" <<'PY' || fail "diff checks"
import numpy as np, sys, json
T = sys.argv[1]
rec, cold = json.load(open(f"{T}/rec.json")), json.load(open(f"{T}/cold.json"))
bad = 0
def check(cond, msg):
    global bad
    if not cond: print("FAIL:", msg); bad += 1
check(rec["lineage"] == "recorded" and cold["lineage"] == "computed", "lineage sources")
pairs = lambda d: sorted((t["previous"], round(t["l1"], 9)) for t in d["topics"]
                         if t["status"] == "continuing")
check(pairs(rec) == pairs(cold), "recorded and computed lineages differ")
pz, pz1 = np.load(f"{T}/m2/A.npy").sum(1), np.load(f"{T}/m1/A.npy").sum(1)
B2, B1 = np.load(f"{T}/m2/B.npy"), np.load(f"{T}/m1/B.npy")
w = {l.split("\t")[0].rstrip("\n"): i for i, l in enumerate(open(f"{T}/m1/vocab.txt"))}
for t in rec["topics"]:
    if t["status"] != "continuing":
        continue
    k, p = t["topic"], t["previous"]
    check(abs(t["size"] - pz[k]) < 1e-12 and abs(t["size_previous"] - pz1[p]) < 1e-12, "sizes")
    d = B2[:, k] - B1[:, p]
    top = [x["word"] for x in t["rising"]]
    check([w[x] for x in top] == list(np.argsort(-d, kind="stable")[:len(top)]), f"rising {k}")
    check(all(abs(x["after"] - x["before"] - d[w[x["word"]]]) < 1e-12 for x in t["falling"]),
          f"falling {k}")
rows = open(f"{T}/d.tsv").read().splitlines()
check(rows[0].split("\t")[:3] == ["status", "topic", "previous"], "tsv header")
check(len(rows) == 1 + 20 + rec["retired"], "tsv rows")
check(rec["continuing"] + rec["new"] == 20 and rec["oov_share"] is None, "json counts")
sys.exit(bad)
PY

# new words: OLD without the last 5 words of the vocabulary
"$PYTHON" - "$T" <<'PY' || fail "model without 5 words"
import numpy as np, sys, os
T = sys.argv[1]; os.makedirs(f"{T}/short")
B = np.load(f"{T}/m1/B.npy")[:-5]; np.save(f"{T}/short/B.npy", B / B.sum(0))
open(f"{T}/short/vocab.txt", "w").writelines(open(f"{T}/m1/vocab.txt").readlines()[:-5])
PY
"$J" diff "$T/short" "$T/m1" -f json >"$T/nw.json" || fail "diff with new words"
"$PYTHON" - "$T" <<'PY' || fail "new words"
import numpy as np, sys, json
T = sys.argv[1]; d = json.load(open(f"{T}/nw.json"))
B, pz = np.load(f"{T}/m1/B.npy"), np.load(f"{T}/m1/A.npy").sum(1)
words = [l.split("\t")[0].rstrip("\n") for l in open(f"{T}/m1/vocab.txt")]
got = {x["word"]: x["topic"] for x in d["new_words"]}
want = {words[i]: int(np.argmax(B[i] * pz)) for i in range(len(words) - 5, len(words))}
if got != want: print("FAIL: new words", got, want); sys.exit(1)
PY

# bad previous models: named, exit 1, nothing written
expect 1 "nothere" "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x1" --previous "$T/nothere"
mkdir "$T/corrupt" && cp "$T/m1/vocab.txt" "$T/corrupt/" && head -c 100 "$T/m1/B.npy" >"$T/corrupt/B.npy"
expect 1 "corrupt/B.npy" "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x2" --previous "$T/corrupt"
mkdir "$T/other" && printf 'zzqa\nzzqb\n' >"$T/other/vocab.txt"
"$PYTHON" -c "import numpy as np; np.save('$T/other/B.npy', np.eye(2))"
expect 1 "other: only 0 of the previous model's 2 words are in the vocabulary" \
    "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x3" --previous "$T/other"
# a model of another store: 2 of its 5 words in common
mkdir "$T/few" && { head -n 2 "$T/m1/vocab.txt"; printf 'zzqa\nzzqb\nzzqc\n'; } >"$T/few/vocab.txt"
"$PYTHON" -c "import numpy as np; np.save('$T/few/B.npy', np.eye(5)[:, :2])"
expect 1 "few: only 2 of the previous model's 5 words" \
    "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x4" --previous "$T/few"
# a corrupt factor: cut short, and one of another row count
cp -r "$T/m1" "$T/badf" && head -c 200 "$T/m1/c_factor.npy" >"$T/badf/c_factor.npy"
expect 1 "badf/c_factor.npy: damaged" "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x5" --previous "$T/badf" --warm
cp -r "$T/m1" "$T/badg" && rm "$T/badg/MANIFEST" # changed by hand: its shape is what is checked
"$PYTHON" -c "import numpy as np; np.save('$T/badg/c_factor.npy', np.ones((7, 20)))"
expect 1 "badg/c_factor.npy: shape (7, 20)" "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x6" --previous "$T/badg" --warm
# another K: the planted 21-topic model (no A.npy, no factor) starts the fit from its B
expect 0 "passes over C from the previous model" \
    "$J" fit "$T/s1" -k 20 --refine 0 -o "$T/x7" --previous "$T/q" --warm
for x in x1 x2 x3 x4 x5 x6; do [ -e "$T/$x" ] && fail "$x written after an error"; done
ls "$T" | grep -q tmp- && fail "debris of a failed fit"
expect 1 "nothere" "$J" diff "$T/m1" "$T/nothere"
expect 1 "no word in common" "$J" diff "$T/other" "$T/m1"
expect 2 "" "$J" diff "$T/m1"
exit $fails

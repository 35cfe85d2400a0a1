#!/bin/sh
# model_topics.sh — 'jsmf topics' on a synth ground-truth model: the planted anchors are printed
# on their own topics in text, tsv and json; json carries A and alpha exactly; --matrix, --level,
# usage errors (exit 2), bad models and a full stdout (exit 1).
set -u
JSMF=${JSMF:-build/jsmf}
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=${ROOT:-$(pwd)}
"$PYTHON" -c 'import numpy' 2>/dev/null || { echo "numpy not available"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PYTHON" "$ROOT/tools/synth/synth.py" -o "$T/c.txt" --truth "$T/m" --vocab 300 --topics 6 \
    --docs 20 --mix lda-asym --seed 7 2>/dev/null || fail "synth"

# text: every anchor word sits in the anchor column of its topic's line
"$JSMF" topics "$T/m" --top 5 > "$T/text" || fail "topics text exit $?"
head -1 "$T/text" | grep -q "truth model, 6 topics over 300 words" || fail "text header: $(head -1 "$T/text")"
[ "$(wc -l < "$T/text")" -eq 8 ] || fail "text: expected 8 lines"
while IFS='	' read -r k id word; do
    awk -v k="$k" -v w="$word" '$1 == k && $3 == w { found = 1 } END { exit !found }' "$T/text" \
        || fail "text: anchor $word not on topic $k"
done < "$T/m/anchors.txt"

# tsv: header, one row per topic, anchor column, exactly --top words
"$JSMF" topics "$T/m" --format tsv --top 4 > "$T/tsv" || fail "topics tsv"
[ "$(head -1 "$T/tsv")" = "$(printf 'topic\tsize\talpha\tanchor\ttop_words')" ] || fail "tsv header"
[ "$(wc -l < "$T/tsv")" -eq 7 ] || fail "tsv rows"
while IFS='	' read -r k id word; do
    awk -F'\t' -v k="$k" -v w="$word" '$1 == k && $4 == w && split($5, a, " ") == 4 { f = 1 }
        END { exit !f }' "$T/tsv" || fail "tsv: topic $k anchor $word"
done < "$T/m/anchors.txt"

# json: parses; anchors, sizes, probabilities, A and alpha agree with the numpy files
"$JSMF" topics "$T/m" --format json --top 7 --rank prob > "$T/json" || fail "topics json"
"$PYTHON" - "$T/m" "$T/json" <<'PY' || fail "json content"
import json, sys
import numpy as np
m, out = sys.argv[1], json.load(open(sys.argv[2]))
B, A, alpha = np.load(m + "/B.npy"), np.load(m + "/A.npy"), np.load(m + "/alpha.npy")
vocab = [l.rstrip("\n").split("\t")[0] for l in open(m + "/vocab.txt")]
anchors = [l.rstrip("\n").split("\t") for l in open(m + "/anchors.txt")]
assert out["kind"] == "truth" and out["k"] == 6 and out["n_words"] == 300, out
assert np.array_equal(np.array(out["A"]), A), "A differs"
assert np.array_equal(np.array(out["alpha"]), alpha), "alpha differs"
for t, topic in enumerate(out["topics"]):
    assert topic["topic"] == t
    assert topic["anchor"]["word"] == anchors[t][2] and topic["anchor"]["id"] == int(anchors[t][1])
    assert abs(topic["size"] - A[t].sum()) < 1e-15
    ws = topic["words"]
    assert len(ws) == 7
    ps = [w["p"] for w in ws]
    assert ps == sorted(ps, reverse=True), ps
    assert all(vocab[w["id"]] == w["word"] and w["p"] == B[w["id"], t] for w in ws)
    assert ps[0] == B[:, t].max()
    # the anchor is as probable as the top word, so it is among the first two
    assert anchors[t][2] in [w["word"] for w in ws[:2]]
assert abs(sum(t["size"] for t in out["topics"]) - 1) < 1e-12
PY

# the default ranking: relevance 0.7 log p(w|z) + 0.3 log(p(w|z) / p(w)), p(w) = B A 1
"$JSMF" topics "$T/m" --format json --top 7 > "$T/jsonr" || fail "topics json (relevance)"
"$JSMF" topics "$T/m" --format json --top 7 --rank relevance:0.2 > "$T/jsonr2" || fail "relevance:0.2"
"$PYTHON" - "$T/m" "$T/jsonr" 0.7 "$T/jsonr2" 0.2 <<'PY' || fail "relevance ranking"
import json, sys
import numpy as np
m = sys.argv[1]
B, A = np.load(m + "/B.npy"), np.load(m + "/A.npy")
pw = B @ A.sum(1)
for path, lam in ((sys.argv[2], float(sys.argv[3])), (sys.argv[4], float(sys.argv[5]))):
    out = json.load(open(path))
    assert out["rank_lambda"] == lam
    for t, topic in enumerate(out["topics"]):
        with np.errstate(divide="ignore"):
            r = np.where(B[:, t] > 0, lam * np.log(B[:, t]) + (1 - lam) * np.log(B[:, t] / pw), -np.inf)
        want = sorted(range(len(r)), key=lambda i: (-r[i], i))[:7]
        got = [w["id"] for w in topic["words"]]
        assert got == want or np.allclose(r[got], r[want], rtol=1e-12), (lam, t, got, want)
PY

# --matrix as tsv is A to the last bit
"$JSMF" topics "$T/m" --matrix --format tsv > "$T/matrix" || fail "--matrix"
"$PYTHON" -c "
import numpy as np, sys
a = np.loadtxt('$T/matrix', delimiter='\t'); A = np.load('$T/m/A.npy')
sys.exit(0 if a.shape == A.shape and np.array_equal(a, A) else 1)" || fail "--matrix values"
"$JSMF" topics "$T/m" --matrix | grep -q "^    5 " || fail "--matrix text"

# a hierarchy level: super-topics over the 6 topics
"$PYTHON" - "$T/m" <<'PY' || fail "make level"
import numpy as np, os, sys
d = sys.argv[1] + "/level1"; os.mkdir(d)
B = np.zeros((6, 2)); B[:3, 0] = 1 / 3; B[3:, 1] = 1 / 3
np.save(d + "/B.npy", B); np.save(d + "/A.npy", np.array([[0.4, 0.1], [0.1, 0.4]]))
open(d + "/vocab.txt", "w").write("".join("t%d\n" % i for i in range(6)))
open(d + "/anchors.txt", "w").write("0\t2\tt2\n1\t4\tt4\n")
PY
# a level added by hand is none of the files synth's MANIFEST lists: refused until it goes
if [ -f "$T/m/MANIFEST" ]; then
    "$JSMF" topics "$T/m" --level 1 >/dev/null 2>"$T/err" && fail "a level MANIFEST does not list was read"
    grep -q "level1/.*: not in .*MANIFEST" "$T/err" || fail "unlisted level: $(cat "$T/err")"
    rm "$T/m/MANIFEST"
fi
"$JSMF" topics "$T/m" --level 1 --top 3 > "$T/level" || fail "--level 1"
grep -q "level 1: jsmf model, 2 topics over 6 topics" "$T/level" || fail "level header: $(head -1 "$T/level")"
grep -Eq "^ +1 +50.00% +t4 +t3 t4 t5$" "$T/level" || fail "level topic 1: $(cat "$T/level")"
"$JSMF" topics "$T/m" --format json | "$PYTHON" -c "import json,sys; assert json.load(sys.stdin)['levels'] == 1" \
    || fail "json levels"

# usage errors exit 2, with a hint on stderr
"$JSMF" topics --help > "$T/help" || fail "--help exit"
grep -q "usage: jsmf topics MODEL" "$T/help" || fail "--help text"
"$JSMF" topics 2>/dev/null; [ $? -eq 2 ] || fail "no MODEL should exit 2"
"$JSMF" topics "$T/m" --bogus 2>"$T/err"; [ $? -eq 2 ] || fail "unknown option should exit 2"
grep -q "unknown option '--bogus'" "$T/err" || fail "unknown option message"
"$JSMF" topics "$T/m" --format xml 2>/dev/null; [ $? -eq 2 ] || fail "bad --format should exit 2"
"$JSMF" topics "$T/m" --top x 2>/dev/null; [ $? -eq 2 ] || fail "bad --top should exit 2"

# data errors exit 1 and name the problem
"$JSMF" topics "$T/m" --level 2 2>"$T/err"; [ $? -eq 1 ] || fail "--level 2 should exit 1"
grep -q "no level 2" "$T/err" || fail "level message: $(cat "$T/err")"
"$JSMF" topics "$T/nothere" 2>"$T/err"; [ $? -eq 1 ] || fail "missing model should exit 1"
grep -q "nothere" "$T/err" || fail "missing model message"
"$PYTHON" -c "
import numpy as np
B = np.load('$T/m/B.npy'); B[0, 3] += 0.01; np.save('$T/m/B.npy', B)" || fail "damage"
"$JSMF" topics "$T/m" 2>"$T/err"; [ $? -eq 1 ] || fail "damaged B should exit 1"
grep -q "B.npy: column 3 sums to" "$T/err" || fail "damaged B message: $(cat "$T/err")"
"$PYTHON" -c "
import numpy as np
B = np.load('$T/m/B.npy'); B[0, 3] -= 0.01; np.save('$T/m/B.npy', B)"

# a model without anchors and alpha (as fdm writes): no anchor column, json null
cp -r "$T/m" "$T/f" && rm -r "$T/f/anchors.txt" "$T/f/alpha.npy" "$T/f/level1"
"$JSMF" topics "$T/f" --top 2 > "$T/text" || fail "no-anchor text"
[ "$(sed -n 2p "$T/text")" = "topic    size  top words" ] || fail "no-anchor header: $(sed -n 2p "$T/text")"
"$JSMF" topics "$T/f" --format tsv | awk -F'\t' 'NR > 1 && ($3 != "" || $4 != "") { bad = 1 } END { exit bad }' \
    || fail "no-anchor tsv"
"$JSMF" topics "$T/f" --format json | "$PYTHON" -c "
import json, sys
o = json.load(sys.stdin)
assert o['alpha'] is None and all(t['anchor'] is None and 'alpha' not in t for t in o['topics'])" \
    || fail "no-anchor json"

# a full disk on stdout is an error, not silence
if [ -w /dev/full ]; then
    "$JSMF" topics "$T/m" > /dev/full 2>"$T/err"; [ $? -eq 1 ] || fail "/dev/full should exit 1"
fi
echo "ok"

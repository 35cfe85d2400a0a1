#!/bin/sh
# eval_report_chromium.sh — the HTML report renders in a real browser: headless Chromium loads the
# page of a model with a hierarchy (and of one with 120 topics, whose heatmap is a canvas), logs
# no console message (no script error, no blocked request), draws the topic cards, the heatmap
# and the word map, and keeps a screenshot in $BUILD/report-screenshot.png. In the rendered DOM:
# the default title names the model directory and its store; no "[object Object]" (summary
# arrays of objects such as rectify_trace, eval's matching); every number cell and statistic in
# the one number format; the correlated pairs listed are exactly those above independence (A is
# independence plus two planted pairs); every anchor has a label, and no two labels' drawn boxes
# overlap or leave the plot. Installs Debian's chromium when missing; skips (77) only if it
# cannot be installed. A model fitted after a previous one shows its lineage (every topic and the
# retired ones, with the sizes before).
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
BUILD_ABS=$(cd "$BUILD" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
    echo "installing chromium (one time)..." >&2
    { $SUDO apt-get install -y -qq chromium || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium; }; } >"$tmp/apt.log" 2>&1
    if ! command -v chromium >/dev/null 2>&1; then
        tail -n 3 "$tmp/apt.log" >&2
        echo "chromium is not installed and apt-get install chromium failed (no root or no network)"
        exit 77
    fi
fi

# A model with 2 levels (12 topics, 3 super-topics) written the way formats/model.md says.
"$PYTHON" - "$tmp/model" <<'PY' || exit 1
import json, os, sys
import numpy as np
d = sys.argv[1]; rng = np.random.default_rng(7)
N, K, K2 = 500, 12, 3
words = ["w%03d" % i for i in range(N)]
words[5] = "a<b>&\"c"
B = rng.random((N, K)) ** 6
anchors = [20 * k + 1 for k in range(K)]
for k, a in enumerate(anchors):
    B[a, :] = 0; B[a, k] = 3.0
B /= B.sum(0)
# A = p p^T (independent topics) plus two planted pairs, 0-1 and 2-3, with the row sums kept
p = rng.random(K) + 0.5; p /= p.sum()
A = np.outer(p, p)
for a, b in ((0, 1), (2, 3)):
    e = 0.3 * min(p[a], p[b]) ** 2
    A[a, b] += e; A[b, a] += e; A[a, a] -= e; A[b, b] -= e
def save(path, B, A, vocab, anchors, summary):
    os.makedirs(path)
    np.save(os.path.join(path, "B.npy"), B); np.save(os.path.join(path, "A.npy"), A)
    open(os.path.join(path, "vocab.txt"), "w").write("".join(w + "\n" for w in vocab))
    open(os.path.join(path, "anchors.txt"), "w").write("".join("%d\t%d\t%s\n" % (k, a, vocab[a]) for k, a in enumerate(anchors)))
    json.dump(summary, open(os.path.join(path, "summary.json"), "w"))
save(d, B, A, words, anchors, {"format": "jsmf-model", "version": 1, "kind": "anchor", "k": K, "n_words": N,
     "parameters": {"input": "ignored-when-store-is-set", "rectify": "ap", "levels": [K, K2]},
     "store": {"path": "/data/kjv-store/", "docs": 3215},
     "rectify_trace": [{"delta": 0.5, "shift": 1.5e-05, "neg_frac": 0.25}, {"delta": 0.01234567, "shift": 2e-06, "neg_frac": 0.125}],
     "metrics": {"dominancy": 0.4582361, "note": "</script><i>", "tokens": 1234567}})
json.dump({"l1_error": 0.123456789, "matching": [{"truth": 0, "est": 3, "l1": 0.25}, {"truth": 1, "est": 0, "l1": 0.0001}],
           "coherence_per_topic": [-1.5, -2.25, -3.125]}, open(os.path.join(os.path.dirname(d), "metrics.json"), "w"))
B2 = rng.random((K, K2)) ** 3; B2[0, :] = 0; B2[0, 0] = 1; B2[3, :] = 0; B2[3, 1] = 1; B2[7, :] = 0; B2[7, 2] = 1
B2 /= B2.sum(0)
A2 = rng.random((K2, K2)); A2 = A2 + A2.T; A2 /= A2.sum()
save(os.path.join(d, "level1"), B2, A2, ["t%d:%s" % (k, words[a]) for k, a in enumerate(anchors)], [0, 3, 7],
     {"format": "jsmf-model", "version": 1, "kind": "level", "k": K2, "n_words": K, "level": 1})
PY

page=$tmp/report.html
"$JSMF" report "$tmp/model" -o "$page" --title "browser test" || { echo "jsmf report failed"; exit 1; }
grep -q "https\?://[a-z]" "$page" && grep -v "http://www.w3.org/2000/svg" "$page" | grep -q "https\?://" \
    && { echo "the page references the network"; exit 1; }

chrome() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$page" >"$tmp/dom.html" 2>"$tmp/console.log"
rc=$?
[ $rc -eq 0 ] || { echo "chromium --dump-dom exited $rc"; tail -n 20 "$tmp/console.log"; exit 1; }
if grep -q "CONSOLE" "$tmp/console.log"; then
    echo "console messages while loading the report:"; grep "CONSOLE" "$tmp/console.log"; exit 1
fi
# The script ran: the drawn elements exist in the DOM.
for needle in 'id="topic-0"' 'class="topic"' '<rect' '<circle' 'Most correlated topic pairs'; do
    grep -q "$needle" "$tmp/dom.html" || { echo "the rendered page lacks $needle"; exit 1; }
done
grep -q 'Super-topic 2' "$tmp/dom.html" || { echo "the hierarchy was not drawn"; exit 1; }
grep -q 'a&lt;b&gt;&amp;"c' "$tmp/dom.html" || { echo "escaped word missing"; exit 1; }

# The page without --title, with eval's metrics: what a user sees by default.
"$JSMF" report "$tmp/model" -o "$tmp/plain.html" --metrics "$tmp/metrics.json" -q || { echo "jsmf report failed"; exit 1; }
chrome --dump-dom "file://$tmp/plain.html" >"$tmp/plain-dom.html" 2>"$tmp/plain-console.log"
if grep -q "CONSOLE" "$tmp/plain-console.log"; then
    echo "console messages (default title):"; grep "CONSOLE" "$tmp/plain-console.log"; exit 1
fi
"$PYTHON" - "$tmp/plain-dom.html" <<'PY' || exit 1
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
bad = []
title = re.search(r"<title>([^<]*)</title>", dom).group(1)
if title != "model: 12 topics from kjv-store":
    bad.append("title %r, want 'model: 12 topics from kjv-store'" % title)
if "[object Object]" in dom or "object Object" in dom:
    bad.append("'[object Object]' in the page")
# One number format: integers grouped by thousands, others 4 significant digits, exponent form
# only below 1e-4.
def well_formed(t):
    t = t.strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})*", t):
        return True
    if re.fullmatch(r"-?\d\.\d{3}e-\d+", t):
        return True
    if re.fullmatch(r"-?\d+\.\d+", t):
        return len(t.lstrip("-").replace(".", "").lstrip("0")) == 4
    return False
cells = re.findall(r'<td class="num">([^<]*)</td>', dom) + re.findall(r'<div class="stat"><b>([^<]*)</b>', dom)
if len(cells) < 10:
    bad.append("only %d number cells found" % len(cells))
bad += ["number %r is not in the page's format" % c for c in cells if not well_formed(html.unescape(c))]
for needle in ("1,234,567", "0.4582", "1.500e-5", "0.1235"):
    if ">%s<" % needle not in dom:
        bad.append("expected the number %s in the page" % needle)
# Correlated pairs: exactly the planted ones.
pairs = re.search(r'<div id="pairs">(.*?)</div>', dom, re.S).group(1)
listed = re.findall(r"<tr><td>(\d+) – (\d+)</td>", pairs)
if sorted(listed) != [("0", "1"), ("2", "3")]:
    bad.append("correlated pairs listed %s, want 0-1 and 2-3 only" % listed)
# Anchor labels: one per anchor, drawn boxes inside the 1180 x 720 plot and disjoint.
boxes = [tuple(map(float, b.split())) for b in re.findall(r'class="anchor-label"[^>]*data-box="([^"]+)"', dom)]
if len(boxes) != 12:
    bad.append("%d anchor labels drawn, want 12" % len(boxes))
for i, (x, y, w, h) in enumerate(boxes):
    if x < 0 or y < 0 or x + w > 1180 or y + h > 720:
        bad.append("label %d box %s leaves the plot" % (i, (x, y, w, h)))
    for j in range(i):
        X, Y, W, H = boxes[j]
        if x < X + W and X < x + w and y < Y + H and Y < y + h:
            bad.append("labels %d and %d overlap: %s %s" % (j, i, boxes[j], (x, y, w, h)))
if bad:
    print("\n".join(bad)); sys.exit(1)
print("default page: title, numbers, pairs and %d anchor labels as they should be" % len(boxes))
PY
# Many topics: the heatmap is drawn on a canvas (one pixel per cell) instead of K^2 SVG cells.
"$PYTHON" - "$tmp/big" <<'PY' || exit 1
import os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d); rng = np.random.default_rng(3)
N, K = 400, 120
B = rng.random((N, K)) ** 8; B /= B.sum(0)
A = rng.random((K, K)); A = A + A.T; A /= A.sum()
np.save(d + "/B.npy", B); np.save(d + "/A.npy", A)
open(d + "/vocab.txt", "w").write("".join("w" + "".join(chr(97 + int(c)) for c in "%03d" % i) + "\n" for i in range(N)))
PY
"$JSMF" report "$tmp/big" -o "$tmp/big.html" -q || { echo "jsmf report (K=120) failed"; exit 1; }
chrome --dump-dom "file://$tmp/big.html" >"$tmp/bigdom.html" 2>"$tmp/bigconsole.log"
if grep -q "CONSOLE" "$tmp/bigconsole.log"; then
    echo "console messages (K=120):"; grep "CONSOLE" "$tmp/bigconsole.log"; exit 1
fi
grep -q '<canvas' "$tmp/bigdom.html" || { echo "K=120: no canvas heatmap"; exit 1; }
grep -q 'id="topic-119"' "$tmp/bigdom.html" || { echo "K=120: topic cards missing"; exit 1; }
# A model fitted after a previous one: the Lineage section lists every topic and the retired one,
# with sizes before (the previous model is at its recorded path), and draws without messages.
"$PYTHON" - "$tmp" <<'PY' || exit 1
import json, os, shutil, sys
import numpy as np
t = sys.argv[1]; prev, nxt = t + "/prev", t + "/next"
shutil.copytree(t + "/model", prev); shutil.rmtree(prev + "/level1")
shutil.copytree(t + "/model", nxt); shutil.rmtree(nxt + "/level1")
h = 0xcbf29ce484222325
words = [l.rstrip("\n") for l in open(prev + "/vocab.txt")]
for b in b"".join(w.encode() + b"\0" for w in words) + np.load(prev + "/B.npy").astype("<f8").tobytes():
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
s = json.load(open(nxt + "/summary.json")); s["parameters"]["levels"] = [12]
s["lineage"] = {"previous": {"path": prev, "fingerprint": "%016x" % h, "k": 12}, "threshold": 0.5,
                "topics": [{"topic": k, "previous": None if k == 11 else k, "l1": 0.7 if k == 11 else 0.0,
                            "status": "new" if k == 11 else "continuing"} for k in range(12)],
                "retired": [11]}
json.dump(s, open(nxt + "/summary.json", "w"))
PY
"$JSMF" report "$tmp/next" -o "$tmp/next.html" -q || { echo "jsmf report (lineage) failed"; exit 1; }
chrome --dump-dom "file://$tmp/next.html" >"$tmp/nextdom.html" 2>"$tmp/nextconsole.log"
if grep -q "CONSOLE" "$tmp/nextconsole.log"; then
    echo "console messages (lineage):"; grep "CONSOLE" "$tmp/nextconsole.log"; exit 1
fi
"$PYTHON" - "$tmp/nextdom.html" <<'PY' || exit 1
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
body = re.search(r'<div id="lineagebody">(.*?)</div></section>', dom, re.S).group(1)
rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)[1:]
status = [re.findall(r"<td[^>]*>([^<]*)</td>", r)[2] for r in rows]
want = ["continuing"] * 11 + ["new", "retired"]
if status != want or "11 continuing" not in body or "not at that path" in body:
    print("lineage section:", status, body[:300]); sys.exit(1)
PY
chrome --screenshot="$BUILD_ABS/report-screenshot.png" --window-size=1280,3600 "file://$page" >/dev/null 2>"$tmp/shot.log"
[ -s "$BUILD_ABS/report-screenshot.png" ] || { echo "no screenshot"; tail -n 5 "$tmp/shot.log"; exit 1; }
cp "$page" "$BUILD_ABS/report-test.html"
echo "report renders without console messages; screenshot $BUILD_ABS/report-screenshot.png"

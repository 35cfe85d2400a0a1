#!/bin/sh
# report_chromium.sh — the HTML report renders in a real browser: headless Chromium loads the
# page of a model with a hierarchy (and of one with 120 topics, whose heatmap is a canvas), logs
# no console message (no script error, no blocked request), draws the topic cards, the heatmap
# and the word map, and keeps a screenshot in
# $BUILD/report-screenshot.png. Installs Debian's chromium when missing; skips (77) only if it
# cannot be installed.
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
A = rng.random((K, K)); A = A + A.T + np.diag(rng.random(K) * 6); A /= A.sum()
def save(path, B, A, vocab, anchors, summary):
    os.makedirs(path)
    np.save(os.path.join(path, "B.npy"), B); np.save(os.path.join(path, "A.npy"), A)
    open(os.path.join(path, "vocab.txt"), "w").write("".join(w + "\n" for w in vocab))
    open(os.path.join(path, "anchors.txt"), "w").write("".join("%d\t%d\t%s\n" % (k, a, vocab[a]) for k, a in enumerate(anchors)))
    json.dump(summary, open(os.path.join(path, "summary.json"), "w"))
save(d, B, A, words, anchors, {"format": "jsmf-model", "version": 1, "kind": "anchor", "k": K, "n_words": N,
     "parameters": {"rectify": "ap", "levels": [K, K2]}, "metrics": {"dominancy": 0.4, "note": "</script><i>"}})
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
chrome --screenshot="$BUILD_ABS/report-screenshot.png" --window-size=1280,2000 "file://$page" >/dev/null 2>"$tmp/shot.log"
[ -s "$BUILD_ABS/report-screenshot.png" ] || { echo "no screenshot"; tail -n 5 "$tmp/shot.log"; exit 1; }
cp "$page" "$BUILD_ABS/report-test.html"
echo "report renders without console messages; screenshot $BUILD_ABS/report-screenshot.png"

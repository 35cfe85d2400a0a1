#!/bin/sh
# examples_run.sh — examples/run.sh runs end to end (the fit refined: the store holds its documents) (vocab, ingest, fit, topics, infer, eval,
# report) on the shipped corpus, with K=10 to keep the test short: every stage succeeds, the
# topics are printed, metrics.json carries the metrics and the report page is written.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OUT=$tmp/out K=10 LEVELS=3 JSMF=$JSMF sh "$ROOT/examples/run.sh" >"$tmp/log" 2>&1 || { tail -n 30 "$tmp/log"; echo "examples/run.sh failed"; exit 1; }
grep -q "refined model, 10 topics" "$tmp/log" || { echo "no refined topics printed (the default fit of a documents store)"; exit 1; }
[ "$(grep -c '^passage [0-9]' "$tmp/log")" -eq 3 ] || { echo "infer lines missing"; exit 1; }
"$PYTHON" - "$tmp/out/metrics.json" <<'PY' || exit 1
import json, math, sys
m = json.load(open(sys.argv[1]))
for k in ("coherence", "heldout_loglik_per_token", "dominancy", "specificity", "recovery"):
    assert isinstance(m[k], float) and math.isfinite(m[k]), k
assert m["k"] == 10 and m["corpus_docs"] == 3215, m
assert -12 < m["heldout_loglik_per_token"] < -3, m["heldout_loglik_per_token"]
PY
grep -q "</html>" "$tmp/out/report.html" || { echo "no report"; exit 1; }
grep "^total" "$tmp/log"

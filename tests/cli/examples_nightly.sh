#!/bin/sh
# examples_nightly.sh — examples/nightly.sh runs three nights of the shipped corpus: the first
# creates the store with vocab's rule, later nights admit new words (N grows, old ids kept),
# refit from the night before (lineage recorded, diff and report written, latest moves); a rerun
# of a finished night and of a night whose ingest committed but whose fit did not both succeed
# without adding the inputs twice; a bad K stops the night with an error and moves nothing.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-nightly-XXXXXX)
trap 'rm -rf "$T"' EXIT
export JSMF="$J"
zstd -dc "$ROOT/examples/kjv-passages.txt.zst" >"$T/all.txt"
# the chapters in order, so later nights bring books (and words) the first has not seen
split -n l/3 -d "$T/all.txt" "$T/day"
night() { NIGHT=$1 sh "$ROOT/examples/nightly.sh" "$T/store" "$T/models" 10 "$2" >"$T/log.$1" 2>&1; }

night n1 "$T/day00" || fail "night 1: $(cat "$T/log.n1")"
n1=$("$J" info "$T/store" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["n_words"])')
night n2 "$T/day01" || fail "night 2: $(cat "$T/log.n2")"
night n3 "$T/day02" || fail "night 3: $(cat "$T/log.n3")"
[ "$(readlink "$T/models/latest")" = n3 ] || fail "latest is not n3"
for f in n2.diff.txt n3.diff.json n3.html n3/B.npy; do
    [ -s "$T/models/$f" ] || fail "missing $f"
done
grep -q "lineage recorded" "$T/models/n3.diff.txt" || fail "n3's diff has no lineage"
"$PYTHON" - "$T" "$n1" <<'PY' || fail "growth or lineage"
import json, os, subprocess, sys
T, n1 = sys.argv[1], int(sys.argv[2])
info = json.loads(subprocess.run([os.environ["JSMF"], "info", f"{T}/store", "--json"],
                                 capture_output=True, text=True).stdout)
assert info["n_words"] > n1, ("no word admitted", n1, info["n_words"])
first = [l.split("\t")[0] for l in open(f"{T}/models/n1/vocab.txt") if not l.startswith("#")]
last = [l.split("\t")[0] for l in open(f"{T}/models/n3/vocab.txt") if not l.startswith("#")]
assert last[:len(first)] == first, "old ids changed"
lin = json.load(open(f"{T}/models/n3/summary.json"))["lineage"]
assert lin["previous"]["path"].endswith("n2"), lin["previous"]
PY
docs=$("$J" info "$T/store" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["docs"])')

# a finished night again: nothing added, the same night refitted from the same yesterday
night n3 "$T/day02" || fail "rerun of night 3: $(cat "$T/log.n3")"
grep -q "from n2" "$T/log.n3" || fail "rerun of n3 did not start from n2"
# a night killed after its ingest committed (no marker yet): the rerun adds nothing twice
rm "$T/models/n3.ingested"
night n3 "$T/day02" || fail "rerun without the marker: $(cat "$T/log.n3")"
d2=$("$J" info "$T/store" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["docs"])')
[ "$docs" = "$d2" ] || fail "documents counted twice: $docs -> $d2"
# a failing night (K larger than the vocabulary) exits non-zero and latest stays
NIGHT=n4 sh "$ROOT/examples/nightly.sh" "$T/store" "$T/models" 100000 "$T/day02" >"$T/log.n4" 2>&1 &&
    fail "a bad K succeeded"
[ "$(readlink "$T/models/latest")" = n3 ] || fail "latest moved after a failed night"
exit "$fails"

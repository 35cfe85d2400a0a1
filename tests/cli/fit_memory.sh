#!/bin/sh
# fit_memory.sh — the fit keeps to --mem (formats/fit.md, "Memory"): on small stores with small
# budgets, each path's peak RSS (getrusage of the child) stays within --mem plus
# JSMF_MEM_ALLOWANCE and its plan (summary.json "memory") within --mem: the documents held, the
# documents streamed because the budget needs it, a store of rows, super-topic levels, the
# refinement (its thetas in a scratch file: the same model), fdm on the CPU (the documents'
# sampler; a store of rows, its sampler thinned to its share); a budget below the plan's least is
# refused before any work (exit 1, naming the --mem to give, no model written, little memory
# touched); eval --store likewise.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-fitmem-XXXXXX)
trap 'rm -rf "$T"' EXIT
unset JSMF_TEST_SMALL_MEM
PY=${PYTHON:-python3}
"$PY" -c 'import resource' 2>/dev/null || { echo "no python3 with resource"; exit 77; }
ALLOW_MIB=192 # JSMF_MEM_ALLOWANCE

# peak RSS in KiB of the command's process (RUSAGE_CHILDREN: the largest child), into $T/rss
peak() {
    "$PY" -c 'import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$T/rss" "$@"
}

# check_within NAME MEM_MIB MODEL: RSS and plan against the budget
check_within() {
    kib=$(cat "$T/rss")
    # a refined model: the spectral fit's plan (start) and the refinement's need (refine.bytes)
    plan=$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"] if "memory" in d else d["start"]["memory"]
need = max(m["plan_bytes"], d.get("refine", {}).get("bytes", 0))
print(need // 1048576, m["budget_bytes"] // 1048576)' "$3/summary.json") ||
        fail "$1: no memory in summary.json"
    set -- "$1" "$2" "$3" $plan
    echo "$1: --mem ${2}M, plan $4 MiB, peak RSS $((kib / 1024)) MiB"
    [ "$5" -eq "$2" ] || fail "$1: planned for ${5}M, not ${2}M"
    [ "$4" -le "$2" ] || fail "$1: plan $4 MiB above --mem ${2}M"
    [ "$kib" -le $((($2 + ALLOW_MIB) * 1024)) ] ||
        fail "$1: peak RSS $((kib / 1024)) MiB above --mem ${2}M + ${ALLOW_MIB} MiB"
}

# refuse_then_run NAME ARGS...: refused at 64M (exit 1, the --mem to give named, nothing
# written, little touched), then run at the budget named; the run's output is $T/out
refuse_then_run() {
    name=$1
    shift
    peak "$@" --mem 64M -o "$T/out" -q 2>"$T/err"; rc=$?
    [ $rc -eq 1 ] || fail "$name at 64M: exit $rc"
    grep -q "give --mem [0-9]*M" "$T/err" || fail "$name at 64M: $(cat "$T/err")"
    [ -e "$T/out" ] && fail "$name at 64M wrote a model"
    kib=$(cat "$T/rss")
    [ "$kib" -le $((64 * 1024)) ] || fail "$name at 64M: the refusal touched $((kib / 1024)) MiB"
    need=$(sed -n 's/.*give --mem \([0-9]*\)M.*/\1/p' "$T/err")
    peak "$@" --mem "${need}M" -o "$T/out" -q || fail "$name at the --mem it named (${need}M)"
    check_within "$name at the named budget" "$need" "$T/out"
}

# a planted corpus: N=20,000 words, 20,000 documents of ~100 tokens (nnz(H) ~1.9M: 30 MB held)
"$PY" "$ROOT/tools/synth/synth.py" -o "$T/c.txt" --truth "$T/truth" --vocab 20000 --topics 20 \
    --docs 20000 --mean-len 100 --seed 3 2>/dev/null || fail "synth"
"$J" ingest "$T/docs" "$T/c.txt" --vocab "$T/truth/vocab.txt" -q || fail "ingest docs"
"$J" ingest "$T/rows" "$T/c.txt" --vocab "$T/truth/vocab.txt" --hold rows -q || fail "ingest rows"

peak "$J" fit "$T/docs" -k 20 --refine 0 -o "$T/m1" --mem 256M -q || fail "fit docs held"
check_within "documents held" 256 "$T/m1"
"$PY" -c 'import json, sys; m = json.load(open(sys.argv[1]))["memory"]; sys.exit(not m["held"])' \
    "$T/m1/summary.json" || fail "documents held: not held at 256M"

peak "$J" fit "$T/docs" -k 20 --refine 0 -o "$T/m2" --mem 64M -q || fail "fit docs at 64M"
check_within "documents at 64M" 64 "$T/m2"

peak "$J" fit "$T/rows" -k 20 --refine 0 -o "$T/m3" --mem 64M -q || fail "fit rows at 64M"
check_within "rows at 64M" 64 "$T/m3"

peak "$J" fit "$T/docs" -k 20 --refine 0 --levels 4 -o "$T/m4" --mem 64M -q || fail "fit --levels"
check_within "levels at 64M" 64 "$T/m4"
[ -e "$T/m4/level1/B.npy" ] || fail "--levels 4 wrote no level"

peak "$J" fit "$T/docs" -k 20 --refine 3 -o "$T/m5" --mem 96M -q || fail "fit --refine 3"
check_within "refined at 96M" 96 "$T/m5"

# the thetas in a scratch file (forced here; beyond the budget on a large store): the same
# model bit for bit, the file gone after
mkdir "$T/scratch"
JSMF_TEST_THETA_FILE=1 "$J" fit "$T/docs" -k 20 --refine 3 -o "$T/scratch/m5f" --mem 96M -q ||
    fail "fit --refine 3 with the thetas in a file"
for f in B.npy A.npy alpha.npy; do
    cmp -s "$T/m5/$f" "$T/scratch/m5f/$f" || fail "thetas in a file: $f differs"
done
"$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["refine"]
sys.exit(not r["theta_file_bytes"] == r["docs"] * 20 * 8 > 0)' "$T/scratch/m5f/summary.json" ||
    fail "thetas in a file: refine.theta_file_bytes"
[ "$(ls "$T/scratch")" = "m5f" ] || fail "thetas in a file: left $(ls "$T/scratch")"

# refused before any work: K=120 needs blocks of 20,000 x 180 doubles (~27 MiB each)
refuse_then_run "fit K=120" "$J" fit "$T/docs" -k 120 --refine 0
mv "$T/out" "$T/m120"

# eval --store: the model and the metrics' arrays (K=120 with anchors: ~95 MiB) planned before
# C is read; refused at 64M naming the budget, kept to at that budget
peak "$J" eval "$T/m120" --store "$T/docs" --json --mem 64M >"$T/ev" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "eval --store at 64M: exit $rc"
grep -q "give --mem [0-9]*M" "$T/err" || fail "eval --store at 64M: $(cat "$T/err")"
need=$(sed -n 's/.*give --mem \([0-9]*\)M.*/\1/p' "$T/err")
peak "$J" eval "$T/m120" --store "$T/docs" --json --mem "${need}M" >"$T/ev" ||
    fail "eval --store at the --mem it named (${need}M)"
kib=$(cat "$T/rss")
plan=$("$PY" -c 'import json, math, sys; d = json.load(open(sys.argv[1]))
assert math.isfinite(d["recovery"]) and math.isfinite(d["approximation"]), d
print(d["store_mem_plan_bytes"] // 1048576)' "$T/ev") || fail "eval --store: its JSON"
echo "eval --store at the named budget: --mem ${need}M, plan $plan MiB, peak RSS $((kib / 1024)) MiB"
[ "$plan" -le "$need" ] || fail "eval --store: plan $plan MiB above --mem ${need}M"
[ "$kib" -le $(((need + ALLOW_MIB) * 1024)) ] ||
    fail "eval --store: peak RSS $((kib / 1024)) MiB above --mem ${need}M + ${ALLOW_MIB} MiB"

# fdm on the CPU (formats/fdm.md, "Memory"): the documents' sampler, after the spectral start
# within the same budget; a store of rows, whose sampler (1.5 GB unthinned: C has 125M non-zeros) is thinned to its
# share; K=120 with two random starts refused at 64M
peak "$J" fdm "$T/docs" -k 20 --steps 200 -o "$T/f1" --mem 64M -q || fail "fdm documents at 64M"
check_within "fdm, documents at 64M" 64 "$T/f1"
peak "$J" fdm "$T/rows" -k 20 --init none --starts 1 --steps 200 -o "$T/f2" --mem 64M -q ||
    fail "fdm rows at 64M"
check_within "fdm, rows at 64M" 64 "$T/f2"
"$PY" -c 'import json, sys; m = json.load(open(sys.argv[1]))["memory"]
sys.exit(not m["sampler_thinned"] or m["sampler_bytes"] > m["plan_bytes"])' \
    "$T/f2/summary.json" || fail "fdm rows at 64M: the sampler not thinned to its share"
refuse_then_run "fdm K=120" "$J" fdm "$T/docs" -k 120 --init none --starts 2 --steps 20 \
    --heldout 5000
echo "ok"

#!/bin/sh
# api_abi.sh — the stable API can grow without breaking a program built against it (include/jsmf.h,
# "Structs that grow"): every struct and field of tests/abi/layout-3.txt (the layout of 3.0.0,
# recorded once per MAJOR version) is at its recorded size and offset (tools/abi-layout.py);
# every options, report, result, summary, stats or record struct of the stable part ends in a
# reserve; every options struct has its _opts_init; no public field is a test hook; the headers
# name no internal function (a made-up header that does fails, naming it). On made-up
# headers: a metric added to jsmf_fit_report by taking a word of its reserve passes (a MINOR
# version), the same field inserted without taking one fails, naming the struct, and so does a
# field moved. Skips (77) without a C compiler.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
command -v cc >/dev/null 2>&1 || { echo "no C compiler"; exit 77; }
T=$(mktemp -d /tmp/jsmf-api-abi-XXXXXX)
trap 'rm -rf "$T"' EXIT
L="$ROOT/tools/abi-layout.py"
REC="$ROOT/tests/abi/layout-3.txt"

"$PYTHON" "$L" check "$ROOT/include" "$REC" >"$T/out" 2>&1 ||
    fail "include/ breaks the recorded layout:$(sed 's/^/\n  /' "$T/out")"

# the structs that grow end in a reserve; options have their _opts_init
"$PYTHON" "$L" print "$ROOT/include" >"$T/now"
"$PYTHON" "$ROOT/tools/api-symbols.py" declared "$ROOT/include" | sort -u >"$T/declared"
"$PYTHON" - "$T/now" "$T/declared" <<'PY' || fail "structs without a reserve or _opts_init"
import re, sys
fields = {}
for line in open(sys.argv[1]).read().split("\n")[1:]:
    k = line.rsplit(" ", 1)[0] if line else ""
    if "." in k:
        t, f = k.split(".", 1)
        fields.setdefault(t, []).append(f)
declared = set(open(sys.argv[2]).read().split())
bad = []
for t, fs in fields.items():
    if re.search(r"_(opts|report|result|summary|stats|info|params|rule|growth|input|lineage|check_result)$", t) or t in ("jsmf_diff", "jsmf_eval", "jsmf_model", "jsmf_theta_format", "jsmf_tokenizer"):
        if fs[-1] != "reserved":
            bad.append("%s: its last field is %s, not a reserve" % (t, fs[-1]))
    if t.endswith("_opts") and t + "_init" not in declared:
        bad.append("%s: no %s_init" % (t, t))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
# the manual names only what it declares: no jsmf_ name it does not declare, and no internal
# function (one declared in a header under src/, which carries no prefix); on a made-up header
# that names one, the check fails naming it
cat >"$T/names.py" <<'PY'
import glob, re, sys
inc, src = sys.argv[1], sys.argv[2]
text = {h: open(h).read() for h in sorted(glob.glob(inc + "/*.h"))}
code = "\n".join(re.sub(r"/\*.*?\*/", " ", t, flags=re.S) for t in text.values())
known = set(re.findall(r"\b[a-z_]\w*\b", code))
internal = set()
for f in glob.glob(src + "/**/*.h", recursive=True):
    c = re.sub(r"/\*.*?\*/", " ", open(f).read(), flags=re.S)
    internal |= set(re.findall(r"^[a-z][\w \*]*?\b([a-z]\w*_\w+)\s*\(", c, flags=re.M))
internal -= known
bad = []
for h, t in text.items():
    for i, line in enumerate(t.split("\n"), 1):
        for m in re.finditer(r"\b(jsmf_[a-z0-9_]*[a-z0-9])\b(\.h)?", line):
            if not m.group(2) and m.group(1) not in known:
                bad.append("%s:%d: %s" % (h, i, m.group(1)))
        for m in re.finditer(r"\b([a-z]\w*_\w+)\b", line):
            if m.group(1) in internal:
                bad.append("%s:%d: %s" % (h, i, m.group(1)))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
"$PYTHON" "$T/names.py" "$ROOT/include" "$ROOT/src" >"$T/out" || fail "include/ names internal functions:$(sed 's/^/\n  /' "$T/out")"
mkdir -p "$T/named"
cp "$ROOT"/include/*.h "$T/named/"
printf '/* a checkpoint commits (store_commit) */\n' >>"$T/named/jsmf_store.h"
"$PYTHON" "$T/names.py" "$T/named" "$ROOT/src" >"$T/out" && fail "a header naming an internal function passed"
grep -q "jsmf_store.h:.*store_commit" "$T/out" || fail "the internal name is not named: $(cat "$T/out")"
grep -n '/\*\*<.*\(testing\|test hook\|for tests\)' "$ROOT"/include/*.h >"$T/hooks" &&
    fail "a test hook in a public struct:$(sed 's/^/\n  /' "$T/hooks")"

# made-up headers: a new metric in jsmf_fit_report
mkdir -p "$T/minor" "$T/major" "$T/moved"
cp "$ROOT"/include/*.h "$T/minor/"
cp "$ROOT"/include/*.h "$T/major/"
cp "$ROOT"/include/*.h "$T/moved/"
reserve=$(sed -n '/^typedef struct jsmf_fit_report {/,/^} jsmf_fit_report;/p' "$ROOT/include/jsmf_fit.h" |
          sed -n 's/.*uint64_t reserved\[\([0-9]*\)\].*/\1/p')
[ -n "$reserve" ] && [ "$reserve" -ge 2 ] || fail "jsmf_fit_report has no reserve to take from"
# taking one word of the reserve: the layout holds (a MINOR version)
sed -i "/^typedef struct jsmf_fit_report {/,/^} jsmf_fit_report;/s/    uint64_t reserved\[$reserve\];/    double new_metric;\n    uint64_t reserved[$((reserve - 1))];/" "$T/minor/jsmf_fit.h"
grep -q "double new_metric;" "$T/minor/jsmf_fit.h" || fail "the made-up header was not made"
"$PYTHON" "$L" check "$T/minor" "$REC" >"$T/out" 2>&1 ||
    fail "a metric taking a word of the reserve breaks the layout:$(cat "$T/out")"
# the same field without taking one: the struct grew, refused by name
sed -i "/^typedef struct jsmf_fit_report {/,/^} jsmf_fit_report;/s/    uint64_t reserved\[$reserve\];/    double new_metric;\n    uint64_t reserved[$reserve];/" "$T/major/jsmf_fit.h"
"$PYTHON" "$L" check "$T/major" "$REC" >"$T/out" 2>&1 && fail "a grown jsmf_fit_report passed"
grep -q "^jsmf_fit_report size" "$T/out" || fail "the message does not name the struct: $(cat "$T/out")"
# a field inserted before the others: they moved
sed -i "/^typedef struct jsmf_fit_report {/a\\    int first;" "$T/moved/jsmf_fit.h"
"$PYTHON" "$L" check "$T/moved" "$REC" >"$T/out" 2>&1 && fail "moved fields passed"
grep -q "^jsmf_fit_report.mode" "$T/out" || fail "the message does not name the field: $(cat "$T/out")"
exit "$fails"

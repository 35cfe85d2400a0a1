#!/bin/sh
# options_table.sh — the option tables of src/cli/options.c: '--opt VALUE', '--opt=VALUE' and
# '-o VALUE' mean the same; '--' makes the rest arguments; usage errors (a missing value, a value
# given to a flag, a number out of range, an unknown choice or option) exit 2 naming the option;
# --help lists every option of the table once, within 80 columns.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-$(pwd)}
"$PYTHON" -c 'import numpy' 2>/dev/null || { echo "numpy not available"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PYTHON" "$ROOT/tools/synth/synth.py" -o "$T/c.txt" --truth "$T/m" --vocab 60 --topics 3 \
    --docs 5 --seed 3 2>/dev/null || { echo "synth failed"; exit 1; }

"$J" topics "$T/m" --top 4 --format tsv >"$T/a" || fail "--top 4 --format tsv"
"$J" topics --top=4 --format=tsv "$T/m" >"$T/b" || fail "--top=4 --format=tsv"
"$J" topics -n 4 -f tsv -- "$T/m" >"$T/c" || fail "-n 4 -f tsv -- MODEL"
cmp -s "$T/a" "$T/b" || fail "--top=4 differs from --top 4"
cmp -s "$T/a" "$T/c" || fail "-n 4 -f tsv differs from --top 4 --format tsv"
"$J" topics "$T/m" --top 5 --format tsv >"$T/d"
cmp -s "$T/a" "$T/d" && fail "--top has no effect"

expect 2 "option --top needs a value" "$J" topics "$T/m" --top
expect 2 "option --matrix takes no value" "$J" topics "$T/m" --matrix=yes
expect 2 "--top expects a non-negative integer, got 'x'" "$J" topics "$T/m" --top=x
expect 2 "--level must be at most 4294967295$" "$J" topics "$T/m" --level 4294967296
expect 2 "--format must be text, tsv or json, not 'xml'" "$J" topics "$T/m" -f xml
expect 2 "unknown option '--topx'" "$J" topics "$T/m" --topx 3
expect 2 "unknown option '-z'" "$J" topics "$T/m" -z
expect 2 "unexpected argument '--top'" "$J" topics "$T/m" -- --top
expect 2 "missing MODEL$" "$J" topics --top 3
grep -q "Try 'jsmf topics --help'" "$T/err" || fail "usage error without the --help hint"
expect 2 "--corpus needs at least one INPUT$" "$J" eval "$T/m" --corpus --json
expect 2 "--batch must be at least 1" "$J" infer "$T/m" - --batch=0

# --help: each option of the table on a line of its own, once; the common switches too
"$J" topics --help >"$T/help" || fail "--help exit $?"
for o in --top --rank --format --level --matrix --quiet --progress --help; do
    n=$(grep -cE "^  (-[a-z], )?$o([ ,]|\$)" "$T/help")
    [ "$n" -eq 1 ] || fail "--help shows $o $n times"
done
LC_ALL=C.UTF-8 awk 'length > 80 {exit 1}' "$T/help" || fail "--help wider than 80 columns"
# a wrapped line starting with '-' would read as an option line to help_man.sh
for c in $("$J" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}'); do
    "$J" "$c" --help | grep -E '^ {3,}-' && fail "jsmf $c --help: a wrapped line starts with '-'"
done
exit $fails

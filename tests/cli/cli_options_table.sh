#!/bin/sh
# cli_options_table.sh — the option tables of src/cli/options.c: '--opt VALUE', '--opt=VALUE' and
# '-o VALUE' mean the same; '--' makes the rest arguments; usage errors (a missing value, a value
# given to a flag, a number out of range, an unknown choice or option) exit 2 naming the option;
# the table's positional arguments and required options: a missing or extra one, '-' twice, exit
# 2 naming it; --help exits 0 before any of those checks; --help lists every option of the table
# once, within 80 columns.
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
expect 2 "--output must be tsv or jsonl, not 'xml'" "$J" infer "$T/m" - -O xml

# positional arguments and required options, by the table
expect 2 "missing STORE$" "$J" info
expect 2 "missing INPUT$" "$J" infer "$T/m"
expect 2 "missing INPUT (a store directory, or a .mtx or .npy matrix)$" "$J" fit -k 3 -o "$T/x"
expect 2 "unexpected argument 'b'$" "$J" info a b
expect 2 "missing DEST$" "$J" copy "$T/s"
expect 2 "unexpected argument 'c'$" "$J" copy a b c
expect 2 "unexpected argument 'x'$" "$J" eval "$T/m" x --store s
expect 2 "missing -o FILE$" "$J" report "$T/m"
expect 2 "missing -o VOCAB (or -o - for stdout)$" "$J" vocab "$T/c.txt"
expect 2 "missing -k K$" "$J" fit "$T/in" -o "$T/x"
expect 2 "stdin ('-') can be read only once$" "$J" vocab - "$T/c.txt" - -o -
expect 2 "stdin ('-') can be read only once$" "$J" ingest "$T/s" - -
[ -e "$T/s" ] && fail "a usage error created a store"
# limits: .max of integers, the open or closed ends of a double's range
expect 2 "--threads must be at most 4096$" "$J" fdm "$T/in" -k 3 -o "$T/x" --threads 4097
expect 2 "--threads must be at least 1$" "$J" fdm "$T/in" -k 3 -o "$T/x" --threads 0
expect 2 "--lr-halvings must be at most 30$" "$J" fdm "$T/in" -k 3 -o "$T/x" --lr-halvings 31
expect 2 "--threads must be at most 2147483647$" "$J" fit "$T/in" -k 3 -o "$T/x" --threads 2147483648
# a flag noted as given (.given) and a choice stored as the library's enum: ingest
expect 2 "--accumulator must be auto, hash, dense or docs, not 'x'" \
    "$J" ingest "$T/s0" "$T/c.txt" --accumulator x
expect 0 "documents kept" "$J" ingest "$T/s1" "$T/c.txt" --accumulator docs --vocab "$T/m/vocab.txt" --hold rows
expect 0 "dense block [1-9]" "$J" ingest "$T/s2" "$T/c.txt" --accumulator dense --vocab "$T/m/vocab.txt" --hold rows
expect 1 "min-doc-len" "$J" ingest "$T/s2" "$T/c.txt" --min-doc-len 3 --force
expect 2 "--init-smooth must be in \[0, 1)$" "$J" fdm "$T/in" -k 3 -o "$T/x" --init-smooth 1
expect 2 "--init-smooth must be in \[0, 1)$" "$J" fdm "$T/in" -k 3 -o "$T/x" --init-smooth -0.1
expect 2 "--lr must be positive$" "$J" fdm "$T/in" -k 3 -o "$T/x" --lr 0
expect 2 "--max-df-frac must be positive$" "$J" vocab "$T/c.txt" -o - --max-df-frac 0
expect 2 "--epsilon must be positive$" "$J" eval "$T/m" --store s --epsilon -1
expect 2 "--rank lambda must be in \[0, 1\]$" "$J" topics "$T/m" --rank relevance:1.5
# values at the ends that the ranges hold get past the parser: the missing input fails (exit 1)
expect 1 "nothing.npy" "$J" fdm "$T/nothing.npy" -k 3 -o "$T/x" --init-smooth 0 --threads 4096 \
    --lr-halvings 30 --lr 1e-9
"$J" topics "$T/m" --rank relevance:1 >/dev/null || fail "--rank relevance:1 refused"
# --help: exit 0 with the usage on stdout, before the checks of positionals and required options
expect 0 "" "$J" fit --help
grep -q "^usage: jsmf fit INPUT" "$T/out" || fail "fit --help: no usage line"
[ -s "$T/err" ] && fail "fit --help wrote to stderr: $(cat "$T/err")"
expect 0 "" "$J" export a b --help
expect 1 "error writing standard output" sh -c "'$J' info --help >/dev/full"

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

#!/bin/sh
# help_progress.sh — the progress line fits an 80-column terminal and tells the time: with
# --progress (drawn as on a terminal), every line that vocab, ingest, fit, infer and eval redraw
# on stderr (the text between carriage returns, the erase-line escape removed) is at most 79
# columns, starts with the command's name, and shows the elapsed time; a line with a percentage
# also shows the step's ETA; the lines that stay on stderr (summaries and notes of vocab, ingest,
# fit and infer) are at most 80 columns too. Uses the example corpus (a few seconds).
set -u
ROOT=${ROOT:-.}
corpus=$ROOT/examples/kjv-passages.txt.zst
[ -f "$corpus" ] || { echo "no $corpus"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() { # name, then the command's arguments
    name=$1; shift
    "$JSMF" "$@" --progress 2>"$tmp/$name.err" >"$tmp/$name.out" || { echo "jsmf $*: failed"; cat "$tmp/$name.err"; fail=1; }
}
run vocab vocab "$corpus" -o "$tmp/vocab.txt" --min-df 3
run ingest ingest "$tmp/store" "$corpus" --vocab "$tmp/vocab.txt" --mem 64M
run fit fit "$tmp/store" -k 8 -o "$tmp/model"
run infer infer "$tmp/model" "$corpus"
run eval eval "$tmp/model" --corpus "$corpus"
for name in vocab ingest fit infer eval; do
    # a progress line is drawn as CR, the line, ESC [ K (and erased as CR ESC [ K)
    esc=$(printf '\033')
    tr '\r' '\n' <"$tmp/$name.err" | sed -n "s/^\(..*\)$esc\[K.*/\1/p" >"$tmp/$name.lines"
    n=$(grep -c . "$tmp/$name.lines")
    [ "$n" -gt 0 ] || { echo "jsmf $name --progress drew no progress line"; fail=1; continue; }
    LC_ALL=C.UTF-8 awk -v c="$name" '
        length > 79 { printf "jsmf %s: %d columns: %s\n", c, length, $0; bad = 1 }
        index($0, "jsmf " c ": ") != 1 { printf "jsmf %s: line without the command name: %s\n", c, $0; bad = 1 }
        !/ [0-9]+(s|m[0-9][0-9]s|h[0-9][0-9]m) / && !/ [0-9]+(s|m[0-9][0-9]s|h[0-9][0-9]m)$/ {
            printf "jsmf %s: no elapsed time: %s\n", c, $0; bad = 1 }
        /%/ && !/ETA (--|[0-9]+(s|m[0-9][0-9]s|h[0-9][0-9]m))/ { printf "jsmf %s: a percentage without ETA: %s\n", c, $0; bad = 1 }
        END { exit bad }' "$tmp/$name.lines" || fail=1
    echo "jsmf $name: $n progress lines, longest $(awk '{ if (length > m) m = length } END { print m }' "$tmp/$name.lines") columns"
done
# The lines that stay (summaries, notes): what remains of each line after its last carriage
# return, the erase-line escapes removed, is at most 80 columns for vocab, ingest, fit and infer.
for name in vocab ingest fit infer; do
    esc=$(printf '\033')
    sed "s/.*\r//; s/$esc\[K//g" "$tmp/$name.err" | grep . >"$tmp/$name.kept"
    [ -s "$tmp/$name.kept" ] || { echo "jsmf $name: no summary on stderr"; fail=1; continue; }
    LC_ALL=C.UTF-8 awk -v c="$name" 'length > 80 { printf "jsmf %s: %d columns: %s\n", c, length, $0; bad = 1 }
        END { exit bad }' "$tmp/$name.kept" || fail=1
done
exit $fail

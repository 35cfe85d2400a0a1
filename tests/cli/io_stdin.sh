#!/bin/sh
# io_stdin.sh — reading '-': a terminal is refused with a clear message (exit 1), empty stdin is
# zero documents (a warning, and no vocabulary: exit 1), stdin and the file give the same vocabulary; a directory is refused.
set -u
JSMF=${JSMF:-build/jsmf}
fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

if command -v script >/dev/null 2>&1; then
    script -qec "$JSMF vocab - -o $t/v.txt" /dev/null > "$t/tty.out" 2>&1
    rc=$?
    grep -q "refusing to read a terminal" "$t/tty.out" || { echo "no terminal message:"; cat "$t/tty.out"; fail=1; }
    [ $rc -eq 1 ] || { echo "terminal: exit $rc, want 1"; fail=1; }
fi

"$JSMF" vocab - -o "$t/empty.txt" < /dev/null 2> "$t/err" && { echo "empty stdin: exit 0"; fail=1; }
[ ! -e "$t/empty.txt" ] || { echo "empty stdin: an empty vocabulary was written"; fail=1; }
grep -q "warning: <stdin>: empty input: no documents" "$t/err" || { echo "empty stdin: no warning"; cat "$t/err"; fail=1; }
grep -q "no words kept: 0 documents read" "$t/err" || { echo "empty stdin: no error"; cat "$t/err"; fail=1; }

printf 'alpha beta gamma delta epsilon\nalpha beta gamma zeta eta\n' > "$t/c.txt"
"$JSMF" vocab "$t/c.txt" -o "$t/f.txt" --min-df 1 --max-df-frac 1 -q
"$JSMF" vocab - -o "$t/s.txt" --min-df 1 --max-df-frac 1 -q < "$t/c.txt"
cat "$t/c.txt" | "$JSMF" vocab - -o "$t/p.txt" --min-df 1 --max-df-frac 1 -q
cmp -s "$t/f.txt" "$t/s.txt" && cmp -s "$t/f.txt" "$t/p.txt" || { echo "stdin differs from file"; fail=1; }
[ "$(head -n 1 "$t/f.txt")" = "# jsmf-rule: min-df=1 max-df-frac=1 max-words=0 stopwords=en" ] || { echo "unexpected rule line: $(head -n 1 "$t/f.txt")"; fail=1; }
[ "$(sed -n 2p "$t/f.txt")" = "$(printf 'alpha\t2\t2')" ] || { echo "unexpected first word: $(sed -n 2p "$t/f.txt")"; fail=1; }

"$JSMF" vocab "$t" -o "$t/d.txt" 2> "$t/err"
rc=$?
[ $rc -eq 1 ] && grep -q "is a directory" "$t/err" || { echo "directory: exit $rc"; cat "$t/err"; fail=1; }
exit $fail

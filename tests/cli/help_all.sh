#!/bin/sh
# help_all.sh — every command listed by 'jsmf --help' answers --help on stdout with exit 0, in
# lines of at most 80 columns, and rejects an unknown option with exit 2.
set -u
cmds=$("$JSMF" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
[ -n "$cmds" ] || { echo "jsmf --help lists no commands"; exit 1; }
"$JSMF" --help >/dev/null || { echo "jsmf --help failed"; exit 1; }
"$JSMF" --no-such-option >/dev/null 2>&1; [ $? -eq 2 ] || { echo "jsmf --no-such-option: not exit 2"; exit 1; }
"$JSMF" no-such-command >/dev/null 2>&1; [ $? -eq 2 ] || { echo "jsmf no-such-command: not exit 2"; exit 1; }
# Lines wider than 80 columns (characters, not bytes) of file $2, labelled $1.
too_wide() { LC_ALL=C.UTF-8 awk -v l="$1" 'length > 80 {printf "%s: line %d has %d columns: %s\n", l, NR, length, $0}' "$2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$JSMF" --help >"$tmp/out"
wide=$(too_wide "jsmf --help" "$tmp/out")
[ -z "$wide" ] || { echo "$wide"; fail=1; }
for c in $cmds; do
    "$JSMF" "$c" --help >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "jsmf $c --help: exit $rc"; fail=1; fi
    if [ ! -s "$tmp/out" ]; then echo "jsmf $c --help: nothing on stdout"; fail=1; fi
    grep -qi "usage" "$tmp/out" || { echo "jsmf $c --help: no usage line"; fail=1; }
    wide=$(too_wide "jsmf $c --help" "$tmp/out")
    [ -z "$wide" ] || { echo "$wide"; fail=1; }
    "$JSMF" "$c" --no-such-option-xyz >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 2 ]; then echo "jsmf $c --no-such-option-xyz: exit $rc, expected 2"; fail=1; fi
    [ -s "$tmp/err" ] || { echo "jsmf $c: usage error without a message on stderr"; fail=1; }
done
echo "checked: $(echo $cmds)"
exit $fail

#!/bin/sh
# help_man.sh — man/jsmf.1 renders without groff warnings, has a section for every command of
# 'jsmf --help', and documents every option that 'jsmf infer|eval|report --help' lists (options
# of other commands missing from the page are printed as a reminder, not failed on).
# Skips (77) when groff is not installed (the package is groff-base).
set -u
ROOT=${ROOT:-.}
page=$ROOT/man/jsmf.1
[ -f "$page" ] || { echo "no $page"; exit 1; }
command -v groff >/dev/null 2>&1 || { echo "groff not installed (Debian package groff-base)"; exit 77; }
warn=$(groff -man -Tutf8 -ww "$page" 2>&1 >/dev/null)
[ -z "$warn" ] || { echo "groff warnings:"; echo "$warn"; exit 1; }
if command -v man >/dev/null 2>&1; then
    warn=$(man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warn" ] || { echo "man --warnings:"; echo "$warn"; exit 1; }
fi
text=$(groff -man -Tutf8 "$page" 2>/dev/null | sed 's/.\x08//g')
fail=0
cmds=$("$JSMF" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
for c in $cmds; do
    echo "$text" | grep -q "jsmf $c " || { echo "man page has no section for 'jsmf $c'"; fail=1; }
    help=$("$JSMF" "$c" --help 2>&1)
    for o in $(echo "$help" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
        echo "$text" | grep -q -- "$o" && continue
        case $c in
        infer|eval|report) echo "man page lacks $o of 'jsmf $c'"; fail=1 ;;
        *) echo "reminder: man page lacks $o of 'jsmf $c'" ;;
        esac
    done
done
exit $fail

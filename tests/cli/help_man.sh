#!/bin/sh
# help_man.sh — 'jsmf CMD --help', man/jsmf.1 and docs/cli.md agree on every command's options:
#  - the page renders without groff or man warnings and has a section for every command;
#  - every option, long or short, that CMD --help defines (usage line or an option line) is
#    documented in the page's section for CMD, and every option that section documents is in
#    CMD --help (--help is made from the page by tools/man2help.awk: this checks that it
#    misses none);
#  - every such option is accepted by CMD (no "unknown option": the page documents no option
#    that CMD's table lacks; the build checks the converse);
#  - the options of docs/cli.md's Commands synopsis exist in that command's --help, and the
#    synopsis has a line for every command;
#  - the options every command takes (--help, --quiet, --progress, --no-progress) are in the
#    page's COMMON OPTIONS section.
# Skips (77) when groff is not installed (the package is groff-base).
set -u
ROOT=${ROOT:-.}
page=$ROOT/man/jsmf.1
synopsis=$ROOT/docs/cli.md
[ -f "$page" ] || { echo "no $page"; exit 1; }
[ -f "$synopsis" ] || { echo "no $synopsis"; exit 1; }
command -v groff >/dev/null 2>&1 || { echo "groff not installed (Debian package groff-base)"; exit 77; }
warn=$(groff -man -Tutf8 -ww "$page" 2>&1 >/dev/null)
[ -z "$warn" ] || { echo "groff warnings:"; echo "$warn"; exit 1; }
if command -v man >/dev/null 2>&1; then
    warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warn" ] || { echo "man --warnings:"; echo "$warn"; exit 1; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common="--help --no-progress --progress --quiet -h -q"

# Options (--long, and -x short) in the text on stdin.
options_in() {
    grep -oE -- '(^|[^A-Za-z0-9-])(--[a-z0-9][a-z0-9-]*(=[a-z]+)?|-[A-Za-z])([^A-Za-z0-9-]|$)' |
        sed 's/^[^-]*//; s/[^A-Za-z0-9=-]$//' | sort -u
}

# Options a --help text defines: those of its usage lines (up to the first blank line) and
# those at the head of an option line ("  -o, --output FILE   text": the part before the first
# gap of three spaces). Options named in the prose of a description are not counted.
help_options() {
    awk '/^usage:/ {u = 1} u && /^$/ {u = 0} u {print; next}
         /^  +-/ { sub(/^ +/, ""); n = index($0, "   "); if (n) $0 = substr($0, 1, n - 1); print }' |
        options_in
}

# Options the page's section for command $1 documents: the .SS heading and every line whose
# first word is an option in bold (.B, .BI, .BR or \fB: a tag, or an option referred to).
man_options() {
    awk -v head=".SS \"jsmf $1 " '
        index($0, head) == 1 {on = 1; print; next}
        on && /^\.S[SH] / {on = 0}
        on && (/^\.B[IR]? \\-/ || /^\\fB\\-/) {print}' "$page" |
        sed 's/\\-/-/g; s/\\f[BIRP]/ /g' | options_in
}

strip_value() { sed 's/=.*//' | sort -u; }

fail=0
cmds=$("$JSMF" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
[ -n "$cmds" ] || { echo "jsmf --help lists no commands"; exit 1; }
common_man=$(awk '/^\.SH COMMON OPTIONS/ {on = 1; next} on && /^\.SH / {on = 0} on' "$page" |
    sed 's/\\-/-/g' | options_in)
for o in $common; do
    echo "$common_man" | grep -qx -- "$o" || { echo "man COMMON OPTIONS lacks $o"; fail=1; }
done
for c in $cmds; do
    grep -q "^\.SS \"jsmf $c " "$page" || { echo "man page has no section for 'jsmf $c'"; fail=1; continue; }
    "$JSMF" "$c" --help | help_options >"$tmp/help.raw"
    strip_value <"$tmp/help.raw" >"$tmp/help"
    man_options "$c" | strip_value >"$tmp/man"
    for o in $(comm -23 "$tmp/help" "$tmp/man"); do
        case " $common " in *" $o "*) continue ;; esac
        echo "jsmf $c --help has $o, its man section does not"; fail=1
    done
    for o in $(comm -13 "$tmp/help" "$tmp/man"); do
        case " $common " in *" $o "*) continue ;; esac
        echo "man section of jsmf $c has $o, jsmf $c --help does not"; fail=1
    done
    # an option written --name=a|b is tried as --name=a
    for o in $(sed 's/|.*//' "$tmp/help.raw"); do
        "$JSMF" "$c" "$o" </dev/null >/dev/null 2>"$tmp/err"
        if grep -q "unknown option" "$tmp/err"; then
            echo "jsmf $c --help names $o, which jsmf $c does not accept"; fail=1
        fi
    done
    # docs/cli.md's synopsis: lines from "jsmf CMD" up to the next command, in the block after
    # "## Commands"
    awk -v c="$c" '/^## Commands/ {s = 1; next} s && /^```/ {b++; if (b == 2) exit; next}
        s && b == 1 { if ($1 == "jsmf") on = ($2 == c); if (on) print }' "$synopsis" >"$tmp/syn"
    [ -s "$tmp/syn" ] || { echo "docs/cli.md's Commands synopsis has no line for jsmf $c"; fail=1; }
    grep -oE -- '--[a-z0-9][a-z0-9-]*' "$tmp/syn" | sort -u >"$tmp/synopsis"
    for o in $(comm -23 "$tmp/synopsis" "$tmp/help"); do
        case " $common " in *" $o "*) continue ;; esac
        echo "docs/cli.md synopsis of jsmf $c has $o, jsmf $c --help does not"; fail=1
    done
done
[ $fail -eq 0 ] && echo "checked: $(echo $cmds)"
exit $fail

#!/bin/sh
# help_from_man.sh — --help is the manual's (tools/man2help.awk, at build time): a command's
# usage line is its section heading in man/jsmf.1 and each option's text the first sentence of
# its description there. On made-up pages the script renders roff (fonts, .BR runs, quoted
# arguments, glyphs), ends a sentence only at the end of a line (not after "e.g." or "..."),
# keeps grouped options in one entry, skips tags that are not options and sections that are not
# commands, writes C that compiles, and fails (exit 1, naming the line) on an escape it cannot
# render, an option documented twice in a section or a tag without text.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-$(pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
A="$ROOT/tools/man2help.awk"

# the real page: the heading, first sentences only, the page's own value names
"$J" vocab --help >"$T/help" || fail "jsmf vocab --help: exit $?"
grep -qx 'usage: jsmf vocab INPUT... -o VOCAB \[options\]' "$T/help" || fail "usage line: $(head -n 1 "$T/help")"
flat=$(tr '\n' ' ' <"$T/help" | tr -s ' ')
for want in "--max-words N keep the N words of highest document frequency (default: all). --min-doc-len" \
    "--format F text, uci, ldac, items or auto (default: sniffed from the content; items are never sniffed)." \
    "--min-word-len N, --max-word-len N text: shortest and longest token in bytes (defaults 3 and 64); item ids are 1 to 256 bytes whatever these say."; do
    case $flat in *"$want"*) ;; *) fail "jsmf vocab --help lacks '$want'" ;; esac
done
case $flat in *"tf-idf"*) fail "jsmf vocab --help shows a second sentence of --max-words" ;; esac

cat >"$T/ok.1" <<'PAGE'
.TH T 1
.SH COMMANDS
.\" a comment
.SS "jsmf demo IN \-o OUT [options]"
Demo a thing, e.g.
slowly... and \(lqwell\(rq.
Not shown.
.TP
.BI \-o ", " \-\-output " OUT"
.BR text ", " uci " or " auto
(default \(*l = 0.7).
Not shown.
.TP
.B values
not an option, skipped.
.TP
\fB\-\-a\fP \fIN\fP, \fB\-\-b\fP \fIX\fP
both, in one entry
.PP
Not shown.
.SH COMMON OPTIONS
.TP
.BR \-h ", " \-\-help
this.
.SH FILES
.TP
.B \-\-file
in FILES, skipped.
PAGE
awk -f "$A" "$T/ok.1" >"$T/ok.c" 2>"$T/err" || fail "a good page: exit $?: $(cat "$T/err")"
entries=$(tr '\n' ' ' <"$T/ok.c" | tr -s ' ' | grep -o '{"[^}]*}')
expect_entry() {
    printf '%s\n' "$entries" | grep -qxF -- "$1" || fail "no entry $1 in: $entries"
}
expect_entry '{"demo", 1, "jsmf demo IN -o OUT [options]", "Demo a thing, e.g. slowly... and \"well\"."}'
expect_entry '{"demo", 0, "-o, --output OUT", "text, uci or auto (default lambda = 0.7)."}'
expect_entry '{"demo", 0, "--a N, --b X", "both, in one entry"}'
expect_entry '{"", 0, "-h, --help", "this."}'
n=$(printf '%s\n' "$entries" | grep -c .)
[ "$n" -eq 4 ] || fail "$n entries, not 4: $entries"
if command -v "${CC:-cc}" >/dev/null 2>&1; then
    "${CC:-cc}" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$ROOT/src" -I"$ROOT/include" \
        "$T/ok.c" 2>"$T/err" || fail "the C does not compile: $(cat "$T/err")"
fi

bad() { # name, expected message, page text
    printf '.SH COMMANDS\n.SS "jsmf demo X"\nDemo.\n%s\n' "$3" >"$T/$1.1"
    awk -f "$A" "$T/$1.1" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 1 ] || fail "$1: exit $rc, not 1"
    grep -q "$T/$1.1:[0-9]*: .*$2" "$T/err" || fail "$1: message '$(cat "$T/err")' lacks '$2'"
}
bad escape 'cannot render\|no plain text' '.TP
.B \-\-x
a \(xx glyph.'
bad twice 'documented twice' '.TP
.B \-\-x
one.
.TP
\fB\-\-y\fP, \fB\-\-x\fP
two.'
bad notext 'no description' '.TP
.B \-\-x
.TP
.B \-\-y
text.'
exit $fails

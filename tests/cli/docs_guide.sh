#!/bin/sh
# docs_guide.sh — README.md and the guide (docs/*.md) say what to do and what to rely on, not
# what was measured or what changed: no line of them holds a measurement (a timing such as
# "12.3 s" or "586 s", a rate such as "GB/s" or "tokens/s", a speed-up such as "20x", a size
# such as "4.6 GB", a log-likelihood such as "-6.5806", a c_v value, "on this 2-core machine",
# an idle run) or history ("formerly", "no longer", "used to", "the former rule", "earlier
# stop", "before this change", "since format 6", ...): measurements belong in
# tools/bench/*-results.md with the command that made them, history in git. A line a guide
# genuinely needs (a default, a limit) goes in the allow-list below as FILE|TEXT: any flagged
# line of FILE that contains TEXT passes. And README.md stays a short front page: at most 160
# lines.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
cd "$ROOT" || exit 1
T=$(mktemp -d /tmp/jsmf-docs-guide-XXXXXX)
trap 'rm -rf "$T"' EXIT

cat >"$T/allow" <<'EOF'
docs/cli.md|every 60 seconds of wall time by default
EOF

# measurement patterns (ERE), one a line: what a number measured
cat >"$T/measure" <<'EOF'
[0-9]+\.[0-9]+ ?(s|ms|µs|us|min|h)([^A-Za-z0-9_]|$)
(^|[^A-Za-z0-9_.])[0-9]+ (s|ms|µs|min)([^A-Za-z0-9_]|$)
[0-9]+ ?(ms|µs)([^A-Za-z0-9_]|$)
[0-9] ?(seconds|minutes|hours)([^A-Za-z0-9_]|$)
(CPU|wall) s([^A-Za-z0-9_]|$)
[0-9] ?([KMGT]i?B|[KMGT]i?b|tokens|docs|documents|pairs|rows|entries|words|items|lines)/s([^A-Za-z0-9_]|$)
[0-9](\.[0-9]+)?x([^A-Za-z0-9_]|$)
[0-9] ?times (faster|slower|smaller|larger|fewer|more)
[0-9]+(\.[0-9]+)? ?[KMGT]i?B([^A-Za-z0-9_/]|$)
[−-][0-9]+\.[0-9]{3,}
c_v (of |from |is )?[0-9]
[0-9]+(\.[0-9]+)?% (faster|slower|less|more|of the (time|wall|command))
[0-9]-core machine
(idle|loaded) (machine|run)
on this machine
EOF

# history (case-insensitive): what used to be
cat >"$T/history" <<'EOF'
formerly
no longer
used to
earlier stop
before this change
former (rule|default|behaviou?r)
old (rule|default|behaviou?r)
the earlier (rule|default|behaviou?r)
previously
until now
as before
since (format|version|stop|commit|release) [0-9]
in the past
any ?more([^A-Za-z]|$)
(was|were) changed
EOF

files=$(ls README.md docs/*.md 2>/dev/null)
[ -f README.md ] || fail "no README.md"
[ -f docs/README.md ] || fail "no docs/README.md (the guide's index)"
for f in $files; do
    # file:line:text of every flagged line, then those the allow-list lets through dropped
    {
        grep -nE -f "$T/measure" "$f" | sed "s|^|$f:measurement:|"
        grep -niE -f "$T/history" "$f" | sed "s|^|$f:history:|"
    } >"$T/hits"
    while IFS= read -r hit; do
        text=${hit#*:*:*:}
        ok=0
        while IFS='|' read -r af at; do
            [ "$af" = "$f" ] || continue
            case $text in *"$at"*) ok=1; break ;; esac
        done <"$T/allow"
        [ $ok -eq 1 ] || fail "$hit"
    done <"$T/hits"
done
n=$(wc -l <README.md)
[ "$n" -le 160 ] || fail "README.md has $n lines: keep it a front page (at most 160) and move the guide to docs/"
[ "$fails" -eq 0 ] && echo "docs_guide: $(echo $files | wc -w) files, README.md $n lines"
exit "$fails"

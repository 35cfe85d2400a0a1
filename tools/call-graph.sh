#!/bin/sh
# call-graph.sh — what calls what in src/, from the code rather than the includes: for each
# function a src/ .c file defines (not static), the other files that name it (call it, or take
# its address). Fails on (a) a cycle of calls between files of one folder, which the include
# graph cannot see when both files include a shared header (the store's files all include
# env.h), and (b) a file calling into another folder's function that no header declares, or
# that only that folder's *_internal.h declares (its private interface).
#   tools/call-graph.sh [ROOT]      (ROOT: the checkout, default .; tools/include-graph.sh runs it)
# Output: "calls: FILE -> FILE ..." per calling module (paths without .c), then the problems
# and exit 1, or "no call cycles" and exit 0. A regex scan, not a compiler: comments, strings
# and character literals are skipped, member names (after . or ->, or declared in a struct) are
# not calls, and a static function hides one of the same name elsewhere.
set -eu
ROOT=${1:-.}
TOOLS=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tokens of each C file: "def NAME static|extern" for each function definition at file scope,
# "use NAME" for each other identifier (comments, strings and members left out)
scan() {
    awk '
    function top_token(t) { if (depth == 0) stmt[++ns] = t }
    BEGIN { depth = 0; ns = 0; incom = 0 }
    {
        line = $0; n = length(line); i = 1
        if (!incom && line ~ /^[ \t]*#[ \t]*include/) next
        # a preprocessor line (and its continuations): names used, nothing defined
        if (!incom && (cont || line ~ /^[ \t]*#/)) {
            cont = line ~ /\\$/
            gsub(/\/\*.*\*\/|\/\/.*|"([^"\\]|\\.)*"|\x27([^\x27\\]|\\.)*\x27/, " ", line)
            gsub(/(\.|->)[ \t]*[A-Za-z_][A-Za-z0-9_]*/, " ", line)
            while (match(line, /[A-Za-z_][A-Za-z0-9_]*/)) {
                print "use", substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
            }
            next
        }
        while (i <= n) {
            c = substr(line, i, 1); c2 = substr(line, i, 2)
            if (incom) { if (c2 == "*/") { incom = 0; i += 2 } else i++; continue }
            if (c2 == "/*") { flush(); incom = 1; i += 2; continue }
            if (c2 == "//") { flush(); break }
            if (c == "\"" || c == "\x27") {   # a string or character literal
                flush(); q = c; i++
                while (i <= n && substr(line, i, 1) != q) { if (substr(line, i, 1) == "\\") i++; i++ }
                i++; top_token("lit"); continue
            }
            if (c ~ /[A-Za-z_0-9]/) { word = word c; i++; continue }
            flush()
            if (c2 == "->") { member = 1; i += 2; continue }
            if (c == ".") { member = 1; i++; continue }
            if (c ~ /[ \t]/) { i++; continue }
            if (c == "{") {
                if (depth == 0) { definition(); in_type = type_body() }
                depth++
            } else if (c == "}") {
                depth--
                if (depth == 0) { ns = 0; in_init = 0; in_type = 0 }
            } else if (c == ";" && depth == 0) {
                ns = 0; in_init = 0
            } else {
                if (c == "=" && depth == 0) in_init = 1
                top_token(c)
            }
            i++
        }
        flush()
    }
    function flush() {
        if (word == "") return
        if (word ~ /^[A-Za-z_]/) {
            if (!member && !in_type && (depth > 0 || in_init)) print "use", word
            else if (!member && depth == 0) print "top", word
            top_token(word)
        }
        member = 0; word = ""
    }
    # at file scope, a "{" of struct, union or enum opens member declarations, not uses
    function type_body(   k) {
        if (in_init) return 0
        for (k = 1; k <= ns; k++) if (stmt[k] ~ /^(struct|union|enum)$/) return 1
        return 0
    }
    # at file scope, a "{" after "NAME ( ... )" opens the body of function NAME
    function definition(   k, st) {
        if (ns < 3 || stmt[ns] != ")" || in_init) return
        for (k = 1; k < ns && stmt[k + 1] != "("; k++) ;
        if (k >= ns || stmt[k] ~ /^(if|while|for|switch|return|sizeof|main)$/) return
        st = "extern"
        for (j = 1; j < k; j++) if (stmt[j] == "static") st = "static"
        print "def", stmt[k], st
    }' "$1"
}

files=$(find src -name '*.c' -o -name '*.cu' | sort)
for f in $files; do
    scan "$f" | sed "s|^|${f%.*} |" >>"$tmp/tokens"
done
touch "$tmp/tokens"
# NAME FILE for each function defined at file scope and not static
awk '$2 == "def" && $4 == "extern" { print $3, $1 }' "$tmp/tokens" | sort -u >"$tmp/defs"
# FILE NAME for each static definition (it hides an outside function of that name)
awk '$2 == "def" && $4 == "static" { print $1, $3 }' "$tmp/tokens" | sort -u >"$tmp/statics"

# edges "CALLER CALLEE NAME": a name used in one file and defined (not static) in another;
# "top" uses are file-scope prototypes, which also reach the definition
awk 'FILENAME == ARGV[1] { def[$1] = def[$1] " " $2; next }
     FILENAME == ARGV[2] { st[$1 " " $2] = 1; next }
     ($2 == "use" || $2 == "top") && ($3 in def) && !(($1 " " $3) in st) &&
     index(def[$3] " ", " " $1 " ") == 0 {
         k = split(def[$3], d, " ")
         for (i = 1; i <= k; i++) if (d[i] != $1) print $1, d[i], $3 }' \
    "$tmp/defs" "$tmp/statics" "$tmp/tokens" | sort -u >"$tmp/edges"

awk '{ e[$1] = e[$1] ($1 SUBSEP $2 in seen ? "" : " " $2); seen[$1 SUBSEP $2] = 1 }
     END { for (f in e) print "calls: " f " ->" e[f] }' "$tmp/edges" | sort

status=0
# (a) a cycle of calls between the files of one folder
awk '{ a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b)
       if (a == b) print $1, $2 }' "$tmp/edges" | sort -u >"$tmp/folder_edges"
awk -v label="call cycle" -v edges=1 -f "$TOOLS/cycles.awk" "$tmp/folder_edges" >"$tmp/cycles" \
    || status=1
grep -v '^cycle edge:' "$tmp/cycles" || true
# the functions each edge of a cycle calls, for the message
awk 'FILENAME == ARGV[1] { if ($1 == "cycle") want[$3 " " $4] = 1; next }
     ($1 " " $2) in want { names[$1 " " $2] = names[$1 " " $2] " " $3 }
     END { for (e in names) { split(e, p, " "); print "  " p[1] " calls" names[e] " of " p[2] } }' \
    "$tmp/cycles" "$tmp/edges" | sort

# (b) a call into another folder: the callee is declared in a header that is not that folder's
# private one (include/*.h, or a src/ header not named *_internal.h)
find include src -name '*.h' | sort | xargs grep -o '[A-Za-z_][A-Za-z0-9_]* *(' /dev/null |
    sed 's/ *($//; s/:/ /' | sort -u >"$tmp/declared"   # "HEADER NAME"
awk 'FILENAME == ARGV[1] { if ($1 ~ /_internal\.h$/) inner[$2] = inner[$2] " " $1
                           else public[$2] = 1; next }
     { a = $1; b = $2; sub(/\/[^\/]*$/, "", a); sub(/\/[^\/]*$/, "", b) }
     a != b && !($3 in public) {
         if ($3 in inner)
             print "call into the internals of " b ": " $1 " calls " $3 " (" $2 "), declared only in" inner[$3]
         else
             print "call into another folder without a header: " $1 " calls " $3 " (" $2 ")" }' \
    "$tmp/declared" "$tmp/edges" >"$tmp/foreign"
[ -s "$tmp/foreign" ] && cat "$tmp/foreign" && status=1
[ $status -eq 0 ] && echo "no call cycles"
exit $status

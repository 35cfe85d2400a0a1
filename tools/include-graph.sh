#!/bin/sh
# include-graph.sh — print the include graph of src/ (and the public headers it includes) and
# fail on a cycle. A node is a module file without its extension: x.c and x.h in one folder are
# one node, so a cycle through headers is a cycle between the .c files that implement them. The
# graph shows what calls what only if every function a header declares is defined beside it, so
# that is checked too: a function declared in src/DIR/x.h must be defined in src/DIR/x.c; and a
# folder's *_internal.h is included only by the files of that folder. Includes do not show every
# call (files that include a shared header call each other unseen), so tools/call-graph.sh
# runs too: no cycle of calls within a folder, no call into another folder's internals.
#   tools/include-graph.sh [ROOT]     (ROOT: the checkout, default .)
# Output: "node -> dep dep ..." per node, then "folders:" and the same per folder (src/DIR, the
# public header include/jsmf_DIR.h counted in DIR), then call-graph.sh's "calls: ..." lines,
# then "no cycles" (exit 0), or the problems (exit 1).
set -eu
ROOT=${1:-.}
TOOLS=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.folders" "$tmp.internal" "$tmp.calls"' EXIT

# edges: "from to", resolving #include "x" beside the file, then in src/, then in include/
for f in $(find src include -name '*.[ch]' | sort); do
    dir=$(dirname "$f")
    from=${f%.*}
    sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        for cand in "$dir/$inc" "src/$inc" "include/$inc"; do
            if [ -f "$cand" ]; then
                to=$(printf '%s\n' "${cand%.*}" | sed 's|/[^/]*/\.\./|/|g')
                [ "$to" != "$from" ] && echo "$from $to"
                break
            fi
        done
    done
done | sort -u >"$tmp"

status=0
# the graph, and a depth-first search for a cycle; then the same for folders (the floors of the
# source tour, docs/source.md: src/DIR, with include/jsmf_DIR.h counted in DIR and jsmf.h in core)
folders() {
    awk '{ for (i = 1; i <= 2; i++) {
               n = $i
               if (n ~ /^include\/jsmf$/) n = "core"
               else if (n ~ /^include\/jsmf_/) { sub(/^include\/jsmf_/, "", n) }
               else { sub(/^src\//, "", n); sub(/\/.*/, "", n) }
               f[i] = n }
           if (f[1] != f[2]) print f[1], f[2] }' "$1" | sort -u
}
folders "$tmp" >"$tmp.folders"
for graph in "$tmp" "$tmp.folders"; do
[ "$graph" = "$tmp.folders" ] && echo "folders:"
awk -v label=cycle -v list=1 -f "$TOOLS/cycles.awk" "$graph" || status=1
done

# every function a src/ header declares is defined in the .c of the same name; a header without
# one declares none (types, macros and inline functions only), except a folder's *_internal.h or
# the header named after its folder (src/cli/cli.h): the private interface of all the files of
# the folder (src/fit, src/fdm, src/cli), whose calls among themselves this graph does not show
for h in $(find src -name '*.h' | sort); do
    c=${h%.h}.c
    case $h in *_internal.h) continue ;; esac
    [ "$(basename "$h" .h)" = "$(basename "$(dirname "$h")")" ] && continue
    for fn in $(awk '
        /^[ \t]*(#|\/\/|\*|\/\*|typedef|static|extern "C"|struct [a-z_]* *\{|\})/ { next }
        match($0, /^[a-zA-Z_][a-zA-Z0-9_ \t*]*[ \t*]([a-zA-Z_][a-zA-Z0-9_]*)\(/) {
            s = substr($0, 1, RLENGTH - 1); sub(/.*[ \t*]/, "", s); print s }' "$h"); do
        [ -f "$c" ] && grep -q "^[a-zA-Z_].*[ *]$fn(" "$c" || {
            echo "declared in $h but not defined in $c: $fn"
            status=1
        }
    done
done
# a folder's *_internal.h is that folder's private interface: no file of another folder includes
# it (what two folders share lives in the lower one, e.g. src/core/threads.h)
awk '{ for (i = 2; i <= NF; i++) if ($i ~ /_internal$/) {
           from = $1; to = $i
           sub(/\/[^\/]*$/, "", from); sub(/\/[^\/]*$/, "", to)
           if (from != to) print "internal header of " to " included by " $1 ": " $i ".h" } }' \
    "$tmp" >"$tmp.internal"
[ -s "$tmp.internal" ] && cat "$tmp.internal" && status=1
sh "$TOOLS/call-graph.sh" . >"$tmp.calls" || status=1
grep -v '^no call cycles$' "$tmp.calls" || true
[ $status -eq 0 ] && echo "no cycles"
exit $status

#!/bin/sh
# include_graph.sh — tools/include-graph.sh on this tree: the include graph of src/ has no
# cycle, between files or between folders, and every function a src/ header declares is defined
# beside it (so the graph is what calls what), and no folder includes another's *_internal.h; on
# small made-up trees it finds a cycle of files, one of folders, a misplaced declaration and an
# internal header included from another folder.
set -u
ROOT=${ROOT:-.}
G="$ROOT/tools/include-graph.sh"
T=$(mktemp -d /tmp/jsmf-include-graph-XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

sh "$G" "$ROOT" >"$T/out" 2>&1 || fail "this tree: $(grep -v -- ' ->' "$T/out")"
grep -q '^src/store/rows -> src/store/codec src/store/env src/store/flush src/store/registry$' "$T/out" \
    || fail "store/rows edges: $(grep '^src/store/rows' "$T/out")"
grep -q '^no cycles$' "$T/out" || fail "no verdict"

mkdir -p "$T/a/src/m" "$T/a/include"
printf '#include "y.h"\nint x(void) { return y(); }\n' >"$T/a/src/m/x.c"
printf 'int x(void);\n' >"$T/a/src/m/x.h"
printf '#include "x.h"\nint y(void) { return x(); }\n' >"$T/a/src/m/y.c"
printf 'int y(void);\n' >"$T/a/src/m/y.h"
sh "$G" "$T/a" >"$T/out" 2>&1 && fail "a cycle passed"
grep -q "cycle: src/m/[xy] -> src/m/[xy] -> src/m/[xy]" "$T/out" || fail "cycle not named: $(cat "$T/out")"

mkdir -p "$T/b/src/m" "$T/b/include"
printf '#include "x.h"\nint x(void) { return 0; }\n' >"$T/b/src/m/x.c"
printf 'int x(void);\nint z(int a,\n      int b);\n' >"$T/b/src/m/x.h"
sh "$G" "$T/b" >"$T/out" 2>&1 && fail "a misplaced declaration passed"
grep -q "declared in src/m/x.h but not defined in src/m/x.c: z" "$T/out" || fail "misplaced: $(cat "$T/out")"

# no cycle between files, but one between folders (a/x -> b/y -> a/z)
mkdir -p "$T/c/src/a" "$T/c/src/b" "$T/c/include"
printf '#include "b/y.h"\n' >"$T/c/src/a/x.c"
printf '#include "a/z.h"\n' >"$T/c/src/b/y.c"
printf 'struct y;\n' >"$T/c/src/b/y.h"
printf 'struct z;\n' >"$T/c/src/a/z.h"
sh "$G" "$T/c" >"$T/out" 2>&1 && fail "a cycle of folders passed"
grep -q "cycle: [ab] -> [ab] -> [ab]" "$T/out" || fail "folder cycle not named: $(cat "$T/out")"
sh "$G" "$ROOT" | sed -n '/^folders:/,$p' | grep -q '^store -> core model$' || fail "folder graph"

# a folder's internal header included from another folder (e/x -> f/f_internal.h)
mkdir -p "$T/d/src/e" "$T/d/src/f" "$T/d/include"
printf '#include "f/f_internal.h"\n' >"$T/d/src/e/x.c"
printf 'struct f;\n' >"$T/d/src/f/f_internal.h"
sh "$G" "$T/d" >"$T/out" 2>&1 && fail "an internal header used by another folder passed"
grep -q "internal header of src/f included by src/e/x: src/f/f_internal.h" "$T/out" \
    || fail "internal header not named: $(cat "$T/out")"

[ $fails -eq 0 ] && echo "include_graph: ok"
exit $fails

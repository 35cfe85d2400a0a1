#!/bin/sh
# tools_include_graph.sh — tools/include-graph.sh on this tree: the include graph of src/ has no
# cycle, between files or between folders, and every function a src/ header declares is defined
# beside it (so the graph is what calls what), and no folder includes another's *_internal.h; on
# small made-up trees it finds a cycle of files, one of folders, a misplaced declaration and an
# internal header included from another folder; and (tools/call-graph.sh, which it runs) a cycle
# of calls between two files of a folder that the includes do not show, a call into another
# folder's function declared only in its *_internal.h, and one declared in no header at all,
# while a static function of the same name as another folder's is no call into it.
set -u
ROOT=${ROOT:-.}
G="$ROOT/tools/include-graph.sh"
T=$(mktemp -d /tmp/jsmf-include-graph-XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

sh "$G" "$ROOT" >"$T/out" 2>&1 || fail "this tree: $(grep -v -- ' ->' "$T/out")"
grep -q '^src/store/rows -> src/core/clock src/core/grow src/core/hash src/store/codec src/store/docrows src/store/docs src/store/env src/store/flush src/store/growth src/store/registry$' "$T/out" \
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

# calls the includes do not show: x.c and y.c include only the folder's public header, as
# the store's rows.c and store.c both include jsmf_store.h, and call each other
mkdir -p "$T/e/src/m" "$T/e/include"
printf 'int x(void);\nint y(int n);\n' >"$T/e/include/jsmf_m.h"
printf '#include "jsmf_m.h"\nint x(void)\n{\n    return y(1); /* x() */\n}\n' >"$T/e/src/m/x.c"
printf '#include "jsmf_m.h"\nint y(int n)\n{\n    return n ? x() : 0;\n}\n' >"$T/e/src/m/y.c"
sh "$G" "$T/e" >"$T/out" 2>&1 && fail "a cycle of calls passed"
grep -q "^call cycle: src/m/[xy] -> src/m/[xy] -> src/m/[xy]$" "$T/out" \
    || fail "call cycle not named: $(cat "$T/out")"
grep -q "src/m/x calls y of src/m/y" "$T/out" || fail "call cycle's calls: $(cat "$T/out")"
grep -q "^no cycles$" "$T/out" && fail "a verdict of no cycles with a call cycle"

# calls into another folder: a function only its *_internal.h declares, one no header declares
mkdir -p "$T/f/src/e" "$T/f/src/g" "$T/f/include"
printf 'int g_inner(void);\n' >"$T/f/src/g/g_internal.h"
printf '#include "g_internal.h"\nint g_inner(void) { return 1; }\nint g_bare(void) { return 2; }\n' \
    >"$T/f/src/g/g.c"
printf 'int g_inner(void);\nint e(void)\n{\n    return g_inner();\n}\n' >"$T/f/src/e/e.c"
printf 'int g_bare(void);\nint e2(void) { return g_bare(); }\n' >"$T/f/src/e/e2.c"
sh "$G" "$T/f" >"$T/out" 2>&1 && fail "calls into another folder's internals passed"
grep -q "call into the internals of src/g: src/e/e calls g_inner (src/g/g), declared only in src/g/g_internal.h" \
    "$T/out" || fail "internal call not named: $(cat "$T/out")"
grep -q "call into another folder without a header: src/e/e2 calls g_bare (src/g/g)" "$T/out" \
    || fail "headerless call not named: $(cat "$T/out")"

# a static function named like another folder's is its own (and a member or a string is no call)
rm "$T/f/src/e/e.c" "$T/f/src/e/e2.c"
printf 'struct s { int (*g_bare)(void); };\nstatic int g_inner(void) { return 0; }\n' >"$T/f/src/e/e.c"
printf 'int e(struct s *p) { return g_inner() + p->g_bare() + (int)sizeof "g_bare()"; }\n' \
    >>"$T/f/src/e/e.c"
sh "$G" "$T/f" >"$T/out" 2>&1 || fail "a static namesake or a member taken for a call: $(cat "$T/out")"

[ $fails -eq 0 ] && echo "tools_include_graph: ok"
exit $fails

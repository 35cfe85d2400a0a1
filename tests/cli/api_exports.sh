#!/bin/sh
# api_exports.sh — libjsmf.so exports exactly what include/ declares: the jsmf_ functions of
# `nm -D --defined-only` equal the functions the public headers declare (tools/api-symbols.py),
# each difference named both ways; every declaration carries JSMF_API; and nothing else is
# exported but OpenMP's named critical sections (.gomp_critical_user_*, global by design). On
# made-up headers the check names a declaration the library lacks, an export no header
# declares and a declaration without JSMF_API. And no function of src/ has the public prefix
# jsmf_ unless include/ declares it (the plugins' entry points, looked up by name, aside).
# Skips (77) without nm.
. "$(dirname "$0")/common.inc"
ROOT=${ROOT:-.}
BUILD=${BUILD:-build}
command -v nm >/dev/null 2>&1 || { echo "nm not installed (binutils)"; exit 77; }
T=$(mktemp -d /tmp/jsmf-api-exports-XXXXXX)
trap 'rm -rf "$T"' EXIT
SO=$BUILD/libjsmf.so
[ -e "$SO" ] || { echo "FAIL: $SO not built"; exit 1; }

nm -D --defined-only "$SO" | awk '{print $NF}' | sort >"$T/all"
grep '^jsmf_' "$T/all" >"$T/exported"
# compare: the differences between include dir $1's declarations and $T/exported, one line each
compare() {
    "$PYTHON" "$ROOT/tools/api-symbols.py" declared "$1" | sort -u >"$T/declared"
    comm -23 "$T/declared" "$T/exported" | sed 's/^/declared in include\/ but not exported: /'
    comm -13 "$T/declared" "$T/exported" | sed 's/^/exported but not declared in include\/: /'
    "$PYTHON" "$ROOT/tools/api-symbols.py" unmarked "$1" | sed 's/^/declared without JSMF_API: /'
}
compare "$ROOT/include" >"$T/diff"
[ -s "$T/diff" ] && fail "libjsmf.so and include/ differ:$(sed 's/^/\n  /' "$T/diff")"
n=$(wc -l <"$T/exported")
[ "$n" -gt 50 ] || fail "only $n jsmf_ symbols exported"
others=$(grep -v '^jsmf_' "$T/all" | grep -v '^\.gomp_critical_user_' | tr '\n' ' ')
[ -z "$others" ] || fail "exported besides the public API: $others"

# the check fails, naming them, on a header that declares what the library lacks
mkdir -p "$T/inc"
cp "$ROOT"/include/*.h "$T/inc/"
printf '/* jsmf_in_comment(void) is no declaration */\nJSMF_API int jsmf_not_there(int a,\n    int b);\nint jsmf_unmarked(void);\ntypedef int (*jsmf_cb_fn)(void);\n' \
    >"$T/inc/jsmf_extra.h"
sed -i '/jsmf_version(void)/d' "$T/inc/jsmf.h"
compare "$T/inc" >"$T/diff"
grep -q '^declared in include/ but not exported: jsmf_not_there$' "$T/diff" \
    || fail "a missing export not named: $(cat "$T/diff")"
grep -q '^declared without JSMF_API: jsmf_extra.h: jsmf_unmarked$' "$T/diff" \
    || fail "an unmarked declaration not named: $(cat "$T/diff")"
grep -q '^exported but not declared in include/: jsmf_version$' "$T/diff" \
    || fail "an undeclared export not named: $(cat "$T/diff")"
grep -q 'jsmf_in_comment\|jsmf_cb_fn' "$T/diff" && fail "a comment or a pointer type taken for a declaration"
[ "$fails" -eq 0 ] && echo "api_exports: $n functions exported, as include/ declares"
# the public prefix is the public API's alone: a function src/ defines as jsmf_* is declared in
# include/ (the plugins' entry points, looked up by name, excepted)
"$PYTHON" "$ROOT/tools/api-symbols.py" declared "$ROOT/include" | sort -u >"$T/declared"
grep -rn '^[A-Za-z_][A-Za-z0-9_ *]*\bjsmf_[a-z0-9_]*(' "$ROOT/src" --include='*.c' --include='*.h' --include='*.cu' |
    grep -v ':typedef\|:#' | sed 's/^\([^:]*:[0-9]*\):.*\b\(jsmf_[a-z0-9_]*\)(.*/\1 \2/' |
    while read -r at name; do
        grep -qx "$name" "$T/declared" || case $name in *_plugin_v[0-9]*) ;; *) echo "$at $name" ;; esac
    done >"$T/internal"
[ -s "$T/internal" ] && fail "internal functions with the public prefix:$(sed 's/^/\n  /' "$T/internal")"
exit "$fails"

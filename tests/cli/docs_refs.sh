#!/bin/sh
# docs_refs.sh — the files that the documents and comments point to exist: every path under
# formats/, src/, include/, tests/, tools/, examples/, man/ or notes/, and every bare file name
# of two or more characters before its extension (fit_compress.c, fdm.md; not a script's b.h),
# named in README.md, man/jsmf.1, include/, formats/, src/, tests/py/,
# tools/synth/ and the benchmark notes is a file of the repository (#include lines aside; build
# outputs under examples/out/ aside).
set -u
ROOT=${ROOT:-.}
cd "$ROOT" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -co --exclude-standard >"$tmp/files"
else
    find . -type f | sed 's#^\./##' >"$tmp/files"
fi
docs=$(ls README.md man/jsmf.1 include/*.h formats/*.md tools/bench/*.md tools/synth/* 2>/dev/null;
       find src tests/py -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.py' \))
fail=0
for f in $docs; do
    grep -v '^#include' "$f" |
        grep -oE '(^|[^A-Za-z0-9_./-])((formats|src|include|tests|tools|examples|man|notes)/[A-Za-z0-9_./-]*[A-Za-z0-9_]|[a-z][a-z0-9_-]+\.(c|h|cu|md|py))([^A-Za-z0-9_.]|$)' |
        sed 's/^[^A-Za-z]//; s/[^A-Za-z0-9_]$//' | sort -u >"$tmp/refs"
    while read -r ref; do
        case $ref in examples/out*|*_) continue ;; esac
        case $ref in
        */*) [ -e "$ref" ] && continue ;;
        *) grep -q "\(^\|/\)$ref\$" "$tmp/files" && continue ;;
        esac
        echo "$f names $ref, which does not exist"; fail=1
    done <"$tmp/refs"
done
exit $fail

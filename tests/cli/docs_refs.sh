#!/bin/sh
# docs_refs.sh — the files that the documents and comments point to exist: every path under
# formats/, src/, include/, tests/, tools/, examples/, man/, docs/ or notes/, and every bare
# file name of two or more characters before its extension (fit_compress.c, fdm.md; not a
# script's b.h), named in README.md, docs/, man/jsmf.1, include/, formats/, src/, tests/py/,
# tools/synth/ and the benchmark notes is a file of the repository (#include lines aside; build
# outputs under examples/out/ aside). And every relative Markdown link, [text](target), of
# README.md, docs/*.md, formats/*.md and tools/bench/*.md resolves from the linking file's
# folder, its #anchor (when it has one) naming a heading of the Markdown file it points to.
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
docs=$(ls README.md docs/*.md man/jsmf.1 include/*.h formats/*.md tools/bench/*.md tools/synth/* 2>/dev/null;
       find src tests/py -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.py' \))
fail=0
for f in $docs; do
    grep -v '^#include' "$f" |
        grep -oE '(^|[^A-Za-z0-9_./-])((formats|src|include|tests|tools|examples|man|docs|notes)/[A-Za-z0-9_./-]*[A-Za-z0-9_]|[a-z][a-z0-9_-]+\.(c|h|cu|md|py))([^A-Za-z0-9_.]|\.([^A-Za-z0-9_]|$)|$)' |
        sed 's/^[^A-Za-z]//; s/[^A-Za-z0-9_]*$//' | sort -u >"$tmp/refs"
    while read -r ref; do
        case $ref in examples/out*|*_) continue ;; esac
        # under docs/ only file names count (docs/s is documents a second)
        case $ref in docs/*.*) ;; docs/*) continue ;; esac
        case $ref in
        */*) [ -e "$ref" ] && continue ;;
        *) grep -q "\(^\|/\)$ref\$" "$tmp/files" && continue ;;
        esac
        echo "$f names $ref, which does not exist"; fail=1
    done <"$tmp/refs"
done

# GitHub's anchor of each heading of Markdown file $1: lowercased, punctuation but - and _
# dropped, blanks turned into -.
anchors() {
    awk '/^```/ {code = !code; next} !code && /^#+ / {sub(/^#+ +/, ""); print}' "$1" |
        tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
for f in $(ls README.md docs/*.md formats/*.md tools/bench/*.md 2>/dev/null); do
    dir=$(dirname "$f")
    # the targets of [text](target) outside code blocks and code spans
    awk '/^```/ {code = !code; next} !code {gsub(/`[^`]*`/, ""); print}' "$f" |
        grep -oE '\]\([^) ]+\)' | sed 's/^](//; s/)$//' | sort -u >"$tmp/links"
    while read -r link; do
        case $link in http://* | https://* | mailto:*) continue ;; esac
        path=${link%%#*}
        anchor=
        case $link in *'#'*) anchor=${link#*#} ;; esac
        if [ -z "$path" ]; then target=$f; else target=$dir/$path; fi
        if [ ! -e "$target" ]; then
            echo "$f links to $link, which does not exist"; fail=1; continue
        fi
        if [ -n "$anchor" ]; then
            case $target in
            *.md) anchors "$target" | grep -qxF -- "$anchor" ||
                { echo "$f links to $link: $target has no heading '$anchor'"; fail=1; } ;;
            esac
        fi
    done <"$tmp/links"
done
exit $fail

#!/bin/sh
# help_install_man.sh — 'make install' puts the manual where 'man jsmf' finds it: with
# DESTDIR into a temporary root, for the default PREFIX and another one, PREFIX/share/man/man1/
# jsmf.1 is man/jsmf.1, and man (its search path derived from PATH, MANPATH unset) resolves
# 'jsmf' to it once PREFIX/bin is on PATH; 'make uninstall' removes it again. Installs the
# already-built program only (-o all: nothing is rebuilt). Skips (77) without make or man.
set -u
ROOT=${ROOT:-.}
BUILD=${BUILD:-build}
command -v make >/dev/null 2>&1 || { echo "make not installed"; exit 77; }
command -v man >/dev/null 2>&1 || { echo "man not installed (Debian package man-db)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for prefix in /usr/local /opt/jsmf; do
    dest=$tmp/root
    rm -rf "$dest"
    if ! make -C "$ROOT" --no-print-directory -o all install DESTDIR="$dest" PREFIX="$prefix" \
            BUILD="$BUILD" CUDA=no >"$tmp/log" 2>&1; then
        echo "make install PREFIX=$prefix failed:"; cat "$tmp/log"; fail=1; continue
    fi
    page=$dest$prefix/share/man/man1/jsmf.1
    cmp -s "$page" "$ROOT/man/jsmf.1" || { echo "PREFIX=$prefix: $page missing or not man/jsmf.1"; fail=1; continue; }
    [ -x "$dest$prefix/bin/jsmf" ] || { echo "PREFIX=$prefix: no bin/jsmf"; fail=1; }
    found=$(env -u MANPATH PATH="$dest$prefix/bin:$PATH" man -w jsmf 2>&1)
    [ "$found" = "$page" ] || { echo "PREFIX=$prefix: 'man -w jsmf' gives '$found', not $page"; fail=1; }
    env -u MANPATH PATH="$dest$prefix/bin:$PATH" MANWIDTH=80 man jsmf 2>/dev/null |
        grep -q "jsmf ingest STORE" || { echo "PREFIX=$prefix: 'man jsmf' does not show the page"; fail=1; }
    make -C "$ROOT" --no-print-directory uninstall DESTDIR="$dest" PREFIX="$prefix" >"$tmp/log" 2>&1
    [ ! -e "$page" ] || { echo "PREFIX=$prefix: make uninstall left $page"; fail=1; }
done
exit $fail

#!/bin/sh
# cli_main_dispatch.sh — the program's own manners: --help/--version to stdout with exit 0,
# no command or an unknown one to stderr with exit 2, a full stdout reported as an error, and
# OpenMP's threads waiting without spinning unless the environment says otherwise (libgomp's
# OMP_DISPLAY_ENV=verbose prints the spin count it runs with: 300000 by default, 0 passive).
set -u
fail=0
check() { if ! eval "$2"; then echo "FAILED: $1"; fail=1; fi; }
out=$("$JSMF" --help); rc=$?
check "--help exits 0" '[ $rc -eq 0 ]'
check "--help lists commands" 'echo "$out" | grep -q "^  ingest "'
check "--help lists copy" 'echo "$out" | grep -q "^  copy "'
out=$("$JSMF" --version); rc=$?
check "--version exits 0 and names version" '[ $rc -eq 0 ] && echo "$out" | grep -q "^jsmf [0-9]"'
"$JSMF" >/dev/null 2>&1; rc=$?
check "no command exits 2" '[ $rc -eq 2 ]'
err=$("$JSMF" frobnicate 2>&1 >/dev/null); rc=$?
check "unknown command exits 2" '[ $rc -eq 2 ]'
check "unknown command named" 'echo "$err" | grep -q frobnicate'
spins() { env $1 OMP_DISPLAY_ENV=verbose "$JSMF" --version 2>&1 >/dev/null |
    sed -n "s/.*GOMP_SPINCOUNT = '\\([0-9]*\\)'.*/\\1/p" | tail -n 1; }
if [ -n "$(spins "-u OMP_WAIT_POLICY")" ]; then  # a libgomp that prints its settings
    check "threads wait passively by default" '[ "$(spins "-u OMP_WAIT_POLICY")" = 0 ]'
    check "the environment's policy is kept" '[ "$(spins OMP_WAIT_POLICY=active)" != 0 ]'
fi
if [ -w /dev/full ]; then
    "$JSMF" --help >/dev/full 2>/dev/null; rc=$?
    check "full stdout exits 1" '[ $rc -eq 1 ]'
fi
exit $fail

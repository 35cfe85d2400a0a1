#!/bin/sh
# store_create.sh — ingest makes a new store only once its vocabulary is known: a counting pass
# that fails (a missing input) leaves no store directory; an existing store is compared with
# --vocab through the library's one comparison (both sides named).
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-store-create-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$J" ingest "$T/s" "$T/missing.txt" -q 2>"$T/err"; rc=$?
[ $rc -eq 1 ] || fail "missing input: exit $rc"
grep -q "missing.txt" "$T/err" || fail "missing input not named: $(cat "$T/err")"
[ -e "$T/s" ] && fail "a failed counting pass left the store directory $T/s"

printf 'wordaa\nwordbb\nwordcc\n' >"$T/v.txt"
printf 'wordaa wordbb wordcc wordaa wordbb\n' >"$T/d.txt"
"$J" ingest "$T/s" "$T/d.txt" --vocab "$T/v.txt" --min-doc-len 2 -q || fail "ingest"
printf 'wordaa\nwordbb\n' >"$T/v2.txt"
"$J" ingest "$T/s" "$T/d.txt" --vocab "$T/v2.txt" --force -q 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "v2.txt has 2 words but .*/s has 3" "$T/err" \
    || fail "a shorter --vocab: exit $rc, $(cat "$T/err")"

[ $fails -eq 0 ] && echo "store_create: ok"
exit $fails

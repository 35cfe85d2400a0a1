#!/bin/sh
# store_create_kills.sh — a new store's ingest killed at each step of the store's creation in
# turn (formats/store.md "Failure injection": JSMF_TEST_EXIT_IN_CREATE 1 the directory made,
# 2 the environment and its empty databases, 3 the vocabulary with its rule; then the first
# checkpoint's transaction, inside and after its commit), then the same command again: the
# store of an uninterrupted run (its C, vocabulary, rule, counters and fingerprint), for a
# vocabulary given (--vocab, whose rule the store takes) and one counted from the input, and
# for both kinds of store. A kill between the vocabulary and its rule once left a store that
# did not grow by the rule: they are one transaction now.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-create-kills-XXXXXX)
trap 'rm -rf "$T"' EXIT
IN=$ROOT/examples/kjv-passages.txt.zst
[ -f "$IN" ] || { echo "skip: $IN not found"; exit 77; }
"$J" vocab "$IN" -o "$T/v.txt" -q || fail "jsmf vocab"

# what a store is, without where it lives: info's JSON but its path and file size; C and the
# vocabulary as export writes them
state() {
    "$J" info "$1" --json -q | grep -v '"store":\|"bytes":' >"$2.info" || fail "info $1"
    "$J" export "$1" -o "$2.mtx" -q || fail "export $1"
}

for hold in rows docs; do
    for vocab in given counted; do
        set -- --hold "$hold" -q
        [ "$vocab" = given ] && set -- "$@" --vocab "$T/v.txt"
        rm -rf "$T/ref"
        "$J" ingest "$T/ref" "$IN" "$@" || fail "$hold/$vocab: uninterrupted ingest"
        state "$T/ref" "$T/want"
        for hook in JSMF_TEST_EXIT_IN_CREATE=1:94 JSMF_TEST_EXIT_IN_CREATE=2:94 \
                    JSMF_TEST_EXIT_IN_CREATE=3:94 JSMF_TEST_EXIT_IN_COMMIT=1:98 \
                    JSMF_TEST_EXIT_AFTER_COMMIT=1:97; do
            var=${hook%:*} code=${hook#*:}
            rm -rf "$T/s"
            env "$var" "$J" ingest "$T/s" "$IN" "$@" 2>"$T/err"; rc=$?
            [ $rc -eq "$code" ] || fail "$hold/$vocab $var: exit $rc (want $code): $(cat "$T/err")"
            "$J" ingest "$T/s" "$IN" "$@" 2>"$T/err"; rc=$?
            if [ "$var" = JSMF_TEST_EXIT_AFTER_COMMIT=1 ] && [ $rc -eq 1 ] &&
               grep -q "already ingested" "$T/err"; then
                : # the kill came after the last checkpoint: nothing left to do
            elif [ $rc -ne 0 ]; then
                fail "$hold/$vocab $var: the rerun: exit $rc: $(cat "$T/err")"
                continue
            fi
            state "$T/s" "$T/got"
            cmp -s "$T/want.info" "$T/got.info" ||
                fail "$hold/$vocab $var: another store: $(diff "$T/want.info" "$T/got.info" | head -5)"
            cmp -s "$T/want.mtx" "$T/got.mtx" || fail "$hold/$vocab $var: another C"
            cmp -s "$T/want.mtx.vocab.txt" "$T/got.mtx.vocab.txt" ||
                fail "$hold/$vocab $var: another vocabulary"
        done
    done
done

[ $fails -eq 0 ] && echo "store_create_kills: ok"
exit $fails

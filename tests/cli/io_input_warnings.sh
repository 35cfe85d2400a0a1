#!/bin/sh
# io_input_warnings.sh — inputs that are not errors but would surprise: an empty input, documents
# all empty, invalid UTF-8 (file and stdin; tokens dropped, the first named by file:line and
# byte; in vocab, ingest, infer and eval --corpus), an input that adds nothing, vocabulary words text can never
# match, and infer on text mostly outside the model's vocabulary each get a warning naming the
# file; where nothing usable
# remains (`vocab` keeping no word, an ingest adding no document) the command fails (exit 1),
# writes nothing, leaves an existing store byte for byte as it was and removes a store it had
# just created. A store holding only its vocabulary (first ingest killed) is refused by fit.
. "$(dirname "$0")/common.inc"
T=$(mktemp -d /tmp/jsmf-input-warnings-XXXXXX)
nowarn() { ! grep -q "warning: " "$T/err" || fail "unexpected warning: $*: $(cat "$T/err")"; }

printf 'alpha\nbeta\ngamma\ndelta\nepsilon\n' >"$T/v.txt"
: >"$T/empty.txt"
printf '\n  \n\t\n' >"$T/blank.txt"
printf 'alpha beta gamma delta epsilon\n' >"$T/good.txt"
# line 2: "\377\376" (too short for a word, but invalid UTF-8 all the same) starts at byte 37,
# "caf\351" (Latin-1 café) at byte 45
printf 'alpha beta gamma delta epsilon\nalpha \377\376 beta caf\351 gamma delta\n' >"$T/latin1.txt"
printf 'alpha beta\nbeta gamma\n' >"$T/short.txt"

# --- vocab ---------------------------------------------------------------------------------
echo "old vocabulary" >"$T/keep.txt"
cp "$T/keep.txt" "$T/keep.orig"
expect 1 "warning: $T/empty.txt: empty input: no documents" "$J" vocab "$T/empty.txt" -o "$T/keep.txt"
grep -q "no words kept: 0 documents read" "$T/err" || fail "vocab empty: no error: $(cat "$T/err")"
cmp -s "$T/keep.txt" "$T/keep.orig" || fail "vocab with no words changed the existing output"
expect 1 "warning: $T/blank.txt: all 3 documents are empty" "$J" vocab "$T/blank.txt" -o "$T/b.txt"
[ ! -e "$T/b.txt" ] || fail "vocab wrote an empty vocabulary"
for th in 1 4; do
    expect 0 "warning: $T/latin1.txt:2: invalid UTF-8 at byte 37: 2 tokens with invalid UTF-8 dropped" \
        "$J" vocab "$T/latin1.txt" -o "$T/l.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1 --threads $th
    grep -q "caf" "$T/l.txt" && fail "an invalid UTF-8 token entered the vocabulary (threads $th)"
    [ "$(grep -vc '^#' "$T/l.txt")" -eq 5 ] || fail "latin1: expected the 5 valid words: $(cat "$T/l.txt")"
done
expect 0 "warning: <stdin>:2: invalid UTF-8 at byte 37" \
    sh -c "'$J' vocab - -o '$T/l.txt' --min-df 1 --min-doc-len 1 < '$T/latin1.txt'"
expect 0 "warning: $T/short.txt: none of its 2 documents was counted" \
    "$J" vocab "$T/short.txt" "$T/good.txt" -o "$T/s.txt" --min-df 1 --max-df-frac 1 --min-doc-len 3
expect 0 "" "$J" vocab "$T/good.txt" -o "$T/g.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1
nowarn "vocab of a plain corpus"
# invalid UTF-8 only in runs shorter than a word is warned about all the same
printf 'kabazu \377\376 dumofe \303\050 zumeka\nkabazu dumofe zumeka\n' >"$T/shortbad.txt"
expect 0 "shortbad.txt:1: invalid UTF-8 at byte 7: 2 tokens with invalid UTF-8 dropped" \
    "$J" vocab "$T/shortbad.txt" -o "$T/sb.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1
[ "$(grep -vc '^#' "$T/sb.txt")" -eq 3 ] || fail "shortbad: expected the 3 words: $(cat "$T/sb.txt")"
# well-formed UTF-8 stays whole; overlong forms, surrogates and stray bytes are dropped
printf 'caf\303\251 \360\237\230\200 ab\300\257cd xy\355\240\200z ok\n' >"$T/u8.txt"
expect 0 "u8.txt:1: invalid UTF-8 at byte 11: 2 tokens with invalid UTF-8 dropped" \
    "$J" vocab "$T/u8.txt" -o "$T/u8v.txt" --min-df 1 --max-df-frac 1 --min-doc-len 1 --min-word-len 1
[ "$(grep -v '^#' "$T/u8v.txt" | cut -f1 | sort | tr '\n' ' ')" = "$(printf 'caf\303\251 ok \360\237\230\200 ' | tr ' ' '\n' | sort | tr '\n' ' ')" ] ||
    fail "UTF-8 tokens: $(cut -f1 "$T/u8v.txt" | tr '\n' ' ')"

# --- ingest into a new store: nothing usable -> exit 1 and no store left -------------------------
for f in empty blank short; do
    expect 1 "nothing to ingest" "$J" ingest "$T/new" "$T/$f.txt" --vocab "$T/v.txt"
    [ ! -e "$T/new" ] || { fail "a failed first ingest ($f) left $T/new"; rm -rf "$T/new"; }
done
grep -q "none of the 2 documents has 5 or more words of the vocabulary" "$T/err" ||
    fail "short: message: $(cat "$T/err")"
expect 1 "warning: <stdin>: empty input" sh -c "'$J' ingest '$T/new' - --vocab '$T/v.txt' < /dev/null"
[ ! -e "$T/new" ] || { fail "empty stdin left a store"; rm -rf "$T/new"; }
printf 'ok\0binary\n' >"$T/nul.txt"
expect 1 "nul.txt:1: binary data" "$J" ingest "$T/new" "$T/nul.txt" --vocab "$T/v.txt"
[ ! -e "$T/new" ] || { fail "a malformed first input left a store"; rm -rf "$T/new"; }
mkdir "$T/mine"  # a directory the user made stays, empty
expect 1 "binary data" "$J" ingest "$T/mine" "$T/nul.txt" --vocab "$T/v.txt"
[ -d "$T/mine" ] && [ -z "$(ls -A "$T/mine")" ] || fail "the user's directory: $(ls -A "$T/mine" 2>&1)"
expect 1 "$T/empty.txt: no words: the file is empty" "$J" ingest "$T/new" "$T/good.txt" --vocab "$T/empty.txt"
[ ! -e "$T/new" ] || { fail "an empty vocabulary left a store"; rm -rf "$T/new"; }
printf '# words\n# none yet\n' >"$T/comments.txt"
expect 1 "$T/comments.txt: no words: the file holds only comments" \
    "$J" vocab "$T/good.txt" -o "$T/c.txt" --stopwords "$T/comments.txt"
expect 0 "warning: <stdin>:2: invalid UTF-8 at byte 37" \
    sh -c "'$J' ingest '$T/u' - --vocab '$T/v.txt' --min-doc-len 2 < '$T/latin1.txt'"

# --- ingest into an existing store: warnings, and failures leave data.mdb byte for byte --------
S=$T/s
expect 0 "" "$J" ingest "$S" "$T/good.txt" --vocab "$T/v.txt" --min-doc-len 2
cp "$S/data.mdb" "$T/data.orig"
expect 1 "$T/empty.txt: nothing to ingest: the input is empty" "$J" ingest "$S" "$T/empty.txt"
expect 1 "$T/blank.txt: nothing to ingest: all 3 documents are empty" "$J" ingest "$S" "$T/blank.txt"
printf 'zeta eta\ntheta\n' >"$T/oov.txt"
expect 1 "none of the 2 documents has 2 or more words of the vocabulary (3 of 3 tokens are outside it)" \
    "$J" ingest "$S" "$T/oov.txt"
expect 1 "binary data" "$J" ingest "$S" "$T/latin1.txt" "$T/nul.txt"
cmp -s "$S/data.mdb" "$T/data.orig" || fail "a failed ingest changed the existing store"
[ -d "$S" ] || fail "a failed ingest removed an existing store"
expect 0 "warning: $T/empty.txt: empty input: no documents" "$J" ingest "$S" "$T/empty.txt" "$T/short.txt"
grep -q "warning: $T/blank.txt" "$T/err" && fail "warned about an input not given"

# vocabulary words text can never match: named with the reason
printf 'Alpha\nbeta\nco-op\nx\ngamma\n' >"$T/vu.txt"
expect 0 "3 of the 5 words of the vocabulary of $T/vu can never match text input" \
    "$J" ingest "$T/vu" "$T/good.txt" --vocab "$T/vu.txt" --min-doc-len 2
grep -q "word 1 'Alpha' has an uppercase letter (text is lowercased)" "$T/err" || fail "uppercase: $(cat "$T/err")"
grep -q "word 3 'co-op' has a character that splits tokens" "$T/err" || fail "co-op: $(cat "$T/err")"
grep -q "word 4 'x' is shorter than the shortest token" "$T/err" || fail "short word: $(cat "$T/err")"
expect 0 "" "$J" ingest "$T/vl" "$T/good.txt" --vocab "$T/v.txt" --min-doc-len 2
nowarn "a lowercase vocabulary"

# --- a store with its vocabulary only (first ingest killed): kept, and fit refuses it ---------
mkfifo "$T/fifo"
"$J" ingest "$T/e" - --vocab "$T/v.txt" <"$T/fifo" >/dev/null 2>&1 &
pid=$!
exec 7>"$T/fifo"
k=0; until "$J" info "$T/e" >/dev/null 2>&1 || [ $k -ge 50 ]; do sleep 0.1; k=$((k + 1)); done
kill -KILL $pid; wait $pid 2>/dev/null
exec 7>&-
expect 0 "" "$J" info "$T/e"
grep -q "documents (M) *0" "$T/out" || fail "killed store: $(cat "$T/out")"
expect 1 "holds no documents" "$J" fit "$T/e" -k 2 -o "$T/em"
[ ! -e "$T/em" ] || fail "fit wrote a model of an empty store"
cp "$T/e/data.mdb" "$T/e.orig"
expect 1 "nothing to ingest" "$J" ingest "$T/e" "$T/empty.txt"
[ -d "$T/e" ] && cmp -s "$T/e/data.mdb" "$T/e.orig" || fail "a failed ingest changed a store it had not created"

# --- infer: text mostly outside the model's vocabulary -----------------------------------------
if "$PYTHON" -c 'import numpy' 2>/dev/null; then
    "$PYTHON" - "$T/m" <<'PY' || fail "model"
import os, sys
import numpy as np
d = sys.argv[1]; os.makedirs(d)
B = np.full((5, 2), 0.2)
np.save(d + "/B.npy", B); np.save(d + "/A.npy", np.full((2, 2), 0.25))
open(d + "/vocab.txt", "w").write("alpha\nbeta\ngamma\ndelta\nepsilon\n")
PY
    printf 'alpha zeta theta iota kappa\nlambda omicron sigma upsilon omega\n' >"$T/far.txt"
    expect 0 "warning: 90.0% of the tokens (9 of 10) are outside the vocabulary of $T/m (5 words)" \
        "$J" infer "$T/m" "$T/far.txt" -q
    expect 0 "warning: $T/latin1.txt:2: invalid UTF-8 at byte 37: 2 tokens" "$J" infer "$T/m" "$T/latin1.txt"
    grep -q "tokens (.*) are outside" "$T/err" && fail "infer warned at a low OOV share: $(cat "$T/err")"
    # eval --corpus reads documents as infer does, with the same warnings
    expect 0 "warning: $T/latin1.txt:2: invalid UTF-8 at byte 37: 2 tokens" \
        "$J" eval "$T/m" --corpus "$T/latin1.txt"
    expect 0 "warning: $T/blank.txt: all 3 documents are empty" "$J" eval "$T/m" --corpus "$T/blank.txt"
else
    echo "note: numpy not available; infer checks skipped"
fi

rm -rf "$T"
[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok"

#!/bin/sh
# examples/nightly.sh — one night of a corpus that grows: ingest the day's files into the store,
# refit starting from yesterday's model (its topics keep their numbers), say what changed, and
# write the report. Made for cron; rerunning a night that failed or was killed resumes it and
# ends with the store and model of an uninterrupted night.
#
# usage: nightly.sh STORE MODELS K FILE...
#   STORE   the store; the first night creates it, its vocabulary chosen by `jsmf vocab` from that
#           night's files (the rule is recorded, so later nights admit new words by it)
#   MODELS  one directory per night: MODELS/NIGHT/ the model, MODELS/NIGHT.diff.txt what changed
#           since the night before, MODELS/NIGHT.html the report; MODELS/latest -> the last night
#           that finished (what a dashboard reads: it always names a whole night)
#   K       number of topics (another K than yesterday's: a cold fit, its lineage still recorded)
# environment: NIGHT (the night's name, default today's date), JSMF (the program, default jsmf
#   on PATH, else build/jsmf beside this script), VOCAB_OPTS (options of the first night's
#   `jsmf vocab`), FIT_OPTS (more `jsmf fit` options)
#
# Yesterday is the night MODELS/latest named when the night first started (kept in
# MODELS/NIGHT.previous, so a rerun starts from the same one); it must be a model of STORE
# (`jsmf info STORE --model`), checked before anything is ingested. Two runs at once (cron
# overlap) take turns: the second waits for the first (MODELS/.lock).
#
# cron, every night at 02:15 with the day's files (% must be escaped in a crontab):
#   15 2 * * * cd /srv/topics && examples/nightly.sh store models 50 incoming/$(date +\%F)/* >>nightly.log 2>&1
set -eu
[ $# -ge 4 ] || { echo "usage: nightly.sh STORE MODELS K FILE..." >&2; exit 2; }
store=$1 models=$2 k=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${JSMF:-}" ]; then
    JSMF=$(command -v jsmf || echo "$here/../build/jsmf")
fi
night=${NIGHT:-$(date +%F)}
case $night in "" | .* | */* | latest | latest.tmp) echo "nightly.sh: bad NIGHT '$night'" >&2; exit 2 ;; esac
mkdir -p "$models"
model=$models/$night
work=$models/.$night.work
say() { echo "nightly $night: $*" >&2; }
stop() { say "$*"; exit 1; }

# One night at a time on MODELS: a second run waits for the first to end.
exec 9>>"$models/.lock"
if ! flock -n 9; then
    say "another nightly.sh is running on $models: waiting for it"
    flock 9
fi

# The night MODELS/latest names (a rerun of a night swaps in its old copy, .NIGHT.old, for a
# moment: that is the night itself).
latest_night() {
    [ -e "$models/latest" ] || return 0
    l=$(readlink "$models/latest")
    case $l in .*.old) l=${l#.}; l=${l%.old} ;; esac
    echo "$l"
}

# Yesterday: fixed when the night first starts, so that a rerun starts from the same model.
if [ -e "$model.previous" ]; then
    prev=$(cat "$model.previous")
else
    last=$(latest_night)
    prev=""
    [ -n "$last" ] && [ "$last" != "$night" ] && prev=$(cd "$models/$last" && pwd -P)
    echo "$prev" >"$model.previous.tmp" && mv "$model.previous.tmp" "$model.previous"
fi

# Yesterday's model checked before the ingest: a bad one stops the night with nothing added.
if [ -n "$prev" ]; then
    [ -d "$store" ] || stop "yesterday's model $prev exists but the store $store does not: \
restore the store, or start a new MODELS directory"
    "$JSMF" info "$store" --model "$prev" >/dev/null ||
        stop "yesterday's model $prev cannot continue $store (above); nothing was ingested. \
Restore that model, or remove $model.previous and point $models/latest at a model of this store"
fi

# Ingest once per night: a marker says it finished; a killed ingest is resumed by running it
# again (the store is at its last checkpoint), and inputs it already holds are not added twice.
# The first night's vocabulary is given every time, so that a store killed as it was made
# resumes to the same one.
if [ ! -e "$model.ingested" ]; then
    if [ ! -e "$store" ] && [ ! -e "$models/vocab.txt" ]; then
        say "new store $store, vocabulary from $# file(s)"
        # shellcheck disable=SC2086
        "$JSMF" vocab "$@" -o "$models/vocab.txt.tmp" ${VOCAB_OPTS:-} -q
        mv "$models/vocab.txt.tmp" "$models/vocab.txt"
    fi
    vocab=""
    [ -e "$models/vocab.txt" ] && vocab=$models/vocab.txt
    if ! err=$("$JSMF" ingest "$store" "$@" ${vocab:+--vocab "$vocab"} -q 2>&1); then
        # every input already in the store (a night killed after its ingest committed but
        # before the marker): nothing to add; any other failure stops the night
        case $err in *"already ingested"*) ;; *) echo "$err" >&2; exit 1 ;; esac
        say "the store already holds these inputs"
    fi
    touch "$model.ingested"
fi

# Refit from yesterday, into a work directory: MODELS/NIGHT is replaced only by a whole model.
# The store holds its documents, so the night starts from yesterday's model, refined over them
# and held near it (jsmf fit's default, formats/model.md "Nights"; topics keep yesterday's
# indices; FIT_OPTS=--cold: a new spectral fit, --refine 0: the spectral fit alone). A killed
# night is done again by the rerun, to the same model (a cold fit resumes from its checkpoint).
say "fit K=$k${prev:+ from $(basename "$prev")}"
mkdir -p "$work"
# shellcheck disable=SC2086
"$JSMF" fit "$store" -k "$k" -o "$work/model" --force ${prev:+--previous "$prev"} ${FIT_OPTS:-} -q

# Publish: the model, then what changed and the report, then latest. While a finished night
# is replaced, latest names its old copy.
relink() { ln -sfn "$1" "$models/latest.tmp" && mv -T "$models/latest.tmp" "$models/latest"; }
if [ -d "$model" ]; then
    rm -rf "$models/.$night.old"
    cp -al "$model" "$models/.$night.old"
    [ "$(readlink "$models/latest" 2>/dev/null)" = "$night" ] && relink ".$night.old"
    rm -rf "$model"
fi
mv "$work/model" "$model"
if [ -n "$prev" ]; then
    "$JSMF" diff "$prev" "$model" >"$work/diff.txt"
    "$JSMF" diff "$prev" "$model" --format json >"$work/diff.json"
    mv "$work/diff.txt" "$model.diff.txt" && mv "$work/diff.json" "$model.diff.json"
fi
"$JSMF" report "$model" -o "$work/report.html" --title "Topics of $night" -q
mv "$work/report.html" "$model.html"
relink "$night"
rm -rf "$models/.$night.old" "$work"
"$JSMF" info "$store" | sed -n '1,3p'
[ -z "$prev" ] || sed -n 1p "$model.diff.txt"
say "done: $model (report $model.html)"

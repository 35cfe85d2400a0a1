#!/bin/sh
# examples/nightly.sh — one night of a corpus that grows: ingest the day's files into the store,
# refit starting from yesterday's model (its topics keep their numbers), say what changed, and
# write the report. Made for cron; rerunning a night that failed or was killed resumes it.
#
# usage: nightly.sh STORE MODELS K FILE...
#   STORE   the store; the first night creates it, its vocabulary chosen by `jsmf vocab` from that
#           night's files (the rule is recorded, so later nights admit new words by it)
#   MODELS  one directory per night: MODELS/NIGHT/ the model, MODELS/NIGHT.diff.txt what changed
#           since the night before, MODELS/NIGHT.html the report; MODELS/latest -> the last night
#           that finished (what a dashboard reads)
#   K       number of topics
# environment: NIGHT (the night's name, default today's date), JSMF (the program, default jsmf
#   on PATH, else build/jsmf beside this script), VOCAB_OPTS (options of the first night's
#   `jsmf vocab`), FIT_OPTS (more `jsmf fit` options)
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
mkdir -p "$models"
model=$models/$night
say() { echo "nightly $night: $*" >&2; }

# Yesterday: the last night that finished, unless that is tonight (a rerun of a finished night).
prev=""
if [ -e "$models/latest" ]; then
    prev=$(cd "$models/latest" && pwd -P)
    [ "$prev" = "$(cd "$models" && pwd -P)/$night" ] && prev=$(cat "$model.previous" 2>/dev/null || true)
fi

# Ingest once per night: a marker says it finished; a killed ingest is resumed by running it
# again (the store is at its last checkpoint), and inputs it already holds are not added twice.
if [ ! -e "$model.ingested" ]; then
    if [ ! -e "$store" ]; then
        say "new store $store, vocabulary from $# file(s)"
        # shellcheck disable=SC2086
        "$JSMF" vocab "$@" -o "$models/vocab.txt" ${VOCAB_OPTS:-} -q
        "$JSMF" ingest "$store" "$@" --vocab "$models/vocab.txt" -q
    elif ! err=$("$JSMF" ingest "$store" "$@" -q 2>&1); then
        # every input already in the store (a night killed after its ingest committed but
        # before the marker): nothing to add; any other failure stops the night
        case $err in *"already ingested"*) ;; *) echo "$err" >&2; exit 1 ;; esac
        say "the store already holds these inputs"
    fi
    touch "$model.ingested"
fi

# Refit from yesterday (warm start, topics renumbered to keep yesterday's indices).
say "fit K=$k${prev:+ from $(basename "$prev")}"
echo "$prev" >"$model.previous"
# shellcheck disable=SC2086
"$JSMF" fit "$store" -k "$k" -o "$model" --force ${prev:+--previous "$prev"} ${FIT_OPTS:-} -q

# What changed, and the report (with the lineage section when there was a yesterday).
if [ -n "$prev" ]; then
    "$JSMF" diff "$prev" "$model" >"$model.diff.txt"
    "$JSMF" diff "$prev" "$model" --format json >"$model.diff.json"
fi
"$JSMF" report "$model" -o "$model.html" --title "Topics of $night" -q
ln -sfn "$night" "$models/latest.tmp" && mv -T "$models/latest.tmp" "$models/latest"
"$JSMF" info "$store" | sed -n '1,3p'
[ -z "$prev" ] || sed -n 1p "$model.diff.txt"
say "done: $model (report $model.html)"

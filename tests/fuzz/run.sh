#!/bin/sh
# run.sh BUILD SECONDS — run every libFuzzer target of BUILD/fuzz on its seed corpus
# (tests/fuzz/corpus/NAME), then SECONDS of new inputs each; new inputs go to
# BUILD/fuzz-corpus/NAME, a crash to BUILD/fuzz-crash/. Exits 1 when a target fails.
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-20}
failed=""
for bin in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin" | sed 's/^fuzz_//')
    mkdir -p "$BUILD/fuzz-corpus/$name" "$BUILD/fuzz-crash"
    log="$BUILD/fuzz-$name.log"
    "$bin" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$BUILD/fuzz-crash/$name-" \
        "$BUILD/fuzz-corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1
    rc=$?
    stats=$(grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec' "$log" |
            tr '\n' ' ')
    if [ $rc -eq 0 ]; then
        echo "PASS  fuzz/$name: $stats"
    else
        echo "FAIL  fuzz/$name (exit $rc): see $log"
        grep -E 'ERROR|FUZZ_CHECK|SUMMARY|Test unit written' "$log" | head -n 8 | sed 's/^/      /'
        failed="$failed $name"
    fi
done
[ -z "$failed" ] || { echo "failed:$failed"; exit 1; }

#!/bin/sh
# Runs each fuzz target for SECONDS from its committed seed corpus (Fuzz/corpus/TARGET); what it
# finds goes to .build/fuzz/corpus/TARGET, never into the committed seeds. Prints executions and
# crashes per target; exits 1 when any target crashed (the input is in .build/fuzz/crashes/).
# Usage: tools/fuzz.sh SECONDS TARGET...
set -u
seconds=$1
shift
binary=.build/debug/crescent-fuzz
mkdir -p .build/fuzz/crashes
failed=0
for target in "$@"; do
    mkdir -p ".build/fuzz/corpus/$target"
    log=".build/fuzz/$target.log"
    CRESCENT_FUZZ_TARGET=$target "$binary" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix=".build/fuzz/crashes/$target-" \
        ".build/fuzz/corpus/$target" "Fuzz/corpus/$target" >"$log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $status -eq 0 ]; then
        echo "fuzz $target: ${runs:-?} runs in ${seconds} s, 0 crashes"
    else
        echo "fuzz $target: CRASH after ${runs:-?} runs (exit $status); see $log and .build/fuzz/crashes/"
        tail -25 "$log"
        failed=1
    fi
done
exit $failed

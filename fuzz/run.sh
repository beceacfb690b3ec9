#!/bin/sh
# Build the libFuzzer harnesses with clang (ASan + UBSan) under build-fuzz/
# and run each for FUZZ_SECONDS (default 60) from its seed corpus.
#   sh fuzz/run.sh [options|obj]...      (default: both)
# Needs the Debian packages clang and libclang-rt-14-dev.  A crash leaves
# build-fuzz/crash-* (or leak-*, timeout-*): turn it into a regression test
# in tests/check_robust.c, and add the input to fuzz/corpus/.
set -eu
cd "$(dirname "$0")/.."
B=build-fuzz
ROOT=$(pwd)
SECONDS_EACH=${FUZZ_SECONDS:-60}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# without OpenMP: the harnesses are single-threaded, and clang's OpenMP
# runtime is not installed (tstep's parallel loops fall back to serial)
make -s BUILD=$B CC=clang OPENMP= CFLAGS="-O1 -g $SAN -fsanitize=fuzzer-no-link" \
    $B/libtstep.a $B/libtstep-ext.a
FLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -O1 -g -Iinclude -Isrc $SAN"
# the core and the extension (every feature), and the libraries the
# extension links with, as the Makefile says
LIBS="-Wl,-u,tstep_ext_entries $B/libtstep-ext.a $B/libtstep.a \
    $(make -s -p -n OPENMP= nonexistent-target 2>/dev/null | sed -n 's/^EXT_LIBS = //p' | head -1)"
clang $FLAGS -fsanitize=fuzzer fuzz/fuzz_options.c $LIBS -o $B/fuzz_options
clang $FLAGS -fsanitize=fuzzer fuzz/fuzz_obj.c $LIBS -o $B/fuzz_obj
targets=${*:-options obj}
status=0
for t in $targets; do
    mkdir -p $B/corpus-$t
    echo "fuzz: $t for $SECONDS_EACH s"
    # the corpus found so far goes to build-fuzz/corpus-T; the seeds stay as they are
    (cd $B && ./fuzz_$t -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 \
        -max_len=4096 -close_fd_mask=1 -print_final_stats=1 \
        "$ROOT/$B/corpus-$t" "$ROOT/fuzz/corpus/$t" >fuzz-$t.log 2>&1) || {
        status=1
        echo "fuzz: $t found a failure; see $B/fuzz-$t.log:" >&2
        grep -E "ERROR|SUMMARY|Test unit written" $B/fuzz-$t.log >&2 || tail -20 $B/fuzz-$t.log >&2
    }
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" $B/fuzz-$t.log || true
done
exit $status

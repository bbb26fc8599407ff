#!/usr/bin/env bash
# tests/bench_merge.sh — kc-merge of 64 shards of 1,000 images each (issue 7 target: under a minute).
# The shards are made by tests/bench_merge.c with the cache library, as kc-extract --shard k/64
# writes them (64,000 images, /features/keys/<id> float32 (17, 64), pieces of 64): seconds instead
# of running an extractor on 64,000 images.  Baseline, measured in the same run on the same files:
# `bench_merge copy`, a bare read-every-dataset-and-write-it-to-one-file with HDF5 (no checks, no
# pieces, no index, no hashes): what any merge must at least pay in I/O and per-dataset overhead.
# BENCH_SHARDS / BENCH_PER / BENCH_TOK / BENCH_DIM change the sizes.  Machine shared: numbers noisy.
source "$(dirname "$0")/lib.sh"
T=$(tmpdir bench_merge)
export KC_QUIET=1
N=${BENCH_SHARDS:-64} PER=${BENCH_PER:-1000} TOK=${BENCH_TOK:-17} DIM=${BENCH_DIM:-64}
G=$BUILD/tests/bench_merge
[ -x "$G" ] && [ -x "$BUILD/kc-merge" ] || { bad "$G or $BUILD/kc-merge not built (make BUILD=$BUILD all)"; done_tests; exit 1; }
tg=$("$G" make "$T/s" "$N" "$PER" "$TOK" "$DIM") && ok || { bad "making the shards failed"; done_tests; exit 1; }
echo "made $N shards of $PER images ($TOK x $DIM float32 each, $(du -sh "$T/s" | cut -f1)) in $tg s"
t0=$(date +%s.%N)
$BUILD/kc-merge "$T/merged.h5" "$T"/s/s*.h5 && ok || bad "kc-merge failed"
t=$(echo "$(date +%s.%N) - $t0" | bc)
tc=$("$G" copy "$T/copy.h5" "$T"/s/s*.h5) && ok || bad "copy baseline failed"
n=$(h5ls -r "$T/merged.h5/features/keys" 2>/dev/null | grep -c Dataset || true)
[ -z "$n" ] || [ "$n" = 0 ] || [ "$n" -eq $((N * PER)) ] && ok || bad "merged cache holds $n datasets, want $((N * PER))"
printf 'BENCH merge: %d shards x %d images: kc-merge %.1f s (target < 60 s), plain HDF5 copy of the same datasets %.1f s (%.1fx); merged %s\n' \
  "$N" "$PER" "$t" "$tc" "$(echo "$t / $tc" | bc -l)" "$(du -sh "$T/merged.h5" | cut -f1)"
echo "(2 cores shared with other sessions: timings noisy)"
awk -v t="$t" 'BEGIN{exit !(t < 60)}' && ok || bad "merge took $t s (target < 60 s)"
rm -rf "$T"
done_tests

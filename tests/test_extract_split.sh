#!/usr/bin/env bash
# tests/test_extract_split.sh — kc-extract's outputs do not depend on how the cores share the work
# (issue 10 item 3): one image per core (--split images), every image over all cores (--split rows),
# one thread, and the default (auto, here a mix: batches of 3 images on 2 threads) give caches whose
# datasets and attributes are bit-identical (the command line aside), on the matmul path (products
# "... linear layers matmul brg:..."), for the tiny test network and for one of head_dim 64 (the fused
# attention of pipeline/model/attn.h, which must be chosen); elsewhere only the one-thread and rows runs are compared with
# the tolerance of tests/test_determinism.sh, and the rest is skipped.  Also: a resume on another
# product path is refused (OUT.partial/products names the path that made its pieces).
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_WAIT_POLICY=PASSIVE
B=$(cd "$BUILD" && pwd)
T=$(cd "$(tmpdir extract_split)" && pwd)
ROOT=$(pwd)
W=$ROOT/tests/data/vit/dino.pth
need "caches compared (tests/bad/tools/h5same.py)" py:h5py py:numpy || { done_tests; exit 0; }
"$B"/kc-demo-data --out "$T/demo" --train 1 --val 6 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data"
run() { # name, threads, kc-extract options
  local name=$1 th=$2; shift 2
  (cd "$T" && OMP_NUM_THREADS=$th "$B"/kc-extract --dataset "voc:$T/demo/voc:val" --batch 3 \
    --features keys,tokens,attn --out "$T/$name.h5" "$@") >"$T/log-$name.txt" 2>&1 || bad "kc-extract $name: $(tail -n 1 "$T/log-$name.txt")"
}
# two networks: the tiny test network (head_dim 16: attention by products) and a random one of
# width 128 in 2 heads (head_dim 64: attention by the fused kernel where the CPU has AVX-512)
"$B"/tests/bench_attn "$T/hd64.safetensors" --dim 128 --depth 2 >/dev/null || bad "bench_attn could not write the head_dim 64 network"
for net in tiny hd64; do
  if [ $net = tiny ]; then wopt=(--weights "$W" --heads 2); else wopt=(--weights "$T/hd64.safetensors" --policy native16); fi
  run $net-rows 2 "${wopt[@]}" --split rows
  run $net-images 2 "${wopt[@]}" --split images
  run $net-one 1 "${wopt[@]}"
  run $net-auto 2 "${wopt[@]}"
  products=$(/usr/bin/python3 -c 'import h5py, sys; print(h5py.File(sys.argv[1]).attrs["products"])' "$T/$net-rows.h5" 2>/dev/null)
  echo "$net: products: $products"
  if [ $net = hd64 ]; then # fused on every CPU (AVX2 is the build's baseline)
    [[ $products == *"attention fused avx"* ]] && ok || bad "head_dim 64: attention not fused ($products)"
  fi
  if [[ $products == *"matmul brg"* ]]; then
    for c in images one auto; do
      out=$(/usr/bin/python3 "$ROOT/tests/bad/tools/h5same.py" "$T/$net-rows.h5" "$T/$net-$c.h5")
      # the command line differs (--split, threads in the environment do not show); nothing else may
      if [ -z "$out" ] || [ "$out" = "root attributes differ: ['command']" ]; then ok; else bad "$net: rows vs $c: $out"; fi
      echo "$net: rows vs $c: ${out:-identical}"
    done
  else
    skip "$net: products '$products': not the matmul path, outputs may differ in the last bits between splits"
  fi
done

# a resume under another product path is refused, nothing written: a partial folder with finished
# pieces (the run killed once its first pieces were there), its products then said to be another
# path's; the rerun must refuse.  (A partial folder with no finished piece is taken over whatever its
# products: nothing computed is mixed in; test_bad.sh checks that.)
"$B"/kc-demo-data --out "$T/many" --train 1 --val 60 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data (60)"
(cd "$T" && exec "$B"/kc-extract --weights "$W" --heads 2 --batch 1 --dataset "voc:$T/many/voc:val" --out "$T/resume.h5" >/dev/null 2>&1) &
xpid=$!
for _ in $(seq 500); do ls "$T/resume.h5.partial"/piece-*.h5 >/dev/null 2>&1 && break; sleep 0.01; done
kill -9 $xpid 2>/dev/null; wait $xpid 2>/dev/null
ls "$T/resume.h5.partial"/piece-*.h5 >/dev/null 2>&1 && ok || bad "no finished piece in $T/resume.h5.partial: $(ls "$T/resume.h5.partial" 2>&1)"
printf 'oneDNN 0.0.0 imaginary; row kernels none' >"$T/resume.h5.partial/products"
before=$(ls "$T/resume.h5.partial" | grep -v '^lock$')   # (the killed run's lock is taken over, one warning)
if msg=$(cd "$T" && "$B"/kc-extract --weights "$W" --heads 2 --batch 1 --dataset "voc:$T/many/voc:val" --out "$T/resume.h5" 2>&1); then
  bad "a partial of another product path was resumed"
else
  grep -q "computed with products 'oneDNN 0.0.0 imaginary; row kernels none'" <<<"$msg" && ok || bad "unclear message: $msg"
  [ "$(grep -v 'taking over the lock left by a run that has ended' <<<"$msg" | wc -l)" -eq 1 ] && ok || bad "more than one line: $msg"
fi
[ ! -e "$T/resume.h5" ] && ok || bad "resume.h5 written"
[ "$(ls "$T/resume.h5.partial" | grep -v '^lock$')" = "$before" ] && ok || bad "the partial folder changed: $(ls "$T/resume.h5.partial")"
echo "$T_PASS passed, $T_FAIL failed"
done_tests

#!/usr/bin/env bash
# tests/bench_vit.sh — ViT-S/16 forward speed: keycut (kc-extract's forward, in process) against the
# machine's measured FMA peak, PyTorch as a user runs it, and ONNX Runtime on the same forward, all
# in the same run.  Keys at 480x480 (VOC square480) and tokens at 480x832 (DAVIS short480 of a
# 854x480 frame).  Figures only, no assertions; pieces whose tools are missing are skipped with a
# message (ONNX Runtime: `make deps-bench`; PyTorch: `make deps-ref`).
# The machine may be shared: numbers are noisy; each line gives mean and best, ratios use the best.
set -u -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
IMAGES=${BENCH_IMAGES:-5}
# ONNX Runtime's forwards per run (its mean is a throughput, like kc-extract's steady state)
ORT_IMAGES=${BENCH_ORT_IMAGES:-16}
THREADS=${OMP_NUM_THREADS:-$(nproc)}
echo "== bench_vit: ViT-S/16, $THREADS threads (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset})"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), $(nproc) cores, AVX-512: $(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)"
for b in bench_vit bench_peak; do
  if [ ! -x "$BUILD/tests/$b" ]; then echo "bench_vit: $BUILD/tests/$b not built" >&2; exit 1; fi
done
best_of() { sed -n "s/.*, \([0-9.]*\) ms best.*/\1/p" | head -n 1; }

# the measured peak: independent FMA chains, threads pinned
peak_out=$(OMP_NUM_THREADS=$THREADS OMP_PROC_BIND=true "$BUILD/tests/bench_peak")
echo "$peak_out"
peak=$(sed -n "s/^peak best $THREADS threads: \([0-9.]*\).*/\1/p" <<<"$peak_out")

run_keycut() { # label, then bench_vit arguments
  local label=$1; shift
  local out; out=$(OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES" "$@")
  echo "-- keycut $label"
  grep -E '^(input|products|keycut|sgemm)' <<<"$out"
  local ms gf; ms=$(best_of <<<"$out"); gf=$(sed -n 's/^keycut forward GFLOP: \([0-9.]*\).*/\1/p' <<<"$out")
  awk -v ms="$ms" -v gf="$gf" -v pk="${peak:-0}" 'BEGIN{ if (pk > 0 && ms > 0)
    printf("fraction of measured peak (best): %.0f %% (%.1f of %.1f GFLOP/s; target >= 75 %%)\n", 100 * gf / (ms / 1e3) / pk, gf / (ms / 1e3), pk) }'
  echo "$ms" >"$tmp/keycut_$label"
  awk -v ms="$ms" -v gf="$gf" -v pk="${peak:-0}" 'BEGIN{ if (pk > 0 && ms > 0) printf("%.0f\n", 100 * gf / (ms / 1e3) / pk) }' >"$tmp/peak_$label"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run_keycut keys480 --size 480
run_keycut tokens480x832 --size 480 --width 832 --tokens
# ONNX Runtime on the same forward (exported once per size by torch.onnx; kept under $BUILD).  It runs
# beside kc-extract, before and after each kind's kc-extract runs, so that both see the machine in the
# same state (a VM's speed drifts by several per cent over minutes); its figures are over all its runs.
have_torch=0
/usr/bin/python3 -c 'import torch' 2>/dev/null && have_torch=1
ort_mods=$BUILD/bench-node/node_modules/onnxruntime-node
ort_ok=0
if ! command -v node >/dev/null; then
  echo "onnxruntime: node not installed (make deps-bench); skipped"
elif [ ! -d "$ort_mods" ]; then
  echo "onnxruntime: $ort_mods absent (make deps-bench); skipped"
elif [ $have_torch -eq 0 ]; then
  echo "onnxruntime: the model is exported by PyTorch, not importable (make deps-ref); skipped"
else
  ort_ok=1
  for spec in "keys 480 480" "tokens 480 832"; do
    read -r kind h w <<<"$spec"
    d=$BUILD/bench-onnx/$kind${h}x$w
    if [ ! -f "$d/vit.onnx" ] || [ tests/ref/vit_ref.py -nt "$d/vit.onnx" ]; then
      /usr/bin/python3 tests/ref/vit_ref.py onnx "$d" "$h" "$w" "$kind" >/dev/null 2>"$tmp/export.log" ||
        { echo "onnxruntime: export failed: $(tail -n 1 "$tmp/export.log")"; ort_ok=0; }
    fi
  done
fi
# run_ort KIND: one run of ORT_IMAGES forwards; its line is kept in $tmp/ort_runs_KIND
run_ort() {
  local kind=$1 d out
  [ $ort_ok -eq 1 ] || return 0
  case $kind in keys) d=$BUILD/bench-onnx/keys480x480 ;; *) d=$BUILD/bench-onnx/tokens480x832 ;; esac
  out=$(node tests/bench_ort.js "$d" "$ORT_IMAGES" "$THREADS") || { echo "onnxruntime: bench_ort.js failed"; return 0; }
  echo "$out"
  grep -m1 'ms/image mean' <<<"$out" >>"$tmp/ort_runs_$kind"
}
# the best over ORT's runs, and its mean over all their forwards (the runs have equal counts)
ort_summary() {
  local kind=$1 f=$tmp/ort_runs_$1
  [ -s "$f" ] || return 0
  local best mean line
  best=$(sed -n 's/.*, \([0-9.]*\) ms best.*/\1/p' "$f" | sort -g | head -n 1)
  mean=$(sed -n 's/.*: \([0-9.]*\) ms\/image mean.*/\1/p' "$f" | awk '{s += $1; n++} END {if (n) printf("%.1f", s / n)}')
  line=$(head -n 1 "$f")
  echo "${line%%:*}: $mean ms/image mean, $best ms best ($(wc -l <"$f") runs of $ORT_IMAGES beside kc-extract)" >"$tmp/ort_$kind"
  cat "$tmp/ort_$kind"
}

# kc-extract itself (the real stage: JPEG decoding, resizing, the forward, HDF5 pieces), the same
# random network written as safetensors; DAVIS 854x480 frames from $KC_SHARED_DATA when present (keys at
# square480, tokens at short480 = 480x848), else generated images.  Steady state = the images after
# the first batch that finished while every thread was busy (kc-extract --verbose prints it), one image per core (--split images, the default
# here) against every image over all cores (--split rows), alternating.
EX_N=${BENCH_EXTRACT_IMAGES:-40}
SHARED=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
exdir=$BUILD/bench-data/extract
mkdir -p "$exdir"
net=$BUILD/bench-data/attn/vits16.safetensors
if [ -x "$BUILD/tests/bench_attn" ] && [ -x "$BUILD/kc-extract" ]; then
  [ -f "$net" ] || { mkdir -p "$(dirname "$net")" && "$BUILD/tests/bench_attn" "$net" >/dev/null; }
  frames=$(ls "$SHARED"/davis/JPEGImages/480p/*/*.jpg 2>/dev/null | head -n "$EX_N")
  if [ "$(wc -l <<<"$frames")" -ge "$EX_N" ] && [ -n "$frames" ]; then
    echo "$frames" >"$exdir/list.txt"; exsrc="DAVIS frames 854x480 ($SHARED)"
  else
    [ -d "$exdir/demo/voc" ] || "$BUILD/kc-demo-data" --out "$exdir/demo" --train 1 --val "$EX_N" --videos 1 --frames 3 >/dev/null 2>&1
    ls "$PWD/$exdir"/demo/voc/JPEGImages/*.jpg | head -n "$EX_N" >"$exdir/list.txt"; exsrc="generated images (kc-demo-data)"
  fi
  echo "-- kc-extract, $(wc -l <"$exdir/list.txt") $exsrc, batch 8, $THREADS threads (steady state: kc-extract --verbose, the images that finished while every thread was busy, after the first batch)"
  for spec in "keys square480" "tokens short480"; do
    read -r kind pol <<<"$spec"
    run_ort "$kind"
    for split in images rows images rows; do
      [ "$split" = images ] && [ -s "$tmp/extract_${kind}_images" ] && run_ort "$kind"
      rm -rf "$exdir/out.h5" "$exdir/out.h5.partial"
      line=$(OMP_NUM_THREADS=$THREADS KC_PROGRESS_SECONDS=1000 "$BUILD/kc-extract" --weights "$net" --dataset "list:$exdir/list.txt" \
        --policy "$pol" --features "$kind" --split "$split" --verbose --out "$exdir/out.h5" 2>&1 | grep 'kc-extract: time:')
      ms=$(sed -n 's/.*steady state \([0-9.]*\) ms\/image.*/\1/p' <<<"$line")
      echo "kc-extract $kind $pol --split $split: ${ms:-?} ms/image steady state (${line#*time: })"
      echo "$ms" >>"$tmp/extract_${kind}_$split"
    done
    run_ort "$kind"
  done
  rm -rf "$exdir/out.h5"
  for kind in keys tokens; do
    for split in images rows; do
      [ -s "$tmp/extract_${kind}_$split" ] && echo "$(sort -g "$tmp/extract_${kind}_$split" | head -n 1)" >"$tmp/extract_${kind}_${split}_best"
    done
  done
else
  echo "kc-extract: $BUILD/kc-extract or $BUILD/tests/bench_attn not built; skipped"
  run_ort keys
  run_ort tokens
fi
echo "-- onnxruntime over its runs:"
ort_summary keys
ort_summary tokens

echo "-- keycut keys480 on the other paths (KC_ISA, pipeline/model/gemm.h):"
for isa in avx2 generic; do
  KC_ISA=$isa OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES" | grep -E '^(products|keycut forward:)' | paste -sd' ' | sed "s/^/KC_ISA=$isa: /"
done

if [ $have_torch -eq 1 ]; then
  # as a user runs it: default environment and threads
  env -u OMP_NUM_THREADS -u OMP_WAIT_POLICY /usr/bin/python3 tests/ref/vit_ref.py bench user 480 "$IMAGES" | tee "$tmp/torch_user"
  # at its best: 2 threads, passive waiting (otherwise OpenMP spins against OpenBLAS's threads)
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/ref/vit_ref.py bench best 480 "$IMAGES"
else
  echo "pytorch: not importable with /usr/bin/python3 (make deps-ref); skipped"
fi

# DINOv2, DINOv2 with registers and DINOv3 ViT-S (issue 29): keycut's forward (bench_vit --family: the
# same seeded network with LayerScale, registers, RoPE and the masked key bias added) on keys and tokens
# at each family's 480 policy (490x490 for patch 14), its fraction of the measured peak beside DINO's
# keys480, and PyTorch on the same formulas (float32, 2 threads: tests/ref/dino23_ref.py bench; skipped
# without it).
echo "-- DINOv2 / DINOv3 ViT-S at the 480 policy (DINO ViT-S/16 keys480: $(cat "$tmp/peak_keys480" 2>/dev/null || echo ?) % of the measured peak)"
for fam in dinov2 dinov2-reg dinov3; do
  size=480; [ "${fam#dinov2}" != "$fam" ] && size=490
  for kind in keys tokens; do
    flag=; [ $kind = tokens ] && flag=--tokens
    if out=$(OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --family "$fam" --size $size --images "$IMAGES" $flag 2>&1); then
      ms=$(best_of <<<"$out"); gf=$(sed -n 's/^keycut forward GFLOP: \([0-9.]*\).*/\1/p' <<<"$out")
      awk -v f="$fam" -v k="$kind" -v s="${size}x$size" -v ms="$ms" -v gf="$gf" -v pk="${peak:-0}" 'BEGIN{
        printf("keycut %s %s %s: %.1f ms best, %.1f GFLOP/s", f, k, s, ms, gf / (ms / 1e3));
        if (pk > 0) printf(", %.0f %% of the measured peak", 100 * gf / (ms / 1e3) / pk); printf("\n") }'
    else
      echo "keycut $fam $kind: $(tail -n 1 <<<"$out")"
    fi
  done
  if [ $have_torch -eq 1 ]; then
    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tests/ref/dino23_ref.py bench "${fam/-/_}" 0 "$IMAGES"
  else
    echo "pytorch $fam: not importable with /usr/bin/python3 (make deps-ref); skipped"
  fi
done

echo "-- keycut keys480 again (the machine may be shared; compare the best figures):"
again=$(OMP_NUM_THREADS=$THREADS "$BUILD/tests/bench_vit" --images "$IMAGES" | grep -E '^keycut forward:')
echo "$again"
k=$(best_of <<<"$again")
k0=$(cat "$tmp/keycut_keys480")
k=$(awk -v a="$k" -v b="$k0" 'BEGIN{print (a < b ? a : b)}')
kt=$(cat "$tmp/keycut_tokens480x832")
echo "-- summary (best ms per image; targets from issue 10)"
ratio() { awk -v a="$2" -v b="$3" -v what="$1" -v tgt="$4" 'BEGIN{ if (a > 0 && b > 0) printf("%s: %.2fx (target %s)\n", what, a / b, tgt) }'; }
[ -f "$tmp/ort_keys" ] && ratio "onnxruntime keys480 / keycut" "$(best_of <"$tmp/ort_keys")" "$k" ">= 1.2x"
[ -f "$tmp/ort_tokens" ] && ratio "onnxruntime tokens480x832 / keycut" "$(best_of <"$tmp/ort_tokens")" "$kt" ">= 1.2x"
[ -f "$tmp/torch_user" ] && ratio "pytorch as run / keycut keys480" "$(best_of <"$tmp/torch_user")" "$k" ">= 5x"
echo "keycut keys480: $k ms, tokens480x832: $kt ms (the forward in process)"
for kind in keys tokens; do
  for split in images rows; do
    f=$tmp/extract_${kind}_${split}_best
    [ -s "$f" ] && echo "kc-extract $kind --split $split: $(cat "$f") ms/image steady state (best run; decoding and HDF5 included)"
  done
done
# kc-extract's steady state is a throughput (a mean over the images after the first batch, while every
# thread was busy): against ONNX Runtime's best single forward over all its runs (strict), and against
# its mean over all its forwards (throughput against throughput)
mean_of() { sed -n "s/.*: \([0-9.]*\) ms\/image mean.*/\1/p" | head -n 1; }
for kind in keys tokens; do
  if [ -s "$tmp/extract_${kind}_images_best" ] && [ -f "$tmp/ort_$kind" ]; then
    ex=$(cat "$tmp/extract_${kind}_images_best")
    ratio "onnxruntime $kind best / kc-extract $kind (steady state, strict)" "$(best_of <"$tmp/ort_$kind")" "$ex" ">= 1.2x"
    ratio "onnxruntime $kind mean of $(wc -l <"$tmp/ort_runs_$kind")x$ORT_IMAGES / kc-extract $kind (steady state; throughputs)" "$(mean_of <"$tmp/ort_$kind")" "$ex" ">= 1.2x"
  fi
done

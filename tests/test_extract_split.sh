#!/usr/bin/env bash
# tests/test_extract_split.sh — kc-extract's outputs do not depend on how the cores share the work
# (issue 10 item 3): one image per core (--split images), every image over all cores (--split rows),
# one thread, and the default (auto, here a mix: batches of 3 images on 2 threads) give caches whose
# datasets and attributes are bit-identical (the command line aside), on the matmul path (products
# "... linear layers matmul brg:..."); elsewhere only the one-thread and rows runs are compared with
# the tolerance of tests/test_determinism.sh, and the rest is skipped.  Also: a resume on another
# product path is refused (OUT.partial/products names the path that made its pieces).
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_WAIT_POLICY=PASSIVE
B=$(cd "$BUILD" && pwd)
T=$(cd "$(tmpdir extract_split)" && pwd)
ROOT=$(pwd)
W=$ROOT/tests/data/vit/dino.pth
if ! /usr/bin/python3 -c 'import h5py' 2>/dev/null; then skip "h5py missing: cannot compare caches"; done_tests; exit 0; fi
"$B"/kc-demo-data --out "$T/demo" --train 1 --val 6 --videos 1 --frames 3 >/dev/null 2>&1 || bad "kc-demo-data"
run() { # name, threads, kc-extract options
  local name=$1 th=$2; shift 2
  (cd "$T" && OMP_NUM_THREADS=$th "$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$T/demo/voc:val" --batch 3 \
    --features keys,tokens,attn --out "$T/$name.h5" "$@") >"$T/log-$name.txt" 2>&1 || bad "kc-extract $name: $(tail -n 1 "$T/log-$name.txt")"
}
run rows 2 --split rows
run images 2 --split images
run one 1
run auto 2
products=$(/usr/bin/python3 -c 'import h5py, sys; print(h5py.File(sys.argv[1]).attrs["products"])' "$T/rows.h5" 2>/dev/null)
echo "products: $products"
if [[ $products == *"matmul brg"* ]]; then
  for c in images one auto; do
    out=$(/usr/bin/python3 "$ROOT/tests/bad/tools/h5same.py" "$T/rows.h5" "$T/$c.h5")
    # the command line differs (--split, threads in the environment do not show); nothing else may
    if [ -z "$out" ] || [ "$out" = "root attributes differ: ['command']" ]; then ok; else bad "rows vs $c: $out"; fi
    echo "rows vs $c: ${out:-identical}"
  done
else
  skip "products '$products': not the matmul path, outputs may differ in the last bits between splits"
fi

# a resume under another product path is refused, nothing written
mkdir -p "$T/resume.h5.partial"
printf 'oneDNN 0.0.0 imaginary; row kernels none' >"$T/resume.h5.partial/products"
if msg=$(cd "$T" && "$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$T/demo/voc:val" --out "$T/resume.h5" 2>&1); then
  bad "a partial of another product path was resumed"
else
  grep -q "computed with products 'oneDNN 0.0.0 imaginary; row kernels none'" <<<"$msg" && ok || bad "unclear message: $msg"
  [ "$(echo "$msg" | wc -l)" -eq 1 ] && ok || bad "more than one line: $msg"
fi
[ ! -e "$T/resume.h5" ] && ok || bad "resume.h5 written"
[ "$(ls "$T/resume.h5.partial")" = products ] && ok || bad "the partial folder changed: $(ls "$T/resume.h5.partial")"
echo "$T_PASS passed, $T_FAIL failed"
done_tests

#!/usr/bin/env bash
# tests/test_vit_full.sh — full-size parity of the ViT forward with PyTorch.
# tests/ref/vit_ref.py builds ViT-S/16 in the DINO layout with seeded random weights (saved as .pth
# and safetensors), a SelfPatch-shaped ViT-S/16 (no class token, no final norm, nested in
# teacher / module.backbone.) and a Hugging Face-named ViT-S/16 (hf position mode, config.json),
# takes real DAVIS frames from $KC_SHARED_DATA centre-cropped to 480x480 (so no resampling
# enters), and writes torch's keys and tokens; test_vit then computes them from the same files and
# crops: max |diff| <= 1e-4 * max |ref| for every case, worst printed.  KC_FULL=1 adds a ViT-S/8
# (3600 tokens; 2/3 of the test's time) and the DINO-named ViT-S/16 in hf position mode: the same
# code paths at other sizes (test_vit checks both layouts on tiny networks).
# Every product path this machine has (KC_ISA): all cases and kc-extract on the 3 crops on the
# first; the DINO and SelfPatch cases and kc-extract on one crop on the others.
# Everything lives under $BUILD/test-tmp/vit_full and is deleted afterwards.  SKIP without torch
# or without the shared data.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
davis=$KC_SHARED_DATA/davis/JPEGImages/480p
imgs=("$davis/blackswan/00000.jpg" "$davis/car-shadow/00020.jpg" "$davis/libby/00040.jpg")
if ! need "vit full-size parity" py:torch py:PIL py:numpy; then :
elif [ ! -f "${imgs[0]}" ] || [ ! -f "${imgs[1]}" ] || [ ! -f "${imgs[2]}" ]; then
  skip "vit full-size parity: shared DAVIS frames absent ($davis)"
elif [ ! -x "$BUILD/tests/test_vit" ]; then
  bad "vit full-size parity: $BUILD/tests/test_vit not built"
else
  d=$(tmpdir vit_full)
  t0=$SECONDS
  all=; [ "${KC_FULL:-0}" = 1 ] && all=--all
  if OMP_NUM_THREADS=2 /usr/bin/python3 tests/ref/vit_ref.py full $all "$d" "${imgs[@]}" >"$d/ref.log" 2>&1; then
    ok
    echo "reference: $((SECONDS - t0)) s"
    # every product path this machine can run (pipeline/model/gemm.h): the same reference files; every
    # case and kc-extract on the 3 crops on the first path, the others (the same kernels, slower)
    # on the first case and the SelfPatch shape, and kc-extract on the first crop
    cp "$d/cases.txt" "$d/cases.all"; cp "$d/crops.txt" "$d/crops.all"; head -n 1 "$d/crops.all" >"$d/crops.first"
    for isa in avx512 avx2 generic; do
      if [ "$isa" = avx512 ] && ! grep -qw avx512f /proc/cpuinfo; then skip "KC_ISA=avx512: no AVX-512 on this CPU"; continue; fi
      export KC_ISA=$isa
      echo "-- KC_ISA=$isa"
      rm -f "$d/kc.h5"
      if [ "$isa" = avx512 ] || ! grep -qw avx512f /proc/cpuinfo; then cp "$d/cases.all" "$d/cases.txt"; cp "$d/crops.all" "$d/crops.txt"
      else grep -E '^(vits16_pth_0|selfpatch) ' "$d/cases.all" >"$d/cases.txt"; cp "$d/crops.first" "$d/crops.txt"; fi
      out=$("$BUILD/tests/test_vit" "$d" 2>&1); rc=$?
      echo "$out"
      line=$(grep -E '^RESULT ' <<<"$out" | tail -n 1)
      read -r _ p f s <<<"${line:-RESULT 0 1 0}"
      T_PASS=$((T_PASS + p)); T_FAIL=$((T_FAIL + f)); T_SKIP=$((T_SKIP + s))
      if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then bad "test_vit $d exited $rc"; fi
      # kc-extract end to end on the same weights file and the crops saved as PNG
      if "$BUILD/kc-extract" --weights "$d/vits16.pth" --dataset "list:$d/crops.txt" --features keys,tokens \
           --out "$d/kc.h5" --verbose >"$d/kc.log" 2>&1; then
        ok
        n_crops=$(wc -l <"$d/crops.txt")
        cmp=$(/usr/bin/python3 - "$d" "$n_crops" <<'PY'
import sys, numpy as np, h5py
d = sys.argv[1]
cases = {0: "vits16_pth_0", 1: "vits16_st_1", 2: "vits16_st_2"}
worst = 0.0
with h5py.File(d + "/kc.h5", "r") as f:
    assert f.attrs["policy"] == "square480"
    assert len(f["features/keys"]) == int(sys.argv[2])
    for i, case in list(cases.items())[:int(sys.argv[2])]:
        for kind in ("keys", "tokens"):
            ref = np.fromfile("%s/%s.%s.f32" % (d, case, kind), "<f4").reshape(900, 384)
            got = f["features/%s/crop%d" % (kind, i)][:]
            worst = max(worst, float(np.abs(got - ref).max() / np.abs(ref).max()))
print("%.3g" % worst)
PY
)
        want=$(case $isa in avx512) echo "avx512_core; row kernels avx512; attention fused avx512";; avx2) echo "avx2; row kernels avx2; attention fused avx2";; *) echo "sse41; row kernels avx2; attention fused avx2";; esac)
        prod=$(grep -m1 -o "products: .*" "$d/kc.log" || true)
        echo "kc-extract --verbose: $prod"
        grep -q "$want" <<<"$prod" && ok || bad "KC_ISA=$isa: kc-extract ran '$prod', expected '$want'"
        echo "kc-extract vs torch (crops: $n_crops; keys and tokens): worst max|diff| / max|ref| = $cmp"
        awk -v w="${cmp:-1}" 'BEGIN{exit !(w <= 1e-4)}' && ok || bad "kc-extract keys differ from torch: $cmp"
      else
        bad "kc-extract on the crops failed: $(tail -n 2 "$d/kc.log")"
      fi
    done
    unset KC_ISA
  else
    bad "vit_ref.py full failed: $(tail -n 3 "$d/ref.log")"
  fi
  echo "total: $((SECONDS - t0)) s"
  rm -rf "$d"
fi
done_tests

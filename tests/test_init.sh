#!/usr/bin/env bash
# tests/test_init.sh — kc-init end to end (the tensors themselves: build/tests/test_init).
#   - the same arch and seed give the same bytes, another seed other bytes; provenance in __metadata__;
#   - bad input (unknown --arch, bad --seed, missing --out, unwritable folder): one line, non-zero
#     exit, nothing written;
#   - the files load in kc-extract like any network: a forward on a small image, toy/16 and the
#     full-size ViT-S/16;
#   - DINOv2 / DINOv3 archs: --help and the unknown-arch message list them; dinov3-s/16 writes its
#     family's init line and the official names and shapes (cls_token, storage_tokens, mask_token,
#     rope_embed.periods, blocks.i.attn.qkv.bias_mask, ls gammas, no pos_embed) in the header;
#   - a supervised timm-named .pth (toy backbone + head.weight (1000, 64) / head.bias + final norm,
#     written by torch at test time; SKIP without torch) loads as is, the head skipped and listed,
#     and gives exactly the keys of the same backbone without the head;
#   - KC_FULL=1: tests/ref/init_ref.py recomputes the ViT-S/16, dinov2-s/14, dinov2-reg-s/14 and
#     dinov3-s/16 files with NumPy (bytes identical) and compares them with torch's init functions
#     (KS tests for the random tensors; LayerNorm, LayerScale, mask_token, RoPE periods and
#     qkv.bias_mask bit-identical to what the official formulas give in torch).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T=$(tmpdir init_cli)
export KC_QUIET=1
img=tests/data/image/synth/optimized.jpg
echo "$PWD/$img" > "$T/list.txt"

# 1. reproducible bytes, provenance
"$BUILD/kc-init" --arch toy/16 --seed 3 --out "$T/a.safetensors" && ok || bad "kc-init toy/16 failed"
"$BUILD/kc-init" --arch toy/16 --seed 3 --out "$T/b.safetensors" && ok || bad "kc-init toy/16 (again) failed"
"$BUILD/kc-init" --arch toy/16 --seed 4 --out "$T/c.safetensors" && ok || bad "kc-init toy/16 seed 4 failed"
cmp -s "$T/a.safetensors" "$T/b.safetensors" && ok || bad "two runs with seed 3 differ"
cmp -s "$T/a.safetensors" "$T/c.safetensors" && bad "seeds 3 and 4 give the same file" || ok
head -c 400 "$T/a.safetensors" | grep -aq '{"__metadata__":{"arch":"toy/16","format":"pt","init":"dino-vision_transformer' && ok \
  || bad "header does not start with the metadata: $(head -c 120 "$T/a.safetensors" | tail -c 112)"
head -c 400 "$T/a.safetensors" | grep -aq '"keycut_version":"[0-9.]*","seed":"3"}' && ok || bad "no keycut_version / seed in the metadata"

# 2. bad input
expect_fail "unknown arch" "kc-init: error: --arch 'vit-x/16': unknown architecture \(known: vit-s/16" \
  "$BUILD/kc-init" --arch vit-x/16 --seed 0 --out "$T/x.safetensors"
for s in -1 abc 1e3 18446744073709551616 ""; do
  expect_fail "seed '$s'" "kc-init: error: --seed '$s': not an integer" "$BUILD/kc-init" --arch toy/16 --seed "$s" --out "$T/x.safetensors"
done
expect_fail "no --out" "kc-init: error: need --arch, --seed and --out" "$BUILD/kc-init" --arch toy/16 --seed 0
touch "$T/file"
expect_fail "folder is a file" "kc-init: error: .*file" "$BUILD/kc-init" --arch toy/16 --seed 0 --out "$T/file/x.safetensors"
ls "$T"/x.safetensors* >/dev/null 2>&1 && bad "a failed kc-init left $(ls "$T"/x.safetensors*)" || ok

# 2b. the DINOv2 / DINOv3 architectures
"$BUILD/kc-init" --help > "$T/help.txt" && ok || bad "kc-init --help failed"
for a in dinov2-s/14 dinov2-reg-s/14 dinov3-s/16; do
  grep -q "ARCH: .*$a" "$T/help.txt" && ok || bad "--help does not list $a"
done
expect_fail "unknown arch lists dinov3" "kc-init: error: --arch 'dinov3-s/14': unknown architecture \(known: .*dinov2-s/14, dinov2-reg-s/14, dinov3-s/16\)" \
  "$BUILD/kc-init" --arch dinov3-s/14 --seed 0 --out "$T/x.safetensors"
if "$BUILD/kc-init" --arch dinov3-s/16 --seed 0 --out "$T/d3.safetensors"; then
  ok
  hl=$(od -An -tu8 -N8 "$T/d3.safetensors" | tr -d ' ')
  head -c $((8 + hl)) "$T/d3.safetensors" | tail -c "$hl" > "$T/d3.header"
  grep -q '^{"__metadata__":{"arch":"dinov3-s/16","format":"pt","init":"dinov3-vision_transformer init_weights' "$T/d3.header" && ok \
    || bad "dinov3-s/16: header does not start with its metadata: $(head -c 120 "$T/d3.header")"
  for want in '"cls_token":{"dtype":"F32","shape":[1,1,384]' '"storage_tokens":{"dtype":"F32","shape":[1,4,384]' \
              '"mask_token":{"dtype":"F32","shape":[1,384]' '"rope_embed.periods":{"dtype":"F32","shape":[16]' \
              '"patch_embed.proj.weight":{"dtype":"F32","shape":[384,3,16,16]' \
              '"blocks.11.attn.qkv.bias_mask":{"dtype":"F32","shape":[1152]' '"blocks.0.ls1.gamma":{"dtype":"F32","shape":[384]'; do
    grep -qF "$want" "$T/d3.header" && ok || bad "dinov3-s/16 header lacks $want"
  done
  n=$(grep -o '"data_offsets"' "$T/d3.header" | wc -l)
  [ "$n" = 188 ] && ok || bad "dinov3-s/16: $n tensors, the released dinov3_vits16 file has 188"
  grep -q '"pos_embed"\|"register_tokens"' "$T/d3.header" && bad "dinov3-s/16 has a pos_embed or register_tokens" || ok
else
  bad "kc-init dinov3-s/16 failed"
fi

# 3. a forward in kc-extract: toy/16 and the full-size ViT-S/16
if "$BUILD/kc-extract" --weights "$T/a.safetensors" --dataset "list:$T/list.txt" --policy native16 --features keys,tokens \
     --out "$T/toy.h5" 2>"$T/toy.log"; then ok; else bad "kc-extract on toy/16: $(tail -n 1 "$T/toy.log")"; fi
t0=$SECONDS
if "$BUILD/kc-init" --arch vit-s/16 --seed 0 --out "$T/s16.safetensors"; then ok; else bad "kc-init vit-s/16 failed"; fi
echo "kc-init vit-s/16: $((SECONDS - t0)) s, $(stat -c %s "$T/s16.safetensors" 2>/dev/null) bytes"
if KC_QUIET= "$BUILD/kc-extract" --weights "$T/s16.safetensors" --dataset "list:$T/list.txt" --policy native16 \
     --out "$T/s16.h5" 2>"$T/s16.log"; then
  ok
  grep -q "vit dim=384 depth=12 heads=6 patch=16 mlp=1536 cls=1 final_norm=1 pos_grid=14x14" "$T/s16.log" && ok || bad "kc-extract did not describe a ViT-S/16: $(head -n 2 "$T/s16.log")"
  "$BUILD/kc-inspect" "$T/s16.h5" > "$T/s16.txt" 2>&1 && grep -q "optimized" "$T/s16.txt" && ok || bad "kc-inspect on the cache: $(head -n 3 "$T/s16.txt")"
else
  bad "kc-extract on the ViT-S/16 file: $(tail -n 1 "$T/s16.log")"
fi

# 4. a supervised timm file (.pth with a classification head), written by torch
if ! need "supervised .pth written by torch" py:torch py:numpy py:h5py; then :
else
  /usr/bin/python3 - "$T/a.safetensors" "$T/sup.pth" <<'PY' && ok || bad "could not write the supervised .pth"
import collections, json, sys
import numpy as np, torch
data = open(sys.argv[1], "rb").read()
n = int.from_bytes(data[:8], "little")
header = json.loads(data[8:8 + n]); header.pop("__metadata__")
sd = collections.OrderedDict()
for k, v in header.items():  # timm's order does not matter; names are timm's
    b, e = v["data_offsets"]
    sd[k] = torch.from_numpy(np.frombuffer(data[8 + n + b:8 + n + e], "<f4").reshape(v["shape"]).copy())
g = torch.Generator().manual_seed(0)
sd["head.weight"] = torch.randn(1000, 64, generator=g) * 0.02
sd["head.bias"] = torch.zeros(1000)
torch.save(sd, sys.argv[2])
PY
  if KC_QUIET= "$BUILD/kc-extract" --weights "$T/sup.pth" --dataset "list:$T/list.txt" --policy native16 --features keys,tokens \
       --out "$T/sup.h5" 2>"$T/sup.log"; then
    ok
    grep -q "skipped 2 entries outside the backbone: head.weight, head.bias" "$T/sup.log" && ok \
      || bad "the head is not listed as skipped: $(grep -i skip "$T/sup.log")"
    same=$(/usr/bin/python3 - "$T/toy.h5" "$T/sup.h5" <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
print(int(all(np.array_equal(a["features/%s/optimized" % k][:], b["features/%s/optimized" % k][:]) for k in ("keys", "tokens"))))
PY
)
    [ "$same" = 1 ] && ok || bad "the supervised .pth gives other keys/tokens than its backbone alone"
  else
    bad "kc-extract on the supervised .pth: $(tail -n 1 "$T/sup.log")"
  fi
fi

# 5. full check: NumPy recomputes the ViT-S/16 file and the DINOv2 / DINOv3 ones; comparison with torch
if [ "${KC_FULL:-}" = 1 ]; then
  if ! need "tests/ref/init_ref.py check" py:numpy; then :
  else
    "$BUILD/kc-init" --arch dinov2-s/14 --seed 0 --out "$T/d2.safetensors" && ok || bad "kc-init dinov2-s/14 failed"
    "$BUILD/kc-init" --arch dinov2-reg-s/14 --seed 5 --out "$T/d2r.safetensors" && ok || bad "kc-init dinov2-reg-s/14 failed"
    for f in s16 d2 d2r d3; do
      if /usr/bin/python3 tests/ref/init_ref.py check "$T/$f.safetensors" > "$T/ref.log" 2>&1; then ok; cat "$T/ref.log"
      else bad "init_ref.py check $f: $(tail -n 3 "$T/ref.log")"; fi
    done
  fi
else
  skip "NumPy recomputation of the ViT-S/16, DINOv2 and DINOv3 files and comparisons with torch: KC_FULL=1 (make check-full)"
fi
rm -rf "$T"
done_tests

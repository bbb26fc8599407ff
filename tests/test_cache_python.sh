#!/usr/bin/env bash
# The h5py session of docs/cache-format.md, run as written (the text between its "example: begin"
# and "example: end" markers) with /usr/bin/python3 on caches the pipeline makes here (kc-demo-data,
# kc-init toy/16, kc-extract under square480 and native16, kc-decode), and checked against the C
# side: the ids the cache reader gives, the grid and width kc-inspect prints, the image file's
# sha256sum, and the mask on the image's pixels that grid_map.h's rule gives (kc-score's, kc-show's;
# tests/test_cache_pixels --pixels).  Then the format: numeric root attributes are numbers to h5py,
# a version-1 copy of a masks cache (rewritten with h5py as version 1 stored it) reads through the
# same reader to the same provenance, index and pixels, and the checkpoint key a nested .pth gave
# is recorded and said once.  Needs python3-h5py and python3-numpy (SKIP naming them otherwise);
# the .pth part needs python3-torch.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
T=$(tmpdir cache_python)
PIX=$BUILD/tests/test_cache_pixels
export KC_QUIET=1
for p in kc-demo-data kc-init kc-extract kc-decode kc-inspect; do
  [ -x "$BUILD/$p" ] || { bad "$BUILD/$p not built"; done_tests; exit 1; }
done
[ -x "$PIX" ] || { bad "$PIX not built"; done_tests; exit 1; }

# the example, cut out of the doc
awk '/<!-- example: end -->/ { f = 0 } f && !/^```/ { print } /<!-- example: begin -->/ { f = 1 }' docs/cache-format.md >"$T/example.py"
[ "$(grep -c . "$T/example.py")" -gt 20 ] && ok || bad "docs/cache-format.md: no example between the markers"

need "the h5py session of docs/cache-format.md" py:h5py py:numpy || { done_tests; exit $?; }

"$BUILD/kc-demo-data" --out "$T/data" --train 1 --val 3 --videos 1 --frames 3 >/dev/null &&
  "$BUILD/kc-init" --arch toy/16 --seed 1 --out "$T/toy.safetensors" >/dev/null ||
  { bad "kc-demo-data or kc-init failed"; done_tests; exit 1; }
SETTING=t0.20-bin-mean-seed-n1
for pol in square480 native16; do
  if ! "$BUILD/kc-extract" --weights "$T/toy.safetensors" --dataset "voc:$T/data/voc:val" --policy $pol \
         --out "$T/keys-$pol.h5" 2>"$T/extract.err" ||
     ! "$BUILD/kc-decode" --features "$T/keys-$pol.h5" --setting $SETTING --out "$T/masks-$pol.h5" 2>"$T/decode.err"; then
    bad "$pol: kc-extract or kc-decode failed: $(cat "$T/extract.err" "$T/decode.err")"; continue
  fi
  out=$($PY "$T/example.py" "$T/keys-$pol.h5" "$T/masks-$pol.h5" "$T/pixels-$pol.txt" 2>&1) ||
    { bad "$pol: the doc's example failed: $out"; continue; }
  [ "$pol" = square480 ] && echo "$out" >"$T/example.out"
  line() { grep "^$1" <<<"$out"; }
  # ids: the C reader's, in order, as str
  ids=$("$PIX" --ids "$T/keys-$pol.h5" | tr '\n' ' ' | sed 's/ $//')
  [ "$(line 'ids:')" = "ids: $ids" ] && ok || bad "$pol: the example's '$(line 'ids:')', the cache's 'ids: $ids'"
  [ "$(line 'id type:')" = "id type: str" ] && ok || bad "$pol: '$(line 'id type:')' (want str)"
  first=${ids%% *}
  # keys (grid_h, grid_w, D): kc-inspect's grid of the first image and the cache's dim
  insp=$("$BUILD/kc-inspect" "$T/keys-$pol.h5")
  g=$(sed -n 's/^images: .*grid \([0-9]*\)x\([0-9]*\),.*/\1, \2/p' <<<"$insp")
  dim=$(awk '$1 == "dim" { print $2 }' <<<"$insp")
  [ "$(line 'keys of')" = "keys of $first : ($g, $dim) float32" ] && ok ||
    bad "$pol: '$(line 'keys of')', kc-inspect: grid ($g), dim $dim"
  # the image hash, as sha256sum prints it
  sum=$(sha256sum "$T/data/voc/JPEGImages/$first.jpg" | cut -c1-64)
  [ "$(line 'image_sha256_hex:')" = "image_sha256_hex: $sum" ] && ok || bad "$pol: '$(line 'image_sha256_hex:')', sha256sum $sum"
  # provenance: numbers as numbers (no quotes), the rest as str
  for want in "provenance format: 'keycut-features'" "provenance format_version: 2" "provenance policy: '$pol'" \
              "provenance patch: 16" "provenance dim: $dim" "provenance checkpoint_key: 'none'"; do
    grep -qxF "$want" <<<"$out" && ok || bad "$pol: the example does not print \"$want\": $out"
  done
  grep -q '^decoder: normalized cut (docs/design.md, section "Decoders")' <<<"$out" && grep -q '^## Decoders$' docs/design.md && ok ||
    bad "$pol: the decoder attribute cites no section of docs/design.md: $(line decoder)"
  # the mask on the image's pixels: the doc's rule = grid_map.h's
  "$PIX" --pixels "$T/masks-$pol.h5" $SETTING "$first" >"$T/pixels-$pol-c.txt" || bad "$pol: test_cache_pixels --pixels failed"
  size=$(sed -n 's/^images: .*size \([0-9]*\)x\([0-9]*\)).*/\1, \2/p' <<<"$insp")
  if cmp -s "$T/pixels-$pol.txt" "$T/pixels-$pol-c.txt" && [ "$(wc -l <"$T/pixels-$pol.txt")" -eq "${size%,*}" ]; then ok
  else bad "$pol: the example's pixel mask differs from grid_map.h's ($(cmp "$T/pixels-$pol.txt" "$T/pixels-$pol-c.txt" 2>&1), size $size)"; fi
  grep -q "^mask $SETTING of $first : grid ($g) -> pixels ($size) foreground [0-9]*\$" <<<"$out" && ok ||
    bad "$pol: '$(line mask)' (grid $g, size $size)"
done
echo "--- the example's output (square480):"; sed 's/^/    /' "$T/example.out" 2>/dev/null

# the types h5py sees, and a version-1 copy read through the same reader
res=$($PY - "$T" <<'EOF'
import sys, h5py, numpy as np
T = sys.argv[1]
bad = []
with h5py.File(f"{T}/masks-square480.h5", "r") as f:
    a = f.attrs
    for k in ("format_version", "patch", "dim", "registers", "settings"):
        if not isinstance(a[k], np.integer): bad.append(f"{k} is {type(a[k]).__name__}")
    if not isinstance(a["ln_eps"], np.floating): bad.append(f"ln_eps is {type(a['ln_eps']).__name__}")
    for k in ("format", "policy", "decoder", "checkpoint_key"):
        if not isinstance(a[k], str): bad.append(f"{k} is {type(a[k]).__name__}")
    if f["index/resized"].dtype != np.int32 or f["index/box"].shape != (len(f["index/ids"]), 4): bad.append("index/resized, box")
# version 1 as it was stored: every root attribute a string, no hex, no resized or box
s = h5py.string_dtype("utf-8")
import shutil
shutil.copy(f"{T}/masks-square480.h5", f"{T}/masks-v1.h5")
with h5py.File(f"{T}/masks-v1.h5", "r+") as f:
    for k in list(f.attrs):
        v = f.attrs[k]
        if not isinstance(v, str):
            del f.attrs[k]
            f.attrs.create(k, "%.9g" % v if isinstance(v, np.floating) else str(v), dtype=s)
    f.attrs.create("format_version", "1", dtype=s)
    del f["index/resized"], f["index/box"]
    def strip(name, obj):
        if isinstance(obj, h5py.Dataset) and "image_sha256_hex" in obj.attrs: del obj.attrs["image_sha256_hex"]
    f.visititems(strip)
    if f.attrs["format_version"] != "1": bad.append("the copy is not version 1")
print("OK" if not bad else "; ".join(bad))
EOF
)
[ "$res" = OK ] && ok || bad "types or the version-1 copy: $res"
if [ -f "$T/masks-v1.h5" ]; then
  "$BUILD/kc-inspect" "$T/masks-square480.h5" | grep -v "^  format_version\|^/" | sed 1d >"$T/v2.txt"
  "$BUILD/kc-inspect" "$T/masks-v1.h5" | grep -v "^  format_version\|^/" | sed 1d >"$T/v1.txt"
  cmp -s "$T/v1.txt" "$T/v2.txt" && [ -s "$T/v1.txt" ] && ok || bad "kc-inspect reads version 1 and 2 differently: $(diff "$T/v1.txt" "$T/v2.txt")"
  "$BUILD/kc-inspect" "$T/masks-v1.h5" | grep -q "^  format_version *1$" && ok || bad "the copy does not read as version 1"
  first=$("$PIX" --ids "$T/masks-v1.h5" | head -1)
  "$PIX" --pixels "$T/masks-v1.h5" $SETTING "$first" | cmp -s - "$T/pixels-square480-c.txt" && ok ||
    bad "version 1 and 2 give different pixel masks"
  # a stage reads it as its input (kc-decode refuses a masks cache; kc-inspect --id reads a mask)
  [ "$("$BUILD/kc-inspect" --id "$first" "$T/masks-v1.h5" | tail -1)" = "$("$BUILD/kc-inspect" --id "$first" "$T/masks-square480.h5" | tail -1)" ] &&
    ok || bad "kc-inspect --id reads the mask differently from version 1"
fi

# the checkpoint key taken from a nested .pth: recorded, and said once
if need "the checkpoint key of a nested .pth" py:torch; then
  if $PY - "$T" <<'EOF'
import json, struct, sys, numpy as np, torch
T = sys.argv[1]
raw = open(f"{T}/toy.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n]); body = raw[8 + n:]
sd = {k: torch.from_numpy(np.frombuffer(body[v["data_offsets"][0]:v["data_offsets"][1]], "<f4").reshape(v["shape"]).copy())
      for k, v in hdr.items() if k != "__metadata__"}
torch.save({"epoch": 3, "student": sd, "teacher": sd}, f"{T}/nested.pth")
EOF
  then
    unset KC_QUIET
    "$BUILD/kc-extract" --weights "$T/nested.pth" --dataset "voc:$T/data/voc:val" --out "$T/keys-pth.h5" 2>"$T/pth.err" ||
      bad "kc-extract on the nested .pth: $(cat "$T/pth.err")"
    [ "$(grep -c 'checkpoint key' "$T/pth.err")" -eq 1 ] && grep -q 'the state dict under checkpoint key "teacher" (automatic' "$T/pth.err" &&
      ok || bad "kc-extract does not say once which key it took: $(cat "$T/pth.err")"
    "$BUILD/kc-extract" --weights "$T/nested.pth" --checkpoint-key student --dataset "voc:$T/data/voc:val" \
      --out "$T/keys-student.h5" 2>/dev/null || bad "kc-extract --checkpoint-key student failed"
    export KC_QUIET=1
    kv=$($PY -c "import h5py,sys
for p in sys.argv[1:]:
    with h5py.File(p) as f: print(f.attrs['checkpoint_key'], f.attrs['checkpoint_key_from'])" "$T/keys-pth.h5" "$T/keys-student.h5" 2>&1)
    [ "$kv" = "$(printf 'teacher automatic\nstudent --checkpoint-key')" ] && ok || bad "checkpoint_key, checkpoint_key_from: $kv"
  else
    bad "could not write the nested .pth"
  fi
fi
done_tests

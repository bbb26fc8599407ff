#!/usr/bin/env bash
# tests/test_dino23_cli.sh — kc-extract with the DINOv2 / DINOv3 families (issue 29), on the tiny
# committed networks of tests/data/dino23 (tests/ref/dino23_ref.py) and kc-demo-data's images:
#   - the family, the position rule that ran and the register count are recorded (kc-inspect);
#   - --posembed auto resolves to the family's rule: a register model's cache under auto equals the
#     one under --posembed antialias byte for byte, and --posembed dino gives other keys;
#   - DINOv3's keys: --keys pre-rope gives other keys, and says so in the cache;
#   - the options that do not apply are refused in one line naming the file, before any work:
#     --posembed on a DINOv3 file, --keys pre-rope without RoPE, --drop-cls on DINOv2 / DINOv3;
#   - a patch-14 network at square480 runs on a 35x35 grid (490x490), and its keys are a 1225-row
#     table (no register rows).
source "$(dirname "$0")/lib.sh"
B=$BUILD
for s in kc-demo-data kc-extract kc-inspect; do [ -x "$B/$s" ] || { echo "test_dino23_cli: $B/$s not built" >&2; exit 1; }; done
T=$(tmpdir dino23_cli)
D=tests/data/dino23
"$B"/kc-demo-data --out "$T/data" --train 1 --val 2 --videos 1 --frames 3 >/dev/null 2>"$T/err" || bad "kc-demo-data: $(cat "$T/err")"
DS=voc:$T/data/voc:val
ex() { "$B"/kc-extract --dataset "$DS" "$@" 2>"$T/err.log" >/dev/null; }
attr() { "$B"/kc-inspect "$1" | sed -n "s/^  $2  *//p" | head -n 1; }

# DINOv3: RoPE, storage tokens, keys after RoPE by default
if ex --weights $D/dinov3.pth --features keys,attn --out "$T/v3.h5"; then
  ok
  [ "$(attr "$T/v3.h5" posembed)" = rope ] && ok || bad "dinov3: posembed '$(attr "$T/v3.h5" posembed)', expected rope"
  [ "$(attr "$T/v3.h5" registers)" = 4 ] && ok || bad "dinov3: registers '$(attr "$T/v3.h5" registers)', expected 4"
  grep -q "^after RoPE" <<<"$(attr "$T/v3.h5" keys)" && ok || bad "dinov3: keys attribute '$(attr "$T/v3.h5" keys)'"
  grep -q "^dinov3 " <<<"$(attr "$T/v3.h5" forward)" && ok || bad "dinov3: forward '$(attr "$T/v3.h5" forward)'"
else
  bad "kc-extract dinov3: $(cat "$T/err.log")"
fi
if ex --weights $D/dinov3.pth --keys pre-rope --out "$T/v3pre.h5"; then
  ok
  grep -q "^before RoPE" <<<"$(attr "$T/v3pre.h5" keys)" && ok || bad "dinov3 pre-rope: keys attribute '$(attr "$T/v3pre.h5" keys)'"
  cmp -s <("$B"/kc-inspect --values 64 "$T/v3.h5" | sed -n '/values/,$p') <("$B"/kc-inspect --values 64 "$T/v3pre.h5" | sed -n '/values/,$p') \
    && bad "dinov3: keys before and after RoPE are the same" || ok
else
  bad "kc-extract dinov3 --keys pre-rope: $(cat "$T/err.log")"
fi

# DINOv2 with registers: auto = antialias; dino differs; 35x35 grid at square480
ex --weights $D/dinov2_reg_train.pth --out "$T/reg_auto.h5" || bad "kc-extract reg auto: $(cat "$T/err.log")"
ex --weights $D/dinov2_reg_train.pth --posembed antialias --out "$T/reg_aa.h5" || bad "kc-extract reg antialias: $(cat "$T/err.log")"
ex --weights $D/dinov2_reg_train.pth --posembed dino --out "$T/reg_dino.h5" || bad "kc-extract reg dino: $(cat "$T/err.log")"
[ "$(attr "$T/reg_auto.h5" posembed)" = antialias ] && ok || bad "reg: auto recorded '$(attr "$T/reg_auto.h5" posembed)', expected antialias"
[ "$(attr "$T/reg_dino.h5" posembed)" = dino ] && ok || bad "reg: --posembed dino recorded '$(attr "$T/reg_dino.h5" posembed)'"
vals() { "$B"/kc-inspect --values 64 "$1" | sed -n '/values/,$p'; }
[ -n "$(vals "$T/reg_auto.h5")" ] && [ "$(vals "$T/reg_auto.h5")" = "$(vals "$T/reg_aa.h5")" ] && ok || bad "reg: auto and antialias give other keys"
[ "$(vals "$T/reg_auto.h5")" != "$(vals "$T/reg_dino.h5")" ] && ok || bad "reg: antialias and dino give the same keys"
grep -q "grid 35x35" <<<"$("$B"/kc-inspect "$T/reg_auto.h5")" && ok || bad "reg: square480 of patch 14 is not a 35x35 grid: $("$B"/kc-inspect "$T/reg_auto.h5" | grep -m1 grid)"

# refusals: one line naming the file, no cache written
expect_fail "--posembed on DINOv3" "dinov3.pth: a DINOv3 network .*no position embedding" \
  "$B"/kc-extract --dataset "$DS" --weights $D/dinov3.pth --posembed dino --out "$T/no1.h5"
expect_fail "--keys pre-rope without RoPE" "dinov2_reg_train.pth: keys before RoPE asked for, and this network has no RoPE" \
  "$B"/kc-extract --dataset "$DS" --weights $D/dinov2_reg_train.pth --keys pre-rope --out "$T/no2.h5"
expect_fail "--drop-cls on DINOv2" "model.safetensors: --drop-cls applies to DINO-layout networks" \
  "$B"/kc-extract --dataset "$DS" --weights $D/dinov2_hf/model.safetensors --drop-cls --out "$T/no3.h5"
expect_fail "--posembed typo" "--posembed: unknown 'aa' \(auto, dino, hf or antialias\)" \
  "$B"/kc-extract --dataset "$DS" --weights $D/dinov3.pth --posembed aa --out "$T/no4.h5"
expect_fail "--keys typo" "--keys: unknown 'rope' \(post-rope or pre-rope\)" \
  "$B"/kc-extract --dataset "$DS" --weights $D/dinov3.pth --keys rope --out "$T/no5.h5"
for n in 1 2 3 4 5; do [ ! -e "$T/no$n.h5" ] && ok || bad "a refused run wrote $T/no$n.h5"; done
done_tests

#!/usr/bin/env bash
# tests/test_baselines.sh — baseline rows in kc-table and the pipeline (kind = baseline, init = ...).
# Hand-written summary.csv files (expected values worked out by hand below):
#   net a: s1 0.50, s2 0.40        net b: s1 0.30, s2 0.60       baseline r: s1 0.99, s2 0.10
#   mean over a, b: s1 0.40, s2 0.50 -> s2;  with r counted: s1 0.597, s2 0.367 -> s1.
#   baseline q: one setting (attn-mass0.60) 0.25 -> reported at it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T=$(tmpdir baselines)
export KC_QUIET=1
mk() { mkdir -p "$T/$1"; printf "setting,images,jaccard,corloc\n$2" > "$T/$1/summary.csv"; }
mk a 's1,4,0.5,0.5\ns2,4,0.4,0.5\n'
mk b 's1,4,0.3,0.5\ns2,4,0.6,0.5\n'
mk r 's1,4,0.99,0.1\ns2,4,0.1,0.1\n'
mk q 'attn-mass0.60,4,0.25,0\n'

best=$("$BUILD/kc-table" "$T/a" "$T/b" "$T/r" --print-best 2>&1)
[ "$best" = s1 ] && ok || bad "without --baseline the mean over a, b, r should choose s1, got '$best'"
best=$("$BUILD/kc-table" "$T/a" "$T/b" "$T/r" --print-best --baseline r 2>&1)
[ "$best" = s2 ] && ok || bad "with --baseline r the mean over a, b should choose s2, got '$best'"
best=$("$BUILD/kc-table" "$T/r" --print-best --baseline r 2>&1)
[ "$best" = s1 ] && ok || bad "every network a baseline: they choose (s1), got '$best'"
expect_fail "unknown baseline" "kc-table: error: --baseline zz: no score folder of network 'zz'" \
  "$BUILD/kc-table" "$T/a" --print-best --baseline zz

if "$BUILD/kc-table" "$T/r" "$T/a" "$T/q" "$T/b" --out "$T/tab" --only report --baseline r --baseline q \
     --ledger "$T/none.tsv" >/dev/null 2>"$T/err"; then
  ok
  want='network,voc_jaccard,voc_corloc,kind
a,0.4,0.5,network
b,0.6,0.5,network
r,0.1,0.1,baseline
q,0.25,0,baseline'
  [ "$(cat "$T/tab/report.csv")" = "$want" ] && ok || bad "report.csv: $(cat "$T/tab/report.csv")"
  grep -q '^| r (baseline) | 10.0 | 10.0 |$' "$T/tab/report.md" && grep -q '^| b | \*\*60.0\*\* | \*\*50.0\*\* |$' "$T/tab/report.md" \
    && ok || bad "report.md: $(cat "$T/tab/report.md")"
  tr '\n' '~' < "$T/tab/report.tex" | grep -q 'b & \\textbf{60.0} & \\textbf{50.0} \\\\~\\midrule~\\multicolumn{3}{l}{\\textit{Baselines}} \\\\~r & 10.0 & 10.0 \\\\~q & 25.0 & 0.0 \\\\~\\bottomrule' \
    && ok || bad "report.tex: $(cat "$T/tab/report.tex")"
else
  bad "kc-table with baselines failed: $(cat "$T/err")"
fi

# the pipeline: kind = baseline reaches kc-table; init = makes the weights with kc-init into $(OUT)/nets
printf '[color]\nmodel = color\n[rnd]\ninit = --arch toy/16 --seed 1\nkind = baseline\n' > "$T/nets.ini"
M="make --no-print-directory -s BUILD=$BUILD"
[ "${KC_SANITIZE:-}" = 1 ] && M="make --no-print-directory -s SANITIZE=1 BUILD=${BUILD%-san}"
mkdir -p "$T/voc/ImageSets/Segmentation" && echo x > "$T/voc/ImageSets/Segmentation/val.txt"
plan=$($M -n NETS="color rnd" NETS_INI="$T/nets.ini" VOC="$T/voc" OUT="$T/out" SETTING=t0.20-bin-mean-seed-n1 \
       TABLES="$T/out/tables" "$T/out/tables/report.csv" 2>&1 || true)
grep -q -- "kc-init --arch toy/16 --seed 1 --out $T/out/nets/rnd.safetensors" <<<"$plan" && ok || bad "no kc-init step in the plan: $(grep kc-init <<<"$plan")"
grep -q -- "kc-extract --weights $T/out/nets/rnd.safetensors" <<<"$plan" && ok || bad "kc-extract does not read the kc-init file"
grep -Eq -- "^$BUILD/kc-table .* --baseline rnd( --ledger .*)?$" <<<"$plan" && ok || bad "kc-table is not told rnd is a baseline: $(grep kc-table <<<"$plan")"
printf '[x]\nmodel = color\nkind = control\n' > "$T/bad.ini"
expect_fail "bad kind" "net-args: \[x\] in .*: kind must be network or baseline, not 'control'" configs/net-args.sh "$T/bad.ini" x
rm -rf "$T"
done_tests

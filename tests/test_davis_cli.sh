#!/usr/bin/env bash
# tests/test_davis_cli.sh — kc-davis end to end: official CSVs on a copy of the OSVOS results, refusal
# to overwrite, several objects against tests/ref/davis_ref.py, and bad input.
source "$(dirname "$0")/lib.sh"
KCD=$BUILD/kc-davis GEN=$BUILD/tests/bench_davis
T=$(tmpdir davis_sh)
PY=/usr/bin/python3

# ---- official parity of the CSVs, on a copy (kc-davis writes into the results folder) ----
OSVOS=$KC_SHARED_DATA/davis_results/semi-supervised/osvos
if [ -d "$OSVOS" ]; then
  mkdir -p "$T/osvos"
  for s in blackswan car-shadow libby; do cp -r "$OSVOS/$s" "$T/osvos/"; done
  if $KCD --results "$T/osvos" --davis "$KC_SHARED_DATA/davis" --split val >"$T/out.txt" 2>"$T/err.txt"; then ok; else bad "kc-davis on OSVOS: $(cat "$T/err.txt")"; fi
  for f in global_results-val.csv per-sequence_results-val.csv; do
    if cmp -s "$T/osvos/$f" "$OSVOS/$f"; then ok; else bad "$f differs from the official: $(diff "$T/osvos/$f" "$OSVOS/$f" | head -5)"; fi
  done
  if grep -q '"J&F-Mean": 0.85619735979429' "$T/osvos/global_results-val.json"; then ok; else bad "JSON J&F-Mean not the official 0.8561973597942951"; fi
  expect_fail "rerun without --force" "exists; not overwritten.*--force" $KCD --results "$T/osvos" --davis "$KC_SHARED_DATA/davis" --split val
  if $KCD --results "$T/osvos" --davis "$KC_SHARED_DATA/davis" --split val --force >/dev/null 2>&1 &&
     cmp -s "$T/osvos/global_results-val.csv" "$OSVOS/global_results-val.csv"; then ok; else bad "--force rerun"; fi
else
  skip "shared data absent: no official CSV check"
fi

# ---- several objects, against the NumPy/OpenCV reference ----
G=$T/gen
$GEN gen --root "$G/root" --results "$G/res" --videos 3 --frames 9 --width 131 --height 97 --objects 3 --seed 5 \
  && ok || bad "generator"
if $KCD --results "$G/res" --davis "$G/root" --split val >/dev/null 2>"$T/err.txt"; then ok; else bad "kc-davis on generated data: $(cat "$T/err.txt")"; fi
if need "several objects against tests/ref/davis_ref.py" py:numpy py:cv2 py:PIL; then
  $PY tests/ref/davis_ref.py score --results "$G/res" --davis "$G/root" --split val --out "$T/ref.json"
  if $PY - "$G/res/global_results-val.json" "$T/ref.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst, n = 0.0, 0
for k, v in b["global"].items():
    worst = max(worst, abs(a["global"][k] - v)); n += 1
assert set(a["per_frame"]) == set(b["per_frame"]), (sorted(a["per_frame"]), sorted(b["per_frame"]))
for o, v in b["per_frame"].items():
    for m in ("J", "F", "J-stats(M,R,D)", "F-stats(M,R,D)"):
        assert len(a["per_frame"][o][m]) == len(v[m])
        for x, y in zip(a["per_frame"][o][m], v[m]):
            worst = max(worst, abs(x - y)); n += 1
print("multi-object vs reference: %d values, worst |diff| %.3g (tol 1e-9), %d objects" % (n, worst, len(b["per_frame"])))
sys.exit(0 if worst <= 1e-9 and len(b["per_frame"]) == 9 else 1)
EOF
  then ok; else bad "multi-object values differ from tests/ref/davis_ref.py"; fi
fi

# ---- kc-table's DAVIS columns: kc-davis's JSON at full precision, named root and split ----
# (a one-setting score folder beside the generated results; the JSON's numbers read here with sed)
TB=$BUILD/kc-table
mkdir -p "$T/scores" && printf 'setting,images,jaccard,corloc\nt0.15-bin-mean-corners-n3,3,0.5,0.25\n' >"$T/scores/summary.csv"
echo gen >"$T/scores/network"
json_global() { sed -n "s/^  \"$1\": \([^,]*\),\{0,1\}\$/\1/p" "$2" | head -n 1; }
if $TB "$T/scores" --out "$T/tab" --only report --davis "gen=$G/res" --davis-root "$G/root" --davis-split val \
     --ledger "$T/none.tsv" >/dev/null 2>"$T/err.txt"; then ok; else bad "kc-table on kc-davis's results: $(cat "$T/err.txt")"; fi
want=""
for k in 'J&F-Mean' J-Mean F-Mean; do want="$want,$(json_global "$k" "$G/res/global_results-val.json")"; done
got=$(awk -F, 'NR == 2 {print "," $4 "," $5 "," $6}' "$T/tab/report.csv" 2>/dev/null)
if [ -n "$got" ] && awk -F, -v w="$want" -v g="$got" 'BEGIN { n = split(w, a); split(g, b); for (i = 2; i <= n; i++) if (a[i] + 0 != b[i] + 0 || a[i] == "") exit 1 }'; then ok
else bad "report.csv's davis_jf,davis_j,davis_f '$got' are not the JSON's '$want'"; fi
csv3=$(awk -F, 'NR == 2 {print $1}' "$G/res/global_results-val.csv")
if [ -n "$got" ] && [ ",$csv3" != "$(cut -d, -f1,2 <<<"$got")" ]; then ok; else bad "the J&F in report.csv is the CSV's 3 decimals $csv3"; fi
line=$(head -n 1 "$T/tab/report.md" 2>/dev/null)
for w in "DAVIS-2017 split \"val\"" "$G/root" "networks: gen" "t0.15-bin-mean-corners-n3"; do
  if grep -qF -- "$w" <<<"$line"; then ok; else bad "report.md's line does not name '$w': $line"; fi
done
# no JSON beside the CSV: one error line naming it (no fall back to the 3 decimals)
mkdir -p "$T/nojson" && cp "$G/res/global_results-val.csv" "$T/nojson/"
err=$($TB "$T/scores" --out "$T/tab2" --only report --davis "gen=$T/nojson" --ledger "$T/none.tsv" 2>&1 >/dev/null); rc=$?
if [ $rc -ne 0 ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -qF "$T/nojson/global_results-val.json" <<<"$err"; then ok
else bad "kc-table without the JSON (rc=$rc): $err"; fi

# ---- bad input ----
B=$T/bad; cp -r "$G" "$B"; rm -f "$B"/res/*.csv "$B"/res/*.json
rm "$B/res/v01/00004.png" "$B/res/v01/00006.png"
expect_fail "missing result frames" "res/v01: 2 result frames missing: 00004 00006" $KCD --results "$B/res" --davis "$B/root" --split val
cp "$G/res/v01/00004.png" "$G/res/v01/00006.png" "$B/res/v01/"
$GEN png "$B/res/v02/00003.png" 131 97 4
expect_fail "result id above K" "v02/00003.png: object id 4, but the first ground-truth frame has only 3 objects" \
  $KCD --results "$B/res" --davis "$B/root" --split val
cp "$G/res/v02/00003.png" "$B/res/v02/"
$GEN png "$B/root/Annotations/480p/v00/00005.png" 130 97 1
expect_fail "frames of different sizes" "v00/00005.png: frame is 130x97 but .* 131x97 \(frames of different sizes\)" \
  $KCD --results "$B/res" --davis "$B/root" --split val
cp "$G/root/Annotations/480p/v00/00005.png" "$B/root/Annotations/480p/v00/"
$GEN png "$B/res/v00/00002.png" 97 131 1
expect_fail "result of another size" "v00/00002.png: result is 97x131 but its ground truth is 131x97" \
  $KCD --results "$B/res" --davis "$B/root" --split val
cp "$G/res/v00/00002.png" "$B/res/v00/"
printf '\n  \n' >"$B/root/ImageSets/2017/empty.txt"
expect_fail "empty sequence list" "empty.txt: the sequence list is empty" $KCD --results "$B/res" --davis "$B/root" --split empty
expect_fail "missing sequence list" "nosuch.txt: cannot read" $KCD --results "$B/res" --davis "$B/root" --split nosuch
# an id absent from the first frame: ignored with a warning, as the official tool does
$GEN png "$B/root/Annotations/480p/v01/00003.png" 131 97 7
err=$($KCD --results "$B/res" --davis "$B/root" --split val 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ] && grep -q "v01: ids above 3 .* in 1 ground-truth frame are ignored" <<<"$err"; then ok; else bad "GT id above K (rc=$rc): $err"; fi
# nothing damaged: a failed run leaves no output behind
rm -f "$B"/res/*.csv "$B"/res/*.json; rm "$B/res/v00/00001.png"
$KCD --results "$B/res" --davis "$B/root" --split val >/dev/null 2>&1
if ls "$B"/res/*.csv >/dev/null 2>&1; then bad "a failed run wrote outputs"; else ok; fi
expect_fail "unknown option" "unknown option --bogus" $KCD --bogus 1
if $KCD --help | grep -q "example"; then ok; else bad "--help without an example"; fi
done_tests

#!/usr/bin/env bash
# kc-report --saliency (eval/report/report_saliency.h): the saliency galleries of the results browser.
# Builds its own kc-saliency folders from scratch: tests/saliency_fixture.sh makes DUTS-TE and
# DUT-OMRON from the shared data (SKIP when it is absent, a user's clone), kc-init a toy network,
# kc-extract / kc-decode / kc-saliency --png score it; a copy of each folder, its network file and
# per-image IoUs changed, is a second network named with <&>.  Checks: a folder without summary.csv,
# dataset or png/, a dataset root that is gone, a PNG of another size: one line naming the file,
# exit 1, nothing written; one page per dataset (DUTS-TE before DUT-OMRON), linked from index.html
# and its navigation; every image once, worst solver IoU of the first network first; the summary
# and per-image values equal the CSVs; the name escaped everywhere; the layers' C reference
# (--layer-hashes) has every layer; a rerun draws nothing; after a rerun with one network dropped
# (the second, then the first: the page's order changes) the folder equals a clean run's, byte for
# byte.  With chromium: each gallery draws its layers (retried twice: headless Chromium can dump the
# DOM before IntersectionObserver's first callback), no console error, and ?selftest's layers equal
# the C reference.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
REPORT=$BUILD/kc-report
T=$(tmpdir report_saliency)
T=$(cd "$T" && pwd)
if [ ! -x "$REPORT" ]; then bad "$REPORT not built"; done_tests; exit 1; fi
if "$REPORT" --help | grep -q -- "--saliency NET=DIR"; then ok; else bad "--help does not name --saliency"; fi
if [ ! -d "$KC_SHARED_DATA" ]; then
  skip "the shared data ($KC_SHARED_DATA) is absent: no saliency datasets to build the score folders from"
  done_tests; exit $?
fi

# ---- the score folders, from scratch ---------------------------------------------------------------
SET=t0.20-bin-mean-seed-n1
if bash tests/saliency_fixture.sh "$KC_SHARED_DATA" "$T/data" >"$T/log" 2>&1 &&
   KC_QUIET=1 "$BUILD/kc-init" --arch toy/16 --seed 1 --out "$T/toy.safetensors" >>"$T/log" 2>&1; then ok
else bad "the fixture or kc-init failed: $(tail -n 3 "$T/log")"; done_tests; exit 1; fi
for d in DUTS-TE DUT-OMRON; do
  if KC_QUIET=1 "$BUILD/kc-extract" --weights "$T/toy.safetensors" --dataset "saliency:$T/data/$d" --policy round \
       --out "$T/$d-keys.h5" >>"$T/log" 2>&1 &&
     KC_QUIET=1 "$BUILD/kc-decode" --features "$T/$d-keys.h5" --kind keys --setting "$SET" --out "$T/$d-masks.h5" >>"$T/log" 2>&1 &&
     KC_QUIET=1 "$BUILD/kc-saliency" --masks "$T/$d-masks.h5" --dataset "saliency:$T/data/$d" --out "$T/toy-$d" \
       --png "$T/toy-$d/png" --network toy --ledger "$T/ledger.tsv" >>"$T/log" 2>&1; then ok
  else bad "kc-extract / kc-decode / kc-saliency on $d failed: $(tail -n 3 "$T/log")"; done_tests; exit 1; fi
  # the second network: a copy, its name and its solver IoUs changed (reversed over the images), so
  # that the page's order depends on which network is first
  cp -r "$T/toy-$d" "$T/odd-$d"
  printf 'n<&>\n' >"$T/odd-$d/network"
  awk -F, -v OFS=, 'NR == FNR { if (FNR > 1 && $3 == "bs") v[++n] = $4; next }
    FNR > 1 && $3 == "bs" { $4 = v[n--] } { print }' "$T/toy-$d/$SET.csv" "$T/toy-$d/$SET.csv" >"$T/odd-$d/$SET.csv"
done
ODD='n<&>'
A=(--saliency "toy=$T/toy-DUT-OMRON" --saliency "$ODD=$T/odd-DUT-OMRON" --saliency "toy=$T/toy-DUTS-TE"
   --saliency "$ODD=$T/odd-DUTS-TE")

# ---- errors: one line naming the file, exit 1, no --out made ---------------------------------------
bad_copy() { rm -rf "$T/bad"; cp -r "$T/toy-DUTS-TE" "$T/bad"; }
bad_copy; rm "$T/bad/summary.csv"
expect_fail "a folder without summary.csv" "^kc-report: error: $T/bad/summary.csv: no such file" "$REPORT" --out "$T/x" --saliency "t=$T/bad"
bad_copy; rm "$T/bad/dataset"
expect_fail "a folder without dataset" "^kc-report: error: $T/bad/dataset: no such file" "$REPORT" --out "$T/x" --saliency "t=$T/bad"
bad_copy; rm -r "$T/bad/png"
expect_fail "a folder without png/" "^kc-report: error: $T/bad/png: no such folder" "$REPORT" --out "$T/x" --saliency "t=$T/bad"
bad_copy; printf 'saliency:%s/gone/DUTS-TE\n' "$T" >"$T/bad/dataset"
expect_fail "a dataset root that is gone" "^kc-report: error: $T/bad/dataset: the dataset root $T/gone/DUTS-TE is gone" \
  "$REPORT" --out "$T/x" --saliency "t=$T/bad"
bad_copy; first=$(ls "$T/bad/png" | head -n 1); cp "$T/toy-DUT-OMRON/png/$(ls "$T/toy-DUT-OMRON/png" | head -n 1)" "$T/bad/png/$first"
expect_fail "a PNG of another size" "^kc-report: error: $T/bad/png/$first: [0-9]+x[0-9]+, but its image .* is [0-9]+x[0-9]+$" \
  "$REPORT" --out "$T/x" --saliency "t=$T/bad"
n_lines=$("$REPORT" --out "$T/x" --saliency "t=$T/bad" 2>&1 | grep -c .)
if [ "$n_lines" -eq 1 ] && [ ! -e "$T/x" ]; then ok; else bad "a refused run printed $n_lines lines or made its --out"; fi

# ---- the report ---------------------------------------------------------------------------------
REPORT_ABS=$(cd "$(dirname "$REPORT")" && pwd)/kc-report
# report DIR ARGS...: kc-report --out rep from DIR (the same command line in every folder), messages to stdout
report() { local dir=$1; shift; mkdir -p "$dir"; (cd "$dir" && SOURCE_DATE_EPOCH=1700000000 "$REPORT_ABS" --out rep "$@" 2>&1); }
out=$(report "$T/inc" "${A[@]}" --layer-hashes "$T/layers.ref"); rc=$?
R=$T/inc/rep
if [ $rc -eq 0 ] && [ -f "$R/saliency-DUTS-TE.html" ] && [ -f "$R/saliency-DUT-OMRON.html" ]; then ok
else bad "kc-report --saliency (rc=$rc) wrote no saliency-DUTS-TE.html and saliency-DUT-OMRON.html: $out"; fi
# index.html links both, DUTS-TE first (ECSSD, DUTS-TE, DUT-OMRON, then others), and so does every page's navigation
for p in index.html saliency-DUTS-TE.html saliency-DUT-OMRON.html; do
  links=$(grep -o 'href="saliency-[^"]*"' "$R/$p" | sed 's/href="//; s/"$//' | awk '!seen[$0]++' | paste -sd' ')
  if [ "$links" = "saliency-DUTS-TE.html saliency-DUT-OMRON.html" ]; then ok; else bad "$p links '$links'"; fi
done
if grep -q '<h2 id="saliency">Saliency</h2>' "$R/index.html"; then ok; else bad "index.html has no Saliency section"; fi
# the network's name, escaped: never raw on a page, escaped on each
if ! grep -q 'n<&>' "$R"/*.html && grep -q 'n&lt;&amp;&gt;' "$R/index.html" && grep -q 'n&lt;&amp;&gt;' "$R/saliency-DUTS-TE.html"; then ok
else bad "the network name $ODD is not escaped: $(grep -l 'n<&>' "$R"/*.html | paste -sd' ')"; fi
for d in DUTS-TE DUT-OMRON; do
  page=$R/saliency-$d.html csv=$T/toy-$d/$SET.csv
  n=$(awk -F, 'NR > 1 && $3 == "bs"' "$csv" | wc -l)
  # every image once, worst solver IoU of the first network (toy) first, ties in the CSV's order
  got=$(grep -o '<li class="item[^"]*" data-id="[^"]*"' "$page" | sed 's/.*data-id="//; s/"$//')
  want=$(awk -F, 'NR > 1 && $3 == "bs" {print NR "," $1 "," $4}' "$csv" | sort -t, -k3,3g -k1,1n | cut -d, -f2)
  if [ "$got" = "$want" ] && [ "$(grep -c . <<<"$got")" -eq "$n" ]; then ok
  else bad "$d: the items $(paste -sd' ' <<<"$got") are not the CSV's $n images worst IoU first ($(paste -sd' ' <<<"$want"))"; fi
  # per image, each network's IoU and F-beta (none, bs) as the CSVs say
  first=$(head -n 1 <<<"$got")
  li=$(grep "<li class=\"item[^\"]*\" data-id=\"$first\"" "$page")
  for k in 0 1; do
    src=$([ $k = 0 ] && echo "$T/toy-$d/$SET.csv" || echo "$T/odd-$d/$SET.csv")
    for r in none bs; do
      row=$(awk -F, -v id="$first" -v r=$r '$1 == id && $3 == r' "$src")
      iou=$(cut -d, -f4 <<<"$row") fb=$(cut -d, -f6 <<<"$row")
      if grep -q "data-r$k-$r-iou=\"$iou\" data-r$k-$r-fbeta=\"$fb\"" <<<"$li"; then ok
      else bad "$d, $first: network $k $r: IoU $iou and F-beta $fb are not on its item"; fi
    done
  done
  # the summary: max F-beta, IoU, accuracy of none and bs as summary.csv has them
  for r in none bs; do
    sum=$(awk -F, -v r=$r '$2 == r {print $5 "|" $6 "|" $7}' "$T/toy-$d/summary.csv")
    row=$(grep -A0 "<td data-v=\"toy\" class=\"text\">toy</td><td data-v=\"[^\"]*($r)\"" "$page" | grep -o 'data-v="[^"]*"' | sed -n '4,6p' |
          sed 's/data-v="//; s/"$//' | paste -sd'|')
    if [ -n "$sum" ] && [ "$row" = "$sum" ]; then ok; else bad "$d summary ($r): '$row' != summary.csv '$sum'"; fi
  done
  # 1 ground truth + 2 networks x 2 masks, full and thumbnail, per image
  nl=$(grep -c "^data/saliency-$d/" "$T/layers.ref")
  if [ "$nl" -eq $((n * 5 * 2)) ]; then ok; else bad "--layer-hashes: $nl lines of $d, expected $((n * 10))"; fi
done
out=$(report "$T/inc" "${A[@]}")
if grep -q " 0 pictures drawn" <<<"$out"; then ok; else bad "a rerun with nothing changed redrew: $out"; fi

# ---- incremental equals clean: a rerun with one network dropped ------------------------------------
differ() {
  diff <(cd "$1" && find . | LC_ALL=C sort) <(cd "$2" && find . | LC_ALL=C sort) | grep '^[<>]' | head -n 6
  diff -r -q "$1" "$2" | grep -v '^Only in' | head -n 4
}
B=(--saliency "toy=$T/toy-DUT-OMRON" --saliency "toy=$T/toy-DUTS-TE")
C=(--saliency "$ODD=$T/odd-DUT-OMRON" --saliency "$ODD=$T/odd-DUTS-TE")
report "$T/cleanB" "${B[@]}" >/dev/null
report "$T/cleanC" "${C[@]}" >/dev/null
out=$(report "$T/inc" "${B[@]}")
d=$(differ "$R" "$T/cleanB/rep")
if [ -z "$d" ] && grep -q "files of earlier runs removed" <<<"$out" && grep -q " 0 pictures drawn" <<<"$out"; then ok
else bad "A then B (the second network dropped) differs from B into an empty folder, or redrew: $d $out"; fi
# the first network dropped: the other's solver IoU now orders the page, so its data files are redrawn
report "$T/inc2" "${A[@]}" >/dev/null
out=$(report "$T/inc2" "${C[@]}")
d=$(differ "$T/inc2/rep" "$T/cleanC/rep")
if [ -z "$d" ]; then ok; else bad "A then C (the first network dropped) differs from C into an empty folder: $d"; fi
if ! grep -q "toy" "$T/inc2/rep/.keycut-report-files" && [ ! -d "$T/inc2/rep/data/saliency-DUTS-TE/toy-none" ]; then ok
else bad "A then C: toy's data files were kept"; fi

# ---- the browser ---------------------------------------------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  need "the saliency gallery opened in a browser (deps-browser.txt)" chromium
  done_tests; exit $?
fi
report "$T/inc" "${A[@]}" >/dev/null
NONET=()
if unshare -n true 2>/dev/null; then NONET=(unshare -n); fi
chrome() {  # LOG PAGE ARGS...: the DOM to stdout, Chromium's log to LOG.err
  local log=$1 page=$2; shift 2
  timeout 120 "${NONET[@]}" "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-default-apps \
    --user-data-dir="$T/profile" --proxy-server=127.0.0.1:9 --host-resolver-rules="MAP * ~NOTFOUND" \
    --enable-logging=stderr --v=0 "$@" "file://$page" 2>"$log.err"
}
mkdir -p "$T/logs"
sort "$T/layers.ref" >"$T/layers.ref.sorted"
for d in DUTS-TE DUT-OMRON; do
  n=$(awk -F, 'NR > 1 && $3 == "bs"' "$T/toy-$d/$SET.csv" | wc -l)
  dom=$T/logs/$d.dom
  chrome "$T/logs/$d" "$R/saliency-$d.html" --dump-dom --virtual-time-budget=10000 >"$dom"
  # IntersectionObserver calls back with a rendered frame, and headless Chromium under load can dump
  # the DOM before it: the page is opened again, twice at most (as tests/test_report.sh does)
  for try in 2 3; do
    grep -q '<canvas [^>]*class="layer"' "$dom" && break
    echo "saliency gallery $d: no layer drawn when the DOM was dumped; opened again (try $try of 3)"
    chrome "$T/logs/$d-try$try" "$R/saliency-$d.html" --dump-dom --virtual-time-budget=20000 >"$T/logs/$d-try$try.dom"
    dom=$T/logs/$d-try$try.dom
  done
  # the thumbnails are drawn as they come near the window: the first item's five at least
  nc=$(grep -o '<canvas [^>]*class="layer"' "$dom" | wc -l)
  n1=$(grep -m 1 '<li class="item' "$dom" | grep -o '<canvas [^>]*class="layer"' | wc -l)
  nd=$(grep -o '<script src="data/saliency-[^"]*\.js"' "$dom" | sort -u | wc -l)
  if [ "$n1" -eq 5 ] && [ "$nd" -eq 5 ]; then ok; echo "saliency gallery $d: $nc layers drawn from $nd data files"
  else bad "saliency gallery $d: $n1 layers drawn on the first item ($nc in all) from $nd data files, expected 5 from 5"; fi
  st=$(grep -o 'id="status"[^<]*' "$dom")
  if grep -q "images 1-$n of $n" <<<"$st"; then ok; else bad "saliency gallery $d: status '$st' (report.js did not run?)"; fi
  pr=$(grep -h 'CONSOLE\|Uncaught' "$T/logs/$d.err" | grep -v 'source: chrome://')
  if [ -z "$pr" ]; then ok; else bad "saliency gallery $d: $(head -n 3 <<<"$pr")"; fi
  # ?selftest: every layer drawn and hashed by report.js equals the C reference
  chrome "$T/logs/self-$d" "$R/saliency-$d.html?selftest" --dump-dom --virtual-time-budget=20000 >"$T/logs/self-$d.dom"
  sed -n '/<pre id="kc-selftest">/,/<\/pre>/p' "$T/logs/self-$d.dom" | sed 's/<pre id="kc-selftest">//; s/<\/pre>.*//' >"$T/logs/self-$d.txt"
  grep '^data/' "$T/logs/self-$d.txt" | sort -u >"$T/logs/self-$d.sorted"
  diffs=$(comm -3 <(grep "^data/saliency-$d/" "$T/layers.ref.sorted") "$T/logs/self-$d.sorted" | wc -l)
  if [ "$diffs" -eq 0 ] && [ "$(grep -c . "$T/logs/self-$d.sorted")" -eq $((n * 10)) ] &&
     grep -q 'readback mismatches 0$' "$T/logs/self-$d.txt"; then ok
  else bad "saliency gallery $d?selftest: $diffs lines differ from the C reference ($(grep -c . "$T/logs/self-$d.sorted") layers)"; fi
done
# links of the written pages: inside the report and existing
missing=0
for f in "$R"/*.html; do
  while IFS= read -r u; do
    case $u in *:*) missing=$((missing + 1)); echo "absolute link $u in $f" ;; esac
    [ -e "$R/${u%%#*}" ] || { missing=$((missing + 1)); echo "missing: $u in $f"; }
  done < <(grep -o '\(src\|href\)="[^"]*"' "$f" | sed 's/^[a-z]*="//; s/"$//')
done >"$T/links.txt"
if [ "$missing" -eq 0 ]; then ok; else bad "$missing links broken: $(head -n 3 "$T/links.txt")"; fi
chrome "$T/logs/shot" "$R/saliency-DUTS-TE.html" --hide-scrollbars --window-size=1280,1000 --screenshot="$T/saliency-gallery.png" >/dev/null
if [ -s "$T/saliency-gallery.png" ]; then ok; echo "screenshot: $T/saliency-gallery.png"; else bad "no screenshot"; fi
done_tests

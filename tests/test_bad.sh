#!/usr/bin/env bash
# tests/test_bad.sh — runs every entry of the bad-input catalogue (tests/bad/catalogue.tsv) through
# its stage and checks: the exit status; exactly one "<stage>: error: " line, the last line on
# stderr, matching the entry's regex and naming the entry's file; no sanitizer report; and that the
# outputs of an "earlier run" in the entry's folder (out.h5, out/summary.csv) are byte-identical
# afterwards.  Also checks that the valid twins of the broken files (ckpt_ok.pth, st_ok.safetensors)
# are accepted, so a stage that refused everything could not pass.  Ends with "N passed, N failed".
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
B=$(cd "$BUILD" && pwd)
F=$(pwd)/tests/bad/files
T=$(cd "$(tmpdir bad)" && pwd)
for s in kc-demo-data kc-extract kc-decode kc-score kc-propagate kc-davis kc-center kc-table kc-show; do
  [ -x "$B/$s" ] || { bad "$B/$s missing (build first)"; done_tests; exit 1; }
done

# ---- shared, valid fixtures ---------------------------------------------------------------------
"$B"/kc-demo-data --out "$T/demo" --train 4 --val 4 --videos 1 --frames 4 >/dev/null 2>&1 || bad "kc-demo-data"
VOC=$T/demo/voc DAVIS=$T/demo/davis SPLIT=$VOC/ImageSets/Segmentation/val.txt
SEQ=$(head -n 1 "$DAVIS/ImageSets/2017/val.txt")
"$B"/kc-extract --model color --dataset "voc:$VOC:val" --out "$T/keys.h5" >/dev/null 2>&1 || bad "fixture keys.h5"
"$B"/kc-decode --features "$T/keys.h5" --setting t0.20-bin-mean-corners-n2 --out "$T/masks.h5" >/dev/null 2>&1 || bad "fixture masks.h5"
"$B"/kc-extract --model color --dataset "davis:$DAVIS:val" --features tokens --out "$T/dkeys.h5" >/dev/null 2>&1 || bad "fixture dkeys.h5"
"$B"/kc-propagate --features "$T/dkeys.h5" --davis "$DAVIS" --split val --out "$T/res" >/dev/null 2>&1 || bad "fixture results"
chmod -R a-w "$T/demo" "$T/keys.h5" "$T/masks.h5" "$T/dkeys.h5" "$T/res"

# ---- the valid twins are accepted ---------------------------------------------------------------
for w in ckpt_ok.pth st_ok.safetensors; do
  if "$B"/kc-extract --weights "$F/$w" --heads 1 --dataset "voc:$VOC:val" --out "$T/ok-$w.h5" >/dev/null 2>&1 \
     && [ -f "$T/ok-$w.h5" ]; then ok; else bad "valid $w refused"; fi
done

# ---- the catalogue --------------------------------------------------------------------------------
subst() {
  local s=$1
  s=${s//@F@/$F}; s=${s//@B@/$B}; s=${s//@W@/$W}; s=${s//@VOC@/$VOC}; s=${s//@DAVIS@/$DAVIS}
  s=${s//@SPLIT@/$SPLIT}; s=${s//@SEQ@/$SEQ}; s=${s//@KEYS@/$T/keys.h5}; s=${s//@MASKS@/$T/masks.h5}
  s=${s//@DKEYS@/$T/dkeys.h5}; s=${s//@RES@/$T/res}
  printf '%s' "$s"
}
snapshot() { (cd "$1" && find . -type f ! -newer "$1/.stamp" -print0 | sort -z | xargs -0 -r sha256sum); }
n=0 failed_names=()
while IFS=$'\t' read -r name stage want re names setup cmd; do
  [[ -z $name || $name == \#* ]] && continue
  n=$((n + 1))
  W=$T/e/$name
  mkdir -p "$W/out"
  printf 'an earlier run\n' >"$W/out.h5"
  printf 'setting,images,jaccard,corloc\n' >"$W/out/summary.csv"
  if [ "$setup" != - ] && ! (cd "$W" && eval "$(subst "$setup")") >"$W/setup.log" 2>&1; then
    bad "$name: setup failed: $(cat "$W/setup.log")"; failed_names+=("$name"); continue
  fi
  touch "$W/.stamp"
  before=$(snapshot "$W")
  cmdline=$(subst "$cmd")
  re=$(subst "$re"); names=$(subst "$names")
  err=$(cd "$W" && eval "timeout 120 $cmdline" 2>&1 >/dev/null); rc=$?
  after=$(snapshot "$W")
  # the last non-empty line, and the lines that start "<stage>: error: " (bash's own: this runs for
  # every entry)
  last= n_err=0
  while IFS= read -r l; do [ -z "$l" ] || last=$l; [[ $l == "$stage: error: "* ]] && n_err=$((n_err + 1)); done <<<"$err"
  why=
  [ "$rc" = "$want" ] || why+="exit $rc (want $want); "
  [ "$n_err" = 1 ] || why+="$n_err error lines; "
  [[ $last == "$stage: error: "* ]] || why+="last line is not '$stage: error: ...'; "
  grep -Eq -- "$re" <<<"${last#"$stage: error: "}" || why+="message does not match /$re/; "
  [ "$names" = - ] || [[ $last == *"$names"* ]] || why+="message does not name '$names'; "
  [[ $err == *Sanitizer* || $err == *"runtime error"* ]] && why+="sanitizer report; "
  [ "$before" = "$after" ] || why+="earlier outputs changed; "
  if [ -z "$why" ]; then
    ok
    printf 'ok   %-32s %s\n' "$name" "$last"
  else
    bad "$name: $why
      command: $cmdline
      stderr: $(printf '%s' "$err" | tail -n 5)"
    failed_names+=("$name")
  fi
done <tests/bad/catalogue.tsv
chmod -R u+w "$T"

# ---- a bad image, then the list fixed: the rerun takes the .partial over ---------------------------
# kc-extract stops on a truncated JPEG before it has finished a piece; once the image is taken out
# of the list, the same command (another run now: other ids) must take over the .partial folder the
# failed run left (its fingerprint and products note, no finished piece), not refuse it as "a
# different run", and write the bytes a clean run writes (SOURCE_DATE_EPOCH fixes `created`).  A
# .partial that holds finished pieces of a different run is still refused.
R=$T/rerun
mkdir -p "$R"; cp -r "$VOC" "$R/voc"; chmod -R u+w "$R/voc"
LIST=$R/voc/ImageSets/Segmentation/val.txt
cp "$LIST" "$R/val.txt"
bad_id=$(head -n 1 "$LIST")
head -c 2000 "$VOC/JPEGImages/$bad_id.jpg" >"$R/voc/JPEGImages/$bad_id.jpg"
X=(env SOURCE_DATE_EPOCH=1764547200 "$B"/kc-extract --weights tests/data/vit/dino.pth --heads 2 --dataset "voc:$R/voc:val")
if ! "${X[@]}" --out "$R/keys.h5" >/dev/null 2>"$R/1.err" && grep -q 'truncated JPEG' "$R/1.err" \
   && [ -d "$R/keys.h5.partial" ] && ! ls "$R/keys.h5.partial"/piece-* >/dev/null 2>&1; then ok; else
  bad "fixture: a truncated first image should stop kc-extract before its first piece: $(tail -n 1 "$R/1.err")"; fi
grep -vx "$bad_id" "$R/val.txt" >"$LIST"
if "${X[@]}" --out "$R/keys.h5" >/dev/null 2>"$R/2.err" && [ ! -e "$R/keys.h5.partial" ]; then ok; else
  bad "rerun after the bad image left the list: $(tail -n 1 "$R/2.err")"; fi
mv "$R/keys.h5" "$R/taken-over.h5" 2>/dev/null
"${X[@]}" --out "$R/keys.h5" >/dev/null 2>&1 || bad "clean run"
cmp -s "$R/keys.h5" "$R/taken-over.h5" && ok || bad "the run that took the .partial over differs from a clean run"
# the bad image last, one image per piece: the failed run leaves finished pieces
{ grep -vx "$bad_id" "$R/val.txt"; echo "$bad_id"; } >"$LIST"
"${X[@]}" --batch 1 --out "$R/k1.h5" >/dev/null 2>&1 && bad "truncated JPEG accepted"
if ls "$R/k1.h5.partial"/piece-* >/dev/null 2>&1; then
  grep -vx "$bad_id" "$R/val.txt" >"$LIST"
  expect_fail "a .partial with finished pieces of a different run" "k1.h5.partial holds pieces of a different run" \
    "${X[@]}" --batch 1 --out "$R/k1.h5"
  ls "$R/k1.h5.partial"/piece-* >/dev/null 2>&1 && ok || bad "the refused run changed the other run's pieces"
else
  skip "the run stopped by its last image finished no piece: no .partial of a different run to refuse"
fi
# the same rule in every stage that writes a cache (pipeline/cache/cache.c): kc-decode into a
# .partial that another command left without a finished piece (its fingerprint, a note, a piece
# being written) takes it over and writes a clean run's bytes
DC=(env SOURCE_DATE_EPOCH=1764547200 "$B"/kc-decode --features "$T/keys.h5" --setting t0.20-bin-mean-corners-n2 --out "$R/masks.h5")
"${DC[@]}" >/dev/null 2>&1 && mv "$R/masks.h5" "$R/masks-clean.h5" || bad "clean decode"
mkdir -p "$R/masks.h5.partial"; printf '%064d' 0 >"$R/masks.h5.partial/fingerprint"
echo "a note of another run" >"$R/masks.h5.partial/products"; : >"$R/masks.h5.partial/piece-000000.h5.tmp"
if "${DC[@]}" >/dev/null 2>"$R/dc.err" && [ ! -e "$R/masks.h5.partial" ] && cmp -s "$R/masks.h5" "$R/masks-clean.h5"; then ok; else
  bad "kc-decode into an empty .partial of another run: not taken over, or not a clean run's bytes: $(tail -n 1 "$R/dc.err")"; fi

echo "catalogue: $n entries, $((n - ${#failed_names[@]})) as expected${failed_names:+; failed: ${failed_names[*]}}"
[ "$n" -ge 40 ] && ok || bad "catalogue has $n entries (< 40)"
echo "$T_PASS passed, $T_FAIL failed"
done_tests

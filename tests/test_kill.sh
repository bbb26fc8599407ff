#!/usr/bin/env bash
# tests/test_kill.sh — crash safety (docs/design.md "Nothing lost", issue 6 part 2).
#
# For kc-extract (tiny ViT, --batch 1), kc-decode (a 16-setting grid, 20 images) and kc-propagate
# (3 videos): an uninterrupted reference run, then >= KC_KILLS (default 20) SIGKILLs at random
# moments, each followed by the same command again.  After every kill: if OUT exists it must equal
# the reference (same datasets, values and attributes, `created` aside: a reader never sees a
# half-written final file) and every result PNG present must equal the reference's.  Then one
# uninterrupted rerun must finish and equal the reference, leaving no OUT.partial/ or OUT.tmp.
# SIGINT: each stage must exit with status 130 and a message saying how to resume; the rerun then
# finishes.  Full disk: with a file-size limit (ulimit -f, SIGXFSZ ignored so writes fail with
# EFBIG as on a full disk) and, when mount works, on a tmpfs too small for the pieces, the stage must
# fail with one clear error line naming OUT, without crashing, and leave an existing OUT byte-identical.  Comparison: tests/bad/tools/h5same.py (h5py) or, without it, h5dump.
# Last, kc-propagate --replace over other features' results, killed at random moments: never a mix.
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=PASSIVE
KILLS=${KC_KILLS:-20}
B=$(cd "$BUILD" && pwd)
T=$(cd "$(tmpdir kill)" && pwd)
ROOT=$(pwd)
WEIGHTS=$ROOT/tests/data/vit/dino.pth
if kc_have py:h5py && kc_have py:numpy; then
  same_h5() { /usr/bin/python3 "$ROOT/tests/bad/tools/h5same.py" "$1" "$2"; }
elif kc_have h5dump; then
  same_h5() { diff <(h5dump -m %.9g "$1" | sed -e 1d -e '/ATTRIBUTE "created"/,/^ *}/d') \
                   <(h5dump -m %.9g "$2" | sed -e 1d -e '/ATTRIBUTE "created"/,/^ *}/d') >/dev/null; }
fi
STAGES="extract decode propagate"
if ! declare -F same_h5 >/dev/null; then  # (kc-propagate's PNGs need neither)
  skip "extract and decode (caches compared): $(missing py:h5py py:numpy) (or hdf5-tools) not installed"
  STAGES=propagate
fi
same_tree() { diff -r "$1" "$2" >/dev/null 2>&1; }
# Every file of result folder $2 present in $1 is identical (a kill may leave missing files only).
subset_tree() {
  local f rel
  while IFS= read -r -d '' f; do
    rel=${f#"$2"/}
    case $rel in *.tmp|*.tmp.*|*/.*|*.partial/*|.keycut.lock|.*.keycut.lock) continue ;; esac  # (a SIGKILL leaves the lock file)
    cmp -s "$f" "$1/$rel" || { echo "$rel"; return 1; }
  done < <(find "$2" -type f -print0)
}
now_ms() { date +%s%3N; }

"$B"/kc-demo-data --out "$T/demo" --train 2 --val 20 --videos 3 --frames 8 >/dev/null 2>&1 || bad "kc-demo-data"
printf '[grid]\ntau = 0.15, 0.25\nedges = bin, wtd\nsplit = mean\nforeground = seed, corners\nmasks = 1, 2\n' >"$T/grid.ini"
mkdir -p "$T/in" "$T/out" "$T/ref"
"$B"/kc-extract --weights "$WEIGHTS" --heads 2 --dataset "voc:$T/demo/voc:val" --out "$T/in/keys.h5" >/dev/null 2>&1 || bad "fixture keys"
"$B"/kc-extract --weights "$WEIGHTS" --heads 2 --dataset "davis:$T/demo/davis:val" --features tokens --out "$T/in/tokens.h5" >/dev/null 2>&1 || bad "fixture tokens"

declare -A CMD OUT KIND
CMD[extract]="$B/kc-extract --weights $WEIGHTS --heads 2 --dataset voc:$T/demo/voc:val --batch 1 --out $T/out/keys.h5"
OUT[extract]=$T/out/keys.h5 KIND[extract]=h5
CMD[decode]="$B/kc-decode --features $T/in/keys.h5 --grid $T/grid.ini --out $T/out/masks.h5"
OUT[decode]=$T/out/masks.h5 KIND[decode]=h5
CMD[propagate]="$B/kc-propagate --features $T/in/tokens.h5 --davis $T/demo/davis --split val --out $T/out/res"
OUT[propagate]=$T/out/res KIND[propagate]=dir

same_as_ref() { # stage: 0 when OUT equals the reference
  local s=$1
  if [ "${KIND[$s]}" = h5 ]; then same_h5 "$T/ref/$s" "${OUT[$s]}" >"$T/$s.diff" 2>&1; else same_tree "$T/ref/$s" "${OUT[$s]}"; fi
}
clean_out() { rm -rf "${OUT[$1]}" "${OUT[$1]}.partial" "${OUT[$1]}.tmp"; }

for s in $STAGES; do
  # ---- the reference ----------------------------------------------------------------------------
  clean_out $s
  t0=$(now_ms)
  if ! ${CMD[$s]} >/dev/null 2>"$T/$s.ref.err"; then bad "$s reference run: $(tail -n 1 "$T/$s.ref.err")"; continue; fi
  dur=$(( $(now_ms) - t0 ))
  rm -rf "$T/ref/$s"; mv "${OUT[$s]}" "$T/ref/$s"
  # ---- random SIGKILLs, rerunning the same command each time ------------------------------------
  # A rerun resumes, so it is shorter than the reference: the kill window shrinks after each kill
  # and is reset when a run finishes first (then OUT is checked and removed: a fresh cycle).
  kills=0 attempts=0 torn=0 finished=0 window=$((dur * 11 / 10 + 1))
  while [ $kills -lt "$KILLS" ] && [ $attempts -lt $((KILLS * 5)) ]; do
    attempts=$((attempts + 1))
    delay=$(( RANDOM * 32768 % window + RANDOM % window ))
    delay=$(( delay % window ))
    ${CMD[$s]} >/dev/null 2>>"$T/$s.kill.err" &
    pid=$!
    sleep "$(printf '0.%03d' $((delay % 1000)))"; [ $delay -ge 1000 ] && sleep $((delay / 1000))
    if kill -KILL $pid 2>/dev/null; then kills=$((kills + 1)); fresh=0; else finished=$((finished + 1)); fresh=1; fi
    wait $pid 2>/dev/null
    if [ "${KIND[$s]}" = h5 ]; then
      if [ -e "${OUT[$s]}" ] && ! same_as_ref $s; then torn=$((torn + 1)); echo "kill $kills (+${delay}ms): $(cat "$T/$s.diff")" >&2; fi
    elif [ -d "${OUT[$s]}" ]; then
      if ! bad_file=$(subset_tree "$T/ref/$s" "${OUT[$s]}"); then torn=$((torn + 1)); echo "kill $kills: $bad_file differs" >&2; fi
    fi
    if [ $fresh = 1 ]; then   # finished first (its OUT was checked above): start a fresh cycle
      clean_out $s
      window=$((dur * 11 / 10 + 1))
    else                      # the rerun resumes: about window - delay of work is left
      window=$(( window - delay + 50 > 30 ? window - delay + 50 : 30 ))
    fi
  done
  stage_fail=$T_FAIL
  [ $kills -ge "$KILLS" ] && ok || bad "$s: only $kills kills in $attempts attempts (run too short?)"
  [ $torn -eq 0 ] && ok || bad "$s: a reader saw a final output that differs from the reference $torn times ($kills kills)"
  # ---- an uninterrupted rerun finishes and equals the reference ----------------------------------
  if ${CMD[$s]} >/dev/null 2>"$T/$s.final.err" && same_as_ref $s; then ok; else
    bad "$s: rerun after $kills kills does not equal the reference: $(tail -n 1 "$T/$s.final.err") $(cat "$T/$s.diff" 2>/dev/null)"; fi
  left=$(ls -d "${OUT[$s]}.partial" "${OUT[$s]}.tmp" 2>/dev/null; [ "${KIND[$s]}" = dir ] && find "${OUT[$s]}" -name '*.tmp*' 2>/dev/null)
  [ -z "$left" ] && ok || bad "$s: leftovers after the final run: $left"
  echo "$s: $kills SIGKILLs at random moments (reference run ${dur} ms; $finished runs finished before their kill), $torn torn outputs, final output equal: $([ $T_FAIL -eq "$stage_fail" ] && echo yes || echo no)"

  # ---- SIGINT: exit 130 and a message saying how to resume; the rerun finishes -------------------
  clean_out $s
  got= early=0
  for try in 1 2 3 4 5 6; do
    # a non-interactive shell starts background jobs with SIGINT ignored; restore the default
    # so the stage sees SIGINT as from Ctrl-C in a terminal
    env --default-signal=INT ${CMD[$s]} >/dev/null 2>"$T/$s.int.err" &
    pid=$!
    ms=$(( (dur / (try + 1)) % 1000 + early ))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -INT $pid 2>/dev/null || { wait $pid; clean_out $s; continue; }
    wait $pid; rc=$?
    # killed by the default action before the stage installed its handler (a loaded machine can
    # take longer than the sleep just to load the libraries): nothing was started, try later
    if [ $rc = 130 ] && [ ! -s "$T/$s.int.err" ] && [ $try -lt 6 ]; then clean_out $s; early=$((early + 200)); continue; fi
    got=$rc; break
  done
  msg=$(sed '/^$/d' "$T/$s.int.err" | tail -n 1)
  if [ "$got" = 130 ] && grep -Eqi 'interrupt' <<<"$msg" && grep -Eqi 'rerun|resume|again' <<<"$msg"; then ok; else
    bad "$s: SIGINT gave exit ${got:-none} and '$msg' (want 130 and a line saying how to resume)"; fi
  [ -e "${OUT[$s]}" ] && [ "${KIND[$s]}" = h5 ] && ! same_as_ref $s && bad "$s: SIGINT left a torn ${OUT[$s]}"
  if ${CMD[$s]} >/dev/null 2>"$T/$s.final.err" && same_as_ref $s; then ok; else bad "$s: rerun after SIGINT differs"; fi
  echo "$s: SIGINT -> exit ${got:-none}: $msg"

  # ---- full disk: a file-size limit, and a small tmpfs when mount works; OUT stays intact ---------
  if [ "${KIND[$s]}" = h5 ]; then
    disk_full_check() { # how, command prefix...: runs the stage, checks message and the old OUT
      local how=$1 out=$2; shift 2
      local sum0 err rc last
      sum0=$(sha256sum <"$out")
      err=$("$@" 2>&1 >/dev/null); rc=$?
      last=$(sed '/^$/d' <<<"$err" | tail -n 1)
      if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [[ $last == "kc-$s: error: "* ]] && grep -Fq "$(basename "$out")" <<<"$last" \
         && [ "$(grep -c 'error:' <<<"$err")" = 1 ]; then ok; else
        bad "$s: $how gave exit $rc and '$last' (want one error line naming $(basename "$out"), no crash)"; fi
      [ "$(sha256sum <"$out")" = "$sum0" ] && ok || bad "$s: $how: the existing $(basename "$out") changed"
      echo "$s: $how -> exit $rc: $last"
    }
    clean_out $s
    cp -p "$T/ref/$s" "${OUT[$s]}"
    disk_full_check "full disk (ulimit -f 24 KiB)" "${OUT[$s]}" bash -c 'trap "" XFSZ; ulimit -f 24; exec "$@"' _ ${CMD[$s]}
    clean_out $s
    mnt=$T/tmpfs-$s
    mkdir -p "$mnt"
    kb=$(( $(stat -c %s "$T/ref/$s") / 1024 + 64 ))
    if mount -t tmpfs -o size=${kb}k tmpfs "$mnt" 2>/dev/null; then
      trap 'umount "$T"/tmpfs-* 2>/dev/null' EXIT
      cp -p "$T/ref/$s" "$mnt/$(basename "${OUT[$s]}")"
      cmd=${CMD[$s]//${OUT[$s]}/$mnt/$(basename "${OUT[$s]}")}
      disk_full_check "full tmpfs (${kb} KiB)" "$mnt/$(basename "${OUT[$s]}")" $cmd
      umount "$mnt"
    else
      skip "$s: cannot mount a small tmpfs (not root?): only the file-size limit was tried"
    fi
  fi
done
# ---- regression: a kill between creating OUT.partial/ and renaming its fingerprint into place ----
# leaves OUT.partial/ with only fingerprint.tmp (seen in the kill loop above about once in 100
# kills); the same command must then start over, not refuse the folder as "a different run".
s=extract
if [[ $STAGES == extract* ]]; then
  clean_out $s
  mkdir -p "${OUT[$s]}.partial"
  printf '%064d' 0 >"${OUT[$s]}.partial/fingerprint.tmp"
  if ${CMD[$s]} >/dev/null 2>"$T/fp.err" && same_as_ref $s; then ok; else
    bad "kill before the fingerprint rename: rerun fails: $(tail -n 1 "$T/fp.err")"; fi
  clean_out $s
fi
# ---- kc-propagate --replace killed at random moments ---------------------------------------------
# The folder holds the results of other features (the reference above); --replace with the colour
# extractor's tokens discards and redoes them.  After every SIGKILL the folder must hold one run's
# results, never a mix: every finished sequence equals the reference of the features its
# propagate.json records.  The uninterrupted rerun then equals a clean run of the new features.
s=propagate
"$B"/kc-extract --model color --dataset "davis:$T/demo/davis:val" --features tokens --out "$T/in/ctokens.h5" >/dev/null 2>&1 \
  || bad "fixture colour tokens"
RCMD="$B/kc-propagate --features $T/in/ctokens.h5 --davis $T/demo/davis --split val --replace"
t0=$(now_ms)
$RCMD --out "$T/ref/replaced" >/dev/null 2>&1 || bad "a clean run of the colour tokens"
dur=$(( $(now_ms) - t0 ))
clean_out $s
cp -r "$T/ref/$s" "${OUT[$s]}"
mixed=0
for k in 1 2 3 4 5 6; do
  $RCMD --out "${OUT[$s]}" >/dev/null 2>>"$T/replace.err" &
  pid=$!
  delay=$(( RANDOM % (dur + 1) ))
  sleep "$((delay / 1000)).$(printf '%03d' $((delay % 1000)))"
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  if cmp -s "${OUT[$s]}/propagate.json" "$T/ref/replaced/propagate.json"; then ref=$T/ref/replaced; else ref=$T/ref/$s; fi
  if ! bad_file=$(subset_tree "$ref" "${OUT[$s]}"); then mixed=$((mixed + 1)); echo "replace, kill $k (+${delay}ms): $bad_file differs from $(basename "$ref")" >&2; fi
done
[ $mixed = 0 ] && ok || bad "kc-propagate --replace: after $mixed of 6 kills the folder mixed two runs' results"
if $RCMD --out "${OUT[$s]}" >/dev/null 2>"$T/replace.final.err" && same_tree "$T/ref/replaced" "${OUT[$s]}"; then ok; else
  bad "kc-propagate --replace: the rerun after the kills differs from a clean run: $(tail -n 1 "$T/replace.final.err")"; fi
echo "propagate --replace: 6 SIGKILLs (clean run ${dur} ms), $mixed mixed folders"
clean_out $s
echo "$T_PASS passed, $T_FAIL failed"
done_tests

#!/usr/bin/env bash
# tests/test_storage.sh — nothing lost on shared storage (issue 20), for every stage that writes an
# output: extract, center, decode, merge, score, propagate, davis, table, plot.
#
#  1. One writer per output.  A run holding the output's lock (stopped with SIGSTOP once its lock
#     file is there) makes a second run refuse at once: exit 1, one line naming the first (program,
#     pid, host, since); the first then finishes and its output equals a solo run's.  Then 10 races
#     (20 with KC_FULL=1, make check-full)
#     with random start offsets: whatever the overlap, no run exits 0 with another output than the
#     solo run's, a run that fails says it was refused, and no lock file is left.  A lock left by a
#     run that is gone is taken over with one warning.  Distinct outputs (make -j, shards) never
#     refuse each other.
#  2. Full disks and write errors, on a small tmpfs (when mount works) and a read-only bind mount,
#     and as an unprivileged user in a root's folder: exit 1, one line naming the file and the
#     cause, no HDF5 error stack, every existing output untouched (same inode, time and bytes), the
#     finished pieces kept; rerunning after space is freed resumes and gives the same bytes as a
#     clean run at the same path.
#  3. Filesystems without file locks (tests/shims/nolock.c makes flock/fcntl locks fail with ENOLCK,
#     or ENOSYS): every stage writes its output, with one warning, equal to a normal run's; the lock
#     files stand in for flock (a live holder refuses, a dead one on this host is taken over, one of
#     another host is refused with the path to remove); HDF5_USE_FILE_LOCKING=TRUE is refused with
#     what to set.
#  5. Signals: SIGTERM and SIGINT stop a stage with one line, exit 143 and 130, keep the finished
#     pieces, and the rerun gives the same bytes as a clean run.
# (Item 4, the Slurm engine's up-to-date rule, is tested by tests/slurm/test_slurm.sh.)
# Caches are compared byte for byte: SOURCE_DATE_EPOCH fixes their `created` attribute, and the
# runs compared write to the same path (the command line is provenance).
source "$(dirname "$0")/lib.sh"
export KC_QUIET=1 OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE SOURCE_DATE_EPOCH=1764547200
unset HDF5_USE_FILE_LOCKING
B=$(cd "$BUILD" && pwd)
T=$(cd "$(tmpdir storage)" && pwd)
ROOT=$(pwd)
W=$ROOT/tests/data/vit/dino.pth
SHIM=$B/tests/libkc_nolock.so
HOST=$(hostname)
# a sanitized build refuses a preloaded library listed before its runtime unless told not to
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}:verify_asan_link_order=0
STAGES=(extract center decode merge score propagate davis table plot)
RACES=$([ "${KC_FULL:-}" = 1 ] && echo 20 || echo 10)
D=$T/demo
I=$T/in
mkdir -p "$I"
"$B"/kc-demo-data --out "$D" --train 2 --val 8 --videos 2 --frames 5 >/dev/null 2>&1 || bad "kc-demo-data"
printf '[grid]\ntau = 0.15, 0.25\nedges = bin, wtd\nsplit = mean\nforeground = seed, corners\nmasks = 1, 2\n' >"$T/grid.ini"
fixture() { "$@" >"$T/fixture.log" 2>&1 || bad "fixture: $* ($(tail -n 1 "$T/fixture.log"))"; }
fixture "$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --out "$I/keys.h5"
fixture "$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --shard 1/2 --out "$I/shard-1.h5"
fixture "$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --shard 2/2 --out "$I/shard-2.h5"
fixture "$B"/kc-extract --weights "$W" --heads 2 --dataset "davis:$D/davis:val" --features tokens --out "$I/tokens.h5"
fixture "$B"/kc-decode --features "$I/keys.h5" --grid "$T/grid.ini" --out "$I/masks.h5"
fixture "$B"/kc-score --masks "$I/masks.h5" --voc "$D/voc" --split "$D/voc/ImageSets/Segmentation/val.txt" \
  --out "$I/scores" --ledger "$I/ledger.tsv"
fixture "$B"/kc-propagate --features "$I/tokens.h5" --davis "$D/davis" --split val --out "$I/res"
bash tests/plot_fixture.sh "$I/plot" n1 n2 >/dev/null 2>&1 || bad "plot fixture"

# ---- the stages, each writing under a folder o ------------------------------------------------
# (the helpers run some 400 times each: they set variables and use bash's own tests where they can,
# a process start costing ~15 ms of CPU on the test machine)
name_of() { # stage: its output's name in NAME
  case $1 in
    extract) NAME=keys.h5 ;; center) NAME=centered.h5 ;; decode) NAME=masks.h5 ;; merge) NAME=merged.h5 ;;
    score) NAME=scores ;; propagate | davis) NAME=res ;; table) NAME=tables ;; plot) NAME=figs ;;
  esac
}
out_name() { name_of "$1"; echo "$NAME"; }
is_cache() { case $1 in extract | center | decode | merge) return 0 ;; esac; return 1; }
lock_of() { # stage o
  case $1 in
    extract | center | decode | merge) echo "$2/$(out_name "$1").partial/lock" ;;
    score | propagate | davis) echo "$2/$(out_name "$1")/.keycut.lock" ;;
    table) echo "$2/tables/.t.keycut.lock" ;; plot) echo "$2/figs/.sweep.keycut.lock" ;;
  esac
}
stage_cmd() { # stage o: the command, in the array C
  local o=$2
  case $1 in
    extract) C=("$B/kc-extract" --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --batch 1 --out "$o/keys.h5") ;;
    center) C=("$B/kc-center" "$I/keys.h5" "$o/centered.h5") ;;
    decode) C=("$B/kc-decode" --features "$I/keys.h5" --grid "${GRID:-$T/grid.ini}" --out "$o/masks.h5") ;;
    merge) C=("$B/kc-merge" "$o/merged.h5" "$I/shard-1.h5" "$I/shard-2.h5") ;;
    score) C=("$B/kc-score" --masks "$I/masks.h5" --voc "$D/voc" --split "$D/voc/ImageSets/Segmentation/val.txt"
              --out "$o/scores" --ledger "$o/ledger.tsv") ;;
    propagate) C=("$B/kc-propagate" --features "$I/tokens.h5" --davis "$D/davis" --split val --out "$o/res") ;;
    davis) C=("$B/kc-davis" --results "$o/res" --davis "$D/davis" --split val --force) ;;
    table) C=("$B/kc-table" "$I/scores" --out "$o/tables" --name t --ledger "$I/ledger.tsv") ;;
    plot) C=("$B/kc-plot" sweep --scores "n1=$I/plot/scores/n1/select" --scores "n2=$I/plot/scores/n2/select" --out "$o/figs") ;;
  esac
}
# what a stage's input folder needs before it runs (kc-davis scores kc-propagate's PNGs in place)
prepare() { # stage o
  [ -d "$2" ] || mkdir -p "$2"
  if [ "$1" = davis ] && [ ! -e "$2/res" ]; then cp -r "$I/res" "$2/res"; fi
  return 0
}
clear_out() { # stage o: the output, its partial folder and temporary files
  name_of "$1"; local p=$2/$NAME
  if [ "$1" = davis ]; then rm -f "$p"/global_results-val.* "$p"/per-sequence_results-val.*; return; fi
  rm -rf "$p" "$p.partial" "$p.tmp"
}
# digest of the output's content (every file, hidden ones too: a lock left behind shows)
# (a folder's files: every regular file below it, hidden ones too, in a fixed order, by one sha256sum)
digest() { # stage o
  name_of "$1"; local p=$2/$NAME
  if [ "$1" = davis ]; then
    (cd "$p" 2>/dev/null && sha256sum global_results-val.csv per-sequence_results-val.csv global_results-val.json 2>&1)
    [ -e "$p/.keycut.lock" ] && echo "lock file left"
    return
  fi
  if [ -d "$p" ]; then
    (cd "$p" && shopt -s globstar dotglob nullglob && files=() && for f in **; do [ -f "$f" ] && [ ! -L "$f" ] && files+=("$f"); done
     [ ${#files[@]} = 0 ] || sha256sum -- "${files[@]}")
  elif [ -f "$p" ]; then sha256sum <"$p"; else echo absent; fi
}
# digest plus each file's inode and modification time: "untouched" means all equal
identity() { # stage o
  name_of "$1"; local p=$2/$NAME
  [ -e "$p" ] && find "$p" -maxdepth 1 -type f -print0 | sort -z | xargs -0 -r stat -c '%n %i %Y.%y %s'
  [ "$1" = score ] && stat -c '%n %i %Y.%y %s' "$2/ledger.tsv" 2>&1  # (a failed run appends nothing)
  digest "$1" "$2"
}
# nonblank FILE: its non-blank lines in the array NB, and in NB_TAIL a last one without its newline
# (what sed '/^[[:space:]]*$/d' prints; one_line counts the lines as wc -l does)
nonblank() {
  local l; NB=() NB_TAIL=
  while IFS= read -r l; do [[ $l =~ ^[[:space:]]*$ ]] || NB+=("$l"); done <"$1"
  [[ $l =~ ^[[:space:]]*$ ]] || NB_TAIL=$l
}
nonempty_lines() { nonblank "$1"; [ ${#NB[@]} = 0 ] || printf '%s\n' "${NB[@]}"; printf '%s' "$NB_TAIL"; }
one_line() { nonblank "$1"; [ ${#NB[@]} = 1 ]; }
# says TEXT: a non-blank line of the file nonblank read holds TEXT
says() { local l; for l in "${NB[@]}" "$NB_TAIL"; do [[ $l == *"$1"* ]] && return 0; done; return 1; }
run_solo() { # stage o log: a clean run
  clear_out "$1" "$2"
  prepare "$1" "$2"
  stage_cmd "$1" "$2"
  "${C[@]}" >/dev/null 2>"$3"
}
# pause SECONDS: a sleep without a process (read's timeout on a pipe nobody writes to)
exec {PAUSE_FD}<> <(:)
pause() { read -r -t "$1" -u "$PAUSE_FD" _ || true; }
# waits (up to 5 s) for a file; 0 when it appeared
wait_file() { local k; for ((k = 0; k < 500; k++)); do [ -e "$1" ] && return 0; pause 0.01; done; return 1; }

# ==== 1. one writer per output ====================================================================
for s in "${STAGES[@]}"; do
  o=$T/one/$s
  if ! run_solo $s "$o" "$T/solo.err"; then bad "$s: solo run failed: $(tail -n 1 "$T/solo.err")"; continue; fi
  ref=$(digest $s "$o")
  [ -e "$(lock_of $s "$o")" ] && bad "$s: the solo run left its lock file"
  # ---- a run holding the lock (stopped just after taking it) ----------------------------------
  caught=0
  for try in 1 2 3 4 5 6 7 8; do
    clear_out $s "$o"
    prepare $s "$o"
    stage_cmd $s "$o"
    "${C[@]}" >/dev/null 2>"$T/a.err" &
    apid=$!
    lk=$(lock_of $s "$o")
    if wait_file "$lk" && kill -STOP $apid 2>/dev/null && grep -q "^pid $apid\$" "$lk" 2>/dev/null; then
      caught=1
      "${C[@]}" >/dev/null 2>"$T/b.err"; brc=$?
      kill -CONT $apid
      wait $apid; arc=$?
      line=$(nonempty_lines "$T/b.err")
      re="is being written by another run \(kc-$s, pid $apid on $HOST, since 20[0-9-]+T[0-9:]+Z\); wait for it to end or stop it"
      if [ $brc = 1 ] && one_line "$T/b.err" && [[ $line =~ $re ]]; then ok; else
        bad "$s: second run while the first holds the lock: exit $brc, '$line'"; fi
      [ $arc = 0 ] && [ "$(digest $s "$o")" = "$ref" ] && ok || bad "$s: the first run (exit $arc) gave another output than a solo run"
      [ -e "$lk" ] && bad "$s: lock file left after the first run ended"
      echo "$s: refused while held: $line"
      break
    fi
    kill -CONT $apid 2>/dev/null
    wait $apid
  done
  [ $caught = 1 ] || skip "$s: the run ended before its lock could be caught, 8 times (too fast here)"
  # ---- races with random start offsets (10; 20 in make check-full) ----------------------------
  refused=0 both=0 wrong=0
  for k in $(seq "$RACES"); do
    clear_out $s "$o"
    prepare $s "$o"
    stage_cmd $s "$o"
    "${C[@]}" >/dev/null 2>"$T/r1.err" &
    p1=$!
    pause "0.0$((RANDOM % 60))"
    "${C[@]}" >/dev/null 2>"$T/r2.err" &
    p2=$!
    wait $p1; rc1=$?
    wait $p2; rc2=$?
    for e in 1 2; do
      rc=$([ $e = 1 ] && echo $rc1 || echo $rc2)
      if [ "$rc" != 0 ]; then
        if one_line "$T/r$e.err" && says "is being written by another run (kc-$s, pid"; then refused=$((refused + 1)); else
          wrong=$((wrong + 1)); echo "$s race $k: run $e exit $rc: $(tail -n 2 "$T/r$e.err")"; fi
      fi
    done
    [ $rc1 = 0 ] && [ $rc2 = 0 ] && both=$((both + 1))
    if [ $rc1 != 0 ] && [ $rc2 != 0 ]; then wrong=$((wrong + 1)); echo "$s race $k: both runs failed"; fi
    if [ "$(digest $s "$o")" != "$ref" ]; then wrong=$((wrong + 1)); echo "$s race $k: the output differs from a solo run's"; fi
  done
  [ $wrong = 0 ] && ok || bad "$s: $wrong wrong outcomes in $RACES races"
  echo "$s: $RACES races: $refused refused (overlapping), $both with both runs finishing (one after the other), $wrong wrong"
done

# ---- a lock left by a run that is gone (SIGKILL): taken over with one warning ------------------
s=extract o=$T/one/$s
clear_out $s "$o"
stage_cmd $s "$o"
"${C[@]}" >/dev/null 2>&1 &
apid=$!
if wait_file "$(lock_of $s "$o")"; then
  kill -KILL $apid; wait $apid 2>/dev/null
  if [ -e "$(lock_of $s "$o")" ]; then
    "${C[@]}" >/dev/null 2>"$T/take.err"; rc=$?
    line=$(nonempty_lines "$T/take.err")
    if [ $rc = 0 ] && one_line "$T/take.err" && [[ $line == *"taking over the lock left by a run that has ended (kc-extract, pid $apid on $HOST"* ]]; then ok; else
      bad "after a SIGKILL: exit $rc, '$line' (want 0 and one warning naming pid $apid)"; fi
    [ "$(digest $s "$o")" = "$(cd "$T/one/extract" && digest extract "$T/one/extract")" ] && ok || bad "after a SIGKILL: output differs"
    echo "after a SIGKILL: $line"
  else skip "the killed run's lock file had gone already"; fi
else kill -KILL $apid 2>/dev/null; wait $apid 2>/dev/null; skip "extract ended before its lock could be caught"; fi

# ---- distinct outputs never refuse each other: make -j's products, shards, tables of two names ----
o=$T/distinct
mkdir -p "$o"
"$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --batch 1 --shard 1/2 --out "$o/k.h5.shards/1-of-2.h5" 2>"$T/d1.err" &
p1=$!
"$B"/kc-extract --weights "$W" --heads 2 --dataset "voc:$D/voc:val" --batch 1 --shard 2/2 --out "$o/k.h5.shards/2-of-2.h5" 2>"$T/d2.err" &
p2=$!
"$B"/kc-propagate --features "$I/tokens.h5" --davis "$D/davis" --split val --shard 1/2 --out "$o/res" 2>"$T/d3.err" &
p3=$!
"$B"/kc-propagate --features "$I/tokens.h5" --davis "$D/davis" --split val --shard 2/2 --out "$o/res" 2>"$T/d4.err" &
p4=$!
"$B"/kc-table "$I/scores" --out "$o/tables" --name a --ledger "$I/ledger.tsv" >/dev/null 2>"$T/d5.err" &
p5=$!
"$B"/kc-table "$I/scores" --out "$o/tables" --name b --ledger "$I/ledger.tsv" >/dev/null 2>"$T/d6.err" &
p6=$!
fails=0
for p in $p1 $p2 $p3 $p4 $p5 $p6; do wait $p || fails=$((fails + 1)); done
[ $fails = 0 ] && ok || bad "distinct outputs: $fails of 6 concurrent runs failed: $(cat "$T"/d[1-6].err | head -n 3)"
[ "$(find "$o" -name '*.lock' | wc -l)" = 0 ] && ok || bad "distinct outputs: lock files left: $(find "$o" -name '*.lock')"

# ==== 2. full disks, read-only folders, permissions ============================================
# expect_write_error what stage o cause: runs the stage (output existing), checks the one line, the
# untouched output, and prints the line
expect_write_error() {
  local what=$1 s=$2 o=$3 cause=$4 before rc line
  shift 4
  before=$(identity $s "$o")
  stage_cmd $s "$o"
  "$@" "${C[@]}" >/dev/null 2>"$T/we.err"; rc=$?
  line=$(nonempty_lines "$T/we.err")
  if [ $rc = 1 ] && one_line "$T/we.err" && [[ $line == "kc-$s: error: "*"($cause)"* ]] && ! grep -q 'HDF5' "$T/we.err"; then ok; else
    bad "$s, $what: exit $rc, stderr: $(head -c 600 "$T/we.err") (want exit 1 and one line ending in ($cause))"; fi
  [ "$(identity $s "$o")" = "$before" ] && ok || bad "$s, $what: the existing output changed"
  echo "$s, $what: $line"
}
MNT=$T/mnt
mkdir -p "$MNT"
cleanup_mounts() { umount "$MNT" 2>/dev/null; umount "$T/ro" 2>/dev/null; return 0; }
trap cleanup_mounts EXIT
can_mount=0
if mount -t tmpfs -o size=64k tmpfs "$MNT" 2>/dev/null; then can_mount=1; umount "$MNT"; fi
for s in "${STAGES[@]}"; do
  ref_size=$(du -sk --apparent-size "$T/one/$s/$(out_name $s)" | cut -f1)
  # ---- a full tmpfs: the old output is there, and room for about half of the new one ---------
  if [ $can_mount = 1 ]; then
    mount -t tmpfs -o size=$((2 * ref_size + 512))k tmpfs "$MNT"
    o=$MNT/w
    mkdir -p "$o"
    run_solo $s "$o" "$T/solo.err" || bad "$s: run on the tmpfs failed: $(tail -n 1 "$T/solo.err")"
    [ $s = davis ] && touch -d '2001-01-01' "$o/res/global_results-val.csv"  # (a distinct time to see it kept)
    # kc-propagate keeps finished sequences: one is left to do
    [ $s = propagate ] && rm -rf "$o/res/$(ls "$D/davis/JPEGImages/480p" | tail -n 1)"
    free_k=$(df -k --output=avail "$MNT" | tail -n 1)
    keep=$(( ref_size / 2 ))
    [ $keep -lt 4 ] && keep=0
    fill=$(( free_k - keep ))
    [ $fill -gt 0 ] && head -c $((fill * 1024)) /dev/zero >"$MNT/fill" 2>/dev/null
    expect_write_error "full tmpfs" $s "$o" "No space left on device"
    pieces=$(ls "$o/$(out_name $s).partial" 2>/dev/null | grep -c '^piece-.*\.h5$')
    leftovers=$(find "$o" -name '*.tmp' -o -name '*.lock' -o -name 'lock' | head -n 3)
    [ -z "$leftovers" ] && ok || bad "$s, full tmpfs: left behind: $leftovers"
    rm -f "$MNT/fill"
    # the existing output must be replaced by the rerun: remove it, then resume
    clear_keep_partial() { local p=$o/$(out_name $s); if [ $s = davis ]; then rm -f "$p"/global_results-val.* "$p"/per-sequence_results-val.*; else rm -rf "$p" "$p.tmp"; fi; }
    clear_keep_partial
    stage_cmd $s "$o"
    KC_QUIET=0 "${C[@]}" >/dev/null 2>"$T/resume.err" || bad "$s: rerun after freeing space failed: $(tail -n 1 "$T/resume.err")"
    if is_cache $s && [ "$pieces" -gt 0 ]; then
      grep -q "resuming: $pieces of" "$T/resume.err" && ok || bad "$s: the rerun did not resume the $pieces pieces kept: $(grep resum "$T/resume.err")"
    fi
    resumed=$(digest $s "$o")
    umount "$MNT"
    # a clean run at the same path
    run_solo $s "$o" "$T/solo.err" || bad "$s: clean run failed"
    [ "$resumed" = "$(digest $s "$o")" ] && ok || bad "$s: the output resumed after a full disk differs from a clean run's"
    echo "$s, full tmpfs: $pieces pieces kept; resumed output equals a clean run: $([ "$resumed" = "$(digest $s "$o")" ] && echo yes || echo no)"
    rm -rf "$MNT/w"
  else
    skip "$s: cannot mount a small tmpfs here (not root, or no mount namespace): no full-disk case"
  fi
  # ---- a read-only folder holding the old output --------------------------------------------
  mkdir -p "$T/rosrc" "$T/ro"
  rm -rf "$T/rosrc/w"
  run_solo $s "$T/rosrc/w" "$T/solo.err" || bad "$s: run for the read-only case failed"
  if mount --bind "$T/rosrc" "$T/ro" 2>/dev/null && mount -o remount,bind,ro "$T/ro" 2>/dev/null; then
    expect_write_error "read-only folder" $s "$T/ro/w" "Read-only file system"
    umount "$T/ro"
  else
    umount "$T/ro" 2>/dev/null
    skip "$s: cannot bind-mount a folder read-only here"
  fi
  # ---- a folder the user may not write (as nobody, in root's folder) -------------------------
  if [ "$(id -u)" = 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null \
     && setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$W" -a -x "$B/kc-extract" 2>/dev/null; then
    chmod -R a+rX "$T/rosrc"
    expect_write_error "folder not writable (user nobody)" $s "$T/rosrc/w" "Permission denied" \
      setpriv --reuid=65534 --regid=65534 --clear-groups
  else
    skip "$s: not root, or user nobody cannot run the programs here: no permission case"
  fi
done

# ==== 3. filesystems without file locks ==========================================================
if [ ! -f "$SHIM" ]; then skip "$SHIM missing (make all builds it)"; else
  for s in "${STAGES[@]}"; do
    o=$T/nolock/$s
    clear_out $s "$o"
    prepare $s "$o"
    stage_cmd $s "$o"
    LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
    line=$(nonempty_lines "$T/nl.err")
    if [ $rc = 0 ] && one_line "$T/nl.err" && [[ $line == *"warning: "*"this filesystem has no file locks (No locks available)"* ]]; then ok; else
      bad "$s without file locks: exit $rc, stderr: $(head -c 400 "$T/nl.err") (want 0 and one warning)"; fi
    # the same output as with locks, at the same path
    got=$(digest $s "$o")
    run_solo $s "$o" "$T/solo.err"
    [ "$got" = "$(digest $s "$o")" ] && ok || bad "$s without file locks: the output differs from a run with them"
  done
  echo "without file locks: $line"
  # ENOSYS (Lustre without -o flock) as well
  s=decode o=$T/nolock/$s
  clear_out $s "$o"
  stage_cmd $s "$o"
  KC_NOLOCK_ERRNO=38 LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err" && grep -q "no file locks (Function not implemented)" "$T/nl.err" \
    && ok || bad "decode with ENOSYS locks: $(cat "$T/nl.err")"
  # a lock file of a live run on this host, of a gone one, of another host
  lockfile() { # path pid host
    printf 'keycut-lock 1\nprogram kc-decode\nhost %s\npid %s\nsince 2026-12-01T10:00:00Z\nboot %s\nstart %s\n' "$3" "$2" \
      "$(cat /proc/sys/kernel/random/boot_id)" "$(awk '{print $22}' "/proc/$2/stat" 2>/dev/null || echo 0)" >"$1"
  }
  clear_out $s "$o"
  mkdir -p "$o/masks.h5.partial"
  sleep 30 &
  live=$!
  lockfile "$o/masks.h5.partial/lock" $live "$HOST"
  LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
  [ $rc = 1 ] && grep -q "is being written by another run (kc-decode, pid $live on $HOST, since 2026-12-01T10:00:00Z)" "$T/nl.err" \
    && ok || bad "no file locks, a live holder: exit $rc, $(cat "$T/nl.err")"
  [ -e "$o/masks.h5" ] && bad "no file locks, a live holder: the output was written"
  kill $live; wait $live 2>/dev/null
  LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
  [ $rc = 0 ] && grep -q "taking over the lock left by a run that has ended (kc-decode, pid $live on $HOST" "$T/nl.err" \
    && [ ! -e "$o/masks.h5.partial" ] && ok || bad "no file locks, a dead holder: exit $rc, $(cat "$T/nl.err")"
  clear_out $s "$o"
  mkdir -p "$o/masks.h5.partial"
  lockfile "$o/masks.h5.partial/lock" 4242 "node-elsewhere"
  LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
  line=$(nonempty_lines "$T/nl.err")
  [ $rc = 1 ] && [[ $line == *"locked by a run on another host (kc-decode, pid 4242 on node-elsewhere"*"remove $o/masks.h5.partial/lock and rerun"* ]] \
    && ok || bad "no file locks, another host's lock: exit $rc, $line"
  echo "no file locks, another host: $line"
  # the same file with flock working: the kernel says nobody holds it, so it is taken over
  "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
  [ $rc = 0 ] && grep -q "taking over the lock left by a run that has ended (kc-decode, pid 4242 on node-elsewhere" "$T/nl.err" \
    && ok || bad "flock, a stale lock file of another host: exit $rc, $(cat "$T/nl.err")"
  # two concurrent runs without file locks: one proceeds
  clear_out extract "$o"
  stage_cmd extract "$o"
  LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/c1.err" &
  p1=$!
  if wait_file "$(lock_of extract "$o")" && kill -STOP $p1; then
    LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/c2.err"; rc=$?
    kill -CONT $p1
    wait $p1; rc1=$?
    [ $rc = 1 ] && grep -q "is being written by another run (kc-extract, pid $p1 on $HOST" "$T/c2.err" && [ $rc1 = 0 ] \
      && ok || bad "no file locks, two runs: second exit $rc ($(cat "$T/c2.err")), first exit $rc1"
  else wait $p1; skip "no file locks: the first run ended before its lock was caught"; fi
  # HDF5_USE_FILE_LOCKING=TRUE asks for HDF5's lock: refused with what to set
  stage_cmd center "$o"
  HDF5_USE_FILE_LOCKING=TRUE LD_PRELOAD=$SHIM "${C[@]}" >/dev/null 2>"$T/nl.err"; rc=$?
  line=$(nonempty_lines "$T/nl.err" | grep error)
  [ $rc = 1 ] && [[ $line == *"HDF5_USE_FILE_LOCKING=TRUE asks HDF5 for them; set HDF5_USE_FILE_LOCKING=FALSE"* ]] \
    && ok || bad "HDF5_USE_FILE_LOCKING=TRUE without locks: exit $rc, $(cat "$T/nl.err")"
  echo "HDF5_USE_FILE_LOCKING=TRUE without locks: $line"
fi

# ==== 5. signals ================================================================================
GRID=$ROOT/configs/sweep.ini # (decoding all 144 settings: long enough to be stopped)
for s in extract decode propagate; do
  for sig in TERM INT; do
    o=$T/sig/$s
    want=$([ $sig = TERM ] && echo 143 || echo 130)
    clear_out $s "$o"
    prepare $s "$o"
    stage_cmd $s "$o"
    env --default-signal=INT "${C[@]}" >/dev/null 2>"$T/sig.err" &
    pid=$!
    # once the first piece (or sequence) is done
    if is_cache $s; then first=$o/$(out_name $s).partial/piece-000000.h5; else first=$o/res/$(ls "$D/davis/JPEGImages/480p" | head -n 1); fi
    if wait_file "$first"; then
      kill -$sig $pid
      wait $pid; rc=$?
      line=$(nonempty_lines "$T/sig.err")
      if [ $rc = 0 ]; then skip "$s: SIG$sig came after the run had finished"; continue; fi
      if [ $rc = "$want" ] && one_line "$T/sig.err" && [[ $line == *"interrupted; finished "*"rerun the same command to resume"* ]]; then ok; else
        bad "$s: SIG$sig gave exit $rc and '$line' (want $want and one line)"; fi
      [ -e "$(lock_of $s "$o")" ] && bad "$s: SIG$sig left the lock file"
      [ -n "$(find "$o" -name '*.tmp')" ] && bad "$s: SIG$sig left temporary files: $(find "$o" -name '*.tmp')"
      "${C[@]}" >/dev/null 2>"$T/sig2.err" || bad "$s: rerun after SIG$sig failed"
      resumed=$(digest $s "$o")
      run_solo $s "$o" "$T/solo.err"
      [ "$resumed" = "$(digest $s "$o")" ] && ok || bad "$s: rerun after SIG$sig differs from a clean run"
      echo "$s: SIG$sig -> exit $rc: $line"
    else
      wait $pid
      skip "$s: finished before its first piece could be seen"
    fi
  done
done
done_tests

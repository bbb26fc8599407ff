#!/usr/bin/env bash
# --shard i/n and kc-merge (no Slurm needed): shards of extract / center / decode merged equal the
# single run (content_hash, every root attribute but `created`, and h5py's full walk when
# available); propagate shards fill the same folder as one run; bad shard sets are refused;
# kc-merge --verify refuses a changed merged cache and one of other shards, --remove-shards removes
# them only after a good merge.  `make -j2 demo SHARDS=4` against plain `make demo` is in
# tests/test_pipeline.sh (it shares that test's plain demo).
source "$(dirname "$0")/lib.sh"
T=$(tmpdir shard)
export KC_QUIET=1
B=$BUILD
$B/kc-demo-data --out "$T/data" >/dev/null 2>&1 || bad "kc-demo-data failed"
VOC=voc:$T/data/voc:val

# root attributes but `created`, and everything else of the file (h5py when present)
same_cache() {
  local what=$1 a=$2 b=$3
  local da db
  da=$($B/kc-inspect "$a" 2>&1 | tail -n +2 | grep -vE '^  created ')
  db=$($B/kc-inspect "$b" 2>&1 | tail -n +2 | grep -vE '^  created ')
  if [ "$da" = "$db" ] && grep -q content_hash <<<"$da"; then ok; else bad "$what: kc-inspect differs: $(diff <(echo "$da") <(echo "$db") | head -n 6)"; fi
  if need "full walk of $what with h5py (content_hash and attributes were checked)" py:h5py py:numpy; then
    /usr/bin/python3 - "$a" "$b" <<'EOF' && ok || bad "$what: h5py finds a difference"
import sys, h5py, numpy as np
fa, fb = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
def walk(f):
    out = {}
    f.visititems(lambda n, o: out.__setitem__(n, o))
    return out
oa, ob = walk(fa), walk(fb)
if sorted(oa) != sorted(ob):
    print("objects differ:", sorted(set(oa) ^ set(ob))[:5]); sys.exit(1)
def attrs(o, root):
    return {k: (o.attrs[k].tobytes() if isinstance(o.attrs[k], np.ndarray) else o.attrs[k])
            for k in o.attrs if not (root and k == "created")}
if attrs(fa, True) != attrs(fb, True):
    print("root attributes differ"); sys.exit(1)
for n in oa:
    if attrs(oa[n], False) != attrs(ob[n], False):
        print("attributes of", n, "differ"); sys.exit(1)
    if isinstance(oa[n], h5py.Dataset):
        x, y = oa[n][()], ob[n][()]
        if x.dtype == object:
            x, y = np.array(x.tolist()), np.array(y.tolist())
        if x.dtype != y.dtype or x.shape != y.shape or x.tobytes() != y.tobytes():
            print("dataset", n, "differs"); sys.exit(1)
print("h5py: %d objects identical" % len(oa))
EOF
  fi
}

# 1. extract (VOC val, 16 images in 3 shards; DAVIS tokens, 2 videos in 4 shards: two are empty)
$B/kc-extract --model color --dataset "$VOC" --out "$T/keys.h5" || bad "single extract"
for i in 1 2 3; do $B/kc-extract --model color --dataset "$VOC" --shard $i/3 --out "$T/keys.s$i.h5" || bad "extract shard $i/3"; done
$B/kc-merge "$T/k.h5" "$T/keys.s3.h5" "$T/keys.s1.h5" "$T/keys.s2.h5" && ok || bad "merge keys"
# the merged file has the single run's command when given the same --out: compare under one name
mkdir -p "$T/merged"
$B/kc-extract --model color --dataset "$VOC" --out "$T/merged/keys.h5" && mv "$T/merged/keys.h5" "$T/merged/single.h5"
$B/kc-merge "$T/merged/keys.h5" "$T"/keys.s{1,2,3}.h5 && ok || bad "merge keys (2)"
same_cache "extract 3 shards" "$T/merged/single.h5" "$T/merged/keys.h5"
cmd=$($B/kc-inspect "$T/merged/keys.h5" | awk '$1 == "command" {sub(/^  command +/, ""); print}')
[ "$cmd" = "$B/kc-extract --model color --dataset $VOC --out $T/merged/keys.h5" ] && ok || bad "merged command: $cmd"

D=davis:$T/data/davis:val
$B/kc-extract --model color --dataset "$D" --features tokens --out "$T/tok.h5" || bad "davis extract"
for i in 1 2 3 4; do $B/kc-extract --model color --dataset "$D" --features tokens --shard $i/4 --out "$T/tok.s$i.h5" || bad "davis shard $i"; done
n_empty=0; for i in 1 2 3 4; do $B/kc-inspect "$T/tok.s$i.h5" >/dev/null 2>&1 || n_empty=$((n_empty + 1)); done
$B/kc-merge "$T/tokm.h5" "$T"/tok.s*.h5 && ok || bad "merge davis shards"
a=$($B/kc-inspect "$T/tok.h5" | grep content_hash); b=$($B/kc-inspect "$T/tokm.h5" | grep content_hash)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "davis merged content_hash differs: $a / $b"
echo "davis: 2 videos in 4 shards ($n_empty empty shard caches), merged content_hash equal"

# 2. center and decode shards read the whole (merged) input
$B/kc-center "$T/keys.h5" "$T/c.h5" || bad "single center"
for i in 1 2 3 4 5; do $B/kc-center --shard $i/5 "$T/keys.h5" "$T/c.s$i.h5" || bad "center shard $i"; done
$B/kc-merge "$T/cm.h5" "$T"/c.s*.h5 && ok || bad "merge centered"
a=$($B/kc-inspect "$T/c.h5" | grep -E 'content_hash'); b=$($B/kc-inspect "$T/cm.h5" | grep -E 'content_hash')
[ "$a" = "$b" ] && ok || bad "centered: merged hashes differ"
for i in 1 2; do $B/kc-decode --features "$T/c.h5" --grid configs/sweep.ini --shard $i/2 --out "$T/m.s$i.h5" || bad "decode shard $i"; done
mkdir -p "$T/md"
$B/kc-decode --features "$T/c.h5" --grid configs/sweep.ini --out "$T/md/masks.h5" || bad "single decode"   # same path as the merge
mv "$T/md/masks.h5" "$T/md/single.h5"
$B/kc-merge "$T/md/masks.h5" "$T"/m.s*.h5 && ok || bad "merge masks"
$B/kc-inspect "$T/md/single.h5" | sed "s|single.h5|masks.h5|" > "$T/a.txt"; $B/kc-inspect "$T/md/masks.h5" > "$T/b.txt"
diff <(grep -v ' created ' "$T/a.txt") <(grep -v ' created ' "$T/b.txt") >/dev/null && ok || bad "decode: merged differs from single: $(diff "$T/a.txt" "$T/b.txt" | head -4)"
same_cache "decode 2 shards (144 settings)" "$T/md/single.h5" "$T/md/masks.h5"

# 3. propagate shards into one folder equal one run
$B/kc-propagate --features "$T/tok.h5" --davis "$T/data/davis" --split val --out "$T/p1" >/dev/null 2>&1 || bad "propagate"
for i in 1 2 3 4; do $B/kc-propagate --features "$T/tok.h5" --davis "$T/data/davis" --split val --shard $i/4 --out "$T/p4" >/dev/null 2>&1 || bad "propagate shard $i"; done
diff -r "$T/p1" "$T/p4" >/dev/null && ok || bad "propagate: 4 shards differ from one run"

# 3b. results of other features (another network's tokens): refused without --replace, the folder
# untouched; with --replace, 4 shards started at once discard them (and kc-davis's scores of them)
# and write what a clean run writes, none removing what another shard of the same features wrote;
# kc-davis then writes fresh scores (no --force needed); a rerun with --replace keeps everything
P=($B/kc-propagate --davis "$T/data/davis" --split val)
$B/kc-extract --weights tests/data/vit/dino.pth --heads 2 --dataset "$D" --features tokens --out "$T/tokv.h5" >/dev/null 2>&1 || bad "davis vit extract"
"${P[@]}" --features "$T/tokv.h5" --out "$T/pv" >/dev/null 2>&1 || bad "propagate (vit, clean)"
$B/kc-davis --results "$T/pv" --davis "$T/data/davis" --split val >/dev/null 2>&1 || bad "kc-davis (vit, clean)"
$B/kc-davis --results "$T/p4" --davis "$T/data/davis" --split val >/dev/null 2>&1 || bad "kc-davis (color)"
before=$(cd "$T/p4" && find . -type f | sort | xargs sha256sum)
expect_fail "other features without --replace" "p4 holds results of other settings or features" "${P[@]}" --features "$T/tokv.h5" --out "$T/p4"
[ "$(cd "$T/p4" && find . -type f | sort | xargs sha256sum)" = "$before" ] && ok || bad "the refused run changed the folder"
fails=0 pids=()
for i in 1 2 3 4; do "${P[@]}" --features "$T/tokv.h5" --replace --shard $i/4 --out "$T/p4" >/dev/null 2>"$T/r$i.err" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
[ $fails = 0 ] && ok || bad "--replace: $fails of 4 shards failed: $(cat "$T"/r[1-4].err | head -n 2)"
diff -r -x '*_results-val.*' "$T/pv" "$T/p4" >/dev/null && ok || bad "--replace: the results differ from a clean run's: $(diff -rq "$T/pv" "$T/p4" | head -n 3)"
ls "$T/p4"/*_results-val.* >/dev/null 2>&1 && bad "--replace left kc-davis's scores of the old results" || ok
$B/kc-davis --results "$T/p4" --davis "$T/data/davis" --split val >/dev/null 2>"$T/dv.err" || bad "kc-davis after --replace: $(tail -n 1 "$T/dv.err")"
cmp -s "$T/p4/global_results-val.csv" "$T/pv/global_results-val.csv" && cmp -s "$T/p4/global_results-val.json" "$T/pv/global_results-val.json" \
  && ok || bad "kc-davis after --replace: its scores differ from a clean run's"
touch "$T/stamp"; sleep 1
"${P[@]}" --features "$T/tokv.h5" --replace --out "$T/p4" >/dev/null 2>&1 || bad "rerun with --replace"
[ -z "$(find "$T/p4" -newer "$T/stamp" ! -name propagate.json ! -path "$T/p4")" ] && [ -e "$T/p4/global_results-val.csv" ] && ok \
  || bad "a rerun with --replace of the same features rewrote: $(find "$T/p4" -newer "$T/stamp" | head -n 3)"

# 4. refused: incomplete, duplicated, other settings, a non-shard, a shard as a stage's input
expect_fail "incomplete set" "incomplete set of shards: 1 of 3 missing \(2/3\)" $B/kc-merge "$T/x.h5" "$T/keys.s1.h5" "$T/keys.s3.h5"
expect_fail "duplicated shard" "given twice" $B/kc-merge "$T/x.h5" "$T/keys.s1.h5" "$T/keys.s1.h5" "$T/keys.s3.h5"
$B/kc-extract --model color --patch 32 --dataset "$VOC" --shard 2/3 --out "$T/other.s2.h5" >/dev/null 2>&1
expect_fail "other settings" "attribute '(arch|patch)'.*different inputs, settings or code versions" $B/kc-merge "$T/x.h5" "$T/keys.s1.h5" "$T/other.s2.h5" "$T/keys.s3.h5"
expect_fail "mixed split counts" "shards of different splits" $B/kc-merge "$T/x.h5" "$T/keys.s1.h5" "$T/c.s2.h5"
expect_fail "not a shard" "not a shard cache" $B/kc-merge "$T/x.h5" "$T/keys.h5"
expect_fail "shard as input" "is shard 1/3 of a cache" $B/kc-center --shard 1/2 "$T/keys.s1.h5" "$T/x.h5"
expect_fail "bad --shard" "--shard 5/4" $B/kc-extract --model color --dataset "$VOC" --shard 5/4 --out "$T/x.h5"
[ ! -e "$T/x.h5" ] && ok || bad "a refused merge left $T/x.h5"

# 5. --verify / --remove-shards: the merged cache checked against its shards, then the shards removed
$B/kc-merge --verify "$T/k.h5" "$T"/keys.s{1,2,3}.h5 && ok || bad "verify of a good merge"
cp "$T/k.h5" "$T/k-bad.h5"
if need "a changed merged cache (changed with h5py)" py:h5py py:numpy; then   # one value changed: its own hash no longer matches
  /usr/bin/python3 -c "
import h5py; f = h5py.File('$T/k-bad.h5', 'r+'); d = f['features/keys/' + sorted(f['features/keys'])[3]]; a = d[...]; a[0, 0] += 1; d[...] = a; f.close()"
  expect_fail "verify of a changed merge" "^kc-merge: error: $T/k-bad.h5: content_hash recomputed from its data is [0-9a-f]{12}, stored [0-9a-f]{12} \(damaged file\)$" \
    $B/kc-merge --verify "$T/k-bad.h5" "$T"/keys.s{1,2,3}.h5
fi
# a consistent cache of the same images and kind but other values (the centred keys): the shards' hashes tell
expect_fail "verify against other shards" "^kc-merge: error: $T/keys.s1.h5: its images in $T/c.h5 hash to [0-9a-f]{12}, the shard's content_hash is [0-9a-f]{12}$" \
  $B/kc-merge --verify "$T/c.h5" "$T"/keys.s{1,2,3}.h5
expect_fail "verify: image count" "^kc-merge: error: $T/tokm.h5: holds 24 images, the 3 shards 16 \\(their input 16\\)$" $B/kc-merge --verify "$T/tokm.h5" "$T"/keys.s{1,2,3}.h5
mkdir -p "$T/rm/keys.h5.shards"; cp "$T"/keys.s1.h5 "$T/rm/keys.h5.shards/1-of-3.h5"; cp "$T"/keys.s3.h5 "$T/rm/keys.h5.shards/3-of-3.h5"
expect_fail "failed merge with --remove-shards" "incomplete set of shards" $B/kc-merge --remove-shards "$T/rm/keys.h5" "$T"/rm/keys.h5.shards/*
[ "$(ls "$T/rm/keys.h5.shards" | wc -l)" = 2 ] && [ ! -e "$T/rm/keys.h5" ] && ok || bad "a failed merge removed shards or wrote its output"
cp "$T"/keys.s2.h5 "$T/rm/keys.h5.shards/2-of-3.h5"
$B/kc-merge --remove-shards "$T/rm/keys.h5" "$T"/rm/keys.h5.shards/* && [ ! -e "$T/rm/keys.h5.shards" ] && ok || bad "--remove-shards left the shards"
a=$($B/kc-inspect "$T/keys.h5" | grep content_hash); b=$($B/kc-inspect "$T/rm/keys.h5" | grep content_hash)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "--remove-shards: merged content_hash differs"

done_tests

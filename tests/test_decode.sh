#!/usr/bin/env bash
# kc-center and kc-decode end to end on a small features cache made with h5py (docs/design.md layout):
# layout of the outputs, values against the library's own decoding, thread independence,
# provenance, and bad input.  Needs /usr/bin/python3 with numpy and h5py (SKIP, naming
# the packages, otherwise); kc-decode --check-setting (valid ids silent, refusals one line with the
# reason and the grid's nearest id) runs first and needs neither.
source "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
T=$(tmpdir decode)
CENTER=$BUILD/kc-center DECODE=$BUILD/kc-decode
export KC_QUIET=1

# ---- kc-decode --check-setting (the pipeline's check of SETTING; needs no cache) ----
# check_refused "what" "regex" ID [--grid FILE]: exit status 1, nothing on stdout, exactly one line
# on stderr, matching regex
check_refused() {
  local what=$1 re=$2; shift 2
  local out err rc
  out=$($DECODE --check-setting "$@" 2>"$T/check.err"); rc=$?
  err=$(cat "$T/check.err")
  if [ $rc -eq 1 ] && [ -z "$out" ] && [ "$(wc -l <"$T/check.err")" -eq 1 ] && grep -Eq -- "$re" <<<"$err"; then ok
  else bad "check-setting $what (rc=$rc, $(wc -l <"$T/check.err") lines): $err"; fi
}
for args in "t0.20-bin-mean-seed-n1 --grid configs/sweep.ini" "t0.15-bin-mean-corners-n3" "t0.125-wtd-zero-minority-n8 --grid configs/sweep.ini"; do
  # shellcheck disable=SC2086  # args: an id and options
  out=$($DECODE --check-setting $args 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -z "$out" ] && ok || bad "check-setting $args: rc=$rc, said '$out'"
done
FMT="is not a decoder setting \\(tau-edges-split-foreground-masks, e\\.g\\. t0\\.20-bin-mean-seed-n1\\)"
# nearest ids worked out independently (Python's Levenshtein over configs/sweep.ini, ties: first in grid order)
check_refused "typo" "^kc-decode: error: SETTING 't0\.20-bin-mean-sed-n1' $FMT: unknown foreground rule 'sed'.*; nearest of configs/sweep\.ini: t0\.20-bin-mean-seed-n1\$" \
  t0.20-bin-mean-sed-n1 --grid configs/sweep.ini
check_refused "wildly wrong" "^kc-decode: error: SETTING '0\.25 wtd corners' $FMT: .*; nearest of configs/sweep\.ini: t0\.25-wtd-mean-corners-n1\$" \
  "0.25 wtd corners" --grid configs/sweep.ini
check_refused "n9" "SETTING 't0\.20-bin-mean-seed-n9' $FMT: bad masks part 'n9' \\(n1 \\.\\. n8\\); nearest of configs/sweep\.ini: t0\.20-bin-mean-seed-n1\$" \
  t0.20-bin-mean-seed-n9 --grid configs/sweep.ini
check_refused "tau 1.5" "SETTING 't1\.50-bin-mean-seed-n1' $FMT: bad tau part 't1\.50' \\(expected t<number in \\(0, 1\\)>.*; nearest of configs/sweep\.ini: t0\.10-bin-mean-seed-n1\$" \
  t1.50-bin-mean-seed-n1 --grid configs/sweep.ini
check_refused "without a grid" "^kc-decode: error: SETTING 't0\.2-bin-mean-seed-n1' $FMT: not in canonical form \\(did you mean t0\.20-bin-mean-seed-n1\\?\\)\$" \
  t0.2-bin-mean-seed-n1
check_refused "best" "SETTING 'best' $FMT: 'best' is resolved by the pipeline" best
check_refused "attention id" "SETTING 'attn-mass0\.60' $FMT: attn-mass<m> is the attention baseline's setting" attn-mass0.60
printf '[grid]\ntau =\nedges = bin\nsplit = mean\nforeground = seed\nmasks = 1\n' >"$T/empty.ini"
check_refused "broken grid" "^kc-decode: error: $T/empty\.ini: axis 'tau' is empty\$" t0.20-bin-mean-seed-n1 --grid "$T/empty.ini"
expect_fail "check-setting with --out" "--check-setting takes only --grid" $DECODE --check-setting t0.20-bin-mean-seed-n1 --out "$T/x.h5"
$DECODE --help | grep -q -- "--check-setting ID" && ok || bad "kc-decode --help lacks --check-setting"

need "kc-center and kc-decode on a cache made with h5py" py:numpy py:h5py || { done_tests; exit; }

# three images: a planted 20x20 scene with a large key bias, a 12x16 scene, a 30x30 noisy one
$PY - "$T" <<'PYEOF'
import sys, numpy as np, h5py
T = sys.argv[1]
rng = np.random.default_rng(7)
def planted(gh, gw, dim):
    lab = np.zeros((gh, gw), int); lab[gh//4:gh//2+2, gw//5:gw//2] = 1
    d = np.linalg.qr(rng.standard_normal((dim, dim)))[0][:2]
    return (d[lab.reshape(-1)] + 0.05 * rng.standard_normal((gh*gw, dim)) + 2.0).astype(np.float32)
imgs = [("scene/a", 20, 20, planted(20, 20, 16)), ("b", 12, 16, planted(12, 16, 16)),
        ("c", 30, 30, (rng.standard_normal((900, 16)) + np.linspace(0, 3, 900)[:, None] * (np.arange(16) % 2)).astype(np.float32))]
def write(path, bad=False, fmt="keycut-features"):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = fmt; f.attrs["format_version"] = "1"; f.attrs["content_hash"] = "h" * 64
        f.attrs["policy"] = "square480"; f.attrs["weights_sha256"] = "w" * 64
        for i, (name, gh, gw, x) in enumerate(imgs):
            x = x.copy()
            if bad and i == 1: x[5, 3] = np.nan
            f["/features/keys/" + name] = x
            f["/features/tokens/" + name] = x[:, :8] * 2
        f.create_dataset("/index/ids", data=[n for n, *_ in imgs], dtype=h5py.string_dtype())
        f["/index/grid"] = np.array([[gh, gw] for _, gh, gw, _ in imgs], np.int32)
        f["/index/size"] = np.array([[gh * 16, gw * 16] for _, gh, gw, _ in imgs], np.int32)
write(T + "/keys.h5"); write(T + "/nan.h5", bad=True)
PYEOF

# ---- kc-center ----
$CENTER --help | grep -q "example" && ok || bad "kc-center --help"
if $CENTER "$T/keys.h5" "$T/centered.h5"; then ok; else bad "kc-center failed"; fi
$PY - "$T" <<'PYEOF' && ok || bad "centered cache"
import sys, numpy as np, h5py
T = sys.argv[1]
a, b = h5py.File(T + "/keys.h5"), h5py.File(T + "/centered.h5")
assert b.attrs["format"] == "keycut-features" and b.attrs["input"] == T + "/keys.h5", dict(b.attrs)
assert b.attrs["input_content_hash"] == "h" * 64 and b.attrs["policy"] == "square480"
assert b.attrs["content_hash"] != "h" * 64
assert list(a["/index/ids"].asstr()[()]) == list(b["/index/ids"].asstr()[()])
assert (a["/index/grid"][()] == b["/index/grid"][()]).all()
worst = 0
for name in a["/index/ids"].asstr()[()]:
    k, c = a["/features/keys/" + name][()].astype(np.float64), b["/features/keys/" + name][()]
    m = k.mean(0)
    worst = max(worst, np.abs(c - (k - m)).max(), np.abs(c.astype(np.float64).mean(0)).max())
    mn = float(b["/features/keys/" + name].attrs["mean_norm"][0])
    assert abs(mn - np.linalg.norm(m)) <= 1e-5 * np.linalg.norm(m), (mn, np.linalg.norm(m))
    assert (a["/features/tokens/" + name][()] == b["/features/tokens/" + name][()]).all()
print("kc-center: worst |centred - (keys - mean)| or |mean| %.2e (tol 1e-5)" % worst)
assert worst <= 1e-5
PYEOF

# ---- kc-decode ----
$DECODE --help | grep -q "example" && ok || bad "kc-decode --help"
TC=t0.20-bin-mean-seed-n1
OMP_NUM_THREADS=1 $DECODE --features "$T/centered.h5" --setting $TC --out "$T/one.h5" && ok || bad "decode one setting"
OMP_NUM_THREADS=2 $DECODE --features "$T/centered.h5" --grid configs/sweep.ini --out "$T/grid2.h5" && ok || bad "decode grid 2 threads"
OMP_NUM_THREADS=1 $DECODE --features "$T/centered.h5" --grid configs/sweep.ini --out "$T/grid1.h5" && ok || bad "decode grid 1 thread"
$DECODE --features "$T/keys.h5" --kind tokens --setting t0.15-bin-mean-corners-n3 --out "$T/tok.h5" && ok || bad "decode tokens"
$PY - "$T" <<'PYEOF' && ok || bad "masks cache layout and values"
import sys, math, numpy as np, h5py
T = sys.argv[1]
c, one, g1, g2 = (h5py.File(T + p) for p in ("/centered.h5", "/one.h5", "/grid1.h5", "/grid2.h5"))
ids = list(c["/index/ids"].asstr()[()])
grid = c["/index/grid"][()]
assert one.attrs["format"] == "keycut-masks" and one.attrs["features"] == T + "/centered.h5"
assert one.attrs["features_content_hash"] == c.attrs["content_hash"] and one.attrs["feature_kind"] == "keys"
assert one.attrs["policy"] == "square480" and one.attrs["weights_sha256"] == "w" * 64
assert list(one["/masks"].keys()) == ["t0.20-bin-mean-seed-n1"], list(one["/masks"].keys())
assert len(g1["/masks"].keys()) == 144
for f in (one, g1):
    assert list(f["/index/ids"].asstr()[()]) == ids and (f["/index/grid"][()] == grid).all()
    assert (f["/index/size"][()] == c["/index/size"][()]).all()
n_same = 0
for s in g1["/masks"]:
    N = int(s[-1])
    for i, name in enumerate(ids):
        d1, d2 = g1["/masks/%s/%s" % (s, name)], g2["/masks/%s/%s" % (s, name)]
        assert d1.dtype == np.uint8 and d1.shape == tuple(grid[i]), (s, name, d1.shape)
        assert set(d1.attrs.keys()) == {"lambda2", "eigengap", "degenerate", "knife_edge", "knife_margin"}, dict(d1.attrs)
        assert int(d1.attrs["knife_edge"]) in (0, 1) and len(np.atleast_1d(d1.attrs["knife_margin"])) == 1
        assert len(d1.attrs["lambda2"]) == N and len(d1.attrs["eigengap"]) == N
        assert int(d1.attrs["degenerate"]) in (0, 1) and d1[()].max() <= N
        same = (d1[()] == d2[()]).all() and np.array_equal(d1.attrs["lambda2"], d2.attrs["lambda2"], equal_nan=True)
        assert same, ("1 vs 2 threads differ", s, name)
        lam = d1.attrs["lambda2"]
        assert not math.isnan(lam[0])
a = g1["/masks/t0.20-bin-mean-seed-n1/scene/a"]
assert (a[()] == one["/masks/t0.20-bin-mean-seed-n1/scene/a"][()]).all()
# the planted block of image scene/a comes back exactly under TokenCut's setting (after centring)
lab = np.zeros((20, 20), int); lab[5:12, 4:10] = 1
assert ((a[()] > 0) == (lab > 0)).all() or ((a[()] > 0) == (lab == 0)).all(), a[()]
t = h5py.File(T + "/tok.h5")
assert t.attrs["feature_kind"] == "tokens" and t["/masks/t0.15-bin-mean-corners-n3/c"].shape == (30, 30)
print("kc-decode: 144 settings x 3 images, layout ok, identical for 1 and 2 threads")
PYEOF
# rerunning the same command gives the same content
$DECODE --features "$T/centered.h5" --setting $TC --out "$T/one_again.h5" && ok || bad "decode again"
$PY -c "
import h5py,sys; a,b=h5py.File('$T/one.h5'),h5py.File('$T/one_again.h5')
assert a.attrs['content_hash']==b.attrs['content_hash']" && ok || bad "rerun gives another content hash"

# ---- bad input ----
expect_fail "masks cache as features" "is a keycut-masks cache, expected a keycut-features" $DECODE --features "$T/one.h5" --setting $TC --out "$T/x.h5"
expect_fail "masks cache into kc-center" "expected a keycut-features" $CENTER "$T/one.h5" "$T/x.h5"
expect_fail "unknown setting" "t0.20-bin-mean-blob-n1.*unknown foreground" $DECODE --features "$T/keys.h5" --setting t0.20-bin-mean-blob-n1 --out "$T/x.h5"
expect_fail "non-finite feature" "nan.h5.*/features/keys/b.*non-finite" $DECODE --features "$T/nan.h5" --setting $TC --out "$T/x.h5"
[ ! -e "$T/x.h5" ] && ok || bad "a failed run left its output"
printf '[grid]\ntau =\nedges = bin\nsplit = mean\nforeground = seed\nmasks = 1\n' >"$T/empty.ini"
expect_fail "empty axis" "empty.ini: axis 'tau' is empty" $DECODE --features "$T/keys.h5" --grid "$T/empty.ini" --out "$T/x.h5"
printf '[grid]\ntau = 0.2\nedges = bin\nsplit = mean\nforeground = seed, middle\nmasks = 1\n' >"$T/unk.ini"
expect_fail "unknown grid value" "unknown value 'middle'" $DECODE --features "$T/keys.h5" --grid "$T/unk.ini" --out "$T/x.h5"
expect_fail "both setting and grid" "exactly one of" $DECODE --features "$T/keys.h5" --grid configs/sweep.ini --setting $TC --out "$T/x.h5"
expect_fail "bad kind" "--kind must be keys or tokens" $DECODE --features "$T/keys.h5" --kind values --setting $TC --out "$T/x.h5"
expect_fail "missing features" "no/such.h5: no such file" $DECODE --features no/such.h5 --setting $TC --out "$T/x.h5"
# a .partial of another command: refused when it holds a finished piece; taken over (and the output
# the bytes of a clean run's, SOURCE_DATE_EPOCH fixing `created`) when it holds none
mkdir -p "$T/y.h5.partial" && echo "0000000000000000000000000000000000000000000000000000000000000000" >"$T/y.h5.partial/fingerprint"
: >"$T/y.h5.partial/piece-000000.h5"
expect_fail "partial of another run" "y.h5.partial holds pieces of a different run" $DECODE --features "$T/keys.h5" --setting $TC --out "$T/y.h5"
[ -e "$T/y.h5.partial/piece-000000.h5" ] && ok || bad "the refused run removed the other run's piece"
mkdir -p "$T/z" && SOURCE_DATE_EPOCH=1764547200 $DECODE --features "$T/keys.h5" --setting $TC --out "$T/z/masks.h5" >/dev/null 2>&1 \
  && mv "$T/z/masks.h5" "$T/clean.h5" || bad "clean decode"
mkdir -p "$T/z/masks.h5.partial"
echo "0000000000000000000000000000000000000000000000000000000000000000" >"$T/z/masks.h5.partial/fingerprint"
echo "a note of another run" >"$T/z/masks.h5.partial/products"; : >"$T/z/masks.h5.partial/piece-000000.h5.tmp"
if SOURCE_DATE_EPOCH=1764547200 $DECODE --features "$T/keys.h5" --setting $TC --out "$T/z/masks.h5" 2>"$T/z.err" \
   && [ ! -e "$T/z/masks.h5.partial" ] && cmp -s "$T/z/masks.h5" "$T/clean.h5"; then ok; else
  bad "a .partial of another run without a finished piece: not taken over, or the output differs from a clean run's: $(tail -n 1 "$T/z.err")"; fi
done_tests

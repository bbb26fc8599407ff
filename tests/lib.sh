# tests/lib.sh — sourced by shell tests.  ok; bad "why"; skip "why"; need "what" REQ...; done_tests at the end.
set -u -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${BUILD:-build}
KC_SHARED_DATA=${KC_SHARED_DATA:-$(cd .. && pwd)/shared/data}
T_PASS=0 T_FAIL=0 T_SKIP=0
ok()   { T_PASS=$((T_PASS + 1)); }
bad()  { T_FAIL=$((T_FAIL + 1)); echo "FAIL: $*" >&2; }
skip() { T_SKIP=$((T_SKIP + 1)); echo "SKIP: $*" >&2; }
# expect_fail "what" "message regex" cmd... : the command must exit non-zero with one stderr line matching
expect_fail() {
  local what=$1 re=$2; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 0 ] && grep -Eq -- "$re" <<<"$err"; then ok; else bad "$what (rc=$rc): $err"; fi
}
# optional tools (python3 modules, pdflatex, chromium, ...): need "what" REQ... skips naming the
# Debian package when one is absent; missing REQ... names them (tests/optional.sh has the table)
source tests/optional.sh
# png_size FILE: "(W, H)" from the PNG header, as Pillow's Image.size prints it
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "(%d, %d)", (($1 * 256 + $2) * 256 + $3) * 256 + $4, (($5 * 256 + $6) * 256 + $7) * 256 + $8 }'; }
# make_cmd: M, the make command of a test of the make pipeline (the sanitizer's build under KC_SANITIZE=1)
make_cmd() {
  if [ "${KC_SANITIZE:-}" = 1 ]; then M=(make --no-print-directory SANITIZE=1 BUILD="${BUILD%-san}")
  else M=(make --no-print-directory BUILD="$BUILD"); fi
}
tmpdir() { local d=$BUILD/test-tmp/$1; rm -rf "$d"; mkdir -p "$d"; echo "$d"; }
done_tests() { echo "RESULT $T_PASS $T_FAIL $T_SKIP"; [ "$T_FAIL" -eq 0 ]; }

#!/usr/bin/env bash
# tests/fresh.sh — `make test-fresh`: the README's promise on a new machine.  A minimal Debian 12
# root (debootstrap --variant=minbase, plus what a new machine has and the README's commands need:
# gcc, make, git, pkg-config) gets a git clone of this repository's HEAD — committed work only:
# uncommitted changes are not tested — and nothing else of the project; inside it, as root, the
# README's first two commands run exactly as written: `make demo`, then `make test`.  `make deps`
# (which both run) must install everything else.  It passes when both succeed and the last line of
# `make test` says 0 failed.  ../shared/data does not exist there, as in a user's clone.
#
# The root is built once per package list and mirror and kept as a tarball under /var/tmp
# (KC_FRESH_CACHE); each run unpacks a new copy, so no run sees what an earlier one installed.
# Needs root (debootstrap, chroot, mounts); installs debootstrap when missing.  --root-only: only
# build (or find) the cached root.
# Log: $BUILD/fresh.log (each line with the seconds since the start); the chroot's test logs are
# copied to $BUILD/fresh-test-logs/.
set -eu -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SUITE=bookworm
PKGS=(gcc make git pkg-config)
CACHE=${KC_FRESH_CACHE:-/var/tmp/keycut-fresh}
REPO=$(pwd)
[ "$(id -u)" -eq 0 ] || { echo "test-fresh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  echo "test-fresh: installing debootstrap"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
# the host's Debian mirror (deb822 sources first, then a one-line sources.list)
MIRROR=$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$MIRROR" ] || { echo "test-fresh: no Debian mirror found in /etc/apt/sources.list{,.d}" >&2; exit 1; }

mkdir -p "$CACHE" "$BUILD"
LOG=$REPO/$BUILD/fresh.log
: >"$LOG"
t0=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - t0)) "$*" | tee -a "$LOG"; }
key=$(printf '%s\n' "$SUITE" minbase "$MIRROR" "${PKGS[@]}" | sha256sum | cut -c1-12)
tarball=$CACHE/root-$SUITE-$key.tar
# ---- the cached root (built under a lock, published by a rename) ---------------------------------
exec 9>"$CACHE/.lock"
flock 9
if [ ! -f "$tarball" ]; then
  say "debootstrap $SUITE (minbase + ${PKGS[*]}) from $MIRROR"
  b=$(mktemp -d "$CACHE/build.XXXXXX")
  debootstrap --variant=minbase --include="$(IFS=,; echo "${PKGS[*]}")" "$SUITE" "$b" "$MIRROR" \
    >>"$LOG" 2>&1 || { rm -rf "$b"; say "debootstrap failed (see $LOG)"; exit 1; }
  rm -rf "$b"/var/cache/apt/archives/*.deb
  tar -C "$b" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf "$b"
  say "root cached: $tarball ($(du -h "$tarball" | cut -f1))"
fi
flock -u 9
[ "${1:-}" = --root-only ] && exit 0

# ---- a new copy of it, the clone, the mounts -------------------------------------------------------
R=$(mktemp -d "$CACHE/run.XXXXXX")
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true; done
  # remove the copy only once nothing is mounted in it any more
  if ! grep -q " $R/" /proc/self/mounts; then rm -rf "$R"; else echo "test-fresh: left $R (still mounted)" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tar -C "$R" -xf "$tarball"
say "root unpacked in $R"
sha=$(git rev-parse HEAD)
git clone -q --no-checkout "$REPO" "$R/root/keycut"
git -C "$R/root/keycut" checkout -q --detach "$sha"
[ -z "$(git status --porcelain --untracked-files=no)" ] || say "note: uncommitted changes here are not in the clone"
say "cloned HEAD $(git log -1 --format='%h %s' | cut -c1-80)"
# apt inside uses the host's sources (same mirror, same suites)
if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
  rm -f "$R/etc/apt/sources.list"
  cp /etc/apt/sources.list.d/*.sources "$R/etc/apt/sources.list.d/"
fi
cp -L /etc/resolv.conf "$R/etc/resolv.conf"
for m in proc sys dev dev/pts dev/shm; do
  mkdir -p "$R/$m"
  case $m in
    proc) mount -t proc proc "$R/proc" ;;
    sys) mount -t sysfs sys "$R/sys" ;;
    # private, so that the mounts below it never reach the host's /dev
    dev) mount --bind /dev "$R/dev" && mount --make-private "$R/dev" ;;
    dev/pts) mount --bind /dev/pts "$R/dev/pts" ;;
    dev/shm) mount -t tmpfs -o mode=1777 shm "$R/dev/shm" ;;
  esac
  mounted+=("$R/$m")
done

# ---- the README's two commands -----------------------------------------------------------------------
# stamp each line of the chroot's output with the seconds since the start
stamp() { local l; while IFS= read -r l; do printf '[%4ds] %s\n' $((SECONDS - t0)) "$l"; done; }
inside() {
  env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
    chroot "$R" /bin/bash -c "cd /root/keycut && $1"
}
rc=0
say "make demo"; td=$SECONDS
inside 'make demo' 2>&1 | stamp >>"$LOG" || rc=$?
say "make demo: exit $rc, $((SECONDS - td))s"; tail -n 4 "$LOG" | sed 's/^/    /'
if [ $rc -eq 0 ]; then
  say "make test"; tt=$SECONDS
  inside 'make test' 2>&1 | stamp >>"$LOG" || rc=$?
  say "make test: exit $rc, $((SECONDS - tt))s"
  rm -rf "$BUILD/fresh-test-logs"; cp -r "$R/root/keycut/build/test-logs" "$BUILD/fresh-test-logs" 2>/dev/null || true
  last=$(grep -E '^\[ *[0-9]+s\] [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$LOG" | tail -n 1 | sed 's/^\[[^]]*\] //')
  grep -E '^\[ *[0-9]+s\] .* FAIL ' "$LOG" | sed 's/^/    /' || true
  say "make test ended: ${last:-no summary line}"
  [[ $last =~ ^[0-9]+\ passed,\ 0\ failed ]] || { [ $rc -ne 0 ] || rc=1; }
fi
say "test-fresh: $([ $rc -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - t0))s (log: $BUILD/fresh.log)"
exit $rc

#!/usr/bin/env bash
# tests/optional.sh — the optional tools of the tests: what `make deps` (deps.txt) does not install,
# and the Debian package that brings each.  Sourced by tests/lib.sh (need, missing); run as
# `tests/optional.sh REQ...` by the test programs (tests/test.h: test_missing), it prints what
# `missing` prints.  A test whose tool is absent skips that part, naming the package: on a new
# machine `make deps && make test` must end with 0 failed.
#
# A REQ is py:MODULE (imported by /usr/bin/python3) or a command; "A|B" is met by either.
#
#   REQ             Debian package               installed by
declare -gA KC_OPTIONAL_PKG=(
  [py:numpy]=python3-numpy                    # make deps-ref
  [py:scipy]=python3-scipy                    # make deps-ref
  [py:PIL]=python3-pil                        # make deps-ref
  [py:cv2]=python3-opencv                     # make deps-ref
  [py:h5py]=python3-h5py                      # make deps-ref
  [py:torch]=python3-torch                    # make deps-ref
  [python3]=python3                           # (any of the above)
  [time]=time                                 # make deps-ref (/usr/bin/time)
  [sbatch]=slurm-client                       # make deps-ref
  [slurmctld]=slurm-wlm                       # make deps-ref
  [pdflatex]=texlive-latex-recommended        # make deps-tex
  [pdfinfo]=poppler-utils                     # make deps-tex
  [chromium]=chromium                         # tests/deps.sh deps-browser.txt
  [strace]=strace                             # tests/deps.sh deps-browser.txt
  [node]=nodejs                               # make deps-bench
  [npm]=npm                                   # make deps-bench
  [clang]=clang                               # make deps-fuzz
  [h5dump]=hdf5-tools                         # (none: the h5py checks' stand-in)
  [convert]=imagemagick                       # (none: the Pillow checks' stand-in)
)
declare -gA KC_OPTIONAL_HAVE=()

# kc_have REQ: true when REQ is here (remembered for the rest of the test)
kc_have() {
  local r=$1 ok=1
  if [ -z "${KC_OPTIONAL_HAVE[$r]+x}" ]; then
    case $r in
      py:*) /usr/bin/python3 -c "import ${r#py:}" >/dev/null 2>&1 && ok=0 ;;
      time) [ -x /usr/bin/time ] && ok=0 ;;
      *) command -v "$r" >/dev/null 2>&1 && ok=0 ;;
    esac
    KC_OPTIONAL_HAVE[$r]=$ok
  fi
  return "${KC_OPTIONAL_HAVE[$r]}"
}
# kc_missing REQ...: sets MISSING to the Debian packages of the REQs that are absent, comma-separated
# ("A or B" for "A|B"); empty when all are here.  missing REQ...: prints it.
kc_missing() {
  local r a s alt found
  MISSING=
  for r in "$@"; do
    found=0 s=
    IFS='|' read -ra alt <<<"$r"
    for a in "${alt[@]}"; do
      if kc_have "$a"; then found=1; break; fi
      s+="${s:+ or }${KC_OPTIONAL_PKG[$a]:-$a}"
    done
    [ $found = 1 ] || MISSING+="${MISSING:+, }$s"
  done
}
missing() { kc_missing "$@"; [ -z "$MISSING" ] || echo "$MISSING"; }
# need WHAT REQ...: true when every REQ is here; otherwise one skip "WHAT: PKG, PKG not installed"
# (tests/lib.sh's skip) and false.  Use: `if need "what is checked" py:h5py; then ...; fi`
need() {
  local what=$1; shift
  kc_missing "$@"
  [ -z "$MISSING" ] && return 0
  skip "$what: $MISSING not installed"
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then missing "$@"; fi

#!/usr/bin/env bash
# Installs the Debian packages listed in $1 that are missing (as root), or names them.
set -eu -o pipefail
list=$1
missing=()
while read -r p; do
  p=${p%%#*}; p=$(echo "$p" | tr -d '[:space:]')
  [ -n "$p" ] || continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done < "$list"
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run 'sudo make deps' or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

#!/usr/bin/env bash
# Installs the Debian packages named after the caller's name when they are
# missing (idempotent; `apt-get update` only when something is missing).
#   install-packages.sh CALLER PKG...
set -euo pipefail
caller=$1
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "$caller: packages missing (${missing[*]}) and not running as root; run it with sudo" >&2
  exit 1
fi
echo "$caller: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

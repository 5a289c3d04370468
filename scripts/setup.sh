#!/usr/bin/env bash
# Installs the Debian packages areev builds and tests with (skips what is present).
set -euo pipefail
pkgs=(build-essential cmake pkg-config git libsqlite3-dev sqlite3 libfuse3-dev fuse3
      libfmt-dev libboost-filesystem-dev nlohmann-json3-dev libcli11-dev libsodium-dev
      libgtest-dev libgmock-dev libbenchmark-dev python3 python3-dev python3-pytest
      nodejs npm vim-nox sed grep procps psmisc rsync patch zip unzip)
missing=()
for p in "${pkgs[@]}"; do
  # nodejs/npm may come from outside Debian (e.g. /usr/bin/node already present).
  if [[ $p == nodejs || $p == npm ]] && command -v "${p/nodejs/node}" >/dev/null 2>&1; then
    continue
  fi
  if [[ $p == vim-nox ]] && command -v vim >/dev/null 2>&1; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

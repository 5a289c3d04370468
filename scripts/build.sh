#!/usr/bin/env bash
# Configures and builds one preset: release (default, into build/) or asan
# (ASan+UBSan, into build-asan/). Usage: scripts/build.sh [release|asan] [TARGET...]
# (every target unless some are named, e.g. `scripts/build.sh release areev`)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
case $preset in
  release) dir=build; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DENABLE_ASAN=ON -DENABLE_UBSAN=ON -DAREEV_BUILD_BENCH=OFF) ;;
  *) echo "usage: scripts/build.sh [release|asan] [TARGET...]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
shift || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$dir" -j"$(nproc)" "${targets[@]}"

#!/usr/bin/env bash
# Builds one language binding into the benchmark build directory, without
# touching the binding's own source tree:
#   build_bindings.sh python BUILD  -> BUILD/py-ext/pkg/areev (importable package)
#   build_bindings.sh node BUILD    -> BUILD/node-addon/addon/areev.node
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
what=${1:?python|node}
build=${2:?BUILD_DIR}
case $what in
  python)
    [[ -f $repo/bindings/python/CMakeLists.txt ]] || exit 1
    cmake -S "$repo/bindings/python" -B "$build/py-ext" -DCMAKE_BUILD_TYPE=Release \
      -DAREEV_SOURCE_DIR="$repo" -DAREEV_WERROR=OFF \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
    cmake --build "$build/py-ext" -j"$(nproc)" --target areev_python >/dev/null
    ;;
  node)
    [[ -f $repo/bindings/node/CMakeLists.txt ]] || exit 1
    cmake -S "$repo/bindings/node" -B "$build/node-addon" -DCMAKE_BUILD_TYPE=Release \
      -DAREEV_SOURCE_DIR="$repo" -DAREEV_NODE_API_INCLUDE=/usr/include/node \
      -DAREEV_WERROR=OFF >/dev/null
    cmake --build "$build/node-addon" -j"$(nproc)" --target areev_node_addon >/dev/null
    ;;
  *) echo "usage: build_bindings.sh python|node BUILD_DIR" >&2; exit 2 ;;
esac

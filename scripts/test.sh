#!/usr/bin/env bash
# The one command that runs every test: installs missing Debian packages,
# builds the release and the ASan+UBSan presets, and runs the GoogleTest suites
# (ctest) and the pytest suite (CLI, bindings, real FUSE mounts) against each.
# Usage: scripts/test.sh [release|asan ...]   (default: release asan)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
presets=("$@")
((${#presets[@]})) || presets=(release asan)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
for preset in "${presets[@]}"; do
  dir=build; [[ $preset == asan ]] && dir=build-asan
  echo "=== [$preset] build" >&2
  scripts/build.sh "$preset"
  echo "=== [$preset] unit tests (ctest)" >&2
  ctest --test-dir "$dir" --output-on-failure -j2
  echo "=== [$preset] integration tests (pytest)" >&2
  AREEV_BUILD_DIR="$PWD/$dir" AREEV_PRESET="$preset" /usr/bin/python3 -m pytest -c tests/pytest.ini tests -q
done

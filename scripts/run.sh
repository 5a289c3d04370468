#!/usr/bin/env bash
# The main job: builds areev and mounts the memory of namespace "default" in
# ./agent.db (created if missing) at ./memories, in the foreground. Edit it with
# any tool; every save becomes a version (see ./memories/.history/<file>/).
# Ctrl-C unmounts. Usage: scripts/run.sh [MOUNTPOINT] [DB]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release areev  # the CLI only: tests, benchmarks and bindings are not needed
mnt=${1:-$PWD/memories}
db=${2:-${AREEV_DB:-$PWD/agent.db}}
mkdir -p "$mnt"
echo "areev: mounting $db at $mnt (Ctrl-C to unmount)" >&2
exec build/cli/areev mount "$mnt" --db "$db" -f

#!/usr/bin/env bash
# The main job: builds areev and mounts the memory of namespace "default" in
# $AREEV_DB, else ./agent.db (created if missing) at ./memories, in the
# foreground (both in the directory it is run from, as relative arguments
# are). Edit it with any tool; every save becomes a version (see
# ./memories/.history/<file>/).
# Ctrl-C unmounts. Usage: scripts/run.sh [MOUNTPOINT] [DB]
set -euo pipefail
caller=$PWD  # relative MOUNTPOINT and DB name files where the user ran this
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release areev  # the CLI only: tests, benchmarks and bindings are not needed
absolute() { [[ $1 == /* ]] && echo "$1" || echo "$caller/$1"; }
if [[ $# -lt 2 && ${AREEV_DB+set} == set && -z $AREEV_DB ]]; then
  # As areev itself: a script that meant to name a store would mount ./agent.db.
  echo "areev: AREEV_DB is set but empty: set it to a store file, or unset it for ./agent.db" >&2
  exit 2
fi
mnt=$(absolute "${1:-memories}")
db=$(absolute "${2:-${AREEV_DB:-agent.db}}")
mkdir -p "$mnt"
echo "areev: mounting $db at $mnt (Ctrl-C to unmount)" >&2
exec build/cli/areev mount "$mnt" --db "$db" -f

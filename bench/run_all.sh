#!/usr/bin/env bash
# Builds what the benchmarks need and runs them all, printing markdown tables
# (see docs/performance.md for recorded results).
#
#   bench/run_all.sh [BUILD_DIR]            (default: build-bench)
#   env SECTIONS="micro mix mount py node"  (default: all)
#       OPS=10000 MIX_SIZES="1000 10000" MOUNT_ROUNDS=1 MOUNT_SCALE=1.0
#
# Scratch stores and trees go under BUILD_DIR (ext4 here; not tmpfs, so fsync
# costs what it costs on disk).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build-bench}
mkdir -p "$build"
build=$(cd "$build" && pwd)
sections=${SECTIONS:-micro mix mount py node}
want() { [[ " $sections " == *" $1 "* ]]; }
jobs=$(nproc)

echo "# areev benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -r)"
echo "commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"

cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=(memtool_replay memtool_micro exec_timer)
want mount && targets+=(areev)
cmake --build "$build" -j"$jobs" --target "${targets[@]}" >/dev/null

if want micro; then
  echo; echo "## memtool micro-benchmarks (in-process MemoryTool::Execute)"
  echo "\`$build/bench/memtool_micro --dir $build\`"; echo
  "$build/bench/memtool_micro" --dir "$build"
fi

if want mix; then
  echo; echo "## Agent-session mix: SDK local-filesystem tool vs areev"
  addon=""
  if want node || [[ -n ${AREEV_NODE_ADDON:-} ]]; then
    addon=${AREEV_NODE_ADDON:-}
    if [[ -z $addon ]] && "$repo/bench/bindings/build_bindings.sh" node "$build" >&2; then
      addon=$build/node-addon/addon/areev.node
    fi
  fi
  echo "\`OPS=${OPS:-10000} AREEV_NODE_ADDON=${addon:-<unset>} bench/agent_mix/run_agent_mix.sh $build ${MIX_SIZES:-1000 10000}\`"; echo
  # shellcheck disable=SC2086
  AREEV_NODE_ADDON=$addon "$repo/bench/agent_mix/run_agent_mix.sh" "$build" ${MIX_SIZES:-1000 10000}
fi

if want mount; then
  echo; echo "## Mount workloads: areev mount vs passthrough_ll vs plain directory"
  cmd=(/usr/bin/python3 "$repo/bench/mount/mount_bench.py" --build "$build"
       --rounds "${MOUNT_ROUNDS:-1}" --scale "${MOUNT_SCALE:-1.0}")
  echo "\`${cmd[*]}\`"; echo
  "${cmd[@]}"
  # passthrough_ll keeps a file descriptor per inode and runs out of this
  # machine's 20,000 in a full-scale git status; at half scale it completes.
  echo; echo "### git status where passthrough_ll completes it (half scale)"
  cmd=(/usr/bin/python3 "$repo/bench/mount/mount_bench.py" --build "$build" --targets passthrough_ll,areev
       --rounds 3 --scale 0.5 --only "create,git add+commit,git status")
  echo "\`${cmd[*]}\`"; echo
  "${cmd[@]}"
fi

if want py; then
  echo; echo "## Python binding overhead"
  if "$repo/bench/bindings/build_bindings.sh" python "$build" >&2; then
    cmd=(/usr/bin/python3 "$repo/bench/bindings/py_overhead.py" --pkg "$build/py-ext/pkg"
         --exec-timer "$build/bench/exec_timer" --dir "$build/bindings-scratch")
    echo "\`${cmd[*]}\`"; echo
    "${cmd[@]}"
  else
    echo "(Python binding did not build; skipped)"
  fi
fi

if want node; then
  echo; echo "## Node binding round trip"
  if "$repo/bench/bindings/build_bindings.sh" node "$build" >&2; then
    cmd=(node "$repo/bench/bindings/node_roundtrip.js" --binding "$repo/bindings/node"
         --exec-timer "$build/bench/exec_timer" --dir "$build/bindings-scratch")
    echo "\`AREEV_NODE_ADDON=$build/node-addon/addon/areev.node ${cmd[*]}\`"; echo
    AREEV_NODE_ADDON=$build/node-addon/addon/areev.node "${cmd[@]}"
  else
    echo "(Node binding did not build; skipped)"
  fi
fi

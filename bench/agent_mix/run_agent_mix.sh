#!/usr/bin/env bash
# Agent-session mix: the same generated commands replayed on the SDK's
# local-filesystem memory tool (Node, one process) and on areev (in-process
# C++ MemoryTool::Execute with durability normal and full; and through the
# Node binding when AREEV_NODE_ADDON names its built areev.node). Prints a markdown table with throughput
# ratios against the SDK and checks that every backend ends with exactly the
# tree the generator expects.
#
#   bench/agent_mix/run_agent_mix.sh BUILD_DIR [FILES...]   (default: 1000 10000)
#   env OPS=10000 SEED=42 ROUNDS=2 WORK=BUILD_DIR/agent-mix
# Each round runs every backend on every size in turn; the report takes each
# backend's fastest round (the machine may be shared, and noise only adds time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run_agent_mix.sh BUILD_DIR [FILES...]}" && pwd)
shift
sizes=("$@")
((${#sizes[@]})) || sizes=(1000 10000)
ops=${OPS:-10000}
seed=${SEED:-42}
rounds=${ROUNDS:-2}
work=${WORK:-$build/agent-mix}
replay=$build/bench/memtool_replay
[[ -x $replay ]] || { echo "missing $replay (build target memtool_replay)" >&2; exit 2; }
[[ -d $here/../node_modules/@anthropic-ai/sdk ]] || (cd "$here/.." && npm ci --silent)

rm -rf "$work"
mkdir -p "$work"
results=$work/results.jsonl
: >"$results"

# Runs one backend; appends its JSON line (tagged with size) to results and
# compares its dump with the generator's expected tree.
record() {
  local size=$1 name=$2 dump=$3
  shift 3
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  local line
  line=$("$@")
  local match=false
  cmp -s "$dump" "$work/w$size/expected.dump" && match=true
  echo "$line" | node -e '
    const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
    r.files = Number(process.argv[1]); r.name = process.argv[2]; r.state_matches = process.argv[3] === "true";
    r.round = Number(process.argv[4]); r.loadavg = Number(process.argv[5]);
    console.log(JSON.stringify(r));' "$size" "$name" "$match" "$round" "$load" >>"$results"
  echo "  $name: $line" >&2
}

for size in "${sizes[@]}"; do
  node "$here/gen_workload.js" --files "$size" --ops "$ops" --seed "$seed" --out "$work/w$size" >&2
done
for ((round = 0; round < rounds; round++)); do
  for size in "${sizes[@]}"; do
    w=$work/w$size
    echo "== round $round: $size files, $ops ops" >&2
    mkdir -p "$work/sdk$size"
    record "$size" sdk-fs "$work/sdk$size.dump" \
      node "$here/sdk_replay.js" --workload "$w" --base "$work/sdk$size" --dump "$work/sdk$size.dump"
    rm -rf "$work/sdk$size"
    for d in normal full; do
      record "$size" "areev-cpp-$d" "$work/areev-$d-$size.dump" \
        "$replay" --workload "$w" --dir "$work" --durability "$d" --dump "$work/areev-$d-$size.dump"
    done
    if [[ -n ${AREEV_NODE_ADDON:-} ]]; then
      for d in normal full; do
        db=$work/node-$d-$size.db
        line=$(node "$here/node_binding_replay.js" --binding "$here/../../bindings/node" \
          --workload "$w" --dir "$work" --durability "$d" --db "$db")
        "$replay" --dump-db "$db" --dump "$work/areev-node-$d-$size.dump"
        rm -f "$db" "$db-wal" "$db-shm"
        record "$size" "areev-node-$d" "$work/areev-node-$d-$size.dump" echo "$line"
      done
    fi
  done
done

node "$here/report.js" "$results"

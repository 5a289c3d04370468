#!/usr/bin/env node
// Replays a generated workload through areev's Node binding (@areev/areev,
// bindings/node): one `await areev.memoryTool(jsonText)` after another, in one
// process, like sdk_replay.js does for the SDK backend.
//
//   AREEV_NODE_ADDON=.../areev.node node node_binding_replay.js --binding BINDINGS_NODE_DIR
//       --workload DIR --dir SCRATCH --durability normal|full [--db FILE]
//
// Prints one JSON line. The store file is left at --db (default
// SCRATCH/node-<durability>.db) so the run script can dump and check it.
'use strict';

const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');

function parseArgs(argv) {
  const args = { binding: null, workload: null, dir: '.', durability: 'normal', db: null };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  if (!args.binding || !args.workload) throw new Error('--binding and --workload are required');
  if (!args.db) args.db = path.join(args.dir, `node-${args.durability}.db`);
  return args;
}

function readLines(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0);
}

async function replay(areev, cmds, errors) {
  for (const cmd of cmds) {
    try {
      await areev.memoryTool(cmd);
    } catch (err) {
      errors.count++;
      if (errors.samples.length < 5) errors.samples.push(err.message);
    }
  }
}

async function main() {
  const args = parseArgs(process.argv);
  const { Areev } = require(path.resolve(args.binding));
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(args.db + suffix, { force: true });
  const areev = new Areev(args.db, 'bench', { durable: args.durability === 'full' });
  const setup = readLines(path.join(args.workload, 'setup.jsonl'));
  const ops = readLines(path.join(args.workload, 'ops.jsonl'));
  const setupErrors = { count: 0, samples: [] };
  await replay(areev, setup, setupErrors);
  const errors = { count: 0, samples: [] };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await replay(areev, ops, errors);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  areev.close();
  console.log(JSON.stringify({
    backend: 'areev-node', durability: args.durability, db: args.db, ops: ops.length, seconds,
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
    ops_per_sec: ops.length / seconds, errors: errors.count, setup_errors: setupErrors.count,
    error_samples: errors.samples.concat(setupErrors.samples),
  }));
}

main().catch((err) => { console.error(err); process.exit(1); });

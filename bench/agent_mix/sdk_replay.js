#!/usr/bin/env node
// Replays a generated workload on the SDK's local-filesystem memory tool
// (@anthropic-ai/sdk, tools/memory/node: BetaLocalFilesystemMemoryTool), in
// one process, one command at a time (each awaited before the next).
//
//   node sdk_replay.js --workload DIR --base EMPTY_DIR [--dump FILE]
//
// Prints one JSON line: {"backend":"sdk-fs",...,"ops_per_sec":...}.
// Commands are parsed from JSON before the clock starts (the SDK receives
// parsed objects); setup.jsonl is replayed untimed first.
'use strict';

const fs = require('fs');
const path = require('path');
const { performance } = require('perf_hooks');
const { BetaLocalFilesystemMemoryTool } = require('@anthropic-ai/sdk/tools/memory/node');

function parseArgs(argv) {
  const args = { workload: null, base: null, dump: null };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  if (!args.workload || !args.base) throw new Error('--workload and --base are required');
  return args;
}

function readCommands(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
}

async function runOne(tool, cmd) {
  switch (cmd.command) {
    case 'view': return tool.view(cmd);
    case 'create': return tool.create(cmd);
    case 'str_replace': return tool.str_replace(cmd);
    case 'insert': return tool.insert(cmd);
    case 'delete': return tool.delete(cmd);
    case 'rename': return tool.rename(cmd);
    default: throw new Error(`${cmd.command} not implemented`);
  }
}

// Runs `cmds` in order; with `labels`, adds each command's time to
// byLabel[label] for the per-command breakdown.
async function replay(tool, cmds, errors, labels = null, byLabel = {}) {
  for (let i = 0; i < cmds.length; i++) {
    const c0 = performance.now();
    try {
      await runOne(tool, cmds[i]);
    } catch (err) {
      errors.count++;
      if (errors.samples.length < 5) errors.samples.push(`${cmds[i].command}: ${err.message}`);
    }
    if (labels) {
      const slot = byLabel[labels[i]] || (byLabel[labels[i]] = { n: 0, seconds: 0 });
      slot.n++;
      slot.seconds += (performance.now() - c0) / 1000;
    }
  }
}

// Same canonical dump as gen_workload.js, read back from the directory tree.
function dumpTree(root) {
  const entries = [];
  const walk = (dir, key) => {
    entries.push([key, Buffer.from(`D ${key}\n`)]);
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const full = path.join(dir, name);
      const k = `${key}/${name}`;
      const st = fs.statSync(full);
      if (st.isDirectory()) {
        walk(full, k);
      } else {
        const body = fs.readFileSync(full);
        entries.push([k, Buffer.concat([Buffer.from(`F ${k} ${body.length}\n`), body, Buffer.from('\n')])]);
      }
    }
  };
  walk(root, '/memories');
  entries.sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])));
  return Buffer.concat(entries.map((e) => e[1]));
}

async function main() {
  const args = parseArgs(process.argv);
  const setup = readCommands(path.join(args.workload, 'setup.jsonl'));
  const ops = readCommands(path.join(args.workload, 'ops.jsonl'));
  const tool = await BetaLocalFilesystemMemoryTool.init(args.base);
  const setupErrors = { count: 0, samples: [] };
  await replay(tool, setup, setupErrors);
  const labelsFile = path.join(args.workload, 'ops.labels');
  const labels = fs.existsSync(labelsFile) ? fs.readFileSync(labelsFile, 'utf8').split('\n').filter(Boolean) : null;
  const byLabel = {};
  const errors = { count: 0, samples: [] };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await replay(tool, ops, errors, labels, byLabel);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);  // all threads, libuv's fs pool included
  if (args.dump) fs.writeFileSync(args.dump, dumpTree(path.join(args.base, 'memories')));
  console.log(JSON.stringify({
    backend: 'sdk-fs', ops: ops.length, seconds, cpu_seconds: (cpu.user + cpu.system) / 1e6, ops_per_sec: ops.length / seconds,
    errors: errors.count, setup_errors: setupErrors.count, error_samples: errors.samples.concat(setupErrors.samples),
    by_command: byLabel,
  }));
}

main().catch((err) => { console.error(err); process.exit(1); });

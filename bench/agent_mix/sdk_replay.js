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

async function replay(tool, cmds, errors) {
  for (const cmd of cmds) {
    try {
      await runOne(tool, cmd);
    } catch (err) {
      errors.count++;
      if (errors.samples.length < 5) errors.samples.push(`${cmd.command}: ${err.message}`);
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
  const errors = { count: 0, samples: [] };
  const t0 = performance.now();
  await replay(tool, ops, errors);
  const seconds = (performance.now() - t0) / 1000;
  if (args.dump) fs.writeFileSync(args.dump, dumpTree(path.join(args.base, 'memories')));
  console.log(JSON.stringify({
    backend: 'sdk-fs', ops: ops.length, seconds, ops_per_sec: ops.length / seconds,
    errors: errors.count, setup_errors: setupErrors.count, error_samples: errors.samples.concat(setupErrors.samples),
  }));
}

main().catch((err) => { console.error(err); process.exit(1); });

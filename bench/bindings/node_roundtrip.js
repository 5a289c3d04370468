#!/usr/bin/env node
// Node binding round trip: the median time of one `await areev.memoryTool(json)`
// against the same command through MemoryTool::Execute in C++ (exec_timer) on
// the same store file, and read throughput with 1..32 concurrent promises.
//
//   AREEV_NODE_ADDON=.../areev.node node bench/bindings/node_roundtrip.js \
//       --binding bindings/node --exec-timer BUILD/bench/exec_timer --dir SCRATCH
//
// Prints markdown tables. Goals: round trip <= 50 us median; throughput
// grows with concurrency (the machine has 2 cores, so at most ~2x).
'use strict';

const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function parseArgs(argv) {
  const args = { binding: null, 'exec-timer': null, dir: null, iterations: '20000' };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  if (!args.binding || !args['exec-timer'] || !args.dir) throw new Error('missing option');
  return args;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

async function buildStore(Areev, db) {
  const m = new Areev(db, 'bench');
  let small = '';
  for (let j = 0; j < 20; j++) small += `- line ${j}: user prefers concise answers\n`;
  await m.memoryTool(JSON.stringify({ command: 'create', path: '/memories/small.md', file_text: small }));
  for (let i = 0; i < 10; i++) {
    await m.memoryTool(JSON.stringify({ command: 'create', path: `/memories/dir/f${i}.md`, file_text: small }));
  }
  m.close();
}

async function timeSequential(Areev, db, cmd, n) {
  const m = new Areev(db, 'bench');
  const samples = [];
  for (let i = 0; i < n + 1000; i++) {
    const t0 = process.hrtime.bigint();
    await m.memoryTool(cmd);
    const t1 = process.hrtime.bigint();
    if (i >= 1000) samples.push(Number(t1 - t0));
  }
  m.close();
  return median(samples);
}

async function throughput(Areev, db, cmd, concurrency, total) {
  const m = new Areev(db, 'bench');
  let left = total;
  const worker = async () => {
    while (left > 0) {
      left--;
      await m.memoryTool(cmd);
    }
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  m.close();
  return total / secs;
}

function timeCpp(timer, db, cmd, n) {
  const out = execFileSync(timer, ['--db', db, '--ns', 'bench', '--cmd', cmd, '--iterations', String(n)]);
  return JSON.parse(out.toString()).median_ns;
}

async function main() {
  const args = parseArgs(process.argv);
  const { Areev } = require(path.resolve(args.binding));
  fs.mkdirSync(args.dir, { recursive: true });
  const db = path.join(args.dir, 'node-roundtrip.db');
  for (const s of ['', '-wal', '-shm']) fs.rmSync(db + s, { force: true });
  await buildStore(Areev, db);
  const n = Number(args.iterations);
  const cases = [
    ['view small file (20 lines)', { command: 'view', path: '/memories/small.md' }],
    ['view directory (10 files)', { command: 'view', path: '/memories/dir' }],
  ];
  console.log(`node ${process.version}, ${n} sequential awaited calls per round, 3 rounds`);
  console.log('| call | Node round trip | C++ Execute | added | goal (added) | result |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, obj] of cases) {
    const cmd = JSON.stringify(obj);
    const js = [], cpp = [];
    for (let r = 0; r < 3; r++) {
      js.push(await timeSequential(Areev, db, cmd, n));
      cpp.push(timeCpp(args['exec-timer'], db, cmd, n));
    }
    const j = median(js), c = median(cpp);
    console.log(`| ${name} | ${(j / 1e3).toFixed(2)} us | ${(c / 1e3).toFixed(2)} us | ` +
      `${((j - c) / 1e3).toFixed(2)} us | <= 50 us | ${j - c <= 50e3 ? 'met' : 'NOT met'} |`);
  }
  const cmd = JSON.stringify(cases[0][1]);
  console.log('\n| concurrent promises | view small file, calls/s (best of 3) | x 1 promise |');
  console.log('|---|---|---|');
  // Three interleaved rounds over the levels; each level keeps its best round.
  const levels = [1, 2, 4, 8, 16, 32];
  const bestRate = new Map();
  for (let r = 0; r < 3; r++) {
    for (const c of levels) {
      const rate = await throughput(Areev, db, cmd, c, 2 * n);
      bestRate.set(c, Math.max(bestRate.get(c) || 0, rate));
    }
  }
  for (const c of levels) {
    console.log(`| ${c} | ${bestRate.get(c).toFixed(0)} | ${(bestRate.get(c) / bestRate.get(1)).toFixed(2)} |`);
  }
}

main().catch((err) => { console.error(err); process.exit(1); });

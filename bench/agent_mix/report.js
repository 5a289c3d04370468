#!/usr/bin/env node
// Prints the agent-mix results (JSON lines from run_agent_mix.sh) as markdown:
// per size and backend, the fastest round, its throughput ratio against the
// SDK backend (fastest SDK round of the same size), the CPU-time ratio, the
// errors and whether the final tree matched; then mean time per command type.
'use strict';

const fs = require('fs');

const all = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const goals = { normal: 20, full: 5 };

// Fastest round per (files, name); errors and state checks over all rounds.
const best = new Map();
for (const r of all) {
  const k = `${r.files}|${r.name}`;
  const b = best.get(k);
  const agg = b ? b : { rounds: 0, errors: 0, setup_errors: 0, all_match: true, runs: [] };
  agg.rounds++;
  agg.errors += r.errors;
  agg.setup_errors += r.setup_errors;
  agg.all_match = agg.all_match && r.state_matches;
  agg.runs.push(r);
  if (!agg.best || r.seconds < agg.best.seconds) agg.best = r;
  best.set(k, agg);
}

console.log('| files | backend | rounds | best s (all rounds) | ops/s | x SDK (wall) | CPU s | x SDK (CPU) | goal (wall) | errors (setup) | final tree = expected |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const agg of best.values()) {
  const r = agg.best;
  const sdk = best.get(`${r.files}|sdk-fs`);
  const ratio = sdk ? sdk.best.seconds / r.seconds : NaN;
  const cpuRatio = sdk ? sdk.best.cpu_seconds / r.cpu_seconds : NaN;
  const durability = r.name.endsWith('-full') ? 'full' : r.name.endsWith('-normal') ? 'normal' : null;
  const goal = durability ? `>= ${goals[durability]}x: ${ratio >= goals[durability] ? 'met' : 'NOT met'}` : '';
  const rounds = agg.runs.map((x) => x.seconds.toFixed(1)).join(' / ');
  const isSdk = r.name === 'sdk-fs';
  console.log(`| ${r.files} | ${r.name} | ${agg.rounds} | ${r.seconds.toFixed(2)} (${rounds}) | ` +
    `${r.ops_per_sec.toFixed(0)} | ${isSdk ? '1' : ratio.toFixed(1)} | ${r.cpu_seconds.toFixed(2)} | ` +
    `${isSdk ? '1' : cpuRatio.toFixed(1)} | ${goal} | ${agg.errors} (${agg.setup_errors}) | ` +
    `${agg.all_match ? 'yes' : 'NO'} |`);
}

const labels = ['view_dir', 'view_file', 'str_replace', 'create', 'insert', 'rename', 'delete'];
console.log('\nMean time per command (fastest round), microseconds:\n');
console.log(`| files | backend | ${labels.join(' | ')} |`);
console.log(`|---|---|${labels.map(() => '---').join('|')}|`);
for (const agg of best.values()) {
  const r = agg.best;
  if (!r.by_command) continue;
  const cells = labels.map((l) => {
    const c = r.by_command[l];
    return c ? (c.seconds / c.n * 1e6).toFixed(0) : '-';
  });
  console.log(`| ${r.files} | ${r.name} | ${cells.join(' | ')} |`);
}

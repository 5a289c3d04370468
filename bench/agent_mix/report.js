#!/usr/bin/env node
// Prints the agent-mix results (JSON lines from run_agent_mix.sh) as a
// markdown table with throughput ratios against the SDK backend of the same
// size and run.
'use strict';

const fs = require('fs');

const rows = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const goals = { normal: 20, full: 5 };

console.log('| files | backend | ops | seconds | ops/s | x SDK | goal | errors (setup) | final tree = expected |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const sdk = rows.find((x) => x.files === r.files && x.name === 'sdk-fs');
  const ratio = sdk ? r.ops_per_sec / sdk.ops_per_sec : NaN;
  const durability = r.name.endsWith('-full') ? 'full' : r.name.endsWith('-normal') ? 'normal' : null;
  let goal = '';
  if (durability) goal = `>= ${goals[durability]}x: ${ratio >= goals[durability] ? 'met' : 'NOT met'}`;
  console.log(`| ${r.files} | ${r.name} | ${r.ops} | ${r.seconds.toFixed(2)} | ${r.ops_per_sec.toFixed(0)} | ` +
    `${r.name === 'sdk-fs' ? '1' : ratio.toFixed(1)} | ${goal} | ${r.errors} (${r.setup_errors}) | ` +
    `${r.state_matches ? 'yes' : 'NO'} |`);
}

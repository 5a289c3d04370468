'use strict';
// The conformance vectors through Areev#memoryTool: resolved content on
// success, `Error: ${err.message}` on rejection, byte-for-byte.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Areev, tmpDb, loadCases, runStep } = require('./helpers.js');

const cases = loadCases();

test('vector files are present', () => {
  assert.ok(cases.length >= 79, `only ${cases.length} cases`);
  // The exact-text inputs parse back to the same values.
  for (const c of cases) for (const s of c.steps) assert.deepEqual(JSON.parse(s.json), s.input);
});

for (const c of cases) {
  test(`${c.file}: ${c.name}`, async () => {
    const m = new Areev(tmpDb(), 'vectors');
    try {
      for (const [i, step] of c.steps.entries()) {
        const got = await runStep(m, step.json);
        assert.deepEqual(got, [step.output, step.is_error], `step ${i}`);
      }
    } finally {
      m.close();
    }
  });
}

'use strict';
// Areev#memoryToolHandlers() plugged into @anthropic-ai/sdk's own tool runner:
// betaMemoryTool(handlers) + client.beta.messages.toolRunner(...), with the
// HTTP layer replaced by a scripted `fetch` that replays realistic assistant
// turns and records the tool_result blocks the runner sends back. Those must
// equal what `areev memtool` returns for the same commands.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Areev, tmpDb, areevBin, cliBatch, runStep } = require('./helpers.js');

let Anthropic;
let betaMemoryTool;
try {
  Anthropic = require('@anthropic-ai/sdk').Anthropic;
  ({ betaMemoryTool } = require('@anthropic-ai/sdk/helpers/beta/memory'));
} catch (e) {
  Anthropic = null;
}
const skip = Anthropic ? false : '@anthropic-ai/sdk is not installed (npm install in tests/node)';

// One assistant turn per entry: the tool_use inputs the model "sends".
const TURNS = [
  [{ command: 'view', path: '/memories' }],
  [{ command: 'create', path: '/memories/user/prefs.md', file_text: '# Preferences\n- vegetarian\n' }],
  [{ command: 'view', path: '/memories/user/prefs.md' }],
  [{ command: 'str_replace', path: '/memories/user/prefs.md', old_str: 'vegan', new_str: 'x' }],
  [{ command: 'str_replace', path: '/memories/user/prefs.md', old_str: '- vegetarian', new_str: '- vegetarian (no fish)' }],
  [{ command: 'insert', path: '/memories/user/prefs.md', insert_line: 1, insert_text: '- likes tea\n' }],
  [{ command: 'view', path: '/memories/user/prefs.md', view_range: [2, -1] }],
  [{ command: 'insert', path: '/memories/user/prefs.md', insert_line: 99, insert_text: 'x' }],
  [{ command: 'create', path: '/memories/user/prefs.md/child', file_text: 'x' }],
  [{ command: 'rename', old_path: '/memories/user/prefs.md', new_path: '/memories/profile.md' }],
  [{ command: 'view', path: '/memories/user/prefs.md' }],
  [{ command: 'view', path: '/memories/../../etc/passwd' }],
  [{ command: 'delete', path: '/memories' }],
  [{ command: 'create', path: '/memories/scratch.txt' }],
  [{ command: 'forget_everything', path: '/memories' }],
  [{ command: 'delete', path: '/memories/user' }],
  [{ command: 'view', path: '/memories/' }],
  // Several tool_use blocks in one turn (the runner runs them concurrently).
  [
    { command: 'create', path: '/memories/a.md', file_text: 'a' },
    { command: 'create', path: '/memories/b.md', file_text: 'b' },
    { command: 'view', path: '/memories/missing.md' },
  ],
  // Issue: the runner starts a turn's calls together, and they ran in any
  // order; commands that build on each other now run in the order written.
  [
    { command: 'create', path: '/memories/turn.md', file_text: 'one\n' },
    { command: 'str_replace', path: '/memories/turn.md', old_str: 'one', new_str: 'two' },
    { command: 'insert', path: '/memories/turn.md', insert_line: 1, insert_text: 'three\n' },
    { command: 'view', path: '/memories/turn.md' },
    { command: 'rename', old_path: '/memories/turn.md', new_path: '/memories/turned.md' },
    { command: 'view', path: '/memories/turned.md' },
    { command: 'delete', path: '/memories/turned.md' },
    { command: 'view', path: '/memories/turned.md' },
  ],
];

function scriptedFetch(turns, seen) {
  let call = 0;
  return async (_url, init) => {
    const body = JSON.parse(init.body);
    const last = body.messages[body.messages.length - 1];
    if (Array.isArray(last.content)) {
      const results = last.content.filter((b) => b.type === 'tool_result');
      if (results.length) seen.push(results);
    }
    const turn = turns[call];
    const content = turn
      ? turn.map((input, i) => ({ type: 'tool_use', id: `toolu_${call}_${i}`, name: 'memory', input }))
      : [{ type: 'text', text: 'Noted.' }];
    call += 1;
    const message = {
      id: `msg_${call}`, type: 'message', role: 'assistant', model: body.model, content,
      stop_reason: turn ? 'tool_use' : 'end_turn', stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 10 },
    };
    return new Response(JSON.stringify(message), {
      status: 200, headers: { 'content-type': 'application/json', 'request-id': `req_${call}` },
    });
  };
}

async function expectedResults(inputs) {
  if (areevBin) return cliBatch(tmpDb('cli.db'), 'assistant', inputs);
  const ref = new Areev(tmpDb('ref.db'), 'assistant');
  try {
    const out = [];
    for (const i of inputs) out.push(await runStep(ref, i));
    return out;
  } finally {
    ref.close();
  }
}

test('the SDK exports betaMemoryTool and the handlers cover its commands', { skip }, () => {
  const m = new Areev(tmpDb(), 'assistant');
  const handlers = m.memoryToolHandlers();
  for (const name of ['view', 'create', 'str_replace', 'insert', 'delete', 'rename']) {
    assert.equal(typeof handlers[name], 'function', name);
  }
  const tool = betaMemoryTool(handlers);
  assert.equal(tool.type, 'memory_20250818');
  assert.equal(tool.name, 'memory');
  m.close();
});

// Issue: with a plain object's prototype, a model command named after one of
// its methods (toString, constructor, hasOwnProperty, ...) reached that method
// and came back as a bogus success ("[object Object]", false, the input).
test('a command named after an object method is an unknown command, not a result', { skip },
  async () => {
    const m = new Areev(tmpDb(), 'assistant');
    const tool = betaMemoryTool(m.memoryToolHandlers());
    for (const command of ['copy', 'toString', 'toLocaleString', 'valueOf', 'constructor',
      'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable', '__lookupGetter__',
      '__defineGetter__']) {
      await assert.rejects(tool.run({ command, path: '/memories/a.md' }),
        { message: `Unknown command: ${command}` }, command);
    }
    m.close();
  });

test('tool runner results equal areev memtool for the same commands', { skip }, async () => {
  const m = new Areev(tmpDb(), 'assistant');
  const seen = [];
  const client = new Anthropic({ apiKey: 'sk-test', fetch: scriptedFetch(TURNS, seen), maxRetries: 0 });
  const runner = client.beta.messages.toolRunner({
    model: 'claude-sonnet-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: "Remember: I'm vegetarian." }],
    tools: [betaMemoryTool(m.memoryToolHandlers())],
  });
  const final = await runner.runUntilDone();
  assert.equal(final.content[0].text, 'Noted.');
  assert.equal(seen.length, TURNS.length);

  const flat = TURNS.flat();
  const want = await expectedResults(flat);
  const got = seen.flat().map((r) => [typeof r.content === 'string' ? r.content : JSON.stringify(r.content),
    r.is_error === true]);
  // The concurrent last turn may finish in any order but answers by tool_use_id.
  const ids = seen.flat().map((r) => r.tool_use_id);
  const wantIds = TURNS.flatMap((t, ti) => t.map((_, i) => `toolu_${ti}_${i}`));
  assert.deepEqual(ids, wantIds);
  assert.deepEqual(got, want);
  // Spot-check a few: errors come back as `Error: <message>` with is_error.
  assert.deepEqual(got[3], ['Error: No replacement was performed, old_str `vegan` did not appear verbatim in /memories/user/prefs.md.', true]);
  assert.deepEqual(got[14], ['Error: Unknown command: forget_everything', true]);
  assert.equal(await m.read('/memories/profile.md'), '# Preferences\n- likes tea\n- vegetarian (no fish)\n');
  m.close();
});

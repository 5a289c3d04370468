'use strict';
// Areev's API beyond memoryTool: typed errors, history/read, close, and many
// concurrent promises on one handle.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Areev, codes, tmpDb, areevBin, ROOT } = require('./helpers.js');
const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const J = JSON.stringify;

test('memoryTool resolves content and rejects with Error(bare message)', async () => {
  const m = new Areev(tmpDb(), 'assistant');
  assert.equal(await m.memoryTool(J({ command: 'create', path: '/memories/p.md', file_text: 'x' })),
    'File created successfully at: /memories/p.md');
  await assert.rejects(m.memoryTool(J({ command: 'view', path: '/memories/nope' })), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.message, 'The path /memories/nope does not exist. Please provide a valid path.');
    assert.equal(e.code, codes.TOOL);
    return true;
  });
  m.close();
});

// Issue: a store failure's own reason (which areev memtool writes to stderr)
// was dropped: the rejection said only `Storage operation failed ... (IOError)`.
test('a store failure carries the store\'s own message in err.detail', async () => {
  const db = tmpDb();
  const m = new Areev(db);
  await m.memoryTool(J({ command: 'create', path: '/memories/a.md', file_text: 'a' }));
  const err = await m.memoryTool(J({ command: 'view', path: '/memories/nope' })).then(() => null,
    (e) => e);
  assert.ok(err && !('detail' in err), 'a tool error has no detail');
  fs.unlinkSync(db);
  await new Promise((resolve) => setTimeout(resolve, 300));  // past the store's 100 ms look
  const failed = await m.memoryTool(J({ command: 'create', path: '/memories/b.md', file_text: 'b' }))
    .then(() => null, (e) => e);
  assert.ok(failed, 'a write to a deleted store file was taken');
  assert.equal(failed.code, codes.TOOL);
  assert.equal(failed.message, 'Storage operation failed for /memories/b.md (IOError)');
  assert.equal(failed.detail, `the store file ${db} was deleted or replaced after this process ` +
    'opened it; nothing more is written to the file it had open (open the store again)');
  m.close();
});

test('malformed JSON rejects with the same message areev memtool prints', async (t) => {
  const m = new Areev(tmpDb(), 'assistant');
  for (const bad of ['{bad', '[]', 'null', '{"command": 1}', '']) {
    const err = await m.memoryTool(bad).then(() => null, (e) => e);
    assert.ok(err instanceof Error && err.message.length > 0, `no error for ${J(bad)}`);
    assert.equal(err.code, codes.TOOL);
    if (areevBin && bad) {
      const r = spawnSync(areevBin, ['memtool', bad, '--db', tmpDb('cli.db')], { encoding: 'utf8' });
      assert.equal(r.stdout, `Error: ${err.message}`);
    }
  }
  if (!areevBin) t.diagnostic('areev CLI not built: messages not compared');
  m.close();
});

test('non-string input rejects with TypeError (a promise, never a throw)', async () => {
  const m = new Areev(tmpDb());
  for (const bad of [undefined, null, 1, { command: 'view', path: '/memories' }, Buffer.from('{}')]) {
    const p = m.memoryTool(bad);
    assert.ok(p instanceof Promise);
    await assert.rejects(p, TypeError);
  }
  await assert.rejects(m.history(42), TypeError);
  await assert.rejects(m.read('/memories/x', {}), TypeError);
  m.close();
});

test('constructor validates its arguments', () => {
  const db = tmpDb();
  assert.throws(() => new Areev(42), TypeError);
  assert.throws(() => new Areev(db, 7), TypeError);
  for (const ns of ['', 'a b', '../x', 'x'.repeat(65), 'ns/1']) {
    assert.throws(() => new Areev(db, ns), (e) => e.code === codes.INVALID);
  }
  assert.throws(() => new Areev('/nonexistent-dir/x/agent.db'), (e) => e.code === codes.STORE);
  const m = new Areev(new URL(`file://${db}`), 'default', { durable: true });
  m.close();
});

// Issue: `durable` went through Boolean(), so { durable: 'false' } turned it
// on, and a third argument `true` (not an object) left it off, both silently.
test('the constructor refuses options it cannot read as asked', () => {
  const db = tmpDb();
  for (const options of [true, 'durable', 1]) {
    assert.throws(() => new Areev(db, 'n', options), (e) => e instanceof TypeError &&
      e.code === 'ERR_INVALID_ARG_TYPE' &&
      e.message === 'options must be an object, such as { durable: true }');
  }
  for (const durable of ['false', 0, 1, null]) {
    assert.throws(() => new Areev(db, 'n', { durable }), (e) => e instanceof TypeError &&
      e.code === 'ERR_INVALID_ARG_TYPE' && e.message === 'options.durable must be a boolean');
  }
  assert.ok(!fs.existsSync(db), 'refused before the store is opened');
  for (const options of [undefined, null, {}, { durable: false }, { durable: true }]) {
    new Areev(db, 'n', options).close();
  }
  assert.ok(fs.existsSync(db));
});

test('history and read expose every version', async () => {
  const m = new Areev(tmpDb(), 'assistant');
  await m.memoryTool(J({ command: 'create', path: '/memories/prefs.md', file_text: 'tea\n' }));
  await m.memoryTool(J({ command: 'str_replace', path: '/memories/prefs.md', old_str: 'tea', new_str: 'coffee' }));
  const h = await m.history('/memories/prefs.md');
  assert.deepEqual(h.map((v) => v.version), [1, 2]);
  assert.deepEqual(h.map((v) => v.size), [4, 7]);
  assert.equal(h[0].op, 'create');
  assert.equal(typeof h[0].createdNs, 'bigint');
  assert.ok(h[0].createdNs <= h[1].createdNs);
  assert.match(h[1].created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.equal(h[1].grainId.length, 64);
  assert.deepEqual(h.map((v) => [v.purged, v.chainState]), [[false, 'live'], [false, 'live']]);
  await m.memoryTool(J({ command: 'create', path: '/memories/gone.md', file_text: 'x' }));
  await m.memoryTool(J({ command: 'delete', path: '/memories/gone.md' }));
  assert.deepEqual((await m.history('/memories/gone.md')).map((v) => v.chainState), ['deleted']);
  assert.equal(await m.read('/memories/prefs.md', 1), 'tea\n');
  assert.equal(await m.read('/memories/prefs.md'), 'coffee\n');
  assert.equal(await m.read('/memories/prefs.md', h[0].grainId.slice(0, 8)), 'tea\n');
  await assert.rejects(m.read('/memories/prefs.md', 0), (e) => e.code === codes.INVALID);
  await assert.rejects(m.read('/memories/prefs.md', 7), (e) => e.code === codes.NOT_FOUND);
  await assert.rejects(m.read('/memories/none'), (e) => e.code === codes.NOT_FOUND);
  await assert.rejects(m.history('/etc/passwd'), (e) => e.code === codes.INVALID &&
    e.message === 'Path must start with /memories, got: /etc/passwd');
  m.close();
});

test('close: calls made before it finish, later ones reject with ERR_AREEV_CLOSED', async () => {
  const m = new Areev(tmpDb());
  await m.memoryTool(J({ command: 'create', path: '/memories/a', file_text: 'x' }));
  const inflight = Array.from({ length: 50 }, () => m.memoryTool(J({ command: 'view', path: '/memories/a' })));
  m.close();
  m.close();
  assert.equal(m.closed, true);
  for (const out of await Promise.all(inflight)) assert.match(out, /1\tx$/);
  for (const p of [m.memoryTool('{}'), m.history('/memories/a'), m.read('/memories/a')]) {
    await assert.rejects(p, (e) => e.code === codes.CLOSED && e.message === 'the Areev handle is closed');
  }
});

// Issue: a handler call waiting for its turn when close() came was refused
// (ERR_AREEV_CLOSED), though made before close(): the model got errors for
// commands it sent before the handle was closed.
test('close: handler calls made before it finish in order, later ones reject', async () => {
  const db = tmpDb();
  const m = new Areev(db);
  const h = m.memoryToolHandlers();
  const made = [
    h.create({ command: 'create', path: '/memories/a.md', file_text: 'one\n' }),
    h.str_replace({ command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'two' }),
    h.view({ command: 'view', path: '/memories/a.md' }),
  ];
  m.close();
  assert.equal(m.closed, true);
  const later = [h.view({ command: 'view', path: '/memories/a.md' }), m.memoryTool('{}'),
    m.read('/memories/a.md'), m.history('/memories/a.md'), m.readBytes('/memories/a.md')];
  const settledLater = Promise.allSettled(later);
  const got = await Promise.all(made);
  assert.equal(got[2], "Here's the content of /memories/a.md with line numbers:\n     1\ttwo\n     2\t");
  for (const r of await settledLater) {
    assert.equal(r.status, 'rejected');
    assert.equal(r.reason.code, codes.CLOSED);
    assert.equal(r.reason.message, 'the Areev handle is closed');
  }
  // The store was closed after them: another handle reads both versions.
  const again = new Areev(db);
  assert.deepEqual((await again.history('/memories/a.md')).map((v) => v.version), [1, 2]);
  again.close();
});

test('many concurrent promises on one handle lose no write', async () => {
  const m = new Areev(tmpDb(), 'assistant');
  await m.memoryTool(J({ command: 'create', path: '/memories/log.md', file_text: '' }));
  const N = 200;
  const ops = [];
  for (let i = 0; i < N; i++) {
    ops.push(m.memoryTool(J({ command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: `line ${i}` })));
    ops.push(m.memoryTool(J({ command: 'create', path: `/memories/f/${i}.md`, file_text: String(i) })));
    if (i % 10 === 0) ops.push(m.history('/memories/log.md'), m.read('/memories/log.md'));
  }
  const results = await Promise.all(ops);
  assert.equal(results.length, ops.length);
  const lines = (await m.read('/memories/log.md')).trimEnd().split('\n').sort();
  assert.deepEqual(lines, Array.from({ length: N }, (_, i) => `line ${i}`).sort());
  assert.equal((await m.history('/memories/log.md')).length, N + 1);
  const files = await Promise.all(Array.from({ length: N }, (_, i) => m.read(`/memories/f/${i}.md`)));
  assert.deepEqual(files, Array.from({ length: N }, (_, i) => String(i)));
  m.close();
});

test('memoryToolHandlers forward every command string to the backend', async () => {
  const m = new Areev(tmpDb());
  const h = m.memoryToolHandlers();
  assert.equal(await h.create({ command: 'create', path: '/memories/x', file_text: 'y' }),
    'File created successfully at: /memories/x');
  await assert.rejects(h.launch({ command: 'launch' }), { message: 'Unknown command: launch' });
  assert.equal(h.then, undefined); // not mistaken for a thenable
  m.close();
});

// Issue: the SDK's runner starts one turn's calls together, and commands
// that build on each other ran in any order (a view before the create).
test('memoryToolHandlers run the calls made together in the order they were made', async () => {
  const m = new Areev(tmpDb());
  for (let round = 0; round < 20; round += 1) {
    const h = m.memoryToolHandlers();
    const p = `/memories/r${round}.md`;
    const calls = [
      h.create({ command: 'create', path: p, file_text: 'hello\n' }),
      h.str_replace({ command: 'str_replace', path: p, old_str: 'hello', new_str: 'bye' }),
      h.view({ command: 'view', path: p }),
      h.delete({ command: 'delete', path: p }),
      h.view({ command: 'view', path: p }),
    ];
    const got = await Promise.allSettled(calls);
    assert.deepEqual(got.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled',
      'fulfilled', 'rejected'], `round ${round}`);
    assert.equal(got[2].value,
      `Here's the content of ${p} with line numbers:\n     1\tbye\n     2\t`);
    assert.match(got[4].reason.message, /does not exist/);
  }
  m.close();
});

// Issue: `'' + handlers` answered toString/valueOf with a command runner, whose
// rejected promise nobody handled, and that ended the process. Run in a process
// of its own so such a crash shows as an exit code, not as this runner's failure.
test('memoryToolHandlers converts, prints, serialises and awaits as a plain object', () => {
  const script = `
    const util = require('node:util');
    const { Areev } = require(${J(path.join(ROOT, 'bindings', 'node'))});
    const m = new Areev(process.argv[1]);
    const h = m.memoryToolHandlers();
    (async () => {
      const seen = ['' + h, String(h), \`\${h}\`, h.toString(), JSON.stringify(h),
        util.inspect(h).includes('str_replace'), (await h) === h, h[Symbol.toPrimitive],
        h.valueOf() === h && h.toString === h.toString, Object.getPrototypeOf(h) === Object.prototype, h.inspect, h.toJSON, Object.keys(h).join()];
      console.log(JSON.stringify(seen));
      setTimeout(() => m.close(), 100);  // a stray rejection would end the process first
    })();`;
  const run = spawnSync(process.execPath, ['-e', script, tmpDb()], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), ['[object Object]', '[object Object]', '[object Object]',
    '[object Object]', '{}', true, true, null, true, true, null, null,
    'view,create,str_replace,insert,delete,rename']);
});

// Issue: handles dropped without close() kept their descriptors until V8
// happened to collect them, which a loop of opens never prompted: the
// 1,000th open failed with EMFILE.
test('handles dropped without close() are collected before descriptors run out', () => {
  const script = `
    const { Areev } = require(${J(path.join(ROOT, 'bindings', 'node'))});
    (async () => {
      for (let i = 0; i < 1500; i += 1) {
        const m = new Areev(process.argv[1]);
        await m.read('/memories/x.md').catch(() => {});
      }
      console.log(require('node:fs').readdirSync('/proc/self/fd').length);
    })();`;
  const run = spawnSync('/bin/sh', ['-c', 'ulimit -n 256 && exec "$0" -e "$1" "$2"',
    process.execPath, script, tmpDb()], { encoding: 'utf8', timeout: 120000 });
  assert.equal(run.status, 0, run.stderr);
  assert.ok(Number(run.stdout) < 200, run.stdout);
});

// Issue: a lone surrogate in a store path made a file Node's fs could not find,
// and in a memory path gave ERR_AREEV_NOT_FOUND with a garbled message.
test('a lone surrogate in a path, namespace or version is an invalid argument', async () => {
  const invalid = (name) => (e) => {
    assert.equal(e.code, codes.INVALID);
    assert.equal(e.message, `${name} must not contain a lone UTF-16 surrogate`);
    return true;
  };
  const dir = path.dirname(tmpDb());
  assert.throws(() => new Areev(path.join(dir, 'agent\ud800.db')), invalid('path'));
  assert.throws(() => new Areev(path.join(dir, 'agent.db'), 'ns\udc00'), invalid('ns'));
  assert.deepEqual(fs.readdirSync(dir), []); // nothing was created
  const paired = path.join(dir, 'agent\ud83d\ude00.db'); // a surrogate pair is one character
  const m = new Areev(paired);
  assert.ok(fs.existsSync(paired));
  await m.memoryTool(J({ command: 'create', path: '/memories/a.md', file_text: 'x' }));
  await assert.rejects(m.read('/memories/\ud800.md'), invalid('path'));
  await assert.rejects(m.history('/memories/\udc00.md'), invalid('path'));
  await assert.rejects(m.read('/memories/a.md', 'abcdef\ud800'), invalid('version'));
  m.close();
});

test('a lone surrogate is refused as invalid UTF-8, never stored as U+FFFD', async () => {
  const m = new Areev(tmpDb());
  for (const text of ['{"command":"create","path":"/memories/a\ud800.md","file_text":"x"}',
    '{"command":"create","path":"/memories/b.md","file_text":"x\udc00y"}']) {
    await assert.rejects(m.memoryTool(text), (e) => {
      assert.equal(e.code, codes.TOOL);
      assert.equal(e.message, 'Input is not valid UTF-8');
      return true;
    });
  }
  // A surrogate pair is one character, and a real U+FFFD is kept as it is.
  await m.memoryTool(J({ command: 'create', path: '/memories/ok.md', file_text: '\ud83d\ude00 \ufffd' }));
  assert.equal(await m.read('/memories/ok.md'), '\ud83d\ude00 \ufffd');
  const listing = await m.memoryTool(J({ command: 'view', path: '/memories' }));
  assert.ok(!listing.includes('a\ufffd.md') && !listing.includes('b.md'), listing);
  m.close();
});

test('a typed version number names a number, never a grain-id prefix of digits', async () => {
  const m = new Areev(tmpDb());
  const p = '/memories/n.md';
  let digits = null;
  for (let i = 1; i <= 400 && digits === null; i++) {
    await m.memoryTool(J({ command: 'create', path: p, file_text: `body ${i}\n` }));
    const head = (await m.history(p)).at(-1);
    const lead = /^\d{6,}/.exec(head.grainId);
    if (lead && Number(lead[0]) > head.version && Number.isSafeInteger(Number(lead[0]))) digits = lead[0];
  }
  assert.ok(digits, 'no grain id began with six digits in 400 versions');
  await assert.rejects(m.read(p, Number(digits)), (e) => {
    assert.equal(e.code, codes.NOT_FOUND);
    assert.equal(e.message, `${p} has no version ${Number(digits)}`);
    return true;
  });
  assert.ok((await m.read(p, digits)).startsWith('body '));  // a string may be a prefix
  // Any safe integer past the versions is NotFound, not an invalid argument.
  await assert.rejects(m.read(p, 2 ** 32), (e) => e.code === codes.NOT_FOUND);
  await assert.rejects(m.read(p, 2 ** 53), (e) => e.code === codes.INVALID);
  m.close();
});

test('an error message over 1 MiB is cut and says how long it was', async () => {
  const m = new Areev(tmpDb());
  // The message quotes old_str: one of 1.2 MB found twice.
  const twice = 'y'.repeat(1200000);
  await m.memoryTool(J({ command: 'create', path: '/memories/nl.md', file_text: `${twice}\n${twice}` }));
  const err = await m.memoryTool(J({ command: 'str_replace', path: '/memories/nl.md',
    old_str: twice, new_str: 'x' })).then(() => null, (e) => e);
  assert.equal(err.code, codes.TOOL);
  const m2 = /^No replacement was performed\. Multiple occurrences of old_str `y+\.\.\. \((\d+) bytes in all\)$/s.exec(err.message);
  assert.ok(m2, err.message.slice(0, 200));
  assert.ok(Number(m2[1]) > 1 << 20 && err.message.length < (1 << 20) + 100);
  m.close();
});

test('every method returns a promise, even called without its object', async () => {
  const m = new Areev(tmpDb());
  const detached = m.memoryTool;
  await assert.rejects(detached('{}'), TypeError);
  const handlers = m.memoryToolHandlers();
  await assert.rejects(handlers.view({ command: 'view', path: 1n }), TypeError);
  const circular = { command: 'view' };
  circular.self = circular;
  await assert.rejects(handlers.view(circular), TypeError);
  m.close();
});

// Issue: close() closed the store on the event loop; after a large write that is
// SQLite's last checkpoint of the whole WAL (140-430 ms for 32 MiB), during which no
// callback, timer or request of the process ran.
test('close() leaves the store\'s last checkpoint to the thread pool', async () => {
  const db = tmpDb();
  const m = new Areev(db);
  await m.memoryTool(J({ command: 'create', path: '/memories/big.md', file_text: 'z'.repeat(64 << 20) }));
  assert.ok(fs.statSync(`${db}-wal`).size > (64 << 20));
  // The close on the pool can be quick (the commit may have checkpointed the
  // WAL already) and finish before the check below: every pool thread is kept
  // busy first. A close on the event loop would still finish first, always.
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const busy = Array.from({ length: threads }, () => new Promise((resolve, reject) => {
    crypto.pbkdf2('p', 's', 300000, 64, 'sha512', (e) => (e ? reject(e) : resolve()));
  }));
  m.close();
  // Closed on the event loop, the store would have deleted its WAL before
  // close() returned.
  assert.equal(fs.existsSync(`${db}-wal`), true);
  await Promise.all(busy);
  assert.equal(m.closed, true);
  await assert.rejects(m.read('/memories/big.md'), (e) => e.code === codes.CLOSED);
  // The store closes on its own: the checkpoint empties the WAL, which goes.
  const deadline = Date.now() + 30000;
  while (fs.existsSync(`${db}-wal`) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(fs.existsSync(`${db}-wal`), false);
  const again = new Areev(db);
  assert.equal((await again.read('/memories/big.md')).length, 64 << 20);
  again.close();
});

'use strict';
// Shared helpers for the Node binding tests (node --test tests/node/).
// AREEV_NODE_ADDON selects the addon to load (set by tests/test_bindings_node.py);
// AREEV_BIN the areev CLI used as the reference.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const { Areev, codes } = require(path.join(ROOT, 'bindings', 'node'));

// A store path in a fresh directory, removed when the process exits (each
// test file runs in a process of its own).
const madeDirs = [];
process.on('exit', () => {
  for (const dir of madeDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tmpDb(name = 'agent.db') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'areev-node-'));
  madeDirs.push(dir);
  return path.join(dir, name);
}

// A number literal that is not a plain safe integer (`1.0`, `2e3`, 2**64-1),
// kept as written: JSON.parse would turn `1.0` into 1 and round big integers,
// losing what the vectors test.
class RawNumber {
  constructor(text) {
    this.text = text;
  }
}

// JSON.parse that keeps non-integer number literals as RawNumber.
function parseKeepingNumbers(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i += 1;
  };
  const value = () => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i += 1;
      const obj = {};
      ws();
      if (text[i] === '}') { i += 1; return obj; }
      for (;;) {
        ws();
        const key = value();
        ws();
        i += 1; // ':'
        obj[key] = value();
        ws();
        if (text[i++] === '}') return obj; // else ','
      }
    }
    if (ch === '[') {
      i += 1;
      const arr = [];
      ws();
      if (text[i] === ']') { i += 1; return arr; }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i++] === ']') return arr;
      }
    }
    const m = /^(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 1 + (ch === '"' ? text.length : 64)));
    if (!m) throw new Error(`bad JSON at ${i}`);
    i += m[0].length;
    if (/^-?\d/.test(m[0]) && (/[.eE]/.test(m[0]) || !Number.isSafeInteger(Number(m[0])))) {
      return new RawNumber(m[0]);
    }
    return JSON.parse(m[0]);
  };
  return value();
}

// JSON.stringify that writes RawNumber literals back as they were.
function stringifyKeepingNumbers(v) {
  if (v instanceof RawNumber) return v.text;
  if (Array.isArray(v)) return `[${v.map(stringifyKeepingNumbers).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${stringifyKeepingNumbers(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

// Every vector case; each step also carries `json`, its input as exact JSON text.
function loadCases() {
  const cases = [];
  for (const f of ['memory-tool-vectors.json', 'extra-vectors.json']) {
    const file = path.join(ROOT, 'tests', 'vectors', f);
    if (!fs.existsSync(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    const plain = JSON.parse(text);
    const raw = parseKeepingNumbers(text);
    plain.forEach((c, ci) => {
      c.steps.forEach((s, si) => { s.json = stringifyKeepingNumbers(raw[ci].steps[si].input); });
      cases.push({ file: f, ...c });
    });
  }
  return cases;
}

// [content, isError] for one command, as the SDK's runner renders a handler result.
async function runStep(m, input) {
  try {
    return [await m.memoryTool(typeof input === 'string' ? input : JSON.stringify(input)), false];
  } catch (e) {
    return [`Error: ${e.message}`, true];
  }
}

const areevBin = process.env.AREEV_BIN && fs.existsSync(process.env.AREEV_BIN) ? process.env.AREEV_BIN : null;

// `areev memtool --batch` over inputs: [[content, isError], ...].
function cliBatch(db, ns, inputs) {
  const stdin = inputs.map((i) => JSON.stringify(i) + '\n').join('');
  const r = spawnSync(areevBin, ['memtool', '--batch', '--db', db, '--ns', ns], { input: stdin, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`areev memtool --batch failed: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l).map((l) => {
    const o = JSON.parse(l);
    return [o.content, o.is_error === true];
  });
}

module.exports = { ROOT, Areev, codes, tmpDb, loadCases, runStep, areevBin, cliBatch };

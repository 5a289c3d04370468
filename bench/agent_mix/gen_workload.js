#!/usr/bin/env node
// Generates one agent-session workload for the memory tool, deterministically
// from a seed, so every backend replays exactly the same commands.
//
//   node gen_workload.js --files 1000 --ops 10000 --seed 42 --out DIR
//
// Writes to DIR:
//   setup.jsonl     one `create` per initial file (untimed preload)
//   ops.jsonl       the timed mix: 30% directory views, 30% file views,
//                   20% str_replace, 10% create, 8% insert, 1% rename,
//                   1% delete
//   expected.dump   the tree every correct backend must hold afterwards
//                   (see dump_format below)
//   ops.labels      one label per line of ops.jsonl (view_dir, view_file,
//                   str_replace, ...) for per-command breakdowns
//   meta.json       counts per command
//
// Every command is valid on both the SDK's local-filesystem backend and
// areev: the generator simulates the tree and only emits commands that
// succeed under both rule sets (new paths for create and rename targets,
// old_str that occurs exactly once and on one line, files that always end
// with "\n" so both insert rules agree, insert_line within [0, lines]).
'use strict';

const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const args = { files: 1000, ops: 10000, seed: 42, out: 'workload' };
  for (let i = 2; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in args)) throw new Error(`unknown option ${argv[i]}`);
    args[key] = key === 'out' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return args;
}

// mulberry32: a small, well-known seeded PRNG.
function makeRng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
  };
}

const WORDS = ('user prefers concise answers project deadline friday review api design ' +
  'database schema migration test failing flaky retry budget customer ticket bug ' +
  'fix deploy rollback staging latency cache memory note todo done blocked owner ' +
  'meeting summary decision rationale follow up question answer context').split(' ');

const FILES_PER_TOPIC = 20;
const TOPICS_PER_PROJECT = 10;

class Model {
  constructor(rng) {
    this.rng = rng;
    this.token = 0;
    this.files = new Map();  // key -> array of lines (each without "\n")
    this.fileKeys = [];      // live keys, for O(1) random pick
    this.keyIndex = new Map();
    this.dirs = new Set(['/memories']);
    this.nameCounter = 0;
  }
  line() {
    // "#k<n>#" makes every line unique, and no token is a substring of another.
    const n = 3 + this.rng.int(8);
    const words = [];
    for (let i = 0; i < n; i++) words.push(this.rng.pick(WORDS));
    return `- #k${this.token++}# ${words.join(' ')}`;
  }
  body(lines) { return lines.join('\n') + '\n'; }
  addDirs(key) {
    let d = path.posix.dirname(key);
    while (d !== '/memories' && !this.dirs.has(d)) {
      this.dirs.add(d);
      d = path.posix.dirname(d);
    }
  }
  addFile(key, lines) {
    this.files.set(key, lines);
    this.keyIndex.set(key, this.fileKeys.length);
    this.fileKeys.push(key);
    this.addDirs(key);
  }
  removeFile(key) {
    const i = this.keyIndex.get(key);
    const last = this.fileKeys.pop();
    if (last !== key) {
      this.fileKeys[i] = last;
      this.keyIndex.set(last, i);
    }
    this.keyIndex.delete(key);
    this.files.delete(key);
  }
  newFileKey(dir) {
    return `${dir}/note_${this.nameCounter++}.md`;
  }
  topicDir(index) {
    const topics = Math.floor(index / FILES_PER_TOPIC);
    const p = Math.floor(topics / TOPICS_PER_PROJECT);
    return `/memories/p${p}/t${topics % TOPICS_PER_PROJECT}`;
  }
}

function createCmd(model, key) {
  const lines = [];
  const n = 8 + model.rng.int(24);
  for (let i = 0; i < n; i++) lines.push(model.line());
  model.addFile(key, lines);
  return { command: 'create', path: key, file_text: model.body(lines) };
}

function pickTopicDir(model) {
  const dirs = [...model.dirs].filter((d) => /\/t\d+$/.test(d));
  return model.rng.pick(dirs);
}

function genOp(model, dirList) {
  const r = model.rng.next() * 100;
  const rng = model.rng;
  if (r < 30) {
    const u = rng.next();
    let dir;
    if (u < 0.1) dir = '/memories';
    else if (u < 0.4) dir = rng.pick(dirList.projects);
    else dir = rng.pick(dirList.topics);
    return { command: 'view', path: dir };
  }
  const key = rng.pick(model.fileKeys);
  const lines = model.files.get(key);
  if (r < 60) {
    if (rng.next() < 0.2) return { command: 'view', path: key, view_range: [1, 10] };
    return { command: 'view', path: key };
  }
  if (r < 80) {
    const i = rng.int(lines.length);
    const next = model.line();
    const cmd = { command: 'str_replace', path: key, old_str: lines[i], new_str: next };
    lines[i] = next;
    return cmd;
  }
  if (r < 90) {
    return createCmd(model, model.newFileKey(rng.pick(dirList.topics)));
  }
  if (r < 98) {
    const at = rng.int(lines.length + 1);
    const text = model.line();
    lines.splice(at, 0, text);
    return { command: 'insert', path: key, insert_line: at, insert_text: text + '\n' };
  }
  if (r < 99 || model.fileKeys.length < 2) {
    const dest = model.newFileKey(rng.pick(dirList.topics));
    model.removeFile(key);
    model.addFile(dest, lines);
    return { command: 'rename', old_path: key, new_path: dest };
  }
  model.removeFile(key);
  return { command: 'delete', path: key };
}

// Canonical dump of a tree: entries sorted by key in byte order; a directory
// is "D <key>\n", a file is "F <key> <byte length>\n<body>\n".
function dump(model) {
  const entries = [];
  for (const d of model.dirs) entries.push([d, `D ${d}\n`]);
  for (const [k, lines] of model.files) {
    const body = Buffer.from(model.body(lines), 'utf8');
    entries.push([k, Buffer.concat([Buffer.from(`F ${k} ${body.length}\n`), body, Buffer.from('\n')])]);
  }
  entries.sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])));
  return Buffer.concat(entries.map((e) => Buffer.from(e[1])));
}

function main() {
  const args = parseArgs(process.argv);
  const model = new Model(makeRng(args.seed));
  fs.mkdirSync(args.out, { recursive: true });
  const setup = [];
  for (let i = 0; i < args.files; i++) setup.push(createCmd(model, model.newFileKey(model.topicDir(i))));
  const dirList = {
    projects: [...model.dirs].filter((d) => /^\/memories\/p\d+$/.test(d)),
    topics: [...model.dirs].filter((d) => /\/t\d+$/.test(d)),
  };
  const ops = [];
  const counts = {};
  const labels = [];
  for (let i = 0; i < args.ops; i++) {
    const op = genOp(model, dirList);
    const label = op.command === 'view' ? (model.dirs.has(op.path) ? 'view_dir' : 'view_file') : op.command;
    counts[label] = (counts[label] || 0) + 1;
    labels.push(label);
    ops.push(op);
  }
  const toLines = (cmds) => cmds.map((c) => JSON.stringify(c)).join('\n') + '\n';
  fs.writeFileSync(path.join(args.out, 'setup.jsonl'), toLines(setup));
  fs.writeFileSync(path.join(args.out, 'ops.jsonl'), toLines(ops));
  fs.writeFileSync(path.join(args.out, 'ops.labels'), labels.join('\n') + '\n');
  fs.writeFileSync(path.join(args.out, 'expected.dump'), dump(model));
  const meta = { ...args, counts, final_files: model.files.size, final_dirs: model.dirs.size };
  fs.writeFileSync(path.join(args.out, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
  console.log(JSON.stringify(meta));
}

main();

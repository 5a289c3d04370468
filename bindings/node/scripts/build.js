#!/usr/bin/env node
// Builds build/Release/areev.node with CMake (no node-gyp, no downloads): the
// addon uses only node_api.h, found in the local Node's include directory.
// The areev C++ sources come from the repository two levels up
// (AREEV_SOURCE_DIR overrides). npm 9.0-9.3 (Debian 12's is 9.2) installs a
// directory as a copy of its files rather than a link (install-links), so
// the package may lie outside the repository: then the directory npm
// installed from (npm_package_resolved, "file:DIR") names it. Environment:
//   AREEV_NODE_BUILD_DIR   CMake build directory (default: build/cmake)
//   AREEV_NODE_BUILD_TYPE  CMake build type (default: Release)
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const pkgDir = path.resolve(__dirname, '..');
const repo = sourceDir();
const buildDir = path.resolve(process.env.AREEV_NODE_BUILD_DIR || path.join(pkgDir, 'build', 'cmake'));
const buildType = process.env.AREEV_NODE_BUILD_TYPE || 'Release';

function isSourceDir(dir) {
  return fs.existsSync(path.join(dir, 'grainstore', 'CMakeLists.txt'));
}

// The repository holding the C++ sources; the first candidate when none does.
function sourceDir() {
  if (process.env.AREEV_SOURCE_DIR) return process.env.AREEV_SOURCE_DIR;
  const candidates = [path.resolve(pkgDir, '..', '..')];
  const resolved = process.env.npm_package_resolved || '';
  if (resolved.startsWith('file:')) {
    const from = path.resolve(process.env.INIT_CWD || process.cwd(), resolved.slice('file:'.length));
    candidates.push(path.resolve(from, '..', '..'));
  }
  return candidates.find(isSourceDir) || candidates[0];
}

function nodeIncludeDir() {
  // The running Node's headers: <prefix>/include/node.
  const fromPrefix = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');
  for (const dir of [process.env.AREEV_NODE_INCLUDE, fromPrefix, '/usr/include/node', '/usr/local/include/node']) {
    if (dir && fs.existsSync(path.join(dir, 'node_api.h'))) return dir;
  }
  throw new Error('node_api.h not found; set AREEV_NODE_INCLUDE to the Node include directory');
}

function run(cmd, args) {
  process.stderr.write(`areev build: ${cmd} ${args.join(' ')}\n`);
  execFileSync(cmd, args, { stdio: ['ignore', process.stderr, 'inherit'] });
}

function main() {
  if (!isSourceDir(repo)) {
    throw new Error(`areev sources not found at ${repo}; install from the repository's ` +
      'bindings/node directory, or set AREEV_SOURCE_DIR to the repository');
  }
  // The addon's CMake project as it lies in the repository, beside the
  // bindings' shared CMake code (a copied package has only its own files).
  run('cmake', ['-S', path.join(repo, 'bindings', 'node'), '-B', buildDir, `-DCMAKE_BUILD_TYPE=${buildType}`,
    `-DAREEV_SOURCE_DIR=${repo}`, `-DAREEV_NODE_API_INCLUDE=${nodeIncludeDir()}`, '-DAREEV_WERROR=OFF']);
  const jobs = String(Math.max(1, Math.min(os.cpus().length, 8)));
  run('cmake', ['--build', buildDir, '--target', 'areev_node_addon', '-j', jobs]);
  const built = path.join(buildDir, 'addon', 'areev.node');
  const dest = path.join(pkgDir, 'build', 'Release', 'areev.node');
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.copyFileSync(built, dest + '.tmp');
  fs.renameSync(dest + '.tmp', dest);
  process.stderr.write(`areev build: wrote ${dest}\n`);
}

try {
  main();
} catch (e) {
  process.stderr.write(`areev build failed: ${e.message}\n`);
  process.exit(1);
}

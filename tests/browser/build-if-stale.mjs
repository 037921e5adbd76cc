// Builds the WASM module (when missing) and the page (when older than its
// sources), so the browser tests always run against the BUILT output.
// Run it under `flock /tmp/attnlens-build.lock`: test files start in parallel
// and one must not empty dist/page while another serves it (see page-fixture.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildPage, buildWasm } from '../../web/scripts/build.mjs';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

export const pageDir = join(repoRoot, 'dist', 'page');
export const offlineFile = join(repoRoot, 'dist', 'attnlens-offline.html');
const wasmFiles = ['attnlens-relaxed.wasm', 'attnlens-simd.wasm', 'attnlens-scalar.wasm'].map((name) => join(repoRoot, 'web', 'lib', 'wasm', name));

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function oldestOutput() {
  const outputs = [join(pageDir, 'index.html'), offlineFile];
  if (!outputs.every(existsSync)) return -Infinity;
  return Math.min(...outputs.map((path) => statSync(path).mtimeMs));
}

export function buildIfStale() {
  if (!wasmFiles.every(existsSync)) buildWasm();
  // The built-in models' files (web/models) are part of the page too.
  const sources = Math.max(...['page', 'lib', 'views', 'models'].map((dir) => newestMtime(join(repoRoot, 'web', dir))));
  if (oldestOutput() < sources) buildPage();
}

export const elementsBundle = join(repoRoot, 'dist', 'attnlens-elements.js');

// Rebuilds the one-file build of the elements when a source is newer (under the build lock: other tests build too).
export function buildElementsIfStale() {
  const built = existsSync(elementsBundle) ? statSync(elementsBundle).mtimeMs : -Infinity;
  const sources = Math.max(...['elements', 'views', 'lib'].map((dir) => newestMtime(join(repoRoot, 'web', dir))));
  if (built >= sources) return;
  const result = spawnSync('flock', ['/tmp/attnlens-build.lock', process.execPath, join(repoRoot, 'web/scripts/build.mjs'), 'elements'], { stdio: 'inherit' });
  assert.equal(result.status, 0, 'building dist/attnlens-elements.js failed');
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfStale();

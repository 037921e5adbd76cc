// Builds the WASM module (when missing) and the page (when older than its
// sources), so the browser tests always run against the BUILT output.
// Run it under `flock /tmp/attnlens-build.lock`: test files start in parallel
// and one must not empty dist/page while another serves it (see page-fixture.mjs).
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
  const sources = Math.max(...['page', 'lib', 'views'].map((dir) => newestMtime(join(repoRoot, 'web', dir))));
  if (oldestOutput() < sources) buildPage();
}

if (import.meta.url === `file://${process.argv[1]}`) buildIfStale();

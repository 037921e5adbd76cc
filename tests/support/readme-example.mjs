// The README's examples run as written: the first js code block after a
// heading, saved as example.mjs in a fresh app folder whose
// node_modules/attnlens is this repository, run in its own Node process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

/** The first js code block after `heading` (a heading's start, e.g. '## Real models') in README.md. */
export function readmeExample(heading) {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.indexOf(heading);
  assert.ok(section >= 0, `README.md has a "${heading}" section`);
  const match = readme.slice(section).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, `the "${heading}" section has a js code block`);
  return match[1];
}

/**
 * Runs the example under `heading` with `args` (and `env` beside this process's); resolves to what
 * it printed. Asynchronous, so a server in this process (a test hub) can answer it meanwhile.
 */
export async function runReadmeExample(heading, args = [], { env = {} } = {}) {
  const app = mkdtempSync(join(tmpdir(), 'attnlens-readme-'));
  try {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(repoRoot, join(app, 'node_modules', 'attnlens'), 'dir');
    writeFileSync(join(app, 'example.mjs'), readmeExample(heading));
    const { stdout } = await promisify(execFile)(process.execPath, [join(app, 'example.mjs'), ...args], {
      cwd: app, env: { ...process.env, ...env },
    });
    return stdout;
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}

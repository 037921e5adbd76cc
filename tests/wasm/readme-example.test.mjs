// The README's library example runs as written, against this package.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

function readmeExample() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.indexOf('### Example');
  assert.ok(section >= 0, 'README.md has an "### Example" section');
  const match = readme.slice(section).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, 'the Example section has a js code block');
  return match[1];
}

test('the README example prints the weights and the tokens', () => {
  // An app directory whose node_modules/attnlens is this repository.
  const app = mkdtempSync(join(tmpdir(), 'attnlens-readme-'));
  try {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(repoRoot, join(app, 'node_modules', 'attnlens'), 'dir');
    writeFileSync(join(app, 'example.mjs'), readmeExample());
    const printed = execFileSync(process.execPath, [join(app, 'example.mjs')], { cwd: app }).toString();
    assert.match(printed, /Float32Array\(6\)/);
    assert.match(printed, /'The', 'cat'/);
    // The six printed weights: each row sums to 1, and with causal and m < n
    // query 0 sits at position 1, so it cannot see key 2.
    const numbers = [...printed.matchAll(/^\s+([0-9.e-]+),?$/gm)].map((m) => Number(m[1]));
    assert.equal(numbers.length, 6);
    assert.ok(Math.abs(numbers[0] + numbers[1] + numbers[2] - 1) < 1e-6);
    assert.ok(Math.abs(numbers[3] + numbers[4] + numbers[5] - 1) < 1e-6);
    assert.equal(numbers[2], 0);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});

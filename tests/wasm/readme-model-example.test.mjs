// The README's "Real models" example runs as written, on ../shared/models/sort-gpt2.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

function readmeModelExample() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.indexOf('## Real models');
  assert.ok(section >= 0, 'README.md has a "## Real models" section');
  const match = readme.slice(section).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, 'the Real models section has a js code block');
  return match[1];
}

test('the README model example loads sort-gpt2 and prints a row of its attention', () => {
  const app = mkdtempSync(join(tmpdir(), 'attnlens-readme-model-'));
  try {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(repoRoot, join(app, 'node_modules', 'attnlens'), 'dir');
    writeFileSync(join(app, 'example.mjs'), readmeModelExample());
    const folder = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
    const printed = execFileSync(process.execPath, [join(app, 'example.mjs'), folder], { cwd: app }).toString();
    assert.match(printed, /^gpt2 3 layers x 3 heads$/m);
    assert.match(printed, /\[ '2', '0', '1', '1', '0', '2' \]/);
    // The last token's row of layer 2, head 0: six weights summing to 1.
    const weights = [...printed.matchAll(/'(\d\.\d\d)'/g)].map((m) => Number(m[1]));
    assert.equal(weights.length, 6);
    assert.ok(Math.abs(weights.reduce((a, b) => a + b, 0) - 1) <= 0.03, `weights ${weights} sum to about 1`);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});

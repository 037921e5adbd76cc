// The README's model.analyze example runs as written, on the shipped tiny-english,
// finds its previous-token head (layer 0, head 1, web/docs/tiny-model.md) and prints the logit lens per layer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

function readmeAnalysisExample() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.indexOf('### What each head does');
  assert.ok(section >= 0, 'README.md has a "### What each head does" section');
  const match = readme.slice(section).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, 'the section has a js code block');
  return match[1];
}

test('the README analysis example finds tiny-english\'s previous-token head, prints an induction score and the logit lens', () => {
  const app = mkdtempSync(join(tmpdir(), 'attnlens-readme-analysis-'));
  try {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(repoRoot, join(app, 'node_modules', 'attnlens'), 'dir');
    writeFileSync(join(app, 'example.mjs'), readmeAnalysisExample());
    const folder = join(repoRoot, 'web', 'models', 'tiny-english');
    const printed = execFileSync(process.execPath, [join(app, 'example.mjs'), folder], { cwd: app }).toString();
    assert.match(printed, /^previous-token head: layer 0 head 1 0\.\d\d$/m);
    assert.match(printed, /^rollout rows: one n x n per layer$/m);
    assert.match(printed, /^value-weighted rows: one n x n per head$/m);
    // One lens line per layer of tiny-english (4), each a token and a probability.
    const lensLines = printed.match(/^lens layer \d: .* [01]\.\d\d$/gm) ?? [];
    assert.deepEqual(lensLines.map((line) => Number(line.match(/layer (\d)/)[1])), [0, 1, 2, 3], printed);
    const induction = Number(printed.match(/^best induction score: (\d\.\d\d)$/m)?.[1]);
    assert.ok(induction >= 0 && induction <= 1, printed);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});

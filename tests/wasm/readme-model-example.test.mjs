// The README's "Real models" example runs as written, on ../shared/models/sort-gpt2.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { runReadmeExample } from '../support/readme-example.mjs';

test('the README model example loads sort-gpt2 and prints a row of its attention', async () => {
  const folder = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
  const printed = await runReadmeExample('## Real models', [folder]);
  assert.match(printed, /^gpt2 3 layers x 3 heads$/m);
  assert.match(printed, /\[ '2', '0', '1', '1', '0', '2' \]/);
  // The last token's row of layer 2, head 0: six weights summing to 1.
  const weights = [...printed.matchAll(/'(\d\.\d\d)'/g)].map((m) => Number(m[1]));
  assert.equal(weights.length, 6);
  assert.ok(Math.abs(weights.reduce((a, b) => a + b, 0) - 1) <= 0.03, `weights ${weights} sum to about 1`);
});

// The README's library example runs as written, against this package.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runReadmeExample } from '../support/readme-example.mjs';

test('the README example prints the weights and the tokens', async () => {
  const printed = await runReadmeExample('### Example');
  assert.match(printed, /Float32Array\(6\)/);
  assert.match(printed, /'The', 'cat'/);
  // The six printed weights: each row sums to 1, and with causal and m < n
  // query 0 sits at position 1, so it cannot see key 2.
  const numbers = [...printed.matchAll(/^\s+([0-9.e-]+),?$/gm)].map((m) => Number(m[1]));
  assert.equal(numbers.length, 6);
  assert.ok(Math.abs(numbers[0] + numbers[1] + numbers[2] - 1) < 1e-6);
  assert.ok(Math.abs(numbers[3] + numbers[4] + numbers[5] - 1) < 1e-6);
  assert.equal(numbers[2], 0);
});

// The README's model.analyze example runs as written, on the shipped tiny-english,
// finds its previous-token head (layer 0, head 1, web/docs/tiny-model.md) and prints the logit lens per layer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyEnglishDir } from '../support/model-folder.mjs';
import { runReadmeExample } from '../support/readme-example.mjs';

test('the README analysis example finds tiny-english\'s previous-token head, prints an induction score and the logit lens', async () => {
  const printed = await runReadmeExample('### What each head does', [tinyEnglishDir]);
  assert.match(printed, /^previous-token head: layer 0 head 1 0\.\d\d$/m);
  assert.match(printed, /^rollout rows: one n x n per layer$/m);
  assert.match(printed, /^value-weighted rows: one n x n per head$/m);
  // One lens line per layer of tiny-english (4), each a token and a probability.
  const lensLines = printed.match(/^lens layer \d: .* [01]\.\d\d$/gm) ?? [];
  assert.deepEqual(lensLines.map((line) => Number(line.match(/layer (\d)/)[1])), [0, 1, 2, 3], printed);
  const induction = Number(printed.match(/^best induction score: (\d\.\d\d)$/m)?.[1]);
  assert.ok(induction >= 0 && induction <= 1, printed);
});

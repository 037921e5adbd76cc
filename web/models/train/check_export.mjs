// Loads an exported folder in attnlens and compares it with the training script's torch
// forward (reference-logits.json, written by train.py): the tokenizer must give the same ids
// as bpe.py and the logits must agree.
//   node check_export.mjs <model folder> <reference-logits.json>
import { readFileSync } from 'node:fs';

const [folder, referencePath] = process.argv.slice(2);
const lens = await (await import(new URL('../../lib/node.js', import.meta.url))).load();
const model = await lens.loadModel({
  config: readFileSync(`${folder}/config.json`, 'utf8'),
  weights: readFileSync(`${folder}/model.safetensors`),
  tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
});
console.log(JSON.stringify({ ...model.info, ignoredTensors: model.info.ignoredTensors.length }));
let worst = 0, failures = 0;
for (const { text, ids, logits } of JSON.parse(readFileSync(referencePath, 'utf8'))) {
  const got = Array.from(model.tokenize(text).ids);
  if (got.join() !== ids.join()) {
    failures++;
    console.log('TOKENIZER MISMATCH', JSON.stringify(text), got.slice(0, 20), ids.slice(0, 20));
  }
  if (model.decode(got) !== text) { failures++; console.log('ROUND TRIP FAILS', JSON.stringify(text)); }
  const out = model.run({ ids });
  for (let i = 0; i < logits.length; i++) worst = Math.max(worst, Math.abs(out.logits[i] - logits[i]));
}
// The whole held-out sample must round-trip too.
for (const doc of readFileSync(`${folder}/heldout-sample.txt`, 'utf8').replace(/\n$/, '').split('\n%\n')) {
  if (model.decode(model.tokenize(doc).ids) !== doc) { failures++; console.log('ROUND TRIP FAILS', JSON.stringify(doc)); }
}
console.log(`max |logit difference| vs torch: ${worst.toExponential(2)}; failures: ${failures}`);
model.dispose();
process.exit(failures === 0 && worst < 1e-2 ? 0 : 1);

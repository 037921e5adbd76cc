// Checks tiny-translator's tokenizer.json in attnlens against two independent encoders: the
// training script's (the ids in reference-attention.json) and Hugging Face `tokenizers`
// itself (every source and target of the held-out sample). attnlens cannot run BART yet;
// once it can, reference-attention.json also holds the logits and every attention to compare.
//   node check_translator.mjs <model folder> <reference-attention.json>
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createTokenizer } from '../../lib/tokenizers/index.js';

const [folder, referencePath] = process.argv.slice(2);
const json = readFileSync(`${folder}/tokenizer.json`, 'utf8');
const ours = createTokenizer(json);
const { Tokenizer: HuggingFace } = createRequire(import.meta.url)('tokenizers');
const theirs = HuggingFace.fromString(json);
let failures = 0, compared = 0;
const fail = (what, text, got, expected) => {
  failures++;
  console.log(what, JSON.stringify(text), JSON.stringify(got), JSON.stringify(expected));
};

for (const { text, sourceIds, target } of JSON.parse(readFileSync(referencePath, 'utf8'))) {
  const got = Array.from(ours.encode(text).ids);
  if (got.join() !== sourceIds.join()) fail('NOT THE TRAINING IDS', text, got, sourceIds);
  if (ours.decode(got, { skipSpecialTokens: true }) !== text.toLowerCase()) fail('ROUND TRIP', text, got, target);
  compared++;
}
const lines = readFileSync(`${folder}/heldout-sample.txt`, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
for (const line of lines) {
  for (const text of line.split('\t').slice(0, 2)) {
    const got = Array.from(ours.encode(text).ids);
    const expected = (await theirs.encode(text)).getIds();
    if (got.join() !== expected.join()) fail('NOT HUGGING FACE\'S IDS', text, got, expected);
    compared++;
  }
}
// The ISO side must be one token per character between <s> and </s>, so that each output
// digit is one row of the cross-attention.
for (const line of lines) {
  const iso = line.split('\t')[1];
  const ids = Array.from(ours.encode(iso).ids);
  if (ids.length !== iso.length + 2) fail('ISO NOT ONE TOKEN A CHARACTER', iso, ids, iso.length + 2);
}
console.log(`${compared} texts compared; failures: ${failures}`);
process.exit(failures === 0 ? 0 : 1);

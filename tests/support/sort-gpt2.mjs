// sort-gpt2 (/work/shared/models/sort-gpt2), the small trained GPT-2 the
// download tests serve from the local hub: its files' bytes, and the
// attention the library computes from those bytes in Node, the reference the
// browser's numbers must equal.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

export const sortFolder = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');

/** config.json, model.safetensors, tokenizer.json -> bytes. */
export const sortFiles = Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
  .map((name) => [name, new Uint8Array(readFileSync(join(sortFolder, name)))]));

/** Every layer's every head's weights for `text`, as a plain array. */
export async function sortGpt2Attention(text) {
  const model = await (await load()).loadModel({
    config: new TextDecoder().decode(sortFiles['config.json']), weights: sortFiles['model.safetensors'],
    tokenizer: new TextDecoder().decode(sortFiles['tokenizer.json']),
  });
  try {
    return Array.from(model.run({ text }).attention);
  } finally {
    model.dispose();
  }
}

// A model folder (config.json, model.safetensors, tokenizer.json) loaded in
// Node through the library, as the tests' reference for what a page shows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../web/lib/node.js';

/** The page's built-in teaching model (web/models/tiny-english): its folder. */
export const tinyEnglishDir = join(fileURLToPath(new URL('../../', import.meta.url)), 'web', 'models', 'tiny-english');

/** lens.loadModel of `folder`'s config, weights and tokenizer. */
export function loadModelFolder(lens, folder) {
  return lens.loadModel({
    config: readFileSync(join(folder, 'config.json'), 'utf8'),
    weights: readFileSync(join(folder, 'model.safetensors')),
    tokenizer: readFileSync(join(folder, 'tokenizer.json'), 'utf8'),
  });
}

/** tiny-english with its tokenizer, loaded by the library in this Node process. */
export async function loadTinyEnglish() {
  return loadModelFolder(await load(), tinyEnglishDir);
}

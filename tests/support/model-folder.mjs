// A model folder (config.json, model.safetensors, tokenizer.json) loaded in
// Node through the library, as the tests' reference for what a page shows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** lens.loadModel of `folder`'s config, weights and tokenizer. */
export function loadModelFolder(lens, folder) {
  return lens.loadModel({
    config: readFileSync(join(folder, 'config.json'), 'utf8'),
    weights: readFileSync(join(folder, 'model.safetensors')),
    tokenizer: readFileSync(join(folder, 'tokenizer.json'), 'utf8'),
  });
}

// The page's teaching model (web/models/tiny-english) loaded with its
// tokenizer, for the analysis views' tests: model.analyze on real text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load } from '../../../web/lib/node.js';

const englishDir = join(fileURLToPath(new URL('../../../', import.meta.url)), 'web', 'models', 'tiny-english');

export async function loadTinyEnglish() {
  const lens = await load();
  return lens.loadModel({
    config: readFileSync(join(englishDir, 'config.json'), 'utf8'),
    weights: readFileSync(join(englishDir, 'model.safetensors')),
    tokenizer: readFileSync(join(englishDir, 'tokenizer.json'), 'utf8'),
  });
}

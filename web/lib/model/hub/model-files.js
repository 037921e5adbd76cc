// Which files make up a model folder, found the way transformers looks for
// them: config.json; the tokenizer (tokenizer.json, else vocab.json +
// merges.txt, else vocab.txt, else Marian's source.spm + target.spm +
// vocab.json) with tokenizer_config.json when present; the
// weights (model.safetensors, else the shards its index names). `folder` is
// http-folder.js's reader or Node's local one: text(name, { optional }),
// size(name), bytes(name, onBytes).
import { abortError } from './http-folder.js';

const WHERE = 'attnlens.loadModel';
// The weights in transformers' order: one file, else the shards its index names.
const WEIGHT_FILES = [
  { single: 'model.safetensors', index: 'model.safetensors.index.json' },
  { single: 'pytorch_model.bin', index: 'pytorch_model.bin.index.json' },
];

// Each kind, in the order transformers prefers, with the key of each file in
// the source createTokenizer takes; `binary` files are read as bytes (text
// files come first, so a folder without them is passed over without a download).
// opus-mt folders have no tokenizer.json: MarianTokenizer's source.spm, target.spm and vocab.json.
export const TOKENIZER_KINDS = [
  { kind: 'tokenizer.json', files: { json: 'tokenizer.json' } },
  { kind: 'vocab.json + merges.txt', files: { vocabJson: 'vocab.json', mergesTxt: 'merges.txt' } },
  { kind: 'vocab.txt', files: { vocabTxt: 'vocab.txt' } },
  {
    kind: 'source.spm + target.spm + vocab.json',
    files: { vocabJson: 'vocab.json', sourceSpm: 'source.spm', targetSpm: 'target.spm' },
    binary: ['sourceSpm', 'targetSpm'],
  },
];

/** The tokenizer's texts (and bytes) as createTokenizer takes them, or null (a model without one reads ids). */
export function tokenizerSource(kind, texts) {
  if (kind === null) return null;
  return kind === 'tokenizer.json' ? texts['tokenizer.json'] : Object.fromEntries(
    Object.entries(TOKENIZER_KINDS.find((entry) => entry.kind === kind).files).map(([key, name]) => [key, texts[name]]));
}

// A binary file's bytes, or null when the folder does not have it.
async function optionalBytes(folder, name) {
  try {
    return await folder.bytes(name, () => {});
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
}

// Kinds share files (vocab.json is GPT-2's and Marian's): each is asked for once.
async function findTokenizer(folder, texts) {
  const missing = new Set();
  for (const { kind, files, binary = [] } of TOKENIZER_KINDS) {
    let complete = true;
    for (const [key, name] of Object.entries(files)) {
      if (name in texts) continue;
      const text = missing.has(name) ? null
        : binary.includes(key) ? await optionalBytes(folder, name) : await folder.text(name, { optional: true });
      if (text === null) {
        missing.add(name);
        complete = false;
        break;
      }
      texts[name] = text;
    }
    if (complete) return kind;
  }
  return null;
}

function shardNames(where, indexName, text) {
  let index;
  try {
    index = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`${WHERE}: ${where}${indexName} is not valid JSON: ${error.message}`);
  }
  const names = [...new Set(Object.values(index?.weight_map ?? {}))].sort();
  if (names.length === 0) throw new RangeError(`${WHERE}: ${where}${indexName} lists no shards in its weight_map`);
  return names;
}

// [{ name, bytes }] of the first kind of weights the folder has; an index's text goes into texts.
async function findWeights(folder, texts) {
  let notFound;
  for (const { single, index } of WEIGHT_FILES) {
    try {
      return [{ name: single, bytes: await folder.size(single) }];
    } catch (error) {
      if (error.status !== 404) throw error;
      notFound ??= error;
    }
    const indexText = await folder.text(index, { optional: true });
    if (indexText !== null) {
      texts[index] = indexText;
      const names = shardNames(folder.where, index, indexText);
      return Promise.all(names.map(async (name) => ({ name, bytes: await folder.size(name) })));
    }
  }
  const [safetensors, bin] = WEIGHT_FILES;
  throw Object.assign(new Error(`${WHERE}: ${folder.where} has neither ${safetensors.single} nor ${safetensors.index}, nor ${bin.single} ` +
    `nor ${bin.index} (HTTP 404). attnlens reads safetensors weights and torch.save's pytorch_model.bin`, { cause: notFound }), { reason: 'not-found' });
}

/**
 * The small files' texts and the weights' names and sizes (null when unknown).
 * @returns {Promise<{ texts: Record<string, string | Uint8Array>, tokenizer: string | null, weights: Array<{ name, bytes }> }>}
 */
export async function findModelFiles(folder, signal) {
  const texts = { 'config.json': await folder.text('config.json') };
  const tokenizer = await findTokenizer(folder, texts);
  const tokenizerConfig = tokenizer === null ? null : await folder.text('tokenizer_config.json', { optional: true });
  if (tokenizerConfig !== null) texts['tokenizer_config.json'] = tokenizerConfig;
  const weights = await findWeights(folder, texts);
  if (signal?.aborted) throw abortError();
  return { texts, tokenizer, weights };
}

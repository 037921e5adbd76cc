// Which of the files a user chose (or dropped) make up a Hugging Face model
// folder: config.json, the weights (.safetensors, else an older folder's
// pytorch_model.bin; one file or every shard) and
// the tokenizer (tokenizer.json, or GPT-2's vocab.json + merges.txt, or BERT's
// vocab.txt, or opus-mt's source.spm + target.spm + vocab.json). Pure: works on anything with a `name` and optionally a `path`
// (File objects from an <input>, a folder picker or a drop), so Node can test it.

import { TOKENIZER_KINDS } from '../../lib/model/hub/model-files.js';

export class HubFilesError extends Error {}

// A folder picker or a dropped folder gives paths like "gpt2/config.json";
// a plain file picker gives bare names.
function pathOf(file) {
  return file.path || file.webkitRelativePath || file.name;
}

function folderOf(path) {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function depth(folder) {
  return folder === '' ? 0 : folder.split('/').length;
}

// The folder holding config.json: the shallowest one, so a picked hub folder
// with sub-folders (onnx/, checkpoints, ...) reads its own top level.
function modelFolder(files) {
  const configs = files.filter((file) => file.name === 'config.json').map((file) => folderOf(pathOf(file)));
  if (configs.length === 0) return null;
  return configs.sort((a, b) => depth(a) - depth(b) || a.localeCompare(b))[0];
}

const shardPattern = /^(?:model|pytorch_model)-(\d+)-of-(\d+)\.(safetensors|bin)$/;

// One checkpoint's weights: model.safetensors alone when present (some
// folders also hold shards or a "consolidated" copy of the same tensors),
// else the model-0000k-of-0000n shards, else every .safetensors file; in a
// folder without safetensors (as transformers falls back), pytorch_model.bin
// alone, else its pytorch_model-0000k-of-0000n.bin shards.
function pickWeights(inFolder) {
  const safetensors = inFolder.filter((file) => file.name.endsWith('.safetensors'));
  const single = safetensors.find((file) => file.name === 'model.safetensors');
  if (single) return [single];
  let chosen = safetensors.filter((file) => shardPattern.test(file.name));
  if (chosen.length === 0) chosen = safetensors;
  if (chosen.length === 0) {
    const bin = inFolder.find((file) => file.name === 'pytorch_model.bin');
    chosen = bin ? [bin] : inFolder.filter((file) => file.name.startsWith('pytorch_model-') && shardPattern.test(file.name));
  }
  return chosen.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
}

function checkShards(weights) {
  const match = weights.map((file) => shardPattern.exec(file.name));
  if (!match.every(Boolean)) return;
  const expected = Number(match[0][2]);
  if (weights.length < expected) {
    const have = new Set(match.map((m) => Number(m[1])));
    const missing = Array.from({ length: expected }, (_, i) => i + 1).filter((i) => !have.has(i));
    throw new HubFilesError(`The checkpoint has ${expected} shards, but ${missing.length === 1 ? 'shard' : 'shards'} `
      + `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: choose every `
      + `${weights[0].name.split('-')[0]}-…-of-${match[0][2]}.${match[0][3]} file.`);
  }
}

// The first kind whose every file was chosen, in the library's order (transformers').
function pickTokenizer(inFolder) {
  for (const { kind, files } of TOKENIZER_KINDS) {
    const chosen = Object.entries(files).map(([key, name]) => [key, inFolder.find((file) => file.name === name)]);
    if (chosen.every(([, file]) => file)) return { kind, files: Object.fromEntries(chosen) };
  }
  return null;
}

/**
 * @param {Array<{name: string, path?: string, webkitRelativePath?: string}>} files
 * @returns {{ config, weights: Array, tokenizer: {kind, files} | null, folder: string, ignored: string[] }}
 * @throws {HubFilesError} naming what is missing
 */
export function pickHubFiles(files) {
  const list = Array.from(files);
  if (list.length === 0) throw new HubFilesError('No files were chosen.');
  const folder = modelFolder(list);
  if (folder === null) {
    throw new HubFilesError(`There is no config.json among the ${list.length} file${list.length > 1 ? 's' : ''} chosen `
      + `(${list.slice(0, 4).map((file) => file.name).join(', ')}${list.length > 4 ? ', …' : ''}). Choose every file of the `
      + 'model\'s folder: config.json, the .safetensors weights (or pytorch_model.bin) and tokenizer.json.');
  }
  const inFolder = list.filter((file) => folderOf(pathOf(file)) === folder);
  const weights = pickWeights(inFolder);
  if (weights.length === 0) {
    const other = inFolder.filter((file) => /\.(bin|pt|pth|ckpt|h5|msgpack|onnx|gguf)$/.test(file.name)).map((file) => file.name);
    throw new HubFilesError(`There are no weights next to config.json${other.length
      ? `: this page reads model.safetensors and pytorch_model.bin (or their shards), not ${other.slice(0, 3).join(', ')}. `
        + 'Most hub folders also offer model.safetensors.'
      : '. Choose model.safetensors or pytorch_model.bin (or every shard of a sharded checkpoint) too.'}`);
  }
  checkShards(weights);
  const config = inFolder.find((file) => file.name === 'config.json');
  const tokenizer = pickTokenizer(inFolder);
  const used = new Set([config, ...weights, ...Object.values(tokenizer?.files ?? {})]);
  return {
    config, weights, tokenizer,
    folder,
    ignored: list.filter((file) => !used.has(file)).map(pathOf),
  };
}

/** A readable name for the model: its folder, else the config's own name, else its type. */
export function modelName({ folder = '', url = '', config = {} }) {
  // A hub folder (…/owner/name/resolve/<revision>/) on the hub or any mirror of it.
  const fromHub = /huggingface\.co\/([^/]+\/[^/]+)\//.exec(url)?.[1] ?? /\/([^/]+\/[^/]+)\/resolve\/[^/]+\/$/.exec(url)?.[1];
  const fromUrl = url ? new URL(url).pathname.split('/').filter(Boolean).at(-1) : undefined;
  const fromFolder = folder.split('/').filter(Boolean).at(-1);
  const fromConfig = typeof config._name_or_path === 'string' && config._name_or_path !== '' ? config._name_or_path : undefined;
  return fromHub ?? fromUrl ?? fromFolder ?? fromConfig ?? `${config.model_type ?? 'unknown'} model`;
}

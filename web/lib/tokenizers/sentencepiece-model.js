// sentencepiece .model files (tokenizer.model, spiece.model,
// sentencepiece.bpe.model) for hub folders that ship no tokenizer.json: the
// ModelProto protobuf is read (only the fields tokenizing needs) and turned
// into the tokenizer.json transformers' converters would write for it
// (SpmConverter for Unigram, LlamaConverter's layout for BPE), which
// createTokenizer then reads like any other.
//
// ModelProto fields used (sentencepiece_model.proto):
//   1 pieces (repeated): 1 piece, 2 score (float), 3 type (1 normal, 2 unknown,
//     3 control, 4 user defined, 5 unused, 6 byte)
//   2 trainer_spec: 3 model_type (1 unigram, 2 bpe, 3 word, 4 char),
//     35 byte_fallback, 40 unk_id
//   3 normalizer_spec: 2 precompiled_charsmap, 3 add_dummy_prefix,
//     4 remove_extra_whitespaces, 5 escape_whitespaces (all three default true)
import { METASPACE } from './sentencepiece.js';

const where = 'sentencepiece model';
const utf8 = new TextDecoder('utf-8', { fatal: true });

// The fields of one protobuf message: Map field number -> list of values
// (numbers for varints and fixed32/64 as their raw bits, Uint8Array for
// length-delimited ones).
function readMessage(bytes, what) {
  const fields = new Map();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; shift < 70; shift += 7) {
      if (at >= bytes.length) throw new Error(`${where}: ${what} ends inside a number`);
      const byte = bytes[at++];
      value += (byte & 0x7F) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw new Error(`${where}: ${what} has a number longer than 10 bytes`);
  };
  const take = (length) => {
    if (at + length > bytes.length) throw new Error(`${where}: ${what} ends inside a field`);
    at += length;
    return at - length;
  };
  while (at < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    let value;
    if (wireType === 0) value = varint();
    else if (wireType === 1) value = view.getFloat64(take(8), true);
    else if (wireType === 5) value = view.getFloat32(take(4), true);
    else if (wireType === 2) {
      const length = varint();
      const start = take(length);
      value = bytes.subarray(start, start + length);
    } else {
      throw new Error(`${where}: ${what} field ${field} has wire type ${wireType}, which ModelProto does not use `
        + '(is this a sentencepiece .model file?)');
    }
    if (!fields.has(field)) fields.set(field, []);
    fields.get(field).push(value);
  }
  return fields;
}

const last = (fields, field, fallback) => (fields.has(field) ? fields.get(field).at(-1) : fallback);
const text = (value, what) => {
  try {
    return utf8.decode(value);
  } catch {
    throw new Error(`${where}: ${what} is not UTF-8`);
  }
};

const PIECE_TYPES = { 1: 'normal', 2: 'unknown', 3: 'control', 4: 'user defined', 5: 'unused', 6: 'byte' };

function readPieces(fields) {
  return (fields.get(1) ?? []).map((bytes, id) => {
    if (!(bytes instanceof Uint8Array)) throw new Error(`${where}: piece ${id} is not a message`);
    const piece = readMessage(bytes, `piece ${id}`);
    const type = PIECE_TYPES[last(piece, 3, 1)];
    if (type === undefined) throw new Error(`${where}: piece ${id} has an unknown type ${last(piece, 3)}`);
    return { piece: text(last(piece, 1, new Uint8Array()), `piece ${id}`), score: last(piece, 2, 0), type };
  });
}

// transformers' generate_merges: every split of a piece (any piece, as
// transformers takes them all) into two pieces, ordered by the merged
// piece's score (highest first), then by the ids of the two halves.
function mergesOf(pieces, ids) {
  const merges = [];
  pieces.forEach(({ piece, score }) => {
    const chars = [...piece];
    const local = [];
    for (let k = 1; k < chars.length; k++) {
      const left = chars.slice(0, k).join('');
      const right = chars.slice(k).join('');
      if (ids.has(left) && ids.has(right)) local.push({ left, right, score });
    }
    local.sort((a, b) => ids.get(a.left) - ids.get(b.left) || ids.get(a.right) - ids.get(b.right));
    merges.push(...local);
  });
  merges.sort((a, b) => b.score - a.score); // stable, as Python's sort
  return merges.map(({ left, right }) => [left, right]);
}

function base64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * The tokenizer.json equivalent of a sentencepiece .model file.
 * @param {Uint8Array|ArrayBuffer} data the file's bytes
 * @returns {object} tokenizer.json
 * @throws {Error} naming what is malformed or unsupported
 */
export function sentencepieceTokenizerJson(data) {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  const model = readMessage(bytes, 'ModelProto');
  const pieces = readPieces(model);
  if (pieces.length === 0) throw new Error(`${where} has no pieces (is this a sentencepiece .model file?)`);
  const trainer = readMessage(last(model, 2, new Uint8Array()), 'trainer_spec');
  const normalizerSpec = readMessage(last(model, 3, new Uint8Array()), 'normalizer_spec');
  const modelType = last(trainer, 3, 1);
  const byteFallback = last(trainer, 35, 0) !== 0;
  const unkId = last(trainer, 40, 0);
  const charsmap = last(normalizerSpec, 2, new Uint8Array());
  const dummyPrefix = last(normalizerSpec, 3, 1) !== 0;
  const extraSpaces = last(normalizerSpec, 4, 1) !== 0;
  if (last(normalizerSpec, 5, 1) === 0) {
    throw new Error(`${where} has escape_whitespaces false (spaces kept as they are), which attnlens does not support`);
  }
  if (modelType !== 1 && modelType !== 2) {
    const name = { 3: 'word', 4: 'char' }[modelType] ?? String(modelType);
    throw new Error(`${where} has model_type ${name}: attnlens reads unigram and bpe sentencepiece models`);
  }
  if (unkId >= pieces.length || pieces[unkId].type !== 'unknown') {
    throw new Error(`${where}: trainer_spec unk_id ${unkId} is not its unknown piece`);
  }
  const precompiled = charsmap.length > 0 ? [{ type: 'Precompiled', precompiled_charsmap: base64(charsmap) }] : [];
  // Pieces sentencepiece never makes from text are matched whole, as transformers adds them.
  const addedTokens = [];
  pieces.forEach(({ piece, type }, id) => {
    if (type !== 'control' && type !== 'unknown' && type !== 'user defined') return;
    addedTokens.push({
      id, content: piece, single_word: false, lstrip: false, rstrip: false, normalized: false, special: type !== 'user defined',
    });
  });
  const json = {
    version: '1.0', truncation: null, padding: null, added_tokens: addedTokens, post_processor: null,
  };
  if (modelType === 1) {
    json.model = {
      type: 'Unigram', unk_id: unkId, vocab: pieces.map(({ piece, score }) => [piece, score]), byte_fallback: byteFallback,
    };
    json.normalizer = {
      type: 'Sequence',
      normalizers: [...precompiled, ...(extraSpaces ? [{ type: 'Strip', strip_left: false, strip_right: true },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: METASPACE }] : [])],
    };
    const metaspace = { replacement: METASPACE, prepend_scheme: dummyPrefix ? 'always' : 'never', split: true };
    json.pre_tokenizer = { type: 'Metaspace', ...metaspace };
    json.decoder = { type: 'Metaspace', ...metaspace };
    return json;
  }
  const ids = new Map(pieces.map(({ piece }, id) => [piece, id]));
  json.model = {
    type: 'BPE',
    unk_token: pieces[unkId].piece,
    fuse_unk: true,
    byte_fallback: byteFallback,
    vocab: Object.fromEntries(pieces.map(({ piece }, id) => [piece, id])),
    merges: mergesOf(pieces, ids),
  };
  json.normalizer = {
    type: 'Sequence',
    normalizers: [...precompiled,
      ...(extraSpaces ? [{ type: 'Strip', strip_left: true, strip_right: true },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] : []),
      ...(dummyPrefix ? [{ type: 'Prepend', prepend: METASPACE }] : []),
      { type: 'Replace', pattern: { String: ' ' }, content: METASPACE }],
  };
  json.pre_tokenizer = null;
  json.decoder = {
    type: 'Sequence',
    decoders: [{ type: 'Replace', pattern: { String: METASPACE }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
      ...(dummyPrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : [])],
  };
  return json;
}

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

const special = (id, content, lstrip = false) => ({
  id, content, single_word: false, lstrip, rstrip: false, normalized: false, special: true,
});

function template(single, tokens) {
  const pieces = single.split(' ').map((name) => (name === '$A' ? { Sequence: { id: 'A', type_id: 0 } }
    : { SpecialToken: { id: name, type_id: 0 } }));
  const specialTokens = Object.fromEntries(tokens.map(([name, id]) => [name, { id: name, ids: [id], tokens: [name] }]));
  return { type: 'TemplateProcessing', single: pieces, special_tokens: specialTokens };
}

// What transformers' class-specific converters change for a Unigram model.
// XLMRobertaConverter: fairseq's ids (<s> <pad> </s> <unk> first, every
// other piece one id later, <mask> last) and "<s> $A </s>".
// T5Converter: <extra_id_N> tokens after the pieces, and "$A </s>".
const UNIGRAM_CLASSES = {
  XLMRoberta(json, pieces) {
    const vocab = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0],
      ...pieces.slice(3).map(({ piece, score }) => [piece, score]), ['<mask>', 0]];
    json.model.vocab = vocab;
    json.model.unk_id = 3;
    json.added_tokens = [...['<s>', '<pad>', '</s>', '<unk>'].map((token, id) => special(id, token)),
      special(vocab.length - 1, '<mask>', true)];
    json.post_processor = template('<s> $A </s>', [['<s>', 0], ['</s>', 2]]);
  },
  T5(json, pieces, config) {
    const extraIds = config.extra_ids ?? 100;
    if (!Number.isSafeInteger(extraIds) || extraIds < 0) {
      throw new RangeError(`tokenizerConfig "extra_ids" must be a non-negative integer, got ${extraIds}`);
    }
    for (let k = extraIds - 1; k >= 0; k--) {
      json.added_tokens.push(special(json.model.vocab.length, `<extra_id_${k}>`));
      json.model.vocab.push([`<extra_id_${k}>`, 0]);
    }
    const eos = pieces.findIndex(({ piece }) => piece === '</s>');
    if (eos < 0) throw new Error(`${where} for T5 has no "</s>" piece`);
    json.post_processor = template('$A </s>', [['</s>', eos]]);
  },
};

// The tokenizer classes whose .model files this reads: no class (the
// generic conversion), the two Unigram ones above, and Llama-family BPE (whose
// BOS / EOS tokenizer-config.js adds).
function tokenizerFamily(tokenizerClass, modelType) {
  if (tokenizerClass === undefined || tokenizerClass === null) return null;
  const family = /^(XLMRoberta|T5|Llama|CodeLlama|Gemma)Tokenizer(Fast)?$/.exec(String(tokenizerClass))?.[1];
  const expected = family === undefined ? null : ['XLMRoberta', 'T5'].includes(family) ? 1 : 2;
  if (expected !== modelType) {
    throw new Error(`${where}: attnlens converts .model files of XLMRobertaTokenizer and T5Tokenizer (unigram) and `
      + `Llama / Gemma tokenizers (bpe) as transformers does; tokenizer_class ${JSON.stringify(tokenizerClass)} `
      + `with a ${modelType === 1 ? 'unigram' : 'bpe'} model needs its tokenizer.json`);
  }
  return family;
}

/**
 * The tokenizer.json equivalent of a sentencepiece .model file.
 * @param {Uint8Array|ArrayBuffer} data the file's bytes
 * @param {object} [config] tokenizer_config.json: its tokenizer_class picks
 *   transformers' converter (XLMRobertaTokenizer, T5Tokenizer, Llama-family)
 * @returns {object} tokenizer.json
 * @throws {Error} naming what is malformed or unsupported
 */
export function sentencepieceTokenizerJson(data, config = {}) {
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
  const family = tokenizerFamily(config.tokenizer_class, modelType);
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
    if (family) UNIGRAM_CLASSES[family](json, pieces, config);
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

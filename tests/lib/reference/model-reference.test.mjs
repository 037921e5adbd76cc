// The float64 model reference checked against itself and against the math:
// its small functions against known values, the attention invariants every
// architecture must satisfy, rotary embeddings' defining property, grouped-query
// attention against plain multi-head attention, tied against untied heads,
// and each layer's trace against the older single-head attention reference.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  applyRotary, erf, geluErf, geluTanh, layerNorm, modelDimensions, multiHeadAttention,
  referenceForward, referenceTensorShapes, rmsNorm, silu,
} from '../../support/model-reference.mjs';
import { namingVariants, tinyCheckpoint } from '../../support/tiny-checkpoints.mjs';
import { attentionReference, matmul } from '../../wasm/reference.mjs';

function assertClose(actual, expected, tolerance, label = '') {
  assert.equal(actual.length, expected.length, `${label}: length`);
  for (let i = 0; i < actual.length; i++) {
    const scale = Math.max(1, Math.abs(expected[i]));
    if (!(Math.abs(actual[i] - expected[i]) <= tolerance * scale)) {
      assert.fail(`${label}[${i}]: ${actual[i]} vs ${expected[i]} (tolerance ${tolerance})`);
    }
  }
}

function ramp(n, vocab, step = 7, start = 3) {
  return Array.from({ length: n }, (_, i) => (start + i * step) % vocab);
}

// ---------------------------------------------------------------------------
// Small functions

test('erf matches tabulated values to ~1e-15', () => {
  // Values from Abramowitz & Stegun / high-precision tables.
  const table = [
    [0, 0], [1e-10, 1.1283791670955126e-10], [0.1, 0.1124629160182848922], [0.5, 0.5204998778130465377],
    [1, 0.8427007929497148693], [1.5, 0.9661051464753107271], [2, 0.9953222650189527342],
    [3, 0.9999779095030014146], [4, 0.9999999845827420997], [5, 0.9999999999984625402],
    [6, 1], [10, 1],
  ];
  for (const [x, value] of table) {
    assert.ok(Math.abs(erf(x) - value) < 2e-15, `erf(${x}) = ${erf(x)}, want ${value}`);
    assert.equal(erf(-x), -erf(x));
  }
  // Its derivative is 2/sqrt(pi) e^(-x^2) everywhere on a grid (central differences).
  for (let x = -5; x <= 5; x += 0.25) {
    const h = 1e-4;
    const slope = (erf(x + h) - erf(x - h)) / (2 * h);
    assert.ok(Math.abs(slope - (2 / Math.sqrt(Math.PI)) * Math.exp(-x * x)) < 1e-8, `erf' at ${x}`);
  }
  assert.ok(Number.isNaN(erf(NaN)));
});

test('the activations and norms at known points', () => {
  assert.ok(Math.abs(geluErf(1) - 0.8413447460685429) < 1e-15); // 1 * Phi(1)
  assert.ok(Math.abs(geluErf(-1) - -0.15865525393145707) < 1e-15);
  assert.ok(Math.abs(geluTanh(1) - 0.8411919906082768) < 1e-15);
  assert.ok(Math.abs(silu(1) - 0.7310585786300049) < 1e-15);
  assert.equal(geluErf(0), 0);
  // gelu_new tracks the exact gelu to ~1e-3 (that is why it is an approximation).
  for (let x = -4; x <= 4; x += 0.1) assert.ok(Math.abs(geluTanh(x) - geluErf(x)) < 1e-3);

  const x = [1, 2, 3, 4, -2, 0, 5, 1];
  const ones = new Float64Array(4).fill(1);
  const zeros = new Float64Array(4);
  const normed = layerNorm(x, 2, 4, ones, zeros, 0);
  for (let r = 0; r < 2; r++) {
    const row = normed.subarray(r * 4, r * 4 + 4);
    const mean = row.reduce((a, b) => a + b) / 4;
    const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / 4; // biased
    assert.ok(Math.abs(mean) < 1e-15 && Math.abs(variance - 1) < 1e-14);
  }
  // [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  assert.ok(Math.abs(normed[0] - -1.5 / Math.sqrt(1.25)) < 1e-15);
  const rms = rmsNorm([3, 4], 1, 2, [1, 2], 0); // rms = sqrt(12.5)
  assertClose(rms, [3 / Math.sqrt(12.5), 8 / Math.sqrt(12.5)], 1e-15, 'rmsNorm');
});

// ---------------------------------------------------------------------------
// Rotary

test('rotary: rotate_half pairs (i, i + hd/2) and angle p * theta^(-2i/hd)', () => {
  // hd = 4, theta = 100: frequencies 1 and 0.1; pairs (0, 2) and (1, 3).
  const rows = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]];
  const at = (row, position) => applyRotary(row, 1, 1, 4, 100, [position]);
  assertClose(at(rows[0], 1), [Math.cos(1), 0, Math.sin(1), 0], 1e-15, 'x0 at p=1');
  assertClose(at(rows[1], 1), [0, Math.cos(0.1), 0, Math.sin(0.1)], 1e-15, 'x1 at p=1');
  assertClose(at(rows[2], 3), [-Math.sin(3), 0, Math.cos(3), 0], 1e-15, 'x2 at p=3');
});

test('rotary: position 0 leaves q unchanged; norms are kept', () => {
  const heads = 3;
  const hd = 8;
  const n = 5;
  const x = Float64Array.from({ length: n * heads * hd }, (_, i) => Math.sin(i * 1.7) + 0.1 * i);
  const rotated = applyRotary(x, n, heads, hd, 10000);
  assert.deepEqual(rotated.subarray(0, heads * hd), x.subarray(0, heads * hd));
  for (let i = 0; i < n * heads; i++) {
    const norm = (a) => Math.hypot(...a.subarray(i * hd, i * hd + hd));
    assert.ok(Math.abs(norm(rotated) - norm(x)) < 1e-13);
  }
});

test('rotary: rotated q . k depends only on the relative position', () => {
  const hd = 8;
  const q = Float64Array.from({ length: hd }, (_, i) => Math.cos(i + 0.3));
  const k = Float64Array.from({ length: hd }, (_, i) => Math.sin(2 * i + 1));
  const dot = (p, s) => {
    const rq = applyRotary(q, 1, 1, hd, 10000, [p]);
    const rk = applyRotary(k, 1, 1, hd, 10000, [s]);
    return rq.reduce((sum, v, c) => sum + v * rk[c], 0);
  };
  for (const offset of [0, 1, 2, 5, -3]) {
    const base = dot(offset + 7, 7);
    for (const s of [0, 3, 11, 20]) {
      if (offset + s < 0) continue;
      assert.ok(Math.abs(dot(offset + s, s) - base) < 1e-12, `offset ${offset} at ${s}`);
    }
  }
  // And it does depend on the offset (the test above is not vacuous).
  assert.ok(Math.abs(dot(3, 0) - dot(0, 0)) > 1e-3);
});

// ---------------------------------------------------------------------------
// Attention invariants on every tiny checkpoint

for (const arch of ['gpt2', 'bert', 'llama']) {
  for (const naming of Object.keys(namingVariants[arch])) {
    test(`${arch} ${naming}: rows sum to 1, causal upper triangle exactly 0 (gpt2, llama), bert rows full`, () => {
      const { config, tensors } = tinyCheckpoint({ arch, naming });
      const dims = modelDimensions(arch, config);
      const n = 9;
      const { attention, hidden, logits } = referenceForward(arch, config, tensors, ramp(n, dims.vocabSize));
      assert.equal(attention.length, dims.layers * dims.heads * n * n);
      assert.equal(hidden.length, n * dims.width);
      // BERT has logits only with its masked-LM head (the hub variant's cls.predictions).
      assert.equal(logits === null, arch === 'bert' && !namingVariants.bert[naming].heads);
      if (logits) assert.equal(logits.length, n * dims.vocabSize);
      for (let row = 0; row < dims.layers * dims.heads * n; row++) {
        const i = row % n; // the query
        let sum = 0;
        for (let j = 0; j < n; j++) {
          const w = attention[row * n + j];
          sum += w;
          if (arch === 'bert' || j <= i) assert.ok(w > 0, `row ${row} key ${j} should be visible`);
          else assert.equal(w, 0, `row ${row} key ${j} is in the future`);
        }
        assert.ok(Math.abs(sum - 1) < 1e-12, `row ${row} sums to ${sum}`);
      }
      for (const v of [...hidden, ...(logits ?? [])]) assert.ok(Number.isFinite(v));
    });
  }
}

for (const arch of ['gpt2', 'llama']) {
  test(`${arch}: causal, so the first m tokens' results do not depend on later tokens`, () => {
    const { config, tensors } = tinyCheckpoint({ arch, naming: Object.keys(namingVariants[arch])[1] });
    const dims = modelDimensions(arch, config);
    const ids = ramp(10, dims.vocabSize);
    const full = referenceForward(arch, config, tensors, ids);
    const m = 6;
    const prefix = referenceForward(arch, config, tensors, ids.slice(0, m));
    for (let lh = 0; lh < dims.layers * dims.heads; lh++) {
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < m; j++) {
          assert.ok(Math.abs(full.attention[(lh * 10 + i) * 10 + j] - prefix.attention[(lh * m + i) * m + j]) < 1e-14);
        }
      }
    }
    assertClose(full.hidden.subarray(0, m * dims.width), prefix.hidden, 1e-13, 'hidden');
    assertClose(full.logits.subarray(0, m * dims.vocabSize), prefix.logits, 1e-13, 'logits');
  });
}

test('bert: padding hidden by the key mask gets weight 0 and leaves the real tokens as without it', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'bert', naming: 'bare' });
  const dims = modelDimensions('bert', config);
  const ids = ramp(6, dims.vocabSize);
  const padded = [...ids, 0, 0, 0];
  const keyMask = [1, 1, 1, 1, 1, 1, 0, 0, 0];
  const alone = referenceForward('bert', config, tensors, ids);
  const masked = referenceForward('bert', config, tensors, padded, { keyMask });
  const n = 9;
  for (let row = 0; row < dims.layers * dims.heads * n; row++) {
    for (let j = 6; j < n; j++) assert.equal(masked.attention[row * n + j], 0);
    const sum = masked.attention.subarray(row * n, row * n + n).reduce((a, b) => a + b);
    assert.ok(Math.abs(sum - 1) < 1e-12);
  }
  assertClose(masked.hidden.subarray(0, 6 * dims.width), alone.hidden, 1e-13, 'hidden of the real tokens');
  // Without the mask the padding is attended to and changes them.
  const unmasked = referenceForward('bert', config, tensors, padded);
  assert.ok(Math.abs(unmasked.hidden[0] - alone.hidden[0]) > 1e-6);
});

test('gpt2 and llama: masked keys get weight 0 on top of the causal mask', () => {
  for (const arch of ['gpt2', 'llama']) {
    const { config, tensors } = tinyCheckpoint({ arch });
    const dims = modelDimensions(arch, config);
    const n = 6;
    const keyMask = [1, 0, 1, 1, 0, 1];
    const { attention } = referenceForward(arch, config, tensors, ramp(n, dims.vocabSize), { keyMask });
    for (let row = 0; row < dims.layers * dims.heads * n; row++) {
      const i = row % n;
      for (let j = 0; j < n; j++) if (keyMask[j] === 0 || j > i) assert.equal(attention[row * n + j], 0);
      const sum = attention.subarray(row * n, row * n + n).reduce((a, b) => a + b);
      assert.ok(Math.abs(sum - 1) < 1e-12);
    }
  }
});

test('a query whose every key is hidden gets an all-zero row', () => {
  const q = Float64Array.from([1, 2]);
  const { weights, concatenated } = multiHeadAttention({
    q, k: q, v: q, n: 1, heads: 1, kvHeads: 1, headWidth: 2, causal: true, keyMask: [0],
  });
  assert.deepEqual(Array.from(weights), [0]);
  assert.deepEqual(Array.from(concatenated), [0, 0]);
});

// ---------------------------------------------------------------------------
// Grouped-query attention, tied heads

test('llama: GQA equals plain MHA whose k and v heads repeat each kv head for its group', () => {
  const gqa = tinyCheckpoint({ arch: 'llama', naming: 'head-dim' }); // H = 4, G = 2, hd = 12
  const dims = modelDimensions('llama', gqa.config);
  assert.equal(dims.heads, 4);
  assert.equal(dims.kvHeads, 2);
  const hd = dims.headWidth;
  const d = dims.width;
  const mhaConfig = { ...gqa.config, num_key_value_heads: dims.heads };
  const mhaTensors = { ...gqa.tensors };
  for (let layer = 0; layer < dims.layers; layer++) {
    for (const part of ['k_proj', 'v_proj']) {
      const name = `model.layers.${layer}.self_attn.${part}.weight`;
      const grouped = gqa.tensors[name]; // [G*hd, d]
      const repeated = new Float64Array(dims.heads * hd * d);
      for (let h = 0; h < dims.heads; h++) {
        const kvHead = Math.floor(h / (dims.heads / dims.kvHeads));
        repeated.set(grouped.subarray(kvHead * hd * d, (kvHead + 1) * hd * d), h * hd * d);
      }
      mhaTensors[name] = repeated;
    }
  }
  const ids = ramp(8, dims.vocabSize);
  const a = referenceForward('llama', gqa.config, gqa.tensors, ids);
  const b = referenceForward('llama', mhaConfig, mhaTensors, ids);
  assertClose(a.attention, b.attention, 1e-14, 'attention');
  assertClose(a.hidden, b.hidden, 1e-13, 'hidden');
  assertClose(a.logits, b.logits, 1e-13, 'logits');
  // Query heads of one group differ (their q differ) but share k and v.
  const t = referenceForward('llama', gqa.config, gqa.tensors, ids, { trace: true }).layers[0];
  const width = dims.heads * hd;
  for (let i = 0; i < 8; i++) {
    for (let c = 0; c < hd; c++) {
      assert.equal(t.k[i * width + c], t.k[i * width + hd + c]); // heads 0 and 1: kv head 0
      assert.equal(t.v[i * width + 2 * hd + c], t.v[i * width + 3 * hd + c]); // heads 2 and 3: kv head 1
    }
  }
});

test('tied and untied LM heads with equal matrices give equal logits', () => {
  const gpt2 = tinyCheckpoint({ arch: 'gpt2', naming: 'prefixed' }); // no lm_head: tied
  const untiedConfig = { ...gpt2.config, tie_word_embeddings: false };
  const withHead = { ...gpt2.tensors, 'lm_head.weight': Float64Array.from(gpt2.tensors['wte.weight']) };
  const ids = ramp(7, gpt2.config.vocab_size);
  const tied = referenceForward('gpt2', gpt2.config, gpt2.tensors, ids);
  assert.deepEqual(referenceForward('gpt2', untiedConfig, withHead, ids).logits, tied.logits);
  // A different own head changes the logits only when the config unties it.
  const otherHead = { ...gpt2.tensors, 'lm_head.weight': gpt2.tensors['wte.weight'].map((v) => -v) };
  assert.deepEqual(referenceForward('gpt2', gpt2.config, otherHead, ids).logits, tied.logits);
  assert.deepEqual(referenceForward('gpt2', untiedConfig, otherHead, ids).logits, tied.logits.map((v) => -v));

  const llama = tinyCheckpoint({ arch: 'llama', naming: 'gqa' }); // tie_word_embeddings true, no lm_head
  const llamaIds = ramp(7, llama.config.vocab_size);
  const llamaTied = referenceForward('llama', llama.config, llama.tensors, llamaIds);
  const llamaHead = { ...llama.tensors, 'lm_head.weight': Float64Array.from(llama.tensors['model.embed_tokens.weight']) };
  const untied = { ...llama.config, tie_word_embeddings: false };
  assert.deepEqual(referenceForward('llama', untied, llamaHead, llamaIds).logits, llamaTied.logits);
  const negated = { ...llama.tensors, 'lm_head.weight': llama.tensors['model.embed_tokens.weight'].map((v) => -v) };
  assert.deepEqual(referenceForward('llama', llama.config, negated, llamaIds).logits, llamaTied.logits, 'tie_word_embeddings true ties');
  assert.deepEqual(referenceForward('llama', untied, negated, llamaIds).logits, llamaTied.logits.map((v) => -v));
  // logits = hidden embed^T, by hand for one entry.
  const d = llama.config.hidden_size;
  let dot = 0;
  for (let c = 0; c < d; c++) dot += llamaTied.hidden[2 * d + c] * llama.tensors['model.embed_tokens.weight'][5 * d + c];
  assert.ok(Math.abs(llamaTied.logits[2 * llama.config.vocab_size + 5] - dot) < 1e-12);
});

// ---------------------------------------------------------------------------
// Layer traces against the older single-head reference (tests/wasm/reference.mjs)

function headColumns(matrix, n, width, head, hd) {
  const out = new Float64Array(n * hd);
  for (let i = 0; i < n; i++) for (let c = 0; c < hd; c++) out[i * hd + c] = matrix[i * width + head * hd + c];
  return out;
}

for (const [arch, naming] of [['gpt2', 'untied'], ['bert', 'hub'], ['llama', 'head-dim'], ['llama', 'bias-buffers']]) {
  test(`${arch} ${naming}: each layer's trace agrees with its own steps and with attentionReference`, () => {
    const { config, tensors } = tinyCheckpoint({ arch, naming });
    const dims = modelDimensions(arch, config);
    const n = 7;
    const ids = ramp(n, dims.vocabSize);
    const result = referenceForward(arch, config, tensors, ids, { trace: true });
    const { heads, headWidth: hd, width: d } = dims;
    const width = heads * hd;
    assert.equal(result.layers.length, dims.layers);
    result.layers.forEach((step, layer) => {
      assert.deepEqual(step.weights, result.attention.subarray(layer * heads * n * n, (layer + 1) * heads * n * n));
      // v = x wv (+ bias), with wv in [in, out] orientation.
      const xv = matmul(step.x, step.wv, n, d, width);
      const vBias = step.v.map((v, i) => v - xv[i]); // the bias, the same on every row
      for (let i = 1; i < n; i++) assertClose(vBias.subarray(i * width, (i + 1) * width), vBias.subarray(0, width), 1e-12, 'v bias');
      if (arch !== 'llama') {
        const xq = matmul(step.x, step.wq, n, d, width);
        const qBias = step.q.map((v, i) => v - xq[i]);
        for (let i = 1; i < n; i++) assertClose(qBias.subarray(i * width, (i + 1) * width), qBias.subarray(0, width), 1e-12, 'q bias');
      } else {
        // q is x wq (+ bias), then rotated.
        const bias = tensors[`model.layers.${layer}.self_attn.q_proj.bias`];
        const xq = matmul(step.x, step.wq, n, d, width).map((v, i) => v + (bias ? bias[i % width] : 0));
        assertClose(step.q, applyRotary(xq, n, heads, hd, config.rope_theta), 1e-12, 'rotated q');
      }
      for (let h = 0; h < heads; h++) {
        const expected = attentionReference({
          q: headColumns(step.q, n, width, h, hd), k: headColumns(step.k, n, width, h, hd), v: headColumns(step.v, n, width, h, hd),
          m: n, n, dk: hd, dv: hd, causal: arch !== 'bert',
        });
        const slice = (a) => a.subarray(h * n * n, (h + 1) * n * n);
        assertClose(slice(step.weights), expected.weights, 1e-13, `layer ${layer} head ${h} weights`);
        assertClose(slice(step.scores), expected.scores, 1e-13, 'scores');
        assert.deepEqual(slice(step.scaledScores), expected.scaledScores);
        assertClose(headColumns(step.concatenatedHeads, n, width, h, hd), expected.output, 1e-13, 'head output');
      }
      // output = concat wo (+ bias): again a constant row difference.
      const projected = matmul(step.concatenatedHeads, step.wo, n, width, d);
      const oBias = step.output.map((v, i) => v - projected[i]);
      for (let i = 1; i < n; i++) assertClose(oBias.subarray(i * d, (i + 1) * d), oBias.subarray(0, d), 1e-12, 'o bias');
    });
    const last = result.layers.at(-1).layerOutput;
    if (arch === 'bert') assert.deepEqual(last, result.hidden);
    else assert.notDeepEqual(last, result.hidden); // the final norm comes after
  });
}

// ---------------------------------------------------------------------------
// Shapes and refusals

test('referenceTensorShapes: the contract shapes, llama biases only when configured', () => {
  const llama = (extra) => Object.fromEntries(referenceTensorShapes('llama', {
    hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 12,
    intermediate_size: 40, vocab_size: 60, ...extra,
  }).map((s) => [s.name, s.shape]));
  const plain = llama({});
  assert.deepEqual(plain['model.layers.0.self_attn.q_proj.weight'], [48, 32]);
  assert.deepEqual(plain['model.layers.0.self_attn.k_proj.weight'], [24, 32]);
  assert.deepEqual(plain['model.layers.0.self_attn.o_proj.weight'], [32, 48]);
  assert.deepEqual(plain['model.layers.0.mlp.down_proj.weight'], [32, 40]);
  assert.equal(plain['model.layers.0.self_attn.q_proj.bias'], undefined);
  const biased = llama({ attention_bias: true, mlp_bias: true });
  assert.deepEqual(biased['model.layers.0.self_attn.k_proj.bias'], [24]);
  assert.deepEqual(biased['model.layers.0.self_attn.o_proj.bias'], [32]);
  assert.deepEqual(biased['model.layers.0.mlp.gate_proj.bias'], [40]);
  const bert = Object.fromEntries(referenceTensorShapes('bert', {
    hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 12, vocab_size: 5, max_position_embeddings: 6,
  }).map((s) => [s.name, s.shape]));
  assert.deepEqual(bert['embeddings.token_type_embeddings.weight'], [2, 8]);
  assert.deepEqual(bert['encoder.layer.0.intermediate.dense.weight'], [12, 8]);
  assert.deepEqual(bert['encoder.layer.0.output.dense.weight'], [8, 12]);
  assert.equal(Object.keys(bert).length, 5 + 16);
});

test('referenceForward refuses what it cannot compute, naming the problem', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'gpt2' });
  assert.throws(() => referenceForward('gpt2', config, tensors, [0, 40]), /id 40 outside \[0, 40\)/);
  assert.throws(() => referenceForward('gpt2', config, tensors, new Array(21).fill(1)), /21 tokens exceed 20 positions/);
  assert.throws(() => referenceForward('gpt2', config, tensors, []), /no tokens/);
  const missing = { ...tensors };
  delete missing['h.1.ln_2.bias'];
  assert.throws(() => referenceForward('gpt2', config, missing, [1]), /missing tensor h\.1\.ln_2\.bias/);
  const short = { ...tensors, 'ln_f.weight': new Float64Array(3) };
  assert.throws(() => referenceForward('gpt2', config, short, [1]), /ln_f\.weight has 3 values, expected 24/);
  assert.throws(() => referenceForward('t5', config, tensors, [1]), /unknown architecture t5/);
  assert.throws(() => referenceForward('gpt2', { ...config, activation_function: 'relu' }, tensors, [1]), /relu is not implemented/);
  assert.throws(() => modelDimensions('gpt2', { ...config, n_head: 5 }), /5 heads do not divide n_embd 24/);
  const llama = tinyCheckpoint({ arch: 'llama' });
  assert.throws(() => modelDimensions('llama', { ...llama.config, num_key_value_heads: 3 }), /3 kv heads do not divide 4 heads/);
  assert.throws(() => modelDimensions('llama', { ...llama.config, head_dim: 7 }), /head width 7 must be an even integer/);
  assert.throws(() => referenceForward('llama', { ...llama.config, rope_scaling: { rope_type: 'llama3' } }, llama.tensors, [1]), /rope_scaling/);
});

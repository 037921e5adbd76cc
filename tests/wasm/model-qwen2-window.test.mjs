// Qwen2's sliding windows as Qwen2Config and modeling_qwen2.py set them:
// only with use_sliding_window, on the layers layer_types calls
// "sliding_attention" or, without layer_types, on layer max_window_layers
// and after; each windowed query sees itself and the sliding_window - 1
// tokens before it. Against the float64 reference
// (tests/support/model-reference.mjs) and the attention's own zeros.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { loadBoth } from './helpers.mjs';
import { assertMatchesReference, idsFor } from './model-checks.mjs';

const [lens] = await loadBoth();
const base = tinyCheckpoint({ arch: 'qwen2', naming: 'sliding', dtype: 'F32', seed: 41 });
const weights = base.files['model.safetensors'];

// Per layer, whether some query gives weight to a key `window` or more tokens back.
function seesFar(attention, layers, heads, n, window) {
  return Array.from({ length: layers }, (_, layer) => {
    for (let h = 0; h < heads; h++) {
      for (let q = 0; q < n; q++) {
        for (let k = 0; k <= q - window; k++) if (attention[((layer * heads + h) * n + q) * n + k] > 0) return true;
      }
    }
    return false;
  });
}

for (const [label, overrides, far] of [
  ['max_window_layers 1: layer 1 windowed', {}, [true, false]],
  ['layer_types override max_window_layers', { layer_types: ['sliding_attention', 'full_attention'] }, [false, true]],
  ['use_sliding_window false: no window', { use_sliding_window: false }, [true, true]],
  ['max_window_layers past the last layer: no window', { max_window_layers: 2 }, [true, true]],
]) {
  test(`qwen2: ${label}`, async () => {
    const config = { ...base.config, ...overrides };
    const model = await lens.loadModel({ config, weights });
    try {
      const ids = idsFor(model.info.vocabSize, 7, 3);
      const run = model.run({ ids });
      assertMatchesReference(run, referenceForward('qwen2', config, base.tensors, ids), label);
      assert.deepEqual(seesFar(run.attention, model.info.layers, model.info.heads, ids.length, config.sliding_window), far);
    } finally {
      model.dispose();
    }
  });
}

test('qwen2: layer_types of the wrong length or kind, and a bad sliding_window, are refused by name', async () => {
  const load = (overrides) => lens.loadModel({ config: { ...base.config, ...overrides }, weights });
  await assert.rejects(load({ layer_types: ['sliding_attention'] }),
    /config\.layer_types gives 1 layer types, but config\.num_hidden_layers is 2/);
  await assert.rejects(load({ layer_types: ['sliding_attention', 'chunked_attention'] }),
    /config\.layer_types holds "chunked_attention"/);
  await assert.rejects(load({ sliding_window: 0 }), /config\.sliding_window must be a whole number of at least 1/);
  // Without use_sliding_window the window fields are not read at all (Qwen2.5's configs carry them).
  const model = await load({ use_sliding_window: false, sliding_window: 0, layer_types: ['x'] });
  model.dispose();
});

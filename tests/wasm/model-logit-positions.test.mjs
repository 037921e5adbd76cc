// computeLogits({ positions }): chosen rows of a run's logits computed afterwards from what the model
// kept, for masked-LM encoders (BERT, RoBERTa, DistilBERT, ELECTRA's generator: the head's transform,
// norm and decoder) and decoders (GPT-2, Llama through an incremental run), each row bit for bit the
// same position's row of the run's logits: 'all'; any order, repeats and consecutive runs of
// positions; clear errors for bad positions, and no memory left behind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, assertRefused, loadBoth } from './helpers.mjs';
import { idsFor } from './model-checks.mjs';

const lenses = await loadBoth();

const checkpoints = [
  { arch: 'bert', naming: 'hub' }, { arch: 'roberta', naming: 'hub' }, { arch: 'distilbert', naming: 'hub' },
  { arch: 'electra', naming: 'generator' }, { arch: 'gpt2', naming: 'bare' }, { arch: 'llama', naming: 'gqa' },
];

const load = (lens, { arch, naming }, options = {}, dtype = 'F32') => {
  const checkpoint = tinyCheckpoint({ arch, naming, dtype, seed: 41 });
  return lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'], ...options });
};

// Rows `positions` of a rows x vocab array, one after another.
function rowsOf(logits, positions, vocab) {
  const out = new Float32Array(positions.length * vocab);
  positions.forEach((position, i) => out.set(logits.subarray(position * vocab, (position + 1) * vocab), i * vocab));
  return out;
}

const choices = (n) => [[3], [0], [n - 1], [2, 3, 4], [n - 1, 0], [7, 2, 7, 10], Int32Array.of(5, 1), Array.from({ length: n }, (_, t) => t)];

for (const lens of lenses) {
  for (const family of checkpoints) {
    test(`${lens.simdLevel} module, tiny ${family.arch} (${family.naming}): computeLogits({ positions }) gives those rows of logits 'all', bit for bit`, async () => {
      const model = await load(lens, family);
      try {
        const { vocabSize: V, causal } = model.info;
        assert.equal(model.info.lmHead, causal ? 'next-token' : 'masked');
        const ids = idsFor(V, 11, 3), n = ids.length;
        const all = model.run({ ids }).logits;
        // A decoder's run that reused kept positions; an encoder recomputes them all.
        model.run({ ids: ids.slice(0, 6), logits: 'none', attention: 'none' });
        const run = model.run({ ids, logits: 'none', attention: 'none' });
        assert.equal(run.reusedPositions, causal ? 6 : 0);
        assert.equal(run.logits, null);
        const before = lens.heapBytesInUse();
        for (const positions of choices(n)) {
          const rows = run.computeLogits({ positions });
          assert.equal(rows.length, positions.length * V);
          assertBitIdentical(rows, rowsOf(all, Array.from(positions), V), `positions ${Array.from(positions)}`);
        }
        assertBitIdentical(run.computeLogits('last'), run.computeLogits({ positions: [n - 1] }), "'last'");
        assertBitIdentical(run.computeLogits('all'), all, "'all'");
        assert.equal(lens.heapBytesInUse(), before, 'computeLogits leaves no memory behind');
      } finally {
        model.dispose();
      }
    });
  }
}

test('computeLogits({ positions }) of a model kept at 16 bits gives the rows of its run', async () => {
  const model = await load(lenses[0], { arch: 'bert', naming: 'hub' }, { weightStorage: 'as-stored' }, 'F16');
  try {
    assert.equal(model.info.weightStorage, '16-bit');
    const ids = idsFor(model.info.vocabSize, 9, 5);
    const all = model.run({ ids }).logits;
    const run = model.run({ ids, logits: 'none' });
    assertBitIdentical(run.computeLogits({ positions: [8, 1] }), rowsOf(all, [8, 1], model.info.vocabSize), '16-bit rows');
  } finally {
    model.dispose();
  }
});

test('bad positions are refused by name, leaving the heap as it was; after the next run, computeLogits is an Error', async () => {
  const lens = lenses[0];
  const model = await load(lens, { arch: 'bert', naming: 'hub' });
  try {
    const run = model.run({ ids: [2, 5, 4, 9, 3], logits: 'none' });
    const refused = (which, kind, message) => assertRefused(lens, () => run.computeLogits(which), kind, message);
    refused({ positions: 2 }, TypeError, /computeLogits: positions must be a non-empty array of positions from 0 to 4, got 2/);
    refused({ positions: '0,1' }, TypeError, /positions must be a non-empty array of positions from 0 to 4, got "0,1"/);
    refused({}, TypeError, /positions must be a non-empty array of positions from 0 to 4, got undefined/);
    refused({ positions: [] }, TypeError, /positions must be a non-empty array of positions from 0 to 4, got Array\(0\)/);
    refused({ positions: new Int32Array(0) }, TypeError, /non-empty array of positions from 0 to 4, got Int32Array\(0\)/);
    refused({ positions: [1, 5] }, RangeError, /positions\[1\] must be an integer from 0 to 4 \(the run's 5 positions\), got 5/);
    refused({ positions: [-1] }, RangeError, /positions\[0\] must be an integer from 0 to 4 \(the run's 5 positions\), got -1/);
    refused({ positions: [0, 1.5] }, RangeError, /positions\[1\] must be an integer from 0 to 4 .*, got 1\.5/);
    refused({ positions: [NaN] }, RangeError, /positions\[0\] must be an integer .*, got NaN/);
    refused({ positions: ['1'] }, RangeError, /positions\[0\] must be an integer .*, got "1"/);
    refused({ positions: [1], rows: 2 }, TypeError, /computeLogits: unknown option "rows"; expected positions/);
    refused([1, 2], TypeError, /which must be 'last', 'all' or \{ positions \}, got Array\(2\)/);
    refused('first', RangeError, /which must be 'last', 'all' or \{ positions \}, got "first"/);
    refused(null, TypeError, /which must be 'last', 'all' or \{ positions \}, got null/);
    // Far more rows than the memory holds (repeats are allowed): refused before anything is allocated.
    refused({ positions: new Int32Array(2 ** 24) }, RangeError, /16777216 rows of logits need about .* of WebAssembly memory, more than the .* available; ask for fewer positions/);
    assert.equal(run.computeLogits({ positions: [4] }).length, model.info.vocabSize, 'the run is still usable');
    model.run({ ids: [2, 5] });
    assert.throws(() => run.computeLogits({ positions: [0] }), { name: 'Error', message: /computeLogits is valid until the model's next run/ });
  } finally {
    model.dispose();
  }
});

test('computeLogits({ positions }) of an encoder saved without its head is refused, naming why', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'bert', naming: 'bare', dtype: 'F32', seed: 42 });
  const model = await lenses[0].loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    const run = model.run({ ids: [1, 2, 3] });
    assertRefused(lenses[0], () => run.computeLogits({ positions: [1] }), RangeError, /bert models have no language-model head/);
  } finally {
    model.dispose();
  }
});

// A translation's attention as the model worker sends it (model-worker.js translate and
// translationWeights): the three kinds' arrays of an encoder-decoder's model.run, and what they
// hold (attentionKinds, attentionLayers, attentionHeads, attentionPool); or more of that run's heads
// afterwards, through its headWeights (the queries and keys the model kept: no forward).

const KIND_ARRAYS = { encoder: 'attention', decoder: 'decoderAttention', cross: 'crossAttention' };
const range = (count) => Array.from({ length: count }, (_, i) => i);

/** The arrays and the attention fields of an encoder-decoder's run (model.run). */
export function runAttention(run) {
  const { attention, decoderAttention, crossAttention, attentionKinds, attentionLayers, attentionHeads, attentionPool } = run;
  return { attention, decoderAttention, crossAttention, attentionKinds, attentionLayers, attentionHeads, attentionPool };
}

/**
 * `choice` ({ kinds, layers?, heads, pool }: each kind's every layer when layers is absent) of the run `run`
 * kept, laid out as runAttention(model.run({ ..., attention: choice })) would give it.
 * @throws {Error} once the model ran again (headWeights is valid until then)
 */
export function keptTranslationHeads(run, { kinds, layers, heads, pool = 1 }) {
  const value = { attentionKinds: kinds, attentionLayers: {}, attentionHeads: heads, attentionPool: pool };
  for (const [kind, name] of Object.entries(KIND_ARRAYS)) {
    const chosen = kinds.includes(kind) ? layers ?? range(kind === 'encoder' ? run.layers : run.decoderLayers) : [];
    const parts = chosen.flatMap((layer) => heads.map((head) => run.headWeights(kind, layer, head, { pool })));
    const array = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
    parts.reduce((offset, part) => (array.set(part, offset), offset + part.length), 0);
    value.attentionLayers[kind] = chosen;
    value[name] = array;
  }
  return value;
}

// The page's trained model as a source of attention, like the others
// (../sources.js): compute(settings) -> its run of settings.text, from the
// worker (model-client.js keeps only the newest text waiting: a run replaced
// before it started resolves to null). explain() gives the steps of one layer.
// With settings.valueWeighted the run's attention is value-weighted (an encoder-decoder's: carried besides its weights).
// A run carries the attention the page draws; weights() fetches more of it.
// An encoder-decoder translates the text instead (onToken: each token as it is generated).
export function modelSource(client) {
  return {
    // `attention`: the weights the views draw (held-attention.js wantedAttention).
    async compute({ text, valueWeighted }, { encoderDecoder = false, onToken, attention = 'all' } = {}) {
      const run = encoderDecoder ? await client.translate(text, { onToken, valueWeighted, attention }) : await client.run(text, { valueWeighted, attention });
      return run && { ...run, text };
    },
    // More of the attention of the run of `text`: { layers, heads } (held-attention.js fetchedHeads).
    // `coalesce: false` (an export): never replaced by a newer fetch.
    weights: (text, heads, { coalesce = true } = {}) => client.weights(text, heads, { coalesce }),
    // More of a translation's attention: { kinds, layers?, heads, pool } (held-attention.js fetchedTranslationHeads).
    translationWeights: (run, heads, { coalesce = true } = {}) =>
      client.translationWeights({ text: run.text, ids: run.ids, targetIds: run.targetIds }, heads, { coalesce }),
    // The next-token predictions of a decoder's run of `text`, asked for once its attention is drawn.
    predictions: (text) => client.predictions(text),
    stop: () => client.stopTranslation(),
    explain: (run, layer, head, kind) => client.explain(run.text, layer, head, seq2seqInput(run, kind)),
  };
}

/** What the worker reads an encoder-decoder's run by: its source and target ids and the kind shown; {} for other runs. */
export const seq2seqInput = (run, kind) => (run.encoderDecoder ? { ids: run.ids, targetIds: run.targetIds, kind } : {});

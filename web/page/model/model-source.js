// The page's trained model as a source of attention, like the others
// (../sources.js): compute(settings) -> its run of settings.text, from the
// worker (model-client.js keeps only the newest text waiting: a run replaced
// before it started resolves to null). explain() gives the steps of one layer.
// With settings.valueWeighted the run carries the value-weighted attention too.
// A run carries the attention the page draws; weights() fetches more of it.
// An encoder-decoder translates the text instead (onToken: each token as it is generated).
export function modelSource(client) {
  return {
    // `attention`: the weights the views draw (held-attention.js wantedAttention).
    async compute({ text, valueWeighted }, { encoderDecoder = false, onToken, attention = 'all' } = {}) {
      const run = encoderDecoder ? await client.translate(text, { onToken }) : await client.run(text, { valueWeighted, attention });
      return run && { ...run, text };
    },
    // More of the attention of the run of `text`: { layers, heads } (held-attention.js fetchedHeads).
    // `coalesce: false` (an export): never replaced by a newer fetch.
    weights: (text, heads, { coalesce = true } = {}) => client.weights(text, heads, { coalesce }),
    stop: () => client.stopTranslation(),
    explain: ({ text }, layer, head) => client.explain(text, layer, head),
  };
}

// The page's trained model as a source of attention, like the others
// (../sources.js): compute(settings) -> its run of settings.text, from the
// worker (model-client.js keeps only the newest text waiting: a run replaced
// before it started resolves to null). explain() gives the steps of one layer.
// With settings.valueWeighted the run carries the value-weighted attention too.
// An encoder-decoder translates the text instead (onToken: each token as it is generated).
export function modelSource(client) {
  return {
    async compute({ text, valueWeighted }, { encoderDecoder = false, onToken } = {}) {
      const run = encoderDecoder ? await client.translate(text, { onToken }) : await client.run(text, { valueWeighted });
      return run && { ...run, text };
    },
    stop: () => client.stopTranslation(),
    explain: ({ text }, layer, head) => client.explain(text, layer, head),
  };
}

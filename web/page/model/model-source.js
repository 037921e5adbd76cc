// The page's trained model as a source of attention, like the others
// (../sources.js): compute(settings) -> its run of settings.text, from the
// worker (model-client.js keeps only the newest text waiting: a run replaced
// before it started resolves to null). explain() gives the steps of one layer.
// With settings.valueWeighted the run carries the value-weighted attention too.
// An encoder-decoder translates the text instead (onToken: each token as it is generated).
export function modelSource(client) {
  return {
    async compute({ text, valueWeighted }, { encoderDecoder = false, onToken } = {}) {
      const run = encoderDecoder ? await client.translate(text, { onToken, valueWeighted }) : await client.run(text, { valueWeighted });
      return run && { ...run, text };
    },
    stop: () => client.stopTranslation(),
    explain: (run, layer, head, kind) => client.explain(run.text, layer, head, seq2seqInput(run, kind)),
  };
}

/** What the worker reads an encoder-decoder's run by: its source and target ids and the kind shown; {} for other runs. */
export const seq2seqInput = (run, kind) => (run.encoderDecoder ? { ids: run.ids, targetIds: run.targetIds, kind } : {});

// The page's trained model as a source of attention, like the others
// (../sources.js): compute(settings) -> its run of settings.text, from the
// worker (model-client.js keeps only the newest text waiting: a run replaced
// before it started resolves to null). explain() gives the steps of one layer.
// With settings.valueWeighted the run carries the value-weighted attention too.
export function modelSource(client) {
  return {
    async compute({ text, valueWeighted }) {
      const run = await client.run(text, { valueWeighted });
      return run && { ...run, text };
    },
    explain: ({ text }, layer, head) => client.explain(text, layer, head),
  };
}

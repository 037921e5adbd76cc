// An encoder-decoder's translation as <attnlens-model> and the page's model
// worker show it: greedy decoding (model.generate, at most `maxTokens` and never
// more than the decoder has positions), then one model.run over the source and
// the decoder's inputs (its start id and every generated token), which gives all
// three kinds of attention with one row per decoder input. Row i of the
// cross-attention is the step whose logits chose generated token i.
// analyzeTranslation gives model.analyze's measures of that same source and
// target (analyze needs the target for an encoder-decoder).

/** `onToken(token, maxTokens)` sees each token as generate chooses it; returns { generated, run, maxTokens }. */
export function translate(model, input, { maxTokens = 32, onToken } = {}) {
  const limit = Math.max(1, Math.min(maxTokens, model.info.maxPositions - 1));
  const generated = model.generate({ ...input, maxTokens: limit, onToken: onToken && ((token) => onToken(token, limit)) });
  const run = model.run({ ids: generated.sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] });
  return { generated, run, maxTokens: limit };
}

/** model.analyze of a translation (translate's result): the source and the decoder's inputs, every kind's analyses, with `generated`. */
export function analyzeTranslation(model, { generated, run }, options = {}) {
  return Object.assign(model.analyze({ ids: run.ids, targetIds: run.targetIds, ...options }), { generated });
}

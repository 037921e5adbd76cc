// An encoder-decoder's translation as <attnlens-model> and the page's model
// worker show it: greedy decoding (model.generate, at most `maxTokens` and never
// more than the decoder has positions), then one model.run over the source and
// the decoder's inputs (its start id and every generated token), which gives the
// three kinds of attention (or those asked for) with one row per decoder input. Row i of the
// cross-attention is the step whose logits chose generated token i.
// analyzeTranslation gives model.analyze's measures of that same source and
// target (analyze needs the target for an encoder-decoder).

/**
 * `onToken(token, maxTokens)` sees each token as generate chooses it; returns { generated, run, maxTokens }.
 * `attention`: the run's attention option (model.run: every kind's every head by default), or a function of
 * the source's and the decoder's token counts ({ n, m }) giving it, for a caller that draws only some.
 */
export function translate(model, input, { maxTokens = 32, onToken, attention = 'all' } = {}) {
  const limit = Math.max(1, Math.min(maxTokens, model.info.maxPositions - 1));
  const generated = model.generate({ ...input, maxTokens: limit, onToken: onToken && ((token) => onToken(token, limit)) });
  const targetIds = [model.info.decoderStartId, ...generated.ids];
  const chosen = typeof attention === 'function' ? attention({ n: generated.sourceIds.length, m: targetIds.length }) : attention;
  const run = model.run({ ids: generated.sourceIds, targetIds, attention: chosen });
  return { generated, run, maxTokens: limit };
}

/** model.analyze of a translation (translate's result): the source and the decoder's inputs, every kind's analyses, with `generated`. */
export function analyzeTranslation(model, { generated, run }, options = {}) {
  return Object.assign(model.analyze({ ids: run.ids, targetIds: run.targetIds, ...options }), { generated });
}

// <attnlens-neuron>: BertViz's neuron view (attnlens/views/analysis' neuron)
// of one head and one query token: q, each key's k, q ∘ k, q · k, scaled,
// softmax. Its numbers come from an Explanation, either
//   - a trained model's: src and text as for <attnlens-model>, then
//     model.explain({ layer, head }), or
//   - the reader's own numbers, as for <attnlens-matrices> (a JSON child
//     script, matrices="#id" or the `matrices` property): X and the weight
//     matrices, or the query and key vectors themselves ("Q" and "K" rows,
//     see qkMatrices), through lens.explainMatrices.
// The query is the `query` attribute (default the last token; without it the
// reader's own pick is kept when other attributes change).
import { indexAttribute } from './attributes.js';
import { AttnlensMatrices } from './matrices-element.js';
import { loadedModelOf, modelInput } from './model-element.js';
import { neuron } from '../views/analysis.js';

export class AttnlensNeuron extends AttnlensMatrices {
  // view and token belong to the attention views: not read here. layer is the model's layer.
  static commonAttributes = ['layer', 'head'];
  static ownAttributes = ['src', 'text', 'query', ...AttnlensMatrices.ownAttributes];
  static views = Object.freeze({ neuron });

  /** The loaded model with `src` (see attnlens's Model), else null. */
  model = null;

  viewChoice() {
    const options = { head: indexAttribute(this, 'head', undefined) };
    // Only a query the page sets replaces the one the reader clicked.
    if (this.hasAttribute('query')) options.query = indexAttribute(this, 'query', undefined);
    return { view: 'neuron', options };
  }

  async compute(view, options) {
    if (!this.hasAttribute('src')) {
      const computed = await super.compute('steps', options);
      return computed && { data: computed.result, result: computed.result };
    }
    const model = await loadedModelOf(this);
    if (model === null) return null;
    const explanation = model.explain({
      ...modelInput(this, model, this.getAttribute('text') ?? ''), layer: indexAttribute(this, 'layer', 0), head: options.head ?? 0,
    });
    return { data: explanation, result: explanation };
  }

  // A JSON of query and key vectors ({ "Q": rows, "K": rows }) as the matrices that give exactly
  // those vectors: X = Q, context = K, and W_Q = W_K = W_V = I (one head by default).
  readJson(json, format) {
    let parsed = json;
    try {
      if (typeof json === 'string') parsed = JSON.parse(json);
    } catch {
      // Not JSON: readMatrices says why, as for <attnlens-matrices>.
    }
    const matrices = qkMatrices(parsed);
    if (matrices === null) return super.readJson(json, format);
    try {
      return super.readJson(matrices, format);
    } catch (error) {
      // Named as the JSON names them: Q's rows are X's here, K's the context's.
      error.message = error.message.replace(/\bX\b/g, 'Q').replace(/\bcontext\b/g, 'K');
      throw error;
    }
  }
}

/** `json` with Q and K (query and key vectors, one row per token) as X, context and identity weights; null for other JSON. */
export function qkMatrices(json) {
  if (json === null || typeof json !== 'object' || !('Q' in json || 'K' in json)) return null;
  const { Q, K, keyTokens, ...rest } = json;
  const clash = Object.keys(rest).find((name) => /^(x|w_?[qkvo]|context)$/i.test(name));
  if (clash || !Array.isArray(Q) || !Array.isArray(K)) {
    throw new TypeError(`JSON: give the query and key vectors as "Q" and "K" (one row per token, both), or X with W_Q, W_K and W_V, not both${clash ? ` (got "${clash}" beside Q and K)` : ''}`);
  }
  const width = Array.isArray(Q[0]) ? Q[0].length : 0;
  const identity = Array.from({ length: width }, (_, row) => Array.from({ length: width }, (_, col) => (row === col ? 1 : 0)));
  const keys = keyTokens ?? (K.length === Q.length ? rest.tokens : undefined);
  return { ...rest, X: Q, context: K, W_Q: identity, W_K: identity, W_V: identity, ...(keys && { contextTokens: keys }) };
}

// <attnlens-sentence text="The cat sat on the mat." heads="4" view="heatmap">:
// a sentence through random projections, computed live in the page by the
// WebAssembly core (lens.explainSentence), drawn with any view.
import { load } from '../lib/browser.js';
import { flagAttribute, numberAttribute } from './attributes.js';
import { AttentionElement } from './attention-element.js';
import { fromExplanation } from '../views/records.js';

export class AttnlensSentence extends AttentionElement {
  static ownAttributes = ['text', 'context', 'd-model', 'heads', 'seed', 'causal', 'temperature', 'identity'];

  async compute(view) {
    const context = this.getAttribute('context');
    const settings = {
      text: this.getAttribute('text') ?? '',
      // A context sentence makes it cross-attention: its tokens are the keys.
      context: context === null || context.trim() === '' ? undefined : context,
      dModel: numberAttribute(this, 'd-model', 64),
      heads: numberAttribute(this, 'heads', 4),
      seed: numberAttribute(this, 'seed', 1),
      causal: flagAttribute(this, 'causal'),
      temperature: numberAttribute(this, 'temperature', 1),
      identity: flagAttribute(this, 'identity'),
    };
    // One WebAssembly module for every element of the page: load() instantiates it once.
    const lens = await load();
    const explanation = lens.explainSentence(settings);
    return { data: view === 'steps' ? explanation : fromExplanation(explanation), result: explanation };
  }
}

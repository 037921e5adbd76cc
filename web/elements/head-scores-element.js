// <attnlens-head-scores src="tiny-english" text="..." sort-by="previousToken" repeats="50">:
// what each head of a trained model does, measured on `text` by model.analyze
// (TransformerLens' head detectors) and drawn by attnlens/views/analysis'
// headScores: a small grid per score and a table of every head, sorted by
// `sort-by`. `repeats` adds induction on that many random tokens repeated
// twice (model.inductionScores, seed 1), measured once per model and length.
// The model comes from `src` exactly as for <attnlens-model>.
import { AttributeError, numberAttribute } from './attributes.js';
import { AttnlensModel, modelInput } from './model-element.js';
import { headScores } from '../views/analysis.js';

const inductionSeed = 1;

export class AttnlensHeadScores extends AttnlensModel {
  // view, layer, head, step and token belong to the attention views: not read here.
  static commonAttributes = [];
  static ownAttributes = ['src', 'text', 'sort-by', 'repeats'];
  static views = Object.freeze({ headScores });

  #induction = null; // { model, length, scores }: the same for every text

  viewChoice() {
    const sortBy = this.getAttribute('sort-by')?.trim() || null;
    return { view: 'headScores', options: { sortBy } };
  }

  async compute(view, { sortBy }) {
    const model = await this.loadedModel();
    if (model === null) return null;
    const analysis = model.analyze(modelInput(this, model, this.getAttribute('text') ?? ''));
    const length = this.#repeats(model);
    if (length !== null && (this.#induction?.model !== model || this.#induction.length !== length)) {
      this.#induction = { model, length, scores: model.inductionScores({ length, seed: inductionSeed }) };
    }
    const induction = length === null ? null : this.#induction.scores;
    const scores = induction ? { ...analysis.scores, inductionOnRepeats: induction } : analysis.scores;
    if (sortBy !== null && !Object.hasOwn(scores, sortBy)) {
      throw new AttributeError(this, `sort-by must be one of ${Object.keys(scores).join(', ')}, got "${sortBy}"`);
    }
    return { data: { layers: analysis.layers, heads: analysis.heads, scores }, result: { ...analysis, scores, induction } };
  }

  // The length of the repeated random sequence, or null without `repeats`.
  #repeats(model) {
    const length = numberAttribute(this, 'repeats', null);
    const longest = Math.floor(model.info.maxPositions / 2);
    if (length !== null && !(Number.isInteger(length) && length >= 1 && length <= longest)) {
      throw new AttributeError(this, `repeats must be a whole number from 1 to ${longest} (two copies must fit the model's ${model.info.maxPositions} positions), got "${this.getAttribute('repeats')}"`);
    }
    return length;
  }
}

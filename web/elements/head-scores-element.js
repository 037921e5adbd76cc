// <attnlens-head-scores src="tiny-english" text="..." sort-by="previousToken" repeats="50">:
// what each head of a trained model does, measured on `text` by model.analyze
// (TransformerLens' head detectors) and drawn by attnlens/views/analysis'
// headScores: a small grid per score and a table of every head, sorted by
// `sort-by`. `repeats` adds induction on that many random tokens repeated
// twice (model.inductionScores, seed 1), measured once per model and length.
// The model comes from `src` exactly as for <attnlens-model>. An encoder-decoder
// translates `text` as <attnlens-model> does and scores the self-attention `kind`
// names: the decoder's over the translation (the default) or the encoder's over
// the text; cross-attention has no detector scores (nor rollout: see the README).
import { AttributeError, numberAttribute } from './attributes.js';
import { AttnlensModel, kindAttribute, maxTokensAttribute, modelInput } from './model-element.js';
import { analyzeTranslation, translate } from './translate.js';
import { headScores } from '../views/analysis.js';

const inductionSeed = 1;

export class AttnlensHeadScores extends AttnlensModel {
  // view, layer, head, step and token belong to the attention views: not read here.
  static commonAttributes = [];
  static ownAttributes = ['src', 'text', 'sort-by', 'repeats', 'kind', 'max-tokens'];
  static views = Object.freeze({ headScores });

  #induction = null; // { model, length, scores }: the same for every text

  viewChoice() {
    const sortBy = this.getAttribute('sort-by')?.trim() || null;
    return { view: 'headScores', options: { sortBy } };
  }

  async compute(view, { sortBy }) {
    const model = await this.loadedModel();
    if (model === null) return null;
    const input = modelInput(this, model, this.getAttribute('text') ?? '');
    if (model.info.encoderDecoder === true) return this.#translationScores(model, input, sortBy);
    const analysis = model.analyze(input);
    const length = this.#repeats(model);
    if (length !== null && (this.#induction?.model !== model || this.#induction.length !== length)) {
      this.#induction = { model, length, scores: model.inductionScores({ length, seed: inductionSeed }) };
    }
    const induction = length === null ? null : this.#induction.scores;
    const scores = induction ? { ...analysis.scores, inductionOnRepeats: induction } : analysis.scores;
    this.#checkSortBy(sortBy, scores);
    return { data: { layers: analysis.layers, heads: analysis.heads, scores }, result: { ...analysis, scores, induction } };
  }

  // An encoder-decoder's: model.analyze of its translation of the text (analyze needs the target),
  // the scores of the stack `kind` names; `result` is that analysis with `generated` and `kind`.
  #translationScores(model, input, sortBy) {
    if (this.getAttribute('kind')?.trim() === 'cross') {
      throw new AttributeError(this, 'kind must be decoder or encoder: cross-attention has no detector scores (they score one sequence\'s attention to itself)');
    }
    const kind = kindAttribute(this, ['decoder', 'encoder']);
    if (this.hasAttribute('repeats')) {
      throw new AttributeError(this, 'repeats is not available for an encoder-decoder model (model.inductionScores has no target to decode); its induction score measures the text\'s own repeats');
    }
    const analysis = analyzeTranslation(model, translate(model, input, { maxTokens: maxTokensAttribute(this) }));
    const decoder = kind === 'decoder';
    const scores = decoder ? analysis.decoderScores : analysis.scores;
    this.#checkSortBy(sortBy, scores);
    const data = { layers: decoder ? analysis.decoderLayers : analysis.layers, heads: analysis.heads, scores };
    return { data, result: Object.assign(analysis, { kind, induction: null }) };
  }

  #checkSortBy(sortBy, scores) {
    if (sortBy !== null && !Object.hasOwn(scores, sortBy)) {
      throw new AttributeError(this, `sort-by must be one of ${Object.keys(scores).join(', ')}, got "${sortBy}"`);
    }
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

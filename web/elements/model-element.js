// <attnlens-model src="./my-model/" text="..." layer="0" head="0" view="modelView">:
// a trained model (GPT-2, BERT or Llama family; model-source.js says where it
// comes from) run in the page by the WebAssembly core. Every view draws its
// attention; view="steps" shows one layer's every step (model.explain). With
// `value-weighted` the views draw model.analyze's value-weighted attention
// instead of the weights (titled so), and `result` is that analysis. An
// encoder-decoder translates `text` (translate.js) and draws the attention
// `kind` names: cross-attention (target rows, source columns) by default; with
// `value-weighted`, that kind's value-weighted attention of its translation.
import { AttributeError, flagAttribute, indexAttribute, numberAttribute } from './attributes.js';
import { AttentionElement } from './attention-element.js';
import { isLoaded, modelOf, modelSource } from './model-source.js';
import { analyzeTranslation, translate } from './translate.js';
import { tokenIds } from '../views/input.js';
import { fromRun, fromValueWeighted } from '../views/records.js';

export class AttnlensModel extends AttentionElement {
  static ownAttributes = ['src', 'text', 'value-weighted', 'kind', 'max-tokens'];
  static defaultView = 'modelView';

  #last = null; // { model, text, weighted, maxTokens, result }: a new view, layer, head or kind needs no new forward pass

  /** The loaded model (see attnlens's Model), once the element has computed. */
  model = null;

  async compute(view) {
    const model = await this.loadedModel();
    if (model === null) return null;
    const text = this.getAttribute('text') ?? '';
    const input = modelInput(this, model, text);
    if (view === 'steps') {
      const layer = indexAttribute(this, 'layer', 0);
      const explanation = model.explain({ ...input, layer, head: indexAttribute(this, 'head', 0) });
      return { data: explanation, result: explanation };
    }
    const weighted = flagAttribute(this, 'value-weighted');
    const seq2seq = model.info.encoderDecoder === true;
    const maxTokens = seq2seq ? maxTokensAttribute(this) : null;
    const kind = seq2seq ? kindAttribute(this, attentionKinds) : 'encoder';
    if (this.#last?.model !== model || this.#last.text !== text || this.#last.weighted !== weighted || this.#last.maxTokens !== maxTokens) {
      const result = seq2seq ? translated(model, input, { maxTokens, weighted }) : weighted ? model.analyze({ ...input, logitLens: false }) : model.run(input);
      this.#last = { model, text, weighted, maxTokens, result };
    }
    const { result } = this.#last;
    return { data: weighted ? fromValueWeighted(result, { kind }) : fromRun(result, { kind }), result };
  }

  /** The model `src` names, loaded once per page (and set as `model`), or null while the page may still register it. */
  loadedModel() {
    return loadedModelOf(this);
  }
}

/** The model `element`'s `src` names, loaded once per page (and set as its `model`), or null while the page may still register it. */
export async function loadedModelOf(element) {
  const src = element.getAttribute('src')?.trim();
  if (!src) throw new AttributeError(element, 'src must name a model folder (src="./my-model/") or a model registered in globalThis.attnlensModels');
  const source = modelSource(src, element.baseURI);
  // A script further down the page may still register the model: decide once it has run.
  if (!source.registered && element.ownerDocument.readyState === 'loading') {
    element.ownerDocument.addEventListener('DOMContentLoaded', () => element.refresh(), { once: true });
    return null;
  }
  if (!isLoaded(source)) element.showStatus(`Loading the model ${source.name}…`);
  element.model = await modelOf(source);
  return element.model;
}

/** What `element`'s model reads of `text`: the text, or token ids (text="464 3290 3332") for a model without a tokenizer. */
export function modelInput(element, model, text) {
  if (model.info.tokenizer !== null) return { text };
  const ids = tokenIds(text);
  if (!ids) throw new AttributeError(element, `text must be token ids separated by spaces (e.g. "464 3290"): this model has no tokenizer.json, got "${text}"`);
  return { ids };
}

// An encoder-decoder's run over its own translation of the text (or, `weighted`, model.analyze of
// that source and target), with what generate chose as `generated`.
function translated(model, input, { maxTokens, weighted }) {
  const translation = translate(model, input, { maxTokens });
  if (weighted) return analyzeTranslation(model, translation, { logitLens: false });
  return Object.assign(translation.run, { generated: translation.generated });
}

const attentionKinds = ['cross', 'encoder', 'decoder'];

/** An encoder-decoder's `kind` attribute, one of `kinds` (the first when absent). */
export function kindAttribute(element, kinds) {
  const text = element.getAttribute('kind')?.trim() || kinds[0];
  if (!kinds.includes(text)) throw new AttributeError(element, `kind must be one of ${kinds.join(', ')}, got "${text}"`);
  return text;
}

/** An encoder-decoder's `max-tokens` attribute (32 when absent). */
export function maxTokensAttribute(element) {
  const value = numberAttribute(element, 'max-tokens', 32);
  if (!Number.isInteger(value) || value < 1) throw new AttributeError(element, `max-tokens must be a whole number from 1, got "${element.getAttribute('max-tokens')}"`);
  return value;
}

// Types of attnlens/elements: importing it registers <attnlens-sentence>,
// <attnlens-matrices>, <attnlens-model>, <attnlens-head-scores> and <attnlens-neuron>. Every attribute is described in
// web/elements/README.md; the classes below say what script can read.
import type { Explanation, Generation, Model, ModelAnalysis, ModelExplanation, ModelRun, Seq2SeqAnalysis, Seq2SeqRun } from 'attnlens';
import type { CellDetail, HeadDetail, MountedStepsView, MountedView, StepCellDetail, StepDetail, TokenDetail } from 'attnlens/views';
import type { HeadScoreDetail, MountedHeadScoresView, MountedNeuronView, NeuronDetail } from 'attnlens/views/analysis';

/** The views an element draws: its `view` attribute (kebab case, e.g. "all-heads", works too). */
export type ElementViewName = 'heatmap' | 'allHeads' | 'modelView' | 'lines' | 'headAverage' | 'table' | 'steps';
export const viewNames: readonly ElementViewName[];

/** A bad attribute; the message names the element, the attribute and what it held. */
export class AttributeError extends Error {
  name: 'AttributeError';
}

/** `error` event detail: the error, and the message the element shows (as text). */
export interface ElementErrorDetail {
  error: Error;
  message: string;
}

/** `ready` event detail: sent after each computation that drew. */
export interface ElementReadyDetail<Result> {
  /** The view drawn: 'headScores' for <attnlens-head-scores>, 'neuron' for <attnlens-neuron>. */
  view: ElementViewName | 'headScores' | 'neuron';
  result: Result;
}

/** Events of every element. `select`, `hover` and `step` bubble from the view inside it. */
export interface AttentionElementEvents<Result> {
  ready: CustomEvent<ElementReadyDetail<Result>>;
  error: CustomEvent<ElementErrorDetail>;
  select: CustomEvent<CellDetail | TokenDetail | HeadDetail | StepCellDetail | HeadScoreDetail | NeuronDetail | { view: 'neuron'; head: number; query: number }>;
  hover: CustomEvent<CellDetail | TokenDetail | StepCellDetail | HeadScoreDetail | NeuronDetail>;
  step: CustomEvent<StepDetail>;
}
/** An element's own events over the DOM's (whose `error` is an ErrorEvent elsewhere). */
export type AttentionElementEventMap<Result> = Omit<HTMLElementEventMap, keyof AttentionElementEvents<Result>> & AttentionElementEvents<Result>;

/**
 * What the three elements share. Attributes: `view` (default heatmap; modelView for
 * <attnlens-model>), `layer`, `head`, `token` (highlighted query row) and `step` (the
 * steps view), all counting from 0. Changing any attribute recomputes once, in a microtask.
 */
export class AttentionElement<Result = unknown, View = MountedView | MountedStepsView> extends HTMLElement {
  static readonly commonAttributes: readonly string[];
  static readonly ownAttributes: readonly string[];
  static readonly defaultView: ElementViewName;
  static readonly observedAttributes: string[];
  /** What the last computation returned, or null before the first (and after an error, the last good one). */
  result: Result | null;
  /** The error the element shows, or null. */
  error: Error | null;
  /** The view drawn in the element (see attnlens/views), or null while there is none. */
  readonly view: View | null;
  /** Recompute now (coalesced into one microtask), e.g. after changing what the element reads. */
  refresh(): void;
  addEventListener<K extends keyof AttentionElementEventMap<Result>>(type: K,
    listener: (this: this, event: AttentionElementEventMap<Result>[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends keyof AttentionElementEventMap<Result>>(type: K,
    listener: (this: this, event: AttentionElementEventMap<Result>[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/**
 * `<attnlens-sentence text="The cat sat on the mat." heads="4" view="heatmap">`: lens.explainSentence, live.
 * Attributes: text, context (a second sentence: cross-attention), d-model (64), heads (4), seed (1),
 * causal, temperature (1), identity.
 */
export class AttnlensSentence extends AttentionElement<Explanation> {}

/**
 * `<attnlens-matrices view="steps">` with `<script type="application/json">{"X": [[...]], "W_Q": ..., "W_K": ...,
 * "W_V": ...}</script>` inside (optional W_O, context, heads, causal, temperature, keyMask, tokens, contextTokens):
 * lens.explainMatrices, live. Attributes heads, causal and temperature override the JSON's.
 * Or `matrices="#id"`: the JSON of the `<script type="application/json" id="id">` elsewhere in the document,
 * shared by several elements; editing that script (or the attribute) recomputes, and a missing id or bad
 * JSON is shown as text in the element and sent as an `error` event.
 */
export class AttnlensMatrices extends AttentionElement<Explanation & { tokens: string[] | null; contextTokens: string[] | null }> {
  /** The matrices as an object of the JSON's shape, used instead of the JSON (shared or child); null: back to the JSON. */
  matrices: MatricesJson | null;
}

/** What <attnlens-matrices> reads: matrices are lists of rows. */
export interface MatricesJson {
  X: number[][];
  W_Q: number[][];
  W_K: number[][];
  W_V: number[][];
  W_O?: number[][];
  context?: number[][];
  heads?: number;
  causal?: boolean;
  temperature?: number;
  /** One entry per key (context row, or X row without a context): 1 keeps it, 0 hides it from every query. */
  keyMask?: Array<0 | 1 | boolean>;
  tokens?: string[];
  contextTokens?: string[];
}

/**
 * `<attnlens-model src="./my-model/" text="..." layer="0" head="0" view="modelView">`: a trained
 * model run in the page. `src` names a model registered in {@link AttnlensModelRegistry}
 * (works from file://) or a folder relative to the page holding config.json, model.safetensors
 * and optionally tokenizer.json and tokenizer_config.json. With the `value-weighted` attribute the views
 * draw model.analyze's valueWeighted (titled "value-weighted") and `result` is that ModelAnalysis.
 * An encoder-decoder translates `text` (greedy, at most `max-tokens`, default 32) and draws the attention
 * `kind` names ('cross', the default, 'encoder' or 'decoder'); `result` is then a {@link TranslationRun}, or with
 * `value-weighted` a {@link TranslationAnalysis} whose kind's value-weighted attention is drawn (both have
 * `generated`: tell them apart with `'crossAttention' in result` or `'crossValueWeighted' in result`).
 */
export class AttnlensModel extends AttentionElement<ModelRun | ModelExplanation | ModelAnalysis | TranslationRun | TranslationAnalysis> {
  /** The loaded model, shared with every element naming the same src. */
  model: Model | null;
}

/**
 * `<attnlens-head-scores src="tiny-english" text="..." sort-by="previousToken" repeats="50">`: every head of a
 * trained model scored by model.analyze's detectors on `text`, drawn by attnlens/views/analysis' headScores.
 * `src` and `text` as for <attnlens-model> (the model is shared with it); `sort-by` a score name (the table's
 * order, largest first); `repeats` adds `inductionOnRepeats`, model.inductionScores({ length: repeats, seed: 1 }).
 * An encoder-decoder translates `text` (at most `max-tokens`) and shows the scores of the self-attention `kind`
 * names, 'decoder' (the default: decoderScores) or 'encoder' (scores); `result` is then a {@link HeadScoresTranslation}.
 * It reads no view, layer, head, step or token attribute.
 */
export class AttnlensHeadScores extends AttentionElement<HeadScoresResult | HeadScoresTranslation, MountedHeadScoresView> {
  /** The loaded model, shared with every element naming the same src. */
  model: Model | null;
}

/** What <attnlens-model> computed for an encoder-decoder: model.run over the source and [decoder start, ...generated ids], and what model.generate chose. */
export type TranslationRun = Seq2SeqRun & { generated: Generation };
/** model.analyze({ ids, targetIds }) of that same source and decoder inputs, with what model.generate chose. */
export type TranslationAnalysis = Seq2SeqAnalysis & { generated: Generation };
/**
 * `<attnlens-neuron src="tiny-english" text="..." layer="0" head="1" query="3">`: BertViz's neuron view
 * (attnlens/views/analysis' neuron) of one head and one query token: q, each k, q ∘ k, q · k, scaled, softmax.
 * With `src` (and `text`, as for <attnlens-model>; the model is shared) from model.explain({ layer, head });
 * without, from the JSON as for <attnlens-matrices> (X and W_Q, W_K, W_V), or from the vectors themselves:
 * {@link QueryKeyJson}. `query` defaults to the last token; without it the reader's pick is kept.
 */
export class AttnlensNeuron extends AttentionElement<Explanation | ModelExplanation, MountedNeuronView> {
  /** The matrices (or Q and K) as an object of the JSON's shape, used instead of the JSON; null: back to the JSON. */
  matrices: MatricesJson | QueryKeyJson | null;
  /** The loaded model with `src`, shared with every element naming the same src; else null. */
  model: Model | null;
}

/** What <attnlens-neuron> reads instead of matrices: the query and key vectors, one row per token. */
export interface QueryKeyJson {
  Q: number[][];
  /** As wide as Q's rows. */
  K: number[][];
  /** The queries' labels; also the keys' when K has as many rows. */
  tokens?: string[];
  keyTokens?: string[];
  /** The columns are split into this many heads (default 1). */
  heads?: number;
  causal?: boolean;
  temperature?: number;
  keyMask?: Array<0 | 1 | boolean>;
}

/** What <attnlens-head-scores> computed: model.analyze's result, its scores with `inductionOnRepeats` when `repeats` is set, and those induction scores (or null). */
export type HeadScoresResult = ModelAnalysis & { induction: Float32Array | null };
/** What <attnlens-head-scores> computed for an encoder-decoder: the analysis of its translation as it is, and the stack shown. */
export type HeadScoresTranslation = TranslationAnalysis & { kind: 'decoder' | 'encoder'; induction: null };

/** A model a script registers for <attnlens-model src="name">: the files' contents. */
export interface RegisteredModel {
  /** config.json, parsed or as text. */
  config: object | string;
  /** model.safetensors: bytes, or base64 text (a script can hold it); or every shard. */
  weights: Uint8Array | ArrayBuffer | string | Array<Uint8Array | ArrayBuffer | string>;
  /** tokenizer.json, parsed or as text. */
  tokenizer?: object | string;
  tokenizerConfig?: object | string;
}

export type AttnlensModelRegistry = Record<string, RegisteredModel>;

export const elements: Readonly<{
  'attnlens-sentence': typeof AttnlensSentence;
  'attnlens-matrices': typeof AttnlensMatrices;
  'attnlens-model': typeof AttnlensModel;
  'attnlens-head-scores': typeof AttnlensHeadScores;
  'attnlens-neuron': typeof AttnlensNeuron;
}>;

declare global {
  // eslint-disable-next-line no-var
  var attnlensModels: AttnlensModelRegistry | undefined;
  interface HTMLElementTagNameMap {
    'attnlens-sentence': AttnlensSentence;
    'attnlens-matrices': AttnlensMatrices;
    'attnlens-model': AttnlensModel;
    'attnlens-head-scores': AttnlensHeadScores;
    'attnlens-neuron': AttnlensNeuron;
  }
}

// Types of attnlens/views: attention views you mount in any element.

import type { Explanation as LibraryExplanation } from '../lib/index.js';

/**
 * What every view plots. `weights` is [layer][head][query][key] when `layers`
 * is given, else [head][query][key]: exactly what `lens.multiHeadAttention`,
 * `lens.explainSentence` (`weights`) and `model.run` (`attention`, with
 * `layers`) return, or any engine's attention output.
 */
export interface AttentionData {
  /** Query tokens (rows), at least 1; always drawn as text, never HTML. */
  tokens: readonly string[];
  /** Key tokens (columns) for cross-attention; default `tokens`. */
  keyTokens?: readonly string[] | null;
  /** layers * heads * tokens.length * keyTokens.length values, each >= 0; rows sum to 1 (or are all 0). */
  weights: Float32Array;
  heads: number;
  layers?: number | null;
  /**
   * What `weights` holds: attention weights (`'weights'`, the default), or value-weighted attention
   * (`'valueWeighted'`: model.analyze's valueWeighted, see fromValueWeighted). Every view labels the
   * latter "value-weighted" in its title and colour scale.
   */
  quantity?: 'weights' | 'valueWeighted';
  /**
   * What hid keys from queries, so the views draw those cells as hidden (grey, a "hidden" legend entry,
   * "hidden" in tables) rather than as a weight of 0. `causal`: a query saw only itself and earlier keys.
   */
  causal?: boolean;
  /** With `causal`, one per layer (one entry without `layers`): a query saw only the `windows[layer]` keys ending at its own position; 0: no window. */
  windows?: readonly number[] | null;
  /** One per key: 0 marks a padding key that every query was kept from (model.run's `keyMask`); null: none. */
  keyMask?: Uint8Array | readonly number[] | null;
  /**
   * Weights pooled by this factor (model.run's `attention: { pool }`): each head is then
   * ceil(n/pool) x ceil(nKeys/pool) blocks, each the largest of its pool x pool weights (rows need
   * not sum to 1). Only `modelView` and `allHeads` draw pooled data, a block `pool` token cells a
   * side, hidden only when every cell in it is; the other views, `toCSV` and `toJSON` throw an
   * AttentionDataError saying so. Default 1 (each weight).
   */
  pool?: number;
}

/** A cell of a heatmap, head average or table. `head` is null for the head average. */
export interface CellDetail {
  view: ViewName;
  layer: number;
  head: number | null;
  row: number;
  col: number;
  query: string;
  key: string;
  weight: number;
  /** What hid this key from this query ('the padding mask', 'the causal mask', 'the window'), or null: its weight is 0 by construction, not measured. */
  hidden: 'the padding mask' | 'the causal mask' | 'the window' | null;
}

/** A token of the lines view, with the token it attends to (or is attended by) most. */
export interface TokenDetail {
  view: 'lines';
  layer: number;
  head: number;
  side: 'query' | 'key';
  index: number;
  token: string;
  strongest: { index: number; token: string; weight: number };
}

/** A head chosen in the all-heads or model view. */
export interface HeadDetail {
  view: 'allHeads' | 'modelView';
  layer: number;
  head: number;
}

export type SelectDetail = CellDetail | TokenDetail | HeadDetail;

export interface ViewOptions {
  /** Layer shown (0-based; 0 without layers). Default 0. */
  layer?: number;
  /** Head shown (0-based). Default 0. */
  head?: number;
  /** A query token to highlight (its row, its lines, its table row), or null. */
  token?: number | null;
  /** The selected cell of a heatmap, head average or table. */
  cell?: { row: number; col: number } | null;
  /** false: skip the check that rows sum to 1 (e.g. raw scores). Default true. */
  normalized?: boolean;
  /** Chart title; null for none; default a title naming the layer and head. */
  title?: string | null;
  /** Largest heatmap side in px (default the CSS --attnlens-max-size, else 640). */
  maxSize?: number;
  /** table: rows and columns shown (default 128 and 64; exports hold all). */
  maxRows?: number;
  maxCols?: number;
  /** table: show the head average instead of one head. */
  average?: boolean;
  /** Called on click or Enter, like the bubbling `select` event. */
  onSelect?: ((detail: SelectDetail) => void) | null;
  /** Called when the pointer or the keyboard reaches a cell or token, like the bubbling `hover` event. */
  onHover?: ((detail: CellDetail | TokenDetail) => void) | null;
  /**
   * For a host that sizes the chart itself (e.g. to fit the height it has): the heatmap's grid
   * side in px (heatmap, headAverage), or each small heatmap's side (allHeads, modelView),
   * instead of the fit to the container's width.
   */
  gridSize?: number;
  /** allHeads: small heatmaps per row (default: as many as fit the width). */
  columns?: number;
  /** An element of yours for the readout line (exact values), instead of the view's own. */
  readout?: HTMLElement | null;
  /** An element of yours for the hover tooltip, instead of the view's own; placed in its offset parent (the viewport if none), hidden on Escape in the document. */
  tooltip?: HTMLElement | null;
  /** modelView: name each head's measured role (looks at the previous / first token) under it. Default false. */
  roles?: boolean;
}

/** What `toJSON()` returns: plain, JSON-serializable data of what the view shows. */
export interface ViewJson {
  generator: 'attnlens/views';
  view: ViewName;
  /** Present when the data's quantity is 'valueWeighted': `weights` then holds value-weighted attention. */
  quantity?: 'valueWeighted';
  queryTokens: string[];
  keyTokens: string[];
  /** [n, nKeys]; allHeads [heads, n, nKeys]; modelView [layers, heads, n, nKeys]. */
  shape: number[];
  layer?: number;
  head?: number | 'mean';
  weights: number[][] | number[][][] | number[][][][];
}

export interface MountedView {
  /** The view's root element, inside the element it was mounted in; `select` and `hover` CustomEvents bubble from it. */
  readonly element: HTMLDivElement;
  /** The geometry of the last drawing (heatmap, headAverage: grid origin x, y, cell, rows, cols; lines: token rows; both: bandTop, the view row at its canvas's top edge, since a tall heatmap or lines view draws only the band on screen), or null. */
  readonly layout: Readonly<Record<string, number>> | null;
  /** New data (or undefined to keep it) and options merged into the current ones; throws and keeps the view on bad input. */
  update(data?: AttentionData | null, options?: ViewOptions): void;
  /** Removes every element, listener and observer of the view. */
  destroy(): void;
  /** A standalone SVG document of what is shown. */
  toSVG(): string;
  /** A PNG of what is shown, at twice its size. */
  toPNG(): Promise<Blob>;
  /** One row per weight: layer,head,query_index,query_token,key_index,key_token,weight. */
  toCSV(): string;
  toJSON(): ViewJson;
}

export interface View {
  /** Draws in `element` (appended, fitted to its width) and returns the mounted view. Throws AttentionDataError on bad data. */
  mount(element: Element, data: AttentionData, options?: ViewOptions): MountedView;
}

export type ViewName = 'heatmap' | 'allHeads' | 'modelView' | 'lines' | 'headAverage' | 'table';

/** One head's weights: queries down, keys across, viridis, a legend. */
export const heatmap: View;
/** Every head of one layer as small multiples on one colour scale. */
export const allHeads: View;
/** Every layer x every head (BertViz's model view). */
export const modelView: View;
/** BertViz's head view: one line per (query, key) with the weight as opacity. */
export const lines: View;
/** The cell-by-cell mean of one layer's heads, as a heatmap. */
export const headAverage: View;
/** The weights as an HTML table: the text alternative of every chart. */
export const table: View;
/** One head's path from X to the output, a step at a time; its data is an Explanation, not attention weights. */
export const steps: StepsView;
export const views: Readonly<Record<ViewName, View> & { steps: StepsView }>;

/** Any view by name. */
export function mount(element: Element, data: Explanation, options: StepsOptions & { view: 'steps' }): MountedStepsView;
export function mount(element: Element, data: AttentionData, options?: ViewOptions & { view?: ViewName }): MountedView;

// ---- The step-by-step view ----------------------------------------------------------

/** The sizes, the scale and the arrays of a step-by-step record, as the main entry's Explanation declares them. */
type ExplanationSteps = Pick<LibraryExplanation, 'n' | 'nContext' | 'dModel' | 'heads' | 'headWidth' | 'scale'
  | 'x' | 'contextX' | 'wq' | 'wk' | 'wv' | 'q' | 'k' | 'v' | 'scores' | 'scaledScores' | 'weights' | 'concatenatedHeads'
  | 'output'>;

/**
 * What the steps view draws: what `lens.explainSentence`, `lens.explainMatrices` and
 * `model.explain` return. Its sizes, scale and arrays are the main entry's `Explanation`'s;
 * the rest is restated here, looser (readonly tokens; the settings optional, as StepsTextOptions
 * can say them). Shapes: n queries, nContext keys, d = dModel, w = heads * headWidth (d except
 * for some Llama models).
 */
export interface Explanation extends ExplanationSteps {
  /** Query tokens; null for matrices (rows are labelled t0, t1, ...). */
  tokens: readonly string[] | null;
  /** Key tokens for cross-attention; null for matrices (labelled c0, c1, ...). */
  contextTokens: readonly string[] | null;
  /** The options it was computed with; the steps are worded from them (StepsTextOptions override each). */
  temperature?: number;
  causal?: boolean;
  keyMask?: Uint8Array | null;
  crossAttention?: boolean;
  architecture?: 'gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi' | 'bart' | 't5' | null;
  kvHeads?: number;
  /**
   * The math the steps are worded from (see the library's Explanation): the window a causal query saw,
   * whether Q/K/V and the output had biases, and for model.explain the norm, positions (rotary width),
   * parallel residual and post-norm layout. `scale` above is the multiplier actually used (GPT-Neo: 1).
   */
  window?: number;
  qkvBias?: boolean;
  outputBias?: boolean;
  norm?: 'layer' | 'rms' | 'rms_plus_one';
  position?: 'learned' | 'rotary' | 'sinusoidal' | 'relative';
  rotaryWidth?: number;
  parallelResidual?: boolean;
  postNorm?: boolean;
  /** model.explain: a score bias added before the scale (T5's relative position bias): the scaled step says so. */
  positionBias?: boolean;
  /**
   * model.explain of an encoder-decoder: which attention ('cross': Q from the decoder, K and V from
   * the encoder's output; the steps say so and name the stack), or null.
   */
  kind?: 'encoder' | 'decoder' | 'cross' | null;
  /** model.explain only: the layer, the head asked for, and the residual stream after the layer (n x d): a tenth step. */
  layer?: number;
  head?: number;
  layerOutput?: Float32Array;
}

/** How the steps are worded and which head they follow: each defaults to what the Explanation records. */
export interface StepsTextOptions {
  /** Head followed (0-based). Default: the explanation's `head`, else 0. */
  head?: number;
  /** The temperature named in the scaled-scores step. Default: the explanation's `temperature`, else 1. */
  temperature?: number;
  /** Mention the mask in the scaled-scores step. Default: the explanation's `causal` (a `keyMask` hiding a key mentions it too). */
  causal?: boolean;
  /** Show X_context (keys and values from a second sequence). Default: the explanation's `crossAttention`, else whether nContext differs from n. */
  crossAttention?: boolean;
  /**
   * Names the model in the wording, and words X, the biases, rotary embedding and the layer output for that
   * layout where the Explanation does not record them (its norm, position, qkvBias, ... win). Default: the explanation's `architecture`.
   */
  architecture?: 'gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi' | null;
  /** Names the key/value head of grouped-query attention. Default: the explanation's `kvHeads`. */
  kvHeads?: number | null;
}

export interface StepsOptions extends StepsTextOptions {
  /** The step shown (0-based, clamped to the steps there are). Default 0. */
  step?: number;
  /** Show the Previous / Next buttons and step with the arrow keys (and PageUp / PageDown). Default true. */
  controls?: boolean;
  /** Rows and columns shown per matrix. Default 16 each. */
  maxRows?: number;
  maxCols?: number;
  /** Called when the step changes through the controls, like the bubbling `step` event. */
  onStep?: ((detail: StepDetail) => void) | null;
  /** Called on a click on a matrix cell, like the bubbling `select` event. */
  onSelect?: ((detail: StepCellDetail) => void) | null;
  /** Called when the pointer reaches a matrix cell, like the bubbling `hover` event. */
  onHover?: ((detail: StepCellDetail) => void) | null;
}

export interface StepDetail {
  view: 'steps';
  step: number;
  count: number;
  title: string;
}

/** A cell of one of the step's matrices, with its exact value. */
export interface StepCellDetail {
  view: 'steps';
  step: number;
  /** The matrix's name: 'X', 'Q', 'Q Kᵀ', 'scaled scores', 'weights', 'output', ... */
  matrix: string;
  row: number;
  col: number;
  /** The row's label (a token or t0, t1 ...) and the column's (a token or an index). */
  query: string;
  key: string;
  value: number;
}

export interface StepMatrix {
  name: string;
  rows: number;
  cols: number;
  /** rows x cols, row-major. */
  values: Float32Array;
  rowLabels: string[];
  colLabels: string[];
  /** Shaded by weight (the weights step). */
  colored?: boolean;
}

export interface Step {
  title: string;
  formula: string;
  sentence: string;
  matrices: StepMatrix[];
}

export interface MountedStepsView {
  readonly element: HTMLDivElement;
  /** The step shown. */
  readonly step: number;
  /** How many steps there are: 9, or 10 for model.explain. */
  readonly count: number;
  /** New data (or undefined to keep it) and options merged into the current ones, e.g. `update(undefined, { step: 6 })`. */
  update(data?: Explanation | null, options?: StepsOptions): void;
  destroy(): void;
  /** Every step with its matrices as nested arrays (-Infinity becomes null in JSON). */
  toJSON(): { generator: 'attnlens/views'; view: 'steps'; step: number; steps: Array<Omit<Step, 'matrices'> & { matrices: Array<{ name: string; rowLabels: string[]; colLabels: string[]; values: number[][] }> }> };
}

export interface StepsView {
  /** Draws the steps of `data` in `element`. Throws AttentionDataError on an incomplete Explanation. */
  mount(element: Element, data: Explanation, options?: StepsOptions): MountedStepsView;
}

/** The steps as data (what the view draws). */
export function stepsOf(data: Explanation, options?: StepsTextOptions): Step[];

/** Thrown for bad data; the message names the field and the problem. */
export class AttentionDataError extends Error {
  name: 'AttentionDataError';
}

/** The check every view runs: returns the normalized model of the data or throws AttentionDataError. */
export function attentionData(data: AttentionData, options?: { normalized?: boolean }): {
  queryTokens: readonly string[];
  keyTokens: readonly string[];
  layers: number;
  heads: number;
  n: number;
  nKeys: number;
  weights: Float32Array;
  hasLayers: boolean;
  /** True when the data's quantity is 'valueWeighted'. */
  valueWeighted: boolean;
};

/** A tensor as transformers.js and onnxruntime-web give it: its values and its shape. */
export interface LayerTensor {
  data: Float32Array;
  dims: readonly number[];
}

/**
 * The views' data from one attention tensor per layer ([1, heads, n, nKeys] or [heads, n, nKeys]),
 * e.g. transformers.js `attentions` (with `output_attentions: true`) or onnxruntime-web outputs.
 */
export function fromLayers(tokens: readonly string[], layers: readonly LayerTensor[], options?: { keyTokens?: readonly string[] | null }): AttentionData & { layers: number };

/**
 * An Explanation (lens.explainSentence, lens.explainMatrices, model.explain) as the views' data:
 * its tokens (t0, t1, ... for matrices), its context's tokens as the keys when it is cross-attention
 * (default: the record's `crossAttention`), and its weights [head][query][key], with what hid keys
 * (the record's `keyMask`, `causal` and `window`). The library checked
 * those weights, so the views check the data's shape but not every weight again.
 */
export function fromExplanation(record: Explanation, options?: { crossAttention?: boolean }): AttentionData;

/** What fromRun reads of a model's run (model.run's result, or a copy of it from a worker). */
export interface RunRecord {
  tokens: readonly string[];
  layers: number;
  heads: number;
  /** layers x heads x n x n: [layer][head][query][key]. */
  attention: Float32Array;
  /** model.run's keyMask, causal and windows (model.info.windows): the cells they hid are drawn as hidden. */
  causal?: boolean;
  windows?: readonly number[];
  keyMask?: Uint8Array | null;
  /** model.run's attentionQuantity: 'valueWeighted' (attention { valueWeighted: true }) makes the data say `quantity: 'valueWeighted'`. */
  attentionQuantity?: 'weights' | 'valueWeighted';
  /** An encoder-decoder's run: the decoder's input tokens (m), its layers and its two other kinds. */
  targetTokens?: readonly string[];
  decoderLayers?: number;
  /** decoderLayers x heads x m x m. */
  decoderAttention?: Float32Array;
  /** decoderLayers x heads x m x n: target position x source position. */
  crossAttention?: Float32Array;
}

/**
 * A model's run as the views' data: every layer (`{ tokens, weights, heads, layers }`, for modelView or a
 * `layer` option), or with `layer` that layer alone. Like fromExplanation, its weights are not checked again.
 * `kind` picks an encoder-decoder's attention: 'encoder' (`attention`, the default), 'decoder'
 * (`decoderAttention`) or 'cross' (`crossAttention`: target tokens as rows, source tokens as `keyTokens`).
 */
export function fromRun(run: RunRecord, options?: { layer?: number | null; kind?: 'encoder' | 'decoder' | 'cross' }): AttentionData;

/** What fromValueWeighted reads of model.analyze's result (asked with `valueWeighted: true`, the default). */
export interface ValueWeightedRecord {
  tokens: readonly string[];
  layers: number;
  heads: number;
  /**
   * layers x heads x n x n: ‖α_ij v_j W_O^h‖ per query i and key j, each row normalised to sum to 1
   * (null when analyze was asked with valueWeighted: false: fromValueWeighted then throws).
   */
  valueWeighted: Float32Array | null;
  /** An encoder-decoder's (model.analyze with a target): the other kinds, for `kind` 'decoder' and 'cross'. */
  targetTokens?: readonly string[];
  decoderLayers?: number;
  decoderValueWeighted?: Float32Array | null;
  crossValueWeighted?: Float32Array | null;
}

/**
 * model.analyze's value-weighted attention (Kobayashi et al., 2020) as the views' data, like fromRun:
 * every layer, or with `layer` that layer alone (an encoder-decoder's of one `kind`, as fromRun's:
 * 'encoder' by default, 'decoder' or 'cross'), with `quantity: 'valueWeighted'` so every view says
 * "value-weighted" in its title and legend. Throws AttentionDataError when `valueWeighted` is null
 * (analyze was asked with `valueWeighted: false`).
 */
export function fromValueWeighted(analysis: ValueWeightedRecord, options?: { layer?: number | null; kind?: 'encoder' | 'decoder' | 'cross' }): AttentionData;

/** What each head does on this text: mean weight on the previous token and on the first one (queries i >= 2). */
export interface HeadRole {
  layer: number;
  head: number;
  previous: number;
  first: number;
  /** The role whose mean is above the threshold, or null. */
  role: 'previous token' | 'first token' | null;
}

/** Measures every head's role from self-attention weights [layer][head][query][key] (empty with fewer than 3 tokens). */
export function headRoles(weights: Float32Array, shape: { layers?: number; heads: number; n: number }, threshold?: number): HeadRole[];

/** The colour scale: viridis, 256 [r, g, b] entries for weights 0..1. */
export const weightLut: ReadonlyArray<readonly [number, number, number]>;
/** The CSS colour of a weight in [0, 1]. */
export function weightCss(value: number): string;

export interface Theme {
  background: string; text: string; muted: string; faint: string; strong: string;
  accent: string; highlight: string; line: string; font: string;
}
/** Defaults of the CSS custom properties --attnlens-<name>, light and dark. */
export const lightTheme: Theme;
export const darkTheme: Theme;

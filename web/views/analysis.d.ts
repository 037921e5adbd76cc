// Types of attnlens/views/analysis: views of what model.analyze measures.
// Written by hand, like web/views/index.d.ts.

/** Named scores of every head: model.analyze's result is one (its other fields are ignored). */
export interface HeadScoresData {
  layers: number;
  heads: number;
  /** Each layers x heads, [layer * heads + head], finite; shown in this order (previousToken, ... for model.analyze). */
  scores: Record<string, Float32Array | number[]>;
}

export interface HeadScoresOptions {
  /** The table's order: null (default) by layer then head, or by this score. */
  sortBy?: string | null;
  /** With sortBy: largest first (default true). A click on a column header sorts by it; again flips the order. */
  descending?: boolean;
  /** Called on a click (or Enter) on a cell, like the bubbling `select` event. */
  onSelect?: ((detail: HeadScoreDetail) => void) | null;
  /** Called when the pointer or the focus reaches a cell of the grids, like the bubbling `hover` event. */
  onHover?: ((detail: HeadScoreDetail) => void) | null;
}

/** A head's score; layer and head from 0 (the view shows them from 1). */
export interface HeadScoreDetail {
  view: 'headScores';
  score: string;
  layer: number;
  head: number;
  value: number;
}

/** One row of the table: a head's every score. */
export interface HeadScoreRow {
  layer: number;
  head: number;
  values: Record<string, number>;
}

export interface MountedHeadScoresView {
  readonly element: HTMLDivElement;
  /** New data (or undefined to keep it) and options merged into the current ones. */
  update(data?: HeadScoresData | null, options?: HeadScoresOptions): void;
  destroy(): void;
  /** layer,head (from 0), then one column per score, in the table's order. */
  toCSV(): string;
}

export interface HeadScoresView {
  /** Draws the scores of `data` in `element`. Throws AttentionDataError on bad data. */
  mount(element: Element, data: HeadScoresData, options?: HeadScoresOptions): MountedHeadScoresView;
}

/** Checks head scores data; returns { layers, heads, names, scores }. Throws AttentionDataError naming the problem. */
export function headScoresData(data: HeadScoresData): Readonly<{ layers: number; heads: number; names: string[]; scores: HeadScoresData['scores'] }>;
/** The table's rows: by layer then head, or sorted by one score (ties keep layer order). */
export function scoreRows(data: ReturnType<typeof headScoresData>, options?: { sortBy?: string | null; descending?: boolean }): HeadScoreRow[];

/** Every head of every layer scored by each detector (model.analyze's scores): a small grid per score and a sortable table. */
export const headScores: HeadScoresView;

/** The logit lens of a text: model.analyze's result with logitLens: true is one (its other fields are ignored). */
export interface LogitLensData {
  layers: number;
  /** Positions (tokens). */
  n: number;
  /**
   * [layer][column][rank], layers × columns × topK; topK is ids.length / (layers × columns). The columns are
   * `positions` (model.analyze with logitLens: { positions }), default every position 0 ... n - 1.
   */
  logitLens: { ids: Int32Array | number[]; probs: Float32Array | number[]; positions?: Int32Array | number[] | null } | null;
  /** n labels for the column headers (model.analyze's tokens); default 1, 2, ... */
  tokens?: string[] | null;
}

export interface LogitLensOptions {
  /** The text of a token id (e.g. id => model.tokenText(id)); wins over vocabulary. Default: "#id". */
  tokenLabel?: ((id: number) => string) | null;
  /** The tokenizer's tokens by id, when there is no tokenLabel. */
  vocabulary?: string[] | null;
  /** Called on a click (or Enter) on a cell, like the bubbling `select` event. */
  onSelect?: ((detail: LogitLensDetail) => void) | null;
  /** Called when the pointer or the focus reaches a cell, like the bubbling `hover` event. */
  onHover?: ((detail: LogitLensDetail) => void) | null;
}

/** A cell's top-k next tokens, best first; layer and position from 0 (the view shows layers from 1). */
export interface LogitLensDetail {
  view: 'logitLens';
  layer: number;
  position: number;
  top: LogitLensEntry[];
}

export interface LogitLensEntry {
  id: number;
  token: string;
  prob: number;
}

export interface MountedLogitLensView {
  readonly element: HTMLDivElement;
  /** New data (or undefined to keep it) and options merged into the current ones. */
  update(data?: LogitLensData | null, options?: LogitLensOptions): void;
  destroy(): void;
  /** layer,position,rank (from 0),id,token,prob: one line per cell and rank. */
  toCSV(): string;
}

export interface LogitLensView {
  /** Draws the lens of `data` in `element`. Throws AttentionDataError on bad data, TypeError on bad options. */
  mount(element: Element, data: LogitLensData, options?: LogitLensOptions): MountedLogitLensView;
}

/** Checks logit lens data and the label options; returns { layers, n, topK, ids, probs, positions, tokens, label }. Throws AttentionDataError naming the problem. */
export function logitLensData(data: LogitLensData, options?: Pick<LogitLensOptions, 'tokenLabel' | 'vocabulary'>): Readonly<{
  layers: number; n: number; topK: number; ids: Int32Array | number[];
  probs: Float32Array | number[]; positions: number[]; tokens: string[] | null; label: (id: number) => string;
}>;
/** One cell's top-k next tokens, best first; `column` indexes data.positions (the position itself for a full lens). */
export function lensCell(data: ReturnType<typeof logitLensData>, layer: number, column: number): LogitLensEntry[];

/** What each layer would predict next if the model stopped there (model.analyze's logitLens): layers × positions, top token and probability. */
export const logitLens: LogitLensView;

/**
 * What the neuron view reads of an Explanation (model.explain, lens.explainSentence, lens.explainMatrices):
 * q and k hold every head's columns (heads × headWidth per row), weights and scaledScores [head][query][key].
 */
export interface NeuronRecord {
  n: number;
  nContext: number;
  heads: number;
  headWidth: number;
  /** The score multiplier (1 / sqrt(headWidth)); the scaled score is q · k × scale / temperature. */
  scale: number;
  temperature?: number;
  q: Float32Array;
  k: Float32Array;
  weights: Float32Array;
  scaledScores: Float32Array;
  /** Query labels (t0, t1, ... without); keys are contextTokens for cross-attention. */
  tokens?: string[] | null;
  contextTokens?: string[] | null;
  crossAttention?: boolean;
  /** model.explain's head: the default `head` option. */
  head?: number;
}

export interface NeuronOptions {
  /** The head (from 0); default the record's `head`, else 0. */
  head?: number;
  /** The query token (from 0); default the last. The query tokens above the table are buttons that choose it. */
  query?: number;
  /** Called on a click (or Enter) on a key, or a click on a query token, like the bubbling `select` event. */
  onSelect?: ((detail: NeuronDetail | { view: 'neuron'; head: number; query: number }) => void) | null;
  /** Called when the pointer or the focus reaches a key's row, like the bubbling `hover` event. */
  onHover?: ((detail: NeuronDetail) => void) | null;
}

/** One key's row: q · k, that times scale / temperature, and the record's softmax weight. */
export interface NeuronDetail {
  view: 'neuron';
  head: number;
  query: number;
  key: number;
  dot: number;
  scaled: number;
  weight: number;
  /** The mask hid this key (causal, padding): its scaled score is -Infinity, its weight 0. */
  masked: boolean;
}

export interface MountedNeuronView {
  readonly element: HTMLDivElement;
  /** The query token shown. */
  readonly query: number;
  /** A new record (or undefined to keep it) and options merged into the current ones. */
  update(record?: NeuronRecord | null, options?: NeuronOptions): void;
  destroy(): void;
  /** key_index,key_token,dot,scaled,softmax: one line per key. */
  toCSV(): string;
}

export interface NeuronView {
  /** Draws the neuron view of `record` in `element`. Throws AttentionDataError on a bad record, RangeError on a head or query out of range. */
  mount(element: Element, record: NeuronRecord, options?: NeuronOptions): MountedNeuronView;
}

/** Checks a record for the fields the neuron view reads; returns it. Throws AttentionDataError naming the problem. */
export function neuronRecord(record: NeuronRecord): NeuronRecord;
/** One head's and one query's numbers: q, and per key k, q ∘ k, q · k, the scaled score and the softmax weight. */
export function neuronOf(record: NeuronRecord, head: number, query: number): {
  q: Float32Array;
  keys: Array<{ k: Float32Array; product: Float32Array; dot: number; scaled: number; weight: number; masked: boolean }>;
};

/** BertViz's neuron view: one head's query vector, each key vector, their product, the dot product scaled, and the softmax. */
export const neuron: NeuronView;

// Types of attnlens/views: attention views you mount in any element.

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
}

/** What `toJSON()` returns: plain, JSON-serializable data of what the view shows. */
export interface ViewJson {
  generator: 'attnlens/views';
  view: ViewName;
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
export const views: Readonly<Record<ViewName, View>>;

/** Any view by name. */
export function mount(element: Element, data: AttentionData, options?: ViewOptions & { view?: ViewName }): MountedView;

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
};

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

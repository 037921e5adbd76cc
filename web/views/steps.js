// The step-by-step view: one head's path from X to the output, a step at a
// time (title, formula, one sentence, the step's matrices as tables), from an
// Explanation (lens.explainMatrices, lens.explainSentence, model.explain).
// stepsOf() only slices the library's numbers; nothing is recomputed here.
import { AttentionDataError } from './attention-data.js';
import { toNested } from './export.js';
import { matrixTable } from './matrix-table.js';
import { mountedTableView } from './mounted-view.js';
import { useStyles } from './theme.js';

const labels = (count, prefix = '', from = 0) => Array.from({ length: count }, (_, i) => prefix + (i + from));

// Columns [start, start + width) of a row-major matrix `stride` wide: one head's block.
function block(values, rows, stride, start, width) {
  const out = new Float32Array(rows * width);
  for (let row = 0; row < rows; row += 1) out.set(values.subarray(row * stride + start, row * stride + start + width), row * width);
  return out;
}

function check(e) {
  const fail = (message) => { throw new AttentionDataError(`steps: ${message}`); };
  if (!e?.scaledScores) fail('expected an Explanation (lens.explainSentence, lens.explainMatrices or model.explain)');
  for (const name of ['n', 'nContext', 'dModel', 'heads', 'headWidth']) {
    if (!(e[name] >= 1 && Number.isInteger(e[name]))) fail(`${name} must be a positive integer, got ${e[name]}`);
  }
  const { n, nContext: m, dModel: d, heads } = e;
  const w = heads * e.headWidth;
  const h = heads * n * m;
  const sizes = { x: n * d, contextX: m * d, wq: d * w, wk: d * w, wv: d * w, q: n * w, k: m * w, v: m * w, scores: h, scaledScores: h, weights: h, concatenatedHeads: n * w, output: n * d };
  for (const [name, size] of Object.entries(sizes)) {
    if (!(e[name] instanceof Float32Array) || e[name].length !== size) fail(`${name} must be a Float32Array of ${size} values, got ${e[name]?.length ?? e[name]}`);
  }
}

// A key mask (typed array or list) that hides at least one key.
const hidesKeys = (mask) => mask != null && Array.prototype.includes.call(mask, 0);

/**
 * The steps of one head: [{ title, formula, sentence, matrices: [{ name, rows, cols, values, rowLabels, colLabels, colored }] }].
 * How they are worded (temperature, causal, crossAttention, architecture, kvHeads, and the
 * math: scale, biases, norm, positions, residual layout, window) is what the Explanation
 * records it was computed with; an option of the same name overrides it.
 */
export function stepsOf(e, options = {}) {
  check(e);
  const {
    head = e.head ?? 0, temperature = e.temperature ?? 1, causal = e.causal ?? false,
    crossAttention: cross = e.crossAttention ?? e.nContext !== e.n, architecture = e.architecture ?? null, kvHeads = e.kvHeads ?? e.heads,
  } = options;
  const { n, nContext: m, dModel: d, headWidth: dk, heads } = e;
  if (!(head >= 0 && head < heads && Number.isInteger(head))) throw new RangeError(`attnlens/views: head must be an integer from 0 to ${heads - 1}, got ${head}`);
  const layer = e.layerOutput ? e.layer ?? 0 : null; // model.explain's
  const qs = e.tokens?.map(String) ?? labels(n, 't');
  const ks = cross ? e.contextTokens?.map(String) ?? labels(m, 'c') : qs;
  const width = heads * dk; // d_model, except for Llama models whose heads x head_dim differs
  const start = head * dk;
  const cols = labels(dk, '', start);
  const dims = labels(d);
  const slice = (values) => values.subarray(head * n * m, (head + 1) * n * m);
  const mat = (name, values, rowLabels, colLabels = ks, colored) => ({ name, rows: rowLabels.length, cols: colLabels.length, values, rowLabels, colLabels, colored });
  const projection = (name, tokens) => [mat(`W_${name} (this head)`, block(e[`w${name.toLowerCase()}`], d, width, start, dk), dims, cols),
    mat(name, block(e[name.toLowerCase()], tokens.length, width, start, dk), tokens, cols)];
  const ofHead = heads > 1 ? `, head ${head + 1}` : '';
  const input = cross ? 'X_context' : 'X';
  // The math the record says it ran with (record.hpp); a record without it (built by hand) gets its layout's.
  const llama = architecture === 'llama';
  const model = layer !== null;
  const qkvBias = e.qkvBias ?? (model && !llama);
  const norm = { rms: 'RMSNorm', rms_plus_one: 'RMSNorm(1 + w)' }[e.norm ?? (llama ? 'rms' : '')] ?? 'LayerNorm';
  const rotaryWidth = (e.position ?? (llama || architecture === 'gpt_neox' || architecture === 'phi' ? 'rotary' : '')) === 'rotary' ? e.rotaryWidth || dk : 0;
  const partial = rotaryWidth < dk ? `[first ${rotaryWidth} of ${dk}]` : '';
  const postNorm = e.postNorm ?? architecture === 'bert';
  const parallel = e.parallelResidual;
  const bias = (name) => ((name === 'O' ? e.outputBias ?? (model && !llama) : qkvBias) ? ` + b_${name}` : '');
  // Rotary turns the projection's output (bias included), on all or the first columns of each head.
  const rotary = (text) => (rotaryWidth ? `rotary${partial}(${text})` : text);
  const shared = kvHeads < heads ? ` ${heads / kvHeads} query heads share each key/value head (grouped-query attention): this one uses ${Math.floor(head * kvHeads / heads) + 1} of ${kvHeads}.` : '';
  const T = temperature !== 1;
  const unscaled = Math.abs(e.scale * Math.sqrt(dk) - 1) > 1e-6; // not 1/√d_k (GPT-Neo's 1); false without a scale
  const window = causal && e.window > 0 ? `; keys before the last ${e.window} are outside the window` : '';
  const inputs = [mat('X', e.x, qs, dims), ...(cross ? [mat('X_context', e.contextX, ks, dims)] : [])];
  // An encoder-decoder's record says which stack the layer is in; cross-attention's Q comes from the decoder, K and V from the encoder.
  const stack = e.kind ? ` of the ${e.kind === 'encoder' ? 'encoder' : 'decoder'}` : '';
  const fromEncoder = e.kind === 'cross' ? ' (from the encoder\'s output)' : '';
  const biased = e.positionBias;

  // [title, formula, sentence, matrices] of each step.
  const steps = [
    layer === null
      ? ['X: the input rows', cross ? 'X (queries), X_context (keys and values)' : 'X',
        e.tokens ? 'Each row is one token: a vector derived from the token text (same word, same vector) plus a sinusoidal code of its position.'
          : 'Each row is one input vector, exactly as given.', inputs]
      : [`X: what layer ${layer + 1}${stack} reads`, postNorm ? `X = output of ${layer ? `layer ${layer}` : 'the embeddings'}` : `X = ${norm}(residual stream)`,
        `Each row is one token's ${postNorm ? 'vector' : 'residual stream'} entering layer ${layer + 1}${stack}: ${layer ? `what the embeddings and layer${layer > 1 ? `s 1–${layer}` : ' 1'} made of it` : 'its embeddings'}, normalized by ${norm}.${e.kind === 'cross' ? ' X_context: the encoder\'s output, one row per source token.' : ''}`, inputs],
    [`Q = X · W_Q${ofHead}`, `Q = ${rotary(`X · W_Q[:, ${start}..${start + dk - 1}]${bias('Q')}`)}`,
      `Queries${e.kind === 'cross' ? ' (from the decoder)' : ''}: each token's question. This head uses ${dk} of the ${width} columns of W_Q${qkvBias ? ', adds b_Q' : ''}${rotaryWidth ? `, then rotates ${partial ? `the first ${rotaryWidth} columns` : 'them'} by position (rotary embedding)` : ''}.`,
      projection('Q', qs)],
    [`K = ${input} · W_K${ofHead}`, `K = ${rotary(`${input} · W_K${bias('K')}`)} (same columns)`,
      `Keys${fromEncoder}: what each token offers to be found by. A query matches a key when their dot product is large.${shared}`, projection('K', ks)],
    [`V = ${input} · W_V${ofHead}`, `V = ${input} · W_V${bias('V')} (same columns)`, `Values${fromEncoder}: what each token hands over once it is attended to.${shared}`,
      projection('V', ks)],
    ['Scores = Q · Kᵀ', 'scores[i][j] = Q[i] · K[j]', 'Every query row is dotted with every key row: one raw match score per (query, key) pair.', [mat('Q Kᵀ', slice(e.scores), qs)]],
    ['Scaled scores', `scaled = ${biased ? '(scores + position bias)' : 'scores'} ${unscaled ? `× ${e.scale}` : '/ √d_k'}${T ? ' / T' : ''}  (${unscaled ? `${architecture === 'gpt_neo' || architecture === 't5' ? `${architecture === 't5' ? 'T5' : 'GPT-Neo'} does not scale` : 'the model\'s own scale'}` : `√${dk} = ${Number(Math.sqrt(dk).toFixed(4))}`}${T ? `, T = ${temperature}` : ''})`,
      `${biased ? 'A learned bias for each relative distance (query to key) is added first. ' : ''}${unscaled ? 'Not divided by √d_k' : 'Dividing by √d_k keeps the scores from growing with the width, so the softmax does not saturate'}${T ? '; the temperature T flattens (T > 1) or sharpens (T < 1) it' : ''}${causal || hidesKeys(e.keyMask) ? '; the mask sets the keys a query may not see to -∞' : ''}${window}.`,
      [mat('scaled scores', slice(e.scaledScores), qs)]],
    ['Weights = softmax(scaled scores)', 'weights[i][j] = exp(s[i][j]) / Σ_j exp(s[i][j])',
      'Each row is exponentiated and divided by its sum, so it becomes a set of weights in [0, 1] that add up to 1: where that token looks.', [mat('weights', slice(e.weights), qs, ks, true)]],
    ['Head output = weights · V', 'out[i] = Σ_j weights[i][j] · V[j]', 'Each output row is the weighted mean of the value rows, with this head\'s weights.',
      [mat(`head ${head + 1} output`, block(e.concatenatedHeads, n, width, start, dk), qs, cols)]],
    ['Output = concat(heads) · W_O', `output = [head 1 … head ${heads}] · W_O${bias('O')}`,
      heads > 1 ? 'The heads\' outputs side by side, times W_O, which mixes them back into one d_model-wide row per token.' : 'With one head the concatenation is the head output itself; W_O maps it to the output row.',
      [mat('output', e.output, qs, dims)]],
  ];
  if (layer !== null) {
    steps.push([`Layer ${layer + 1} output`, postNorm ? `h = ${norm}(X + output);  layer output = ${norm}(h + MLP(h))`
      : parallel ? 'layer output = stream + output + MLP(norm(stream))  (parallel residual)' : 'h = stream + output;  layer output = h + MLP(norm(h))',
    `The residual stream after the whole layer: the attention's output added in${!e.kind || e.kind === 'encoder' ? '' : `, the ${e.kind === 'cross' ? 'self' : 'cross'}-attention's`}, and the MLP's. The next layer reads it.`, [mat('layer output', e.layerOutput, qs, dims)]]);
  }
  return steps.map(([title, formula, sentence, matrices]) => ({ title, formula, sentence, matrices }));
}

const names = ['head', 'step', 'temperature', 'causal', 'crossAttention', 'architecture', 'kvHeads', 'controls', 'maxRows', 'maxCols', 'onStep', 'onSelect', 'onHover'];

/** Mounts the steps of `explanation` in `element`; see index.d.ts (StepsOptions). */
export function mountSteps(element, explanation, userOptions) {
  if (!(element instanceof Element)) throw new TypeError('attnlens/views: steps.mount needs a DOM element to draw in');
  let data, options, list;
  function take(nextData, nextOptions) {
    const merged = { step: 0, controls: true, maxRows: 16, maxCols: 16, ...options, ...nextOptions };
    for (const name in merged) if (!names.includes(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
    list = stepsOf(nextData, merged); // throws before anything changes
    data = nextData;
    options = { ...merged, step: Math.min(Math.max(Math.trunc(merged.step) || 0, 0), list.length - 1) };
  }
  take(explanation, userOptions);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (tag, text = '', className = '', css = '') => Object.assign(document.createElement(tag), { textContent: text, className, style: css });
  const root = make('div', '', 'attnlens-view attnlens-steps');
  root.dataset.view = 'steps';
  const previous = make('button', '← Previous');
  const next = make('button', 'Next →');
  const nav = make('div', '', '', 'display:flex;gap:8px');
  const body = make('div');
  body.setAttribute('aria-live', 'polite');
  nav.append(previous, next);
  root.append(nav, body);
  element.append(root);

  const emit = (type, detail) => {
    options[`on${type[0].toUpperCase()}${type.slice(1)}`]?.(detail);
    root.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
  };
  function render() {
    const { step } = options;
    const { title, formula, sentence, matrices } = list[step];
    nav.hidden = !options.controls;
    previous.disabled = step === 0;
    next.disabled = step === list.length - 1;
    const tables = make('div', '', 'matrices', 'display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start');
    for (const matrix of matrices) {
      tables.append(make('div', '', 'matrix-wrap', 'overflow-x:auto;max-width:100%'));
      tables.lastChild.append(matrixTable(matrix, { colored: matrix.colored, maxRows: options.maxRows, maxCols: options.maxCols }));
    }
    body.replaceChildren(make('h3', `Step ${step + 1} of ${list.length}: ${title}`), make('p', formula, 'formula', 'font-family:ui-monospace,monospace'),
      make('p', sentence, 'step-sentence'), tables);
  }
  function go(step) {
    const target = Math.min(Math.max(step, 0), list.length - 1);
    if (target === options.step) return;
    options.step = target;
    render();
    emit('step', { view: 'steps', step: target, count: list.length, title: list[target].title });
  }

  // A cell of one of the step's matrices: which, where, its exact value.
  let hovered;
  function cellOf(event) {
    const td = event.target.closest?.('td');
    const index = [...body.querySelectorAll('table')].indexOf(td?.closest('table'));
    if (index < 0) return null;
    const { name, cols, values, rowLabels, colLabels } = list[options.step].matrices[index];
    const row = td.parentElement.sectionRowIndex;
    const col = td.cellIndex - 1;
    return { view: 'steps', step: options.step, matrix: name, row, col, query: rowLabels[row], key: colLabels[col], value: values[row * cols + col] };
  }
  const handlers = {
    click(event) {
      if (event.target === previous || event.target === next) go(options.step + (event.target === next ? 1 : -1));
      const detail = cellOf(event);
      if (detail) emit('select', detail);
    },
    mouseover(event) {
      const detail = cellOf(event);
      const key = detail && `${detail.matrix} ${detail.row} ${detail.col}`;
      if (detail && key !== hovered) emit('hover', detail);
      hovered = key;
    },
    keydown(event) {
      const delta = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 }[event.key];
      if (!options.controls || !delta) return;
      event.preventDefault();
      go(options.step + delta);
    },
  };
  return mountedTableView('steps', root, handlers, releaseStyles, {
    take: (nextData, nextOptions) => take(nextData ?? data, nextOptions),
    render,
    extend: (alive) => ({
      get step() { return options.step; },
      get count() { return list.length; },
      toJSON() {
        alive('toJSON');
        return {
          generator: 'attnlens/views', view: 'steps', step: options.step,
          steps: list.map(({ matrices, ...step }) => ({
            ...step, matrices: matrices.map(({ name, rows, cols, values, rowLabels, colLabels }) => ({ name, rowLabels, colLabels, values: toNested(values, rows, cols) })),
          })),
        };
      },
    }),
  });
}

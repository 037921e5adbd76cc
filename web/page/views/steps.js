// Step-by-step mode: the path from X to the output for one head, as a list
// of steps, each with labelled matrices and one sentence of explanation.
// stepsFor() is pure data preparation (slicing the library's intermediates);
// renderStep() draws one step as HTML.
import { columnBlock } from './data.js';
import { formatNumber, matrixTable } from './matrix-table.js';

function indexLabels(count, offset = 0) {
  return Array.from({ length: count }, (_, index) => String(index + offset));
}

/**
 * @param {object} model  from attentionModel(result)
 * @param {number} head
 * @param {object} settings { temperature, causal, fromSentence }
 */
export function stepsFor(model, head, { temperature = 1, causal = false, fromSentence = true } = {}) {
  const r = model.result;
  const { n, nKeys } = model;
  const d = r.dModel;
  const dk = r.headWidth;
  const start = head * dk;
  const size = n * nKeys;
  const slice = (values) => values.subarray(head * size, (head + 1) * size);
  const q = { rowLabels: model.queryTokens };
  const k = { rowLabels: model.keyTokens };
  const headName = model.heads > 1 ? `, head ${head + 1}` : '';
  const cross = model.crossAttention;
  const keyX = cross ? r.contextX : r.x;
  const sqrtDk = Math.sqrt(dk);

  const steps = [
    {
      title: 'X: the input rows',
      formula: cross ? 'X (queries), X_context (keys and values)' : 'X',
      sentence: fromSentence
        ? 'Each row is one token: a vector derived from the token text (same word, same vector) plus a sinusoidal code of its position.'
        : 'Each row is one input vector, exactly as given.',
      matrices: [
        { name: 'X', rows: n, cols: d, values: r.x, ...q, colLabels: indexLabels(d) },
        ...(cross ? [{ name: 'X_context', rows: nKeys, cols: d, values: keyX, ...k, colLabels: indexLabels(d) }] : []),
      ],
    },
    {
      title: `Q = X · W_Q${headName}`,
      formula: `Q = X · W_Q[:, ${start}..${start + dk - 1}]`,
      sentence: `Queries: each token's question. This head uses ${dk} of the ${d} columns of W_Q.`,
      matrices: [
        { name: 'W_Q (this head)', rows: d, cols: dk, values: columnBlock(r.wq, d, d, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'Q', rows: n, cols: dk, values: columnBlock(r.q, n, d, start, dk), ...q, colLabels: indexLabels(dk, start) },
      ],
    },
    {
      title: `K = ${cross ? 'X_context' : 'X'} · W_K${headName}`,
      formula: 'K = X · W_K (same columns)',
      sentence: 'Keys: what each token offers to be found by. A query matches a key when their dot product is large.',
      matrices: [
        { name: 'W_K (this head)', rows: d, cols: dk, values: columnBlock(r.wk, d, d, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'K', rows: nKeys, cols: dk, values: columnBlock(r.k, nKeys, d, start, dk), ...k, colLabels: indexLabels(dk, start) },
      ],
    },
    {
      title: `V = ${cross ? 'X_context' : 'X'} · W_V${headName}`,
      formula: 'V = X · W_V (same columns)',
      sentence: 'Values: what each token hands over once it is attended to.',
      matrices: [
        { name: 'W_V (this head)', rows: d, cols: dk, values: columnBlock(r.wv, d, d, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'V', rows: nKeys, cols: dk, values: columnBlock(r.v, nKeys, d, start, dk), ...k, colLabels: indexLabels(dk, start) },
      ],
    },
    {
      title: 'Scores = Q · Kᵀ',
      formula: 'scores[i][j] = Q[i] · K[j]',
      sentence: 'Every query row is dotted with every key row: one raw match score per (query, key) pair.',
      matrices: [{ name: 'Q Kᵀ', rows: n, cols: nKeys, values: slice(r.scores), ...q, colLabels: model.keyTokens }],
    },
    {
      title: 'Scaled scores',
      formula: `scaled = scores / √d_k${temperature !== 1 ? ' / T' : ''}  (√${dk} = ${Number(sqrtDk.toFixed(4))}${temperature !== 1 ? `, T = ${temperature}` : ''})`,
      sentence: `Dividing by √d_k keeps the scores from growing with the width, so the softmax does not saturate${temperature !== 1 ? '; the temperature T flattens (T > 1) or sharpens (T < 1) it' : ''}${causal ? '; the causal mask sets future keys to -∞' : ''}.`,
      matrices: [{ name: 'scaled scores', rows: n, cols: nKeys, values: slice(r.scaledScores), ...q, colLabels: model.keyTokens }],
    },
    {
      title: 'Weights = softmax(scaled scores)',
      formula: 'weights[i][j] = exp(s[i][j]) / Σ_j exp(s[i][j])',
      sentence: 'Each row is exponentiated and divided by its sum, so it becomes a set of weights in [0, 1] that add up to 1: where that token looks.',
      matrices: [{ name: 'weights', rows: n, cols: nKeys, values: slice(r.weights), ...q, colLabels: model.keyTokens, colored: true }],
    },
    {
      title: `Head output = weights · V`,
      formula: 'out[i] = Σ_j weights[i][j] · V[j]',
      sentence: 'Each output row is the weighted mean of the value rows, with this head\'s weights.',
      matrices: [{ name: `head ${head + 1} output`, rows: n, cols: dk, values: columnBlock(r.concatenatedHeads, n, d, start, dk), ...q, colLabels: indexLabels(dk, start) }],
    },
    {
      title: 'Output = concat(heads) · W_O',
      formula: `output = [head 1 … head ${model.heads}] · W_O`,
      sentence: model.heads > 1
        ? 'The heads\' outputs are placed side by side and multiplied by W_O, which mixes them back into one d_model-wide row per token.'
        : 'With one head the concatenation is the head output itself; W_O then maps it to the output row.',
      matrices: [{ name: 'output', rows: n, cols: d, values: r.output, ...q, colLabels: indexLabels(d) }],
    },
  ];
  return steps;
}

// Draws step `index` of `steps` into `container` (replacing its content).
export function renderStep(container, steps, index) {
  const step = steps[index];
  container.replaceChildren();
  const heading = document.createElement('h3');
  heading.textContent = `Step ${index + 1} of ${steps.length}: ${step.title}`;
  const formula = document.createElement('p');
  formula.className = 'formula';
  formula.textContent = step.formula;
  const sentence = document.createElement('p');
  sentence.className = 'step-sentence';
  sentence.textContent = step.sentence;
  const matrices = document.createElement('div');
  matrices.className = 'matrices';
  for (const matrix of step.matrices) {
    const wrapper = document.createElement('div');
    wrapper.className = 'matrix-wrap';
    wrapper.append(matrixTable(matrix, { colored: matrix.colored, maxRows: 16, maxCols: 16 }));
    matrices.append(wrapper);
  }
  container.append(heading, formula, sentence, matrices);
}

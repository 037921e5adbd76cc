// Step-by-step mode: the path from X to the output for one head, as a list
// of steps, each with labelled matrices and one sentence of explanation.
// stepsFor() is pure data preparation (slicing the library's intermediates);
// renderStep() draws one step as HTML.
import { columnBlock } from './data.js';
import { formatNumber, matrixTable } from '../../views/matrix-table.js';

function indexLabels(count, offset = 0) {
  return Array.from({ length: count }, (_, index) => String(index + offset));
}

/**
 * @param {object} model  from attentionModel(result)
 * @param {number} head
 * @param {object} settings { temperature, causal, source: 'sentence' | 'matrices' | 'model' (fromSentence: the
 *                            older boolean form), and for models: architecture, layer, kvHeads }
 */
export function stepsFor(model, head, {
  temperature = 1, causal = false, fromSentence = true, source = fromSentence ? 'sentence' : 'matrices',
  architecture = null, layer = 0, kvHeads = null,
} = {}) {
  const r = model.result;
  const { n, nKeys } = model;
  const d = r.dModel;
  const dk = r.headWidth;
  // Q, K, V and the heads' outputs are heads x headWidth wide: d_model for the
  // sentence pipeline, and for models too except Llama variants whose
  // head_dim times heads differs from hidden_size.
  const width = r.heads * dk;
  const start = head * dk;
  const size = n * nKeys;
  const slice = (values) => values.subarray(head * size, (head + 1) * size);
  const q = { rowLabels: model.queryTokens };
  const k = { rowLabels: model.keyTokens };
  const headName = model.heads > 1 ? `, head ${head + 1}` : '';
  const cross = model.crossAttention;
  const keyX = cross ? r.contextX : r.x;
  const sqrtDk = Math.sqrt(dk);
  const text = source === 'model' ? modelTexts({ architecture, layer, head, heads: r.heads, kvHeads, dk, start }) : null;

  const steps = [
    {
      title: text?.x.title ?? 'X: the input rows',
      formula: text?.x.formula ?? (cross ? 'X (queries), X_context (keys and values)' : 'X'),
      sentence: text?.x.sentence ?? (source === 'sentence'
        ? 'Each row is one token: a vector derived from the token text (same word, same vector) plus a sinusoidal code of its position.'
        : 'Each row is one input vector, exactly as given.'),
      matrices: [
        { name: 'X', rows: n, cols: d, values: r.x, ...q, colLabels: indexLabels(d) },
        ...(cross ? [{ name: 'X_context', rows: nKeys, cols: d, values: keyX, ...k, colLabels: indexLabels(d) }] : []),
      ],
    },
    {
      title: `Q = X · W_Q${headName}`,
      formula: text?.q.formula ?? `Q = X · W_Q[:, ${start}..${start + dk - 1}]`,
      sentence: text?.q.sentence ?? `Queries: each token's question. This head uses ${dk} of the ${d} columns of W_Q.`,
      matrices: [
        { name: 'W_Q (this head)', rows: d, cols: dk, values: columnBlock(r.wq, d, width, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'Q', rows: n, cols: dk, values: columnBlock(r.q, n, width, start, dk), ...q, colLabels: indexLabels(dk, start) },
      ],
    },
    {
      title: `K = ${cross ? 'X_context' : 'X'} · W_K${headName}`,
      formula: text?.k.formula ?? 'K = X · W_K (same columns)',
      sentence: text?.k.sentence ?? 'Keys: what each token offers to be found by. A query matches a key when their dot product is large.',
      matrices: [
        { name: 'W_K (this head)', rows: d, cols: dk, values: columnBlock(r.wk, d, width, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'K', rows: nKeys, cols: dk, values: columnBlock(r.k, nKeys, width, start, dk), ...k, colLabels: indexLabels(dk, start) },
      ],
    },
    {
      title: `V = ${cross ? 'X_context' : 'X'} · W_V${headName}`,
      formula: text?.v.formula ?? 'V = X · W_V (same columns)',
      sentence: text?.v.sentence ?? 'Values: what each token hands over once it is attended to.',
      matrices: [
        { name: 'W_V (this head)', rows: d, cols: dk, values: columnBlock(r.wv, d, width, start, dk), rowLabels: indexLabels(d), colLabels: indexLabels(dk, start) },
        { name: 'V', rows: nKeys, cols: dk, values: columnBlock(r.v, nKeys, width, start, dk), ...k, colLabels: indexLabels(dk, start) },
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
      matrices: [{ name: `head ${head + 1} output`, rows: n, cols: dk, values: columnBlock(r.concatenatedHeads, n, width, start, dk), ...q, colLabels: indexLabels(dk, start) }],
    },
    {
      title: 'Output = concat(heads) · W_O',
      formula: text?.output.formula ?? `output = [head 1 … head ${model.heads}] · W_O`,
      sentence: text?.output.sentence ?? (model.heads > 1
        ? 'The heads\' outputs are placed side by side and multiplied by W_O, which mixes them back into one d_model-wide row per token.'
        : 'With one head the concatenation is the head output itself; W_O then maps it to the output row.'),
      matrices: [{ name: 'output', rows: n, cols: d, values: r.output, ...q, colLabels: indexLabels(d) }],
    },
  ];
  if (text && r.layerOutput) {
    steps.push({
      title: `Layer ${layer + 1} output`,
      formula: text.layerOutput.formula,
      sentence: text.layerOutput.sentence,
      matrices: [{ name: 'layer output', rows: n, cols: d, values: r.layerOutput, ...q, colLabels: indexLabels(d) }],
    });
  }
  return steps;
}

// What each step means in a trained model of each architecture: where X
// comes from, the biases and rotary embedding on Q and K, what the output
// joins. The numbers are the model's own (model.explain).
function modelTexts({ architecture, layer, head, heads, kvHeads, dk, start }) {
  const L = layer + 1;
  const cols = `[:, ${start}..${start + dk - 1}]`;
  const llama = architecture === 'llama';
  const bert = architecture === 'bert';
  const below = layer === 0
    ? (llama ? 'its token embedding' : bert ? 'its token, position and segment embeddings' : 'its token embedding plus its learned position embedding')
    : `what the embeddings and layers 1–${layer} made of it`;
  const group = kvHeads && kvHeads < heads ? Math.floor(head / (heads / kvHeads)) : null;
  const shared = group === null ? '' : ` With grouped-query attention ${heads / kvHeads} query heads share one key/value head: this head uses key/value head ${group + 1} of ${kvHeads}.`;
  const rotary = llama ? ', then rotated by an angle that grows with the position (rotary embedding), so that Q·K depends on how far apart two tokens are' : '';
  return {
    x: {
      title: `X: what layer ${L} reads`,
      formula: bert ? `X = output of ${layer === 0 ? 'the embeddings' : `layer ${layer}`}` : `X = ${llama ? 'RMSNorm' : 'LayerNorm'}(residual stream)`,
      sentence: bert
        ? `Each row is one token's vector entering layer ${L}: ${below}, normalized by LayerNorm.`
        : `Each row is one token's residual stream entering layer ${L} (${below}), normalized by the layer's ${llama ? 'RMSNorm' : 'LayerNorm'}: this is what the attention reads.`,
    },
    q: {
      formula: llama ? `Q = rotary(X · W_Q${cols})` : `Q = X · W_Q${cols} + b_Q`,
      sentence: `Queries: each token's question, with the weights this model learned for layer ${L}${rotary}.`,
    },
    k: {
      formula: llama ? 'K = rotary(X · W_K) (same columns)' : 'K = X · W_K + b_K (same columns)',
      sentence: `Keys: what each token offers to be found by; a query matches a key when their dot product is large.${shared}`,
    },
    v: {
      formula: llama ? 'V = X · W_V (same columns)' : 'V = X · W_V + b_V (same columns)',
      sentence: `Values: what each token hands over once it is attended to.${shared}`,
    },
    output: {
      formula: `output = [head 1 … head ${heads}] · W_O${llama ? '' : ' + b_O'}`,
      sentence: 'The heads\' outputs side by side, times W_O: what this layer\'s attention adds to each token\'s residual stream.',
    },
    layerOutput: {
      formula: bert
        ? 'h = LayerNorm(X + output);  layer output = LayerNorm(h + MLP(h))'
        : 'h = stream + output;  layer output = h + MLP(norm(h))',
      sentence: `The residual stream after the whole layer: the attention's output added in, then the MLP's. This is what layer ${L + 1} reads (after its own norm), or, after the last layer, what the model predicts from.`,
    },
  };
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

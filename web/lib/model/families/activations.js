// The config spellings of the activations the core computes, the sizes
// under the names most transformers configs use, and the rotated width of
// partial rotary, shared by the family descriptions.

// The tanh approximation of GELU, under each name transformers gives it.
export const GELU_TANH = Object.freeze({ gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh', gelu_fast: 'gelu_tanh' });
// max(x, 0) (OPT's).
export const RELU = Object.freeze({ relu: 'relu' });

// The five sizes as BertConfig, LlamaConfig, GPTNeoXConfig, PhiConfig, ... name them.
export const HIDDEN_SIZES = Object.freeze({
  modelWidth: { count: 'hidden_size' },
  heads: { count: 'num_attention_heads' },
  layers: { count: 'num_hidden_layers' },
  mlpWidth: { count: 'intermediate_size' },
  vocabSize: { count: 'vocab_size' },
});

const WHERE = 'attnlens.loadModel';

// The map of a rotated-fraction field (GPT-NeoX's rotary_pct, Phi's
// partial_rotary_factor) onto the core's rotaryWidth: int(head_dim *
// fraction) columns of each head, as both modeling files compute it.
export function rotaryWidthOf(field) {
  return (fraction, { modelWidth, heads }) => {
    const headWidth = modelWidth / heads;
    const width = Math.trunc(headWidth * fraction);
    if (width === 0) {
      throw new RangeError(`${WHERE}: config.${field} = ${fraction} turns no column of the ${headWidth}-wide heads ` +
        '(attnlens needs rotary positions on at least two)');
    }
    return width;
  };
}

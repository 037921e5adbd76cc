// The config spellings of the activations the core computes, and the
// rotated width of partial rotary, shared by the family descriptions.

// The tanh approximation of GELU, under each name transformers gives it.
export const GELU_TANH = Object.freeze({ gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh', gelu_fast: 'gelu_tanh' });
// max(x, 0) (OPT's).
export const RELU = Object.freeze({ relu: 'relu' });

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

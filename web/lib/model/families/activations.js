// The config spellings of the activations the core computes, shared by the
// family descriptions.

// The tanh approximation of GELU, under each name transformers gives it.
export const GELU_TANH = Object.freeze({ gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh', gelu_fast: 'gelu_tanh' });
// max(x, 0) (OPT's).
export const RELU = Object.freeze({ relu: 'relu' });

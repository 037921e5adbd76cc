// GPT-NeoX (GPTNeoXModel, GPTNeoXForCausalLM; Pythia): pre-norm LayerNorms,
// a fused query_key_value Linear whose rows come per head ([heads, 3,
// head_size]: the core's gpt_neox layout reorders them), rotary on the first
// int(head_size * rotary_pct) columns of each head, the parallel residual
// x + attn(ln1(x)) + mlp(ln2(x)) unless use_parallel_residual is false, and
// an untied embed_out.
import { GELU_TANH, HIDDEN_SIZES, rotaryWidthOf } from './activations.js';

export default Object.freeze({
  modelTypes: ['gpt_neox'],
  layout: 'gpt_neox',
  config: {
    ...HIDDEN_SIZES,
    maxPositions: { count: 'max_position_embeddings', fallback: 2048 },
    normEpsilon: { number: 'layer_norm_eps', fallback: 1e-5 },
    // Newer configs also spell these partial_rotary_factor and rope_theta.
    rotaryWidth: {
      number: 'rotary_pct', atMost: 1, map: rotaryWidthOf('rotary_pct'),
      fallback: { number: 'partial_rotary_factor', atMost: 1, fallback: 0.25 },
    },
    ropeTheta: { number: 'rotary_emb_base', above: 1, fallback: { number: 'rope_theta', above: 1, fallback: 10000 } },
    activation: { choice: 'hidden_act', fallback: 'gelu', accepted: { gelu: 'gelu_erf', ...GELU_TANH } },
    parallelResidual: { flag: 'use_parallel_residual', fallback: true },
    // attention_bias gives query_key_value and dense their biases alike.
    attentionBias: { flag: 'attention_bias', fallback: true },
    attentionOutputBias: { flag: 'attention_bias', fallback: true },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: false },
  },
  refuse: [
    { field: 'rope_scaling', unless: null, what: 'attnlens applies plain rotary embeddings with rotary_emb_base' },
  ],
  math: {
    norm: 'layer', position: 'rotary', postNorm: false, causal: true, gatedMlp: false,
    embeddingNorm: false, finalNorm: true, hasLmHead: true, mlpBias: true,
  },
  tensors: {
    // The core's names carry gpt_neox. (GPTNeoXForCausalLM's files); GPTNeoXModel's lack it.
    prefix: 'gpt_neox.',
    canonicalPrefix: true,
    outsidePrefix: ['lm_head.weight'],
    modules: [['embed_out', 'lm_head']],
    // The causal-mask, masked_bias and rotary buffers older checkpoints saved.
    skip: [/\.attention\.(bias|masked_bias)$/, /\.rotary_emb\.inv_freq$/],
  },
});

// T5 (T5ForConditionalGeneration: t5-small and v1.0; T5 v1.1 and Flan-T5):
// an encoder-decoder (src/model/seq2seq.hpp) with RMS norms without a mean
// or a bias (T5LayerNorm) before each half, no position embeddings but a
// learned relative position bias on the scores (relative_attention_bias of
// each side's first block, shared by its blocks; buckets both ways in the
// encoder, looking back only in the decoder, none in cross-attention),
// scores not scaled by 1/sqrt(d_kv), heads d_kv wide (Flan-T5-small's
// 6 x 64 is not d_model), no biases, a ReLU MLP or a gated GELU one
// (feed_forward_proj "gated-gelu": gelu_new), final norms on both sides,
// and a head tied to the shared embeddings that scales the state by
// d_model^-0.5 first (v1.0), or an own lm_head that does not (v1.1).
const FEED_FORWARD = Object.freeze({ relu: 'relu', 'gated-relu': 'relu', 'gated-gelu': 'gelu_tanh', gelu: 'gelu_erf', 'gated-silu': 'silu', silu: 'silu' });

export default Object.freeze({
  modelTypes: ['t5'],
  layout: 't5',
  config: {
    modelWidth: { count: 'd_model' },
    heads: { count: 'num_heads' },
    headWidth: { count: 'd_kv' },
    layers: { count: 'num_layers' },
    decoderLayers: { count: 'num_decoder_layers', fallback: { count: 'num_layers' } },
    mlpWidth: { count: 'd_ff' },
    vocabSize: { count: 'vocab_size' },
    // T5 numbers no positions; its inputs are bounded only by memory. The
    // core's bound: n_positions (512 in the hub's configs) tokens a side.
    maxPositions: { count: 'n_positions', fallback: 512 },
    normEpsilon: { number: 'layer_norm_epsilon', fallback: 1e-6 },
    activation: { choice: 'feed_forward_proj', fallback: 'relu', accepted: FEED_FORWARD, why: 'T5 feed-forward kinds' },
    gatedMlp: { custom: 'feed_forward_proj', read: (config) => String(config.feed_forward_proj ?? 'relu').startsWith('gated-') },
    relativeBuckets: { count: 'relative_attention_num_buckets', fallback: 32 },
    relativeMaxDistance: { count: 'relative_attention_max_distance', fallback: 128 },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
    logitsScale: { flag: 'tie_word_embeddings', fallback: true, map: (tied, { modelWidth }) => (tied ? modelWidth ** -0.5 : 0) },
    decoderStartId: { index: 'decoder_start_token_id', fallback: { index: 'pad_token_id' } },
  },
  refuse: [
    { field: 'is_decoder', unless: false, what: 'T5 as a decoder alone' },
  ],
  math: {
    norm: 'rms', position: 'relative', postNorm: false, causal: false, embeddingNorm: false, finalNorm: true,
    hasLmHead: true, lmHeadBias: false, attentionBias: false, attentionOutputBias: false, mlpBias: false, attentionScale: 1,
  },
  tensors: {
    // Each side's embed_tokens is shared, tied.
    skip: [/^(encoder|decoder)\.embed_tokens\.weight$/],
  },
});

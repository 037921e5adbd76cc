// Marian (MarianMTModel, the opus-mt translators): BART's names and
// post-norm layers, with fixed sinusoidal positions instead of learned ones
// (MarianSinusoidalPositionalEmbedding, computed by the core: files that
// store the table have it skipped), no embedding LayerNorm, embeddings
// multiplied by sqrt(d_model) (scale_embedding, true in every opus-mt
// config), swish activations, and decoding that starts from the pad token
// (decoder_start_token_id = pad_token_id).
import bart, { SEQ2SEQ_CONFIG, SEQ2SEQ_REFUSE } from './bart.js';

export default Object.freeze({
  modelTypes: ['marian'],
  layout: 'bart',
  config: {
    ...SEQ2SEQ_CONFIG,
    activation: { ...SEQ2SEQ_CONFIG.activation, fallback: 'swish' },
    maxPositions: { count: 'max_position_embeddings', fallback: 1024 },
    embeddingScale: { flag: 'scale_embedding', fallback: false, map: (scaled, { modelWidth }) => (scaled ? Math.sqrt(modelWidth) : 0) },
  },
  refuse: [
    ...SEQ2SEQ_REFUSE,
    { field: 'share_encoder_decoder_embeddings', unless: true, what: 'separate source and target embeddings' },
  ],
  math: { ...bart.math, position: 'sinusoidal', positionOffset: 0, embeddingNorm: false },
  tensors: {
    ...bart.tensors,
    skip: [/^(encoder|decoder)\.embed_tokens\.weight$/, /^(encoder|decoder)\.embed_positions\.weight$/],
  },
});

// ELECTRA (ElectraModel, ElectraForPreTraining, ElectraForMaskedLM): BERT's
// layout and math under electra., with embeddings embedding_size wide
// (word, position and token type, and their LayerNorm) projected to
// hidden_size by embeddings_project when the two differ (ElectraModel.forward).
// The discriminator's and generator's heads are not run.
import bert from './bert.js';

export default Object.freeze({
  ...bert,
  modelTypes: ['electra'],
  config: {
    ...bert.config,
    // ElectraConfig's default embedding_size is 128.
    embeddingWidth: { count: 'embedding_size', fallback: 128 },
  },
  tensors: {
    ...bert.tensors,
    prefix: 'electra.',
    skip: [/^(generator_predictions|generator_lm_head|discriminator_predictions|classifier|qa_outputs)\./,
      /^embeddings\.(position_ids|token_type_ids)$/],
  },
});

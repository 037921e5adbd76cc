// ELECTRA (ElectraModel, ElectraForPreTraining, ElectraForMaskedLM): BERT's
// layout and math under electra., with embeddings embedding_size wide
// (word, position and token type, and their LayerNorm) projected to
// hidden_size by embeddings_project when the two differ (ElectraModel.forward).
// The generator's masked-LM head (generator_predictions: dense to
// embedding_size, exact GELU whatever hidden_act says, LayerNorm; then
// generator_lm_head tied to the word embeddings) runs when the checkpoint
// has it; the discriminator's head does not.
import bert, { BERT_CONFIG } from './bert.js';

export default Object.freeze({
  ...bert,
  modelTypes: ['electra'],
  config: {
    ...BERT_CONFIG,
    // ElectraConfig's default embedding_size is 128.
    embeddingWidth: { count: 'embedding_size', fallback: 128 },
  },
  math: { ...bert.math, mlmActivation: 'gelu_erf' },
  tensors: {
    ...bert.tensors,
    prefix: 'electra.',
    skip: [/^(discriminator_predictions|classifier|qa_outputs)\./, /^embeddings\.(position_ids|token_type_ids)$/],
    modules: [
      ['generator_predictions.dense', 'cls.predictions.transform.dense'],
      ['generator_predictions.LayerNorm', 'cls.predictions.transform.LayerNorm'],
      ['generator_lm_head', 'lm_head'],
    ],
  },
});

// RoBERTa and XLM-RoBERTa (RobertaModel, XLMRobertaModel, *ForMaskedLM):
// BERT's layout and math under roberta., with positions numbered from
// pad_token_id + 1 (create_position_ids_from_input_ids in
// modeling_roberta.py: pad tokens sit at pad_token_id, the others count on
// from it). The pooler and lm_head are not run.
import bert from './bert.js';

export default Object.freeze({
  ...bert,
  modelTypes: ['roberta', 'xlm-roberta'],
  config: {
    ...bert.config,
    // RobertaConfig's default pad_token_id (the embeddings' padding_idx).
    paddingIdx: { index: 'pad_token_id', fallback: 1 },
  },
  tensors: {
    ...bert.tensors,
    prefix: 'roberta.',
    skip: [/^pooler\./, /^lm_head\./, /^classifier\./, /^embeddings\.(position_ids|token_type_ids)$/],
  },
});

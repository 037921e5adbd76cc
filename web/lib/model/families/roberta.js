// RoBERTa and XLM-RoBERTa (RobertaModel, XLMRobertaModel, *ForMaskedLM):
// BERT's layout and math under roberta., with positions numbered from
// pad_token_id + 1 (create_position_ids_from_input_ids in
// modeling_roberta.py: pad tokens sit at pad_token_id, the others count on
// from it). RobertaLMHead (dense, exact GELU whatever hidden_act says, layer_norm,
// then the decoder tied to the word embeddings plus lm_head.bias) runs when
// the checkpoint has it; the pooler does not.
import bert, { BERT_CONFIG } from './bert.js';

export default Object.freeze({
  ...bert,
  modelTypes: ['roberta', 'xlm-roberta'],
  config: {
    ...BERT_CONFIG,
    // RobertaConfig's default pad_token_id (the embeddings' padding_idx).
    paddingIdx: { index: 'pad_token_id', fallback: 1 },
  },
  math: { ...bert.math, mlmActivation: 'gelu_erf' },
  tensors: {
    ...bert.tensors,
    prefix: 'roberta.',
    // lm_head.decoder.bias is lm_head.bias under a second name.
    skip: [/^pooler\./, /^classifier\./, /^lm_head\.decoder\.bias$/, /^embeddings\.(position_ids|token_type_ids)$/],
    // lm_head itself first: messages name the bias as the files do.
    modules: [
      ['lm_head', 'lm_head'],
      ['lm_head.dense', 'cls.predictions.transform.dense'],
      ['lm_head.layer_norm', 'cls.predictions.transform.LayerNorm'],
      ['lm_head.decoder', 'lm_head'],
    ],
  },
});

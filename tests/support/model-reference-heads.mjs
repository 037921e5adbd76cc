// The float64 masked-LM heads of the encoder families, each written from its
// modeling file: modeling_bert.py (BertOnlyMLMHead: BertPredictionHeadTransform
// = dense, ACT2FN[hidden_act], LayerNorm(layer_norm_eps); then the decoder
// tied to the word embeddings, plus cls.predictions.bias),
// modeling_roberta.py (RobertaLMHead: dense, gelu, layer_norm, decoder +
// lm_head.bias), modeling_distilbert.py (DistilBertForMaskedLM:
// vocab_transform, get_activation(config.activation), vocab_layer_norm with
// eps 1e-12, vocab_projector) and modeling_electra.py (ElectraForMaskedLM:
// generator_predictions = dense to embedding_size, gelu, LayerNorm; then
// generator_lm_head). Names are the hub's (the reference's canonical names).
import { applyEach, geluErf, geluTanh, layerNorm, linearOutIn } from './model-reference.mjs';

// Per family: the head's modules, and the activation its code applies
// (null: the config's, as the model's own activation).
const HEADS = {
  bert: { dense: 'cls.predictions.transform.dense', norm: 'cls.predictions.transform.LayerNorm', bias: 'cls.predictions.bias', exactGelu: false },
  roberta: { dense: 'lm_head.dense', norm: 'lm_head.layer_norm', bias: 'lm_head.bias', exactGelu: true },
  distilbert: { dense: 'vocab_transform', norm: 'vocab_layer_norm', bias: 'vocab_projector.bias', exactGelu: false },
  electra: { dense: 'generator_predictions.dense', norm: 'generator_predictions.LayerNorm', bias: 'generator_lm_head.bias', exactGelu: true },
};
const headOf = (arch) => HEADS[arch === 'xlm-roberta' ? 'roberta' : arch];

/** The head's tensors [{ name, shape }]: E is the transform's width (ELECTRA: embedding_size), V the vocabulary. */
export function maskedLmHeadShapes(arch, d, E, V) {
  const head = headOf(arch);
  return [
    { name: `${head.dense}.weight`, shape: [E, d] }, { name: `${head.dense}.bias`, shape: [E] },
    { name: `${head.norm}.weight`, shape: [E] }, { name: `${head.norm}.bias`, shape: [E] },
    { name: head.bias, shape: [V] },
  ].map((spec) => ({ ...spec, optional: false }));
}

/**
 * logits (n x V) of the last hidden state `hidden` (n x d), or null when the
 * checkpoint has no head. dims: the model's (activation, epsilon, width,
 * vocabSize); the decoder is the word embeddings (E wide), as every family ties it.
 */
export function maskedLmLogits(arch, tensors, hidden, n, dims) {
  const head = headOf(arch);
  const dense = head && tensors[`${head.dense}.weight`];
  if (!dense) return null;
  const { width: d, vocabSize: V } = dims;
  const E = dense.length / d;
  const activation = head.exactGelu || dims.activation === 'gelu_erf' ? geluErf : geluTanh;
  if (!head.exactGelu && !['gelu_erf', 'gelu_tanh'].includes(dims.activation)) {
    throw new Error(`${arch} reference: head activation ${dims.activation} is not implemented`);
  }
  let y = applyEach(activation, linearOutIn(hidden, n, dense, d, E, tensors[`${head.dense}.bias`]));
  y = layerNorm(y, n, E, tensors[`${head.norm}.weight`], tensors[`${head.norm}.bias`], dims.epsilon);
  return linearOutIn(y, n, tensors['embeddings.word_embeddings.weight'], E, V, tensors[head.bias]);
}

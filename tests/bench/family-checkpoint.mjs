// Random checkpoints the size of the models people bring (issue 22): a
// Pythia-160M (gpt_neox) and a Qwen2.5-0.5B (qwen2, BF16 like the hub's file),
// in their hub layouts (tensor names and shapes from the tests' own tables,
// tests/support), with their config.json as the hub's folders have it, and
// the flops of a forward. GPT-2's checkpoint is gpt2-checkpoint.mjs'; this
// file writes the others through the same writer.
import { referenceTensorShapes } from '../support/model-reference.mjs';
import { familyVariants, hasMaskedLmHead, hubName, namingVariants } from '../support/tiny-checkpoints.mjs';
import { writeCheckpoint } from './gpt2-checkpoint.mjs';

// EleutherAI/pythia-160m's config.json (the fields transformers reads).
export const PYTHIA_160M = {
  architectures: ['GPTNeoXForCausalLM'], model_type: 'gpt_neox', hidden_size: 768, intermediate_size: 3072,
  num_attention_heads: 12, num_hidden_layers: 12, max_position_embeddings: 2048, rotary_pct: 0.25, rotary_emb_base: 10000,
  use_parallel_residual: true, vocab_size: 50304, layer_norm_eps: 1e-5, hidden_act: 'gelu', tie_word_embeddings: false,
  attention_bias: true, rope_scaling: null, bos_token_id: 0, eos_token_id: 0,
};

// Qwen/Qwen2.5-0.5B's config.json.
export const QWEN25_05B = {
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864,
  num_attention_heads: 14, num_key_value_heads: 2, num_hidden_layers: 24, max_position_embeddings: 32768,
  rope_theta: 1000000.0, rms_norm_eps: 1e-6, hidden_act: 'silu', tie_word_embeddings: true, vocab_size: 151936,
  use_sliding_window: false, sliding_window: 32768, max_window_layers: 24, rope_scaling: null, torch_dtype: 'bfloat16',
  bos_token_id: 151643, eos_token_id: 151643,
};

// The same structures, tiny: --quick proves the script runs.
const tiny = { hidden_size: 32, intermediate_size: 48, num_attention_heads: 4, num_hidden_layers: 2, vocab_size: 97 };
export const QUICK_CONFIGS = {
  P: { ...PYTHIA_160M, ...tiny },
  Q: { ...QWEN25_05B, ...tiny, num_key_value_heads: 2, intermediate_size: 40 },
};

// The workloads: id -> { arch, hub variant (tests/support/tiny-checkpoints.mjs), dtype, weightStorage?, config, label }.
export const FAMILY_WORKLOADS = {
  P: { arch: 'gpt_neox', variant: 'pythia', dtype: 'F32', config: PYTHIA_160M, label: 'P Pythia-160M-sized gpt_neox (F32)' },
  Q: { arch: 'qwen2', variant: 'tied', dtype: 'BF16', weightStorage: 'as-stored', config: QWEN25_05B, label: 'Q Qwen2.5-0.5B-sized qwen2 (BF16, 16-bit storage)' },
};

// GPT-2-like initialization: matrices std 0.02, biases 0.01, norm gains 1 +- 0.05.
function drawn(name) {
  if (/norm|ln_|LayerNorm/i.test(name) && name.endsWith('.weight')) return { mean: 1, std: 0.05 };
  return { std: name.endsWith('.bias') ? 0.01 : 0.02 };
}

// The tensors of the hub's file: names as the hub variant writes them, the
// LM head left out when the variant ties it; an encoder's masked-LM head when
// the variant carries one. Variants of the families, or of gpt2, bert and llama.
export function familyTensors(arch, variantName, config) {
  const variant = (familyVariants[arch] ?? namingVariants[arch])[variantName];
  return referenceTensorShapes(arch, config, { maskedLmHead: hasMaskedLmHead(arch, variant) })
    .filter((spec) => spec.name !== 'lm_head.weight' || variant.lmHead)
    .map((spec) => ({ name: hubName(arch, variant, spec.name), shape: spec.shape, ...drawn(spec.name) }));
}

// -> { bytes, parameters, config }.
export function writeFamilyCheckpoint({ arch, variant, dtype, config }, { seed = 1 } = {}) {
  const { bytes, parameters } = writeCheckpoint(familyTensors(arch, variant, config), { seed, dtype });
  return { bytes, parameters, config };
}

// Flops of one forward over n tokens, counted as forwardFlops counts GPT-2's
// (gpt2-checkpoint.mjs): a multiply-add is 2; every layer matrix once per
// token; the full n x n scores and weights x V; the LM head (vocab x d, tied
// or not); embeddings, norms, biases, rotary and activations not counted.
export function familyForwardFlops(arch, variant, config, n) {
  const layers = config.num_hidden_layers;
  const queryWidth = config.hidden_size; // heads x head width for both families here
  let layerMatrices = 0;
  for (const spec of referenceTensorShapes(arch, config)) {
    if (spec.shape.length === 2 && /layers\.\d+\./.test(spec.name)) layerMatrices += spec.shape[0] * spec.shape[1];
  }
  const matrices = 2 * n * layerMatrices;
  const attention = layers * 2 * 2 * n * n * queryWidth;
  const lmHead = 2 * n * config.hidden_size * config.vocab_size;
  return { matrices, attention, lmHead, total: matrices + attention + lmHead };
}

// Tiny random Hugging Face checkpoints for tests: config.json, model.safetensors
// (and, when asked, the same weights in two shards with their index), written
// the way the hub's files hold them, in every naming variant a loader must
// accept. Sizes are small (d = 24..32, 2 layers) and the values are scaled so
// activations stay O(1) and attention is neither uniform nor one-hot.
//
// tinyCheckpoint({ arch, dtype, naming, seed, shards, ...configOverrides }) ->
//   { arch, dtype, naming, config, files, shards, tensors, entries, hubNames }
//   config:   the config.json object; files['config.json'] is its text
//   files:    'config.json', 'model.safetensors', and with shards: true also
//             'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors',
//             'model.safetensors.index.json'
//   shards:   the two shard files in order (null without shards: true)
//   tensors:  canonical name -> Float64Array of the values the file stores
//             (after F16/BF16 rounding), exactly what referenceForward takes
//   entries:  every tensor written, [{ name (hub), dtype, shape, values }], to
//             rewrite altered files with writeSafetensors (missing tensors ...)
//   hubNames: canonical name -> the name in the file
// namingVariants / checkpointVariants list the variants to loop over;
// canonicalName / canonicalTensors map a file's names back (test-side).
//
// Each tensor's values come from its own PRNG stream seeded by (seed,
// canonical name), so a tensor does not change with the naming variant, the
// dtype (before rounding) or which other tensors exist.

import { seededRandom } from '../../web/lib/model/seeded-random.js';
import { referenceTensorShapes } from './model-reference.mjs';
import { storedValue, writeSafetensors } from './safetensors.mjs';

// ---------------------------------------------------------------------------
// Variants

// Per architecture: the file layout (prefix, extra tensors, names) and the
// config details each variant exercises.
export const namingVariants = {
  gpt2: {
    // distilgpt2-like: bare names, lm_head tied to wte.
    bare: { prefix: '', buffers: false, lmHead: false },
    // GPT2LMHeadModel saved by transformers: transformer. prefix, tied.
    prefixed: { prefix: 'transformer.', buffers: false, lmHead: false },
    // openai-community/gpt2: bare names with the attn.bias causal-mask and
    // attn.masked_bias buffers old versions saved.
    buffers: { prefix: '', buffers: true, lmHead: false },
    // sort-gpt2-like: own lm_head (tie_word_embeddings false) and an n_inner
    // that is not 4d.
    untied: { prefix: 'transformer.', buffers: false, lmHead: true, config: { n_inner: 40, tie_word_embeddings: false } },
    // Everything at once.
    'prefixed-buffers-untied': { prefix: 'transformer.', buffers: true, lmHead: true, config: { tie_word_embeddings: false } },
  },
  bert: {
    // BertModel saved by current transformers: bare names, LayerNorm weight/bias.
    bare: { prefix: '', gammaBeta: false, extras: false },
    // BertForMaskedLM-style names with the bert. prefix, heads left out.
    prefixed: { prefix: 'bert.', gammaBeta: false, extras: false },
    // Old checkpoints: LayerNorm.gamma / LayerNorm.beta.
    'gamma-beta': { prefix: '', gammaBeta: true, extras: false },
    // BertModel with its pooler and the embeddings.position_ids I64 buffer.
    extras: { prefix: '', gammaBeta: false, extras: true },
    // bert-base-uncased-like: bert. prefix, gamma/beta, pooler, cls.* heads,
    // position_ids.
    hub: { prefix: 'bert.', gammaBeta: true, extras: true, heads: true },
  },
  llama: {
    // Multi-head attention (kv heads = heads), own lm_head.
    mha: { prefix: 'model.', lmHead: true, config: { num_key_value_heads: 4, tie_word_embeddings: false } },
    // SmolLM-like: grouped-query attention, tied embeddings, non-default rope_theta.
    gqa: { prefix: 'model.', lmHead: false, config: { num_key_value_heads: 2, tie_word_embeddings: true, rope_theta: 500 } },
    // LlamaModel saved on its own: no model. prefix, no lm_head (so tied).
    'base-model': { prefix: '', lmHead: false, config: { num_key_value_heads: 2, architectures: ['LlamaModel'] } },
    // head_dim given and different from hidden_size / heads (4 x 12 = 48 != 32).
    'head-dim': { prefix: 'model.', lmHead: true, config: { num_key_value_heads: 2, head_dim: 12, tie_word_embeddings: false } },
    // attention_bias (q, k, v and o_proj biases, as LlamaAttention reads it),
    // mlp_bias, the rotary_emb.inv_freq buffers old checkpoints saved, and one
    // kv head for all query heads (multi-query attention).
    'bias-buffers': {
      prefix: 'model.', lmHead: false, invFreq: true,
      config: { num_key_value_heads: 1, attention_bias: true, mlp_bias: true, tie_word_embeddings: true },
    },
  },
};

// The families that map onto those layouts (issue 22), each in the hub
// layouts its models are saved in. Kept apart from namingVariants: their
// model.info.architecture is the layout they run as, not their model_type.
export const familyVariants = {
  distilbert: {
    // DistilBertModel: bare names.
    bare: { prefix: '' },
    // DistilBertForMaskedLM (distilbert-base-uncased): distilbert. prefix, the
    // vocab_* MLM head and the embeddings.position_ids buffer.
    hub: { prefix: 'distilbert.', extras: true },
  },
  roberta: {
    // RobertaModel: bare names, the pooler.
    bare: { prefix: '', extras: true },
    // RobertaForMaskedLM (roberta-base): roberta. prefix, lm_head.*, position_ids.
    hub: { prefix: 'roberta.', extras: true, heads: true },
  },
  'xlm-roberta': {
    // XLMRobertaForMaskedLM saves under roberta. too (its base_model_prefix).
    hub: { prefix: 'roberta.', extras: true, heads: true },
  },
  qwen2: {
    // Qwen2.5-0.5B-like: grouped-query attention, tied embeddings.
    tied: { prefix: 'model.', lmHead: false, config: { tie_word_embeddings: true } },
    // Qwen2-7B-like: own lm_head.
    untied: { prefix: 'model.', lmHead: true, config: { tie_word_embeddings: false } },
    // use_sliding_window: a window of 3 tokens on the layers from max_window_layers (1) on.
    sliding: { prefix: 'model.', lmHead: false, config: { use_sliding_window: true, sliding_window: 3, max_window_layers: 1 } },
  },
  mistral: {
    // A window of 3 tokens: a 7-token input shows what it hides. Own lm_head.
    window: { prefix: 'model.', lmHead: true, config: { sliding_window: 3 } },
    // sliding_window null (Mistral-7B-v0.2 and later): full causal attention; tied.
    'no-window': { prefix: 'model.', lmHead: false, config: { sliding_window: null, tie_word_embeddings: true } },
  },
  gpt_neox: {
    // Pythia-like GPTNeoXForCausalLM: gpt_neox. prefix, embed_out, the
    // attention.bias / masked_bias / rotary_emb.inv_freq buffers older
    // versions saved; rotary on 2 of each head's 8 columns, parallel residual.
    pythia: { prefix: 'gpt_neox.', lmHead: true, buffers: true },
    // Sequential residual, half the head rotated, tanh GELU, no attention biases.
    sequential: {
      prefix: 'gpt_neox.', lmHead: true,
      config: { use_parallel_residual: false, rotary_pct: 0.5, hidden_act: 'gelu_new', attention_bias: false },
    },
  },
  gpt_neo: {
    // TinyStories-like GPTNeoForCausalLM: transformer. prefix, tied head,
    // global and local layers alternating with a window of 3, the attn.attention.bias/masked_bias buffers.
    tinystories: { prefix: 'transformer.', lmHead: false, buffers: true },
    // GPTNeoModel: bare names, attention_types only (no attention_layers), all local, own head.
    'bare-local': {
      prefix: '', lmHead: true,
      config: { attention_layers: undefined, attention_types: [[['local'], 2]], window_size: 2, tie_word_embeddings: false },
    },
  },
  opt: {
    // facebook/opt-125m-like OPTForCausalLM: model.decoder. names, norms before each half, ReLU, tied head.
    '125m': { prefix: 'model.', lmHead: false },
    // OPT-350m-like norms after each half (no final norm), saved by OPTModel (decoder. names), no
    // biases, an own head.
    'post-norm': { prefix: '', lmHead: true, config: { do_layer_norm_before: false, enable_bias: false, tie_word_embeddings: false } },
    // facebook/opt-350m-like: word embeddings 16 wide (word_embed_proj_dim) through project_in and
    // project_out around 32-wide layers, norms after each half, the head tied to them.
    '350m': { prefix: 'model.', lmHead: false, config: { do_layer_norm_before: false, word_embed_proj_dim: 16 } },
  },
  gemma: {
    // gemma-2b-like: one key-value head, heads 12 wide though hidden_size / heads is 8, tied head.
    '2b': { prefix: 'model.', lmHead: false },
    // gemma-7b-like: as many key-value heads as heads, attention biases, hidden_activation given as exact gelu.
    '7b': { prefix: 'model.', lmHead: false, config: { num_key_value_heads: 4, attention_bias: true, hidden_activation: 'gelu' } },
  },
  phi: {
    // phi-2-like PhiForCausalLM: half of each head rotated, lm_head with its bias.
    'phi-2': { prefix: 'model.', lmHead: true },
    // PhiModel's names (no model.), grouped-query attention, a quarter of each head rotated, exact GELU.
    'base-gqa': { prefix: '', lmHead: true, config: { num_key_value_heads: 2, partial_rotary_factor: 0.25, hidden_act: 'gelu' } },
  },
  electra: {
    // electra-small-discriminator-like ElectraForPreTraining: electra. prefix, 16-wide embeddings projected
    // to 32, the discriminator head and position_ids.
    discriminator: { prefix: 'electra.', extras: true, heads: true },
    // ElectraModel with embedding_size = hidden_size: no embeddings_project, bare names.
    'no-projection': { prefix: '', extras: false, config: { embedding_size: 32 } },
    // electra-small-generator-like ElectraForMaskedLM: the generator's masked-LM head, 16 wide
    // (generator_predictions), and generator_lm_head's bias (its weight tied to the word embeddings).
    generator: { prefix: 'electra.', extras: true, generator: true, config: { architectures: ['ElectraForMaskedLM'] } },
  },
};

// Whether a variant's checkpoint carries its family's masked-LM head.
export function hasMaskedLmHead(arch, variant) {
  if (arch === 'distilbert') return Boolean(variant.extras);
  if (arch === 'electra') return Boolean(variant.generator);
  return ['bert', 'roberta', 'xlm-roberta'].includes(arch) && Boolean(variant.heads);
}

// The masked-LM heads' modules, saved outside the base model's prefix.
const HEAD_MODULES = /^(cls\.predictions\.|vocab_(transform|layer_norm|projector)\.|lm_head\.(dense|layer_norm|bias)|generator_(predictions|lm_head)\.)/;

export const architectures = ['gpt2', 'bert', 'llama'];
export const families = Object.keys(familyVariants);
export const dtypes = ['F32', 'F16', 'BF16'];

// Every (arch, naming, dtype) combination, for tests that loop over them.
export const checkpointVariants = architectures.flatMap((arch) =>
  Object.keys(namingVariants[arch]).flatMap((naming) => dtypes.map((dtype) => ({ arch, naming, dtype }))));

// Every (arch, naming, dtype) of the families.
export const familyCheckpointVariants = families.flatMap((arch) =>
  Object.keys(familyVariants[arch]).flatMap((naming) => dtypes.map((dtype) => ({ arch, naming, dtype }))));

const torchDtypes = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };

// ---------------------------------------------------------------------------
// Configs, as the hub writes them

function baseConfig(arch, dtype) {
  if (arch === 'gpt2') {
    return {
      architectures: ['GPT2LMHeadModel'], model_type: 'gpt2',
      vocab_size: 40, n_positions: 20, n_ctx: 20, n_embd: 24, n_layer: 2, n_head: 3, n_inner: null,
      activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
      resid_pdrop: 0.1, embd_pdrop: 0.1, attn_pdrop: 0.1, initializer_range: 0.02,
      bos_token_id: 39, eos_token_id: 39, torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'bert') {
    return {
      architectures: ['BertModel'], model_type: 'bert',
      vocab_size: 50, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4,
      intermediate_size: 48, hidden_act: 'gelu', hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
      max_position_embeddings: 24, type_vocab_size: 2, initializer_range: 0.02, layer_norm_eps: 1e-12,
      pad_token_id: 0, position_embedding_type: 'absolute', use_cache: true,
      torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'llama') {
    return {
      architectures: ['LlamaForCausalLM'], model_type: 'llama',
      vocab_size: 60, hidden_size: 32, intermediate_size: 40, num_hidden_layers: 2,
      num_attention_heads: 4, num_key_value_heads: 4, max_position_embeddings: 32,
      hidden_act: 'silu', rms_norm_eps: 1e-5, rope_theta: 10000.0, rope_scaling: null,
      attention_bias: false, attention_dropout: 0.0, mlp_bias: false, initializer_range: 0.02,
      bos_token_id: 1, eos_token_id: 2, pretraining_tp: 1, use_cache: true,
      tie_word_embeddings: false, torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'distilbert') {
    return {
      architectures: ['DistilBertForMaskedLM'], model_type: 'distilbert',
      vocab_size: 50, dim: 32, n_layers: 2, n_heads: 4, hidden_dim: 48, activation: 'gelu',
      max_position_embeddings: 24, sinusoidal_pos_embds: false, dropout: 0.1, attention_dropout: 0.1,
      initializer_range: 0.02, pad_token_id: 0, qa_dropout: 0.1, seq_classif_dropout: 0.2, tie_weights_: true,
      torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'roberta' || arch === 'xlm-roberta') {
    // max_position_embeddings = 24 tokens + padding_idx + 1, as roberta-base's 514 = 512 + 2.
    return {
      ...baseConfig('bert', dtype),
      architectures: [arch === 'roberta' ? 'RobertaForMaskedLM' : 'XLMRobertaForMaskedLM'], model_type: arch,
      max_position_embeddings: 26, type_vocab_size: 1, pad_token_id: 1, bos_token_id: 0, eos_token_id: 2,
      layer_norm_eps: 1e-5,
    };
  }
  if (arch === 'qwen2') {
    return {
      ...baseConfig('llama', dtype),
      architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', num_key_value_heads: 2,
      max_position_embeddings: 32, rope_theta: 1000000.0, rms_norm_eps: 1e-6, sliding_window: 32,
      use_sliding_window: false, max_window_layers: 2, attention_bias: undefined, mlp_bias: undefined,
      pretraining_tp: undefined,
    };
  }
  if (arch === 'mistral') {
    return {
      ...baseConfig('llama', dtype),
      architectures: ['MistralForCausalLM'], model_type: 'mistral', num_key_value_heads: 2, head_dim: 8,
      max_position_embeddings: 32, rms_norm_eps: 1e-5, sliding_window: 3,
      attention_bias: undefined, mlp_bias: undefined, pretraining_tp: undefined,
    };
  }
  if (arch === 'electra') {
    // google/electra-small-discriminator's config.json, shrunk.
    return {
      ...baseConfig('bert', dtype), architectures: ['ElectraForPreTraining'], model_type: 'electra', embedding_size: 16,
      summary_activation: 'gelu', summary_last_dropout: 0.1, summary_type: 'first', summary_use_proj: true,
    };
  }
  if (arch === 'phi') {
    // microsoft/phi-2's config.json, shrunk.
    return {
      architectures: ['PhiForCausalLM'], model_type: 'phi', vocab_size: 50, hidden_size: 32, intermediate_size: 48,
      num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: null, resid_pdrop: 0.1, embd_pdrop: 0.0,
      attention_dropout: 0.0, hidden_act: 'gelu_new', max_position_embeddings: 24, initializer_range: 0.02,
      layer_norm_eps: 1e-5, use_cache: true, tie_word_embeddings: false, rope_theta: 10000.0, rope_scaling: null,
      partial_rotary_factor: 0.5, qk_layernorm: false, bos_token_id: null, eos_token_id: null,
      torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'gemma') {
    // google/gemma-2b's config.json, shrunk.
    return {
      architectures: ['GemmaForCausalLM'], model_type: 'gemma', vocab_size: 60, hidden_size: 32, intermediate_size: 40,
      num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 1, head_dim: 12, hidden_act: 'gelu',
      hidden_activation: 'gelu_pytorch_tanh', max_position_embeddings: 28, initializer_range: 0.02, rms_norm_eps: 1e-6,
      use_cache: true, pad_token_id: 0, eos_token_id: 1, bos_token_id: 2, rope_theta: 10000.0, rope_scaling: null,
      attention_bias: false, attention_dropout: 0.0, torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'opt') {
    // facebook/opt-125m's config.json, shrunk.
    return {
      architectures: ['OPTForCausalLM'], model_type: 'opt', _name_or_path: 'facebook/opt-125m',
      vocab_size: 50, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, ffn_dim: 48,
      max_position_embeddings: 22, do_layer_norm_before: true, word_embed_proj_dim: 32, activation_function: 'relu',
      activation_dropout: 0.0, attention_dropout: 0.0, dropout: 0.1, layerdrop: 0.0, init_std: 0.02,
      pad_token_id: 1, bos_token_id: 2, eos_token_id: 2, prefix: '</s>', use_cache: true,
      torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'gpt_neo') {
    // roneneldan/TinyStories-1M's config.json, shrunk.
    return {
      architectures: ['GPTNeoForCausalLM'], model_type: 'gpt_neo',
      vocab_size: 40, hidden_size: 24, num_layers: 2, num_heads: 3, intermediate_size: null,
      attention_types: [[['global', 'local'], 1]], attention_layers: ['global', 'local'], window_size: 3,
      max_position_embeddings: 20, activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
      embed_dropout: 0, resid_dropout: 0, attention_dropout: 0, classifier_dropout: 0.1, initializer_range: 0.02,
      bos_token_id: 39, eos_token_id: 39, use_cache: true, torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  if (arch === 'gpt_neox') {
    // EleutherAI/pythia-70m's config.json, shrunk.
    return {
      architectures: ['GPTNeoXForCausalLM'], model_type: 'gpt_neox',
      vocab_size: 50, hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 48,
      hidden_act: 'gelu', rotary_pct: 0.25, rotary_emb_base: 10000, max_position_embeddings: 24,
      initializer_range: 0.02, layer_norm_eps: 1e-5, use_cache: true, bos_token_id: 0, eos_token_id: 0,
      tie_word_embeddings: false, use_parallel_residual: true, attention_dropout: 0.0, hidden_dropout: 0.0,
      classifier_dropout: 0.1, rope_scaling: null, attention_bias: true,
      torch_dtype: torchDtypes[dtype], transformers_version: '4.44.0',
    };
  }
  throw new Error(`tinyCheckpoint: unknown arch ${arch}`);
}

// ---------------------------------------------------------------------------
// Seeded random numbers

// FNV-1a: a 32-bit seed from a string.
function hashString(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

// Standard normal samples by Box-Muller.
function normalStream(seed) {
  const uniform = seededRandom(seed);
  return () => {
    const u = 1 - uniform(); // (0, 1]: log(u) is finite
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

// How a canonical tensor is initialized: norm weights near 1, norm biases and
// linear biases small, embeddings N(0, 0.5), matrices N(0, 1/fan_in) so a
// projection of a unit-scale input stays unit-scale (scores then have a
// standard deviation near 1 after the 1/sqrt(hd) scale).
function initialValues(arch, name, shape, seed) {
  const normal = normalStream(hashString(`${seed}:${name}`));
  const count = shape.reduce((a, b) => a * b, 1);
  const values = new Float64Array(count);
  const isNorm = /(ln_\d|ln_f|LayerNorm|layernorm|norm)\.(weight|bias)$/.test(name);
  const isEmbedding = /(wte|wpe|embeddings\.\w+|embed_tokens|embed_in|lm_head)\.weight$/.test(name);
  for (let i = 0; i < count; i++) {
    const z = normal();
    if (isNorm && name.endsWith('.weight')) values[i] = 1 + 0.1 * z;
    else if (name.endsWith('.bias')) values[i] = 0.1 * z;
    else if (isEmbedding) values[i] = 0.5 * z;
    else {
      // GPT-2's Conv1D is [in, out]; torch Linear is [out, in].
      const fanIn = arch === 'gpt2' ? shape[0] : shape[1];
      // GPT-Neo does not scale its scores by 1/sqrt(head width): its queries are kept smaller instead.
      const unscaled = arch === 'gpt_neo' && name.includes('q_proj') ? 0.35 : 1;
      values[i] = (unscaled * z) / Math.sqrt(fanIn);
    }
  }
  return values;
}

// ---------------------------------------------------------------------------
// Hub names

export function hubName(arch, variant, canonical) {
  if (arch === 'gpt2' || arch === 'gpt_neo') return canonical === 'lm_head.weight' ? canonical : variant.prefix + canonical;
  if (arch === 'bert') {
    const renamed = variant.gammaBeta ? canonical.replace(/LayerNorm\.weight$/, 'LayerNorm.gamma').replace(/LayerNorm\.bias$/, 'LayerNorm.beta') : canonical;
    return HEAD_MODULES.test(canonical) ? renamed : variant.prefix + renamed;
  }
  if (['distilbert', 'roberta', 'xlm-roberta', 'electra'].includes(arch)) {
    return HEAD_MODULES.test(canonical) ? canonical : variant.prefix + canonical;
  }
  // gpt_neox: canonical names carry gpt_neox.; its head is the hub's embed_out.
  // opt: canonical names carry model.; OPTModel's files drop it.
  if (arch === 'opt') return canonical === 'lm_head.weight' ? canonical : variant.prefix + canonical.replace(/^model\./, '');
  if (arch === 'gpt_neox') return canonical === 'lm_head.weight' ? 'embed_out.weight' : variant.prefix + canonical.replace(/^gpt_neox\./, '');
  // llama and its kin: canonical names carry model.; base-model files drop it.
  if (canonical.startsWith('lm_head.')) return canonical;
  return variant.prefix + canonical.replace(/^model\./, '');
}

// The inverse, written separately: a file's tensor name -> its canonical
// name, or null for a tensor a loader ignores (buffers, pooler, cls.* heads).
// The test-side counterpart of the production name mapping.
export function canonicalName(arch, name) {
  if (arch === 'gpt2') {
    const bare = name.replace(/^transformer\./, '');
    return /\.attn\.(bias|masked_bias)$/.test(bare) ? null : bare;
  }
  if (arch === 'bert') {
    const bare = name.replace(/^bert\./, '');
    // The next-sentence head is not run; cls.predictions.decoder.bias is cls.predictions.bias again.
    if (/^(cls\.seq_relationship|pooler)\./.test(bare) || bare === 'cls.predictions.decoder.bias' || bare === 'embeddings.position_ids') return null;
    return bare.replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias');
  }
  if (arch === 'distilbert') {
    const bare = name.replace(/^distilbert\./, '');
    return bare === 'embeddings.position_ids' ? null : bare;
  }
  if (arch === 'electra') {
    const bare = name.replace(/^electra\./, '');
    return /^discriminator_predictions\./.test(bare) || bare === 'embeddings.position_ids' ? null : bare;
  }
  if (arch === 'roberta' || arch === 'xlm-roberta') {
    const bare = name.replace(/^roberta\./, '');
    return /^pooler\./.test(bare) || bare === 'lm_head.decoder.bias' || bare === 'embeddings.position_ids' ? null : bare;
  }
  if (['llama', 'qwen2', 'mistral', 'gemma', 'phi'].includes(arch)) {
    if (/rotary_emb\.inv_freq$/.test(name)) return null;
    if (name.startsWith('lm_head.') || name.startsWith('model.')) return name;
    return `model.${name}`;
  }
  if (arch === 'opt') return name === 'lm_head.weight' || name.startsWith('model.') ? name : `model.${name}`;
  if (arch === 'gpt_neo') {
    const bare = name.replace(/^transformer\./, '');
    return /\.attn\.attention\.(bias|masked_bias)$/.test(bare) ? null : bare;
  }
  if (arch === 'gpt_neox') {
    if (/\.attention\.(bias|masked_bias)$|\.rotary_emb\.inv_freq$/.test(name)) return null;
    if (name === 'embed_out.weight') return 'lm_head.weight';
    return name.startsWith('gpt_neox.') ? name : `gpt_neox.${name}`;
  }
  throw new Error(`canonicalName: unknown arch ${arch}`);
}

// readSafetensors(...).tensors of one or more files -> { canonical name ->
// Float64Array }, ignored tensors dropped: what referenceForward takes.
export function canonicalTensors(arch, ...fileTensors) {
  const tensors = {};
  for (const file of fileTensors) {
    for (const [name, { values }] of Object.entries(file)) {
      const canonical = canonicalName(arch, name);
      if (canonical === null) continue;
      if (canonical in tensors) throw new Error(`canonicalTensors: ${name} duplicates ${canonical}`);
      tensors[canonical] = values;
    }
  }
  return tensors;
}

// Tensors a loader must ignore: buffers, pooler, pretraining heads.
function ignoredEntries(arch, variant, config, dtype, seed) {
  const entries = [];
  const push = (name, shape, values, entryDtype = dtype) => entries.push({ name, dtype: entryDtype, shape, values });
  if (arch === 'gpt2' && variant.buffers) {
    const P = config.n_positions;
    const causal = new Float64Array(P * P);
    for (let i = 0; i < P; i++) for (let j = 0; j <= i; j++) causal[i * P + j] = 1;
    for (let i = 0; i < config.n_layer; i++) {
      push(`${variant.prefix}h.${i}.attn.bias`, [1, 1, P, P], causal);
      push(`${variant.prefix}h.${i}.attn.masked_bias`, [], [-1e4]);
    }
  }
  if (arch === 'bert' && variant.extras) {
    const d = config.hidden_size;
    const P = config.max_position_embeddings;
    push(`${variant.prefix}embeddings.position_ids`, [1, P], Array.from({ length: P }, (_, i) => i), 'I64');
    push(`${variant.prefix}pooler.dense.weight`, [d, d], initialValues(arch, 'pooler.dense.weight', [d, d], seed));
    push(`${variant.prefix}pooler.dense.bias`, [d], initialValues(arch, 'pooler.dense.bias', [d], seed));
    if (variant.heads) {
      // BertForPreTraining's next-sentence head (its masked-LM head is canonical: hasMaskedLmHead).
      push('cls.seq_relationship.weight', [2, d], initialValues(arch, 'cls.seq_relationship.weight', [2, d], seed));
      push('cls.seq_relationship.bias', [2], initialValues(arch, 'cls.seq_relationship.bias', [2], seed));
    }
  }
  if (arch === 'distilbert' && variant.extras) {
    const P = config.max_position_embeddings;
    push(`${variant.prefix}embeddings.position_ids`, [1, P], Array.from({ length: P }, (_, i) => i), 'I64');
  }
  if (arch === 'electra' && variant.extras) {
    const d = config.hidden_size;
    const P = config.max_position_embeddings;
    push(`${variant.prefix}embeddings.position_ids`, [1, P], Array.from({ length: P }, (_, i) => i), 'I64');
    if (variant.heads) {
      // ElectraForPreTraining's discriminator head, outside the electra. prefix.
      push('discriminator_predictions.dense.weight', [d, d], initialValues(arch, 'discriminator_predictions.dense.weight', [d, d], seed));
      push('discriminator_predictions.dense.bias', [d], initialValues(arch, 'discriminator_predictions.dense.bias', [d], seed));
      push('discriminator_predictions.dense_prediction.weight', [1, d], initialValues(arch, 'discriminator_predictions.dense_prediction.weight', [1, d], seed));
      push('discriminator_predictions.dense_prediction.bias', [1], initialValues(arch, 'discriminator_predictions.dense_prediction.bias', [1], seed));
    }
  }
  if ((arch === 'roberta' || arch === 'xlm-roberta') && variant.extras) {
    const d = config.hidden_size;
    const P = config.max_position_embeddings;
    push(`${variant.prefix}embeddings.position_ids`, [1, P], Array.from({ length: P }, (_, i) => i), 'I64');
    if (!variant.heads) {
      push('pooler.dense.weight', [d, d], initialValues(arch, 'pooler.dense.weight', [d, d], seed));
      push('pooler.dense.bias', [d], initialValues(arch, 'pooler.dense.bias', [d], seed));
    }
  }
  if (arch === 'llama' && variant.invFreq) {
    const hd = config.head_dim ?? config.hidden_size / config.num_attention_heads;
    const invFreq = Array.from({ length: hd / 2 }, (_, i) => config.rope_theta ** (-(2 * i) / hd));
    for (let i = 0; i < config.num_hidden_layers; i++) {
      push(`${variant.prefix}layers.${i}.self_attn.rotary_emb.inv_freq`, [hd / 2], invFreq);
    }
  }
  if (arch === 'gpt_neo' && variant.buffers) {
    // GPTNeoSelfAttention's buffers: tril(ones), XOR tril(ones, -window_size) for local layers.
    const P = config.max_position_embeddings;
    for (let i = 0; i < config.num_layers; i++) {
      const local = config.attention_layers[i] === 'local';
      const mask = new Float64Array(P * P);
      for (let q = 0; q < P; q++) for (let key = 0; key <= q; key++) mask[q * P + key] = local && key <= q - config.window_size ? 0 : 1;
      push(`${variant.prefix}h.${i}.attn.attention.bias`, [1, 1, P, P], mask);
      push(`${variant.prefix}h.${i}.attn.attention.masked_bias`, [], [-1e9]);
    }
  }
  if (arch === 'gpt_neox' && variant.buffers) {
    const P = config.max_position_embeddings;
    const hd = config.hidden_size / config.num_attention_heads;
    const rotary = Math.trunc(hd * config.rotary_pct);
    const causal = new Float64Array(P * P);
    for (let i = 0; i < P; i++) for (let j = 0; j <= i; j++) causal[i * P + j] = 1;
    const invFreq = Array.from({ length: rotary / 2 }, (_, i) => config.rotary_emb_base ** (-(2 * i) / rotary));
    for (let i = 0; i < config.num_hidden_layers; i++) {
      push(`${variant.prefix}layers.${i}.attention.bias`, [1, 1, P, P], causal);
      push(`${variant.prefix}layers.${i}.attention.masked_bias`, [], [-1e9]);
      push(`${variant.prefix}layers.${i}.attention.rotary_emb.inv_freq`, [rotary / 2], invFreq);
    }
  }
  return entries;
}

// ---------------------------------------------------------------------------
// The checkpoint

function shardFiles(entries, metadata) {
  // The first half of the tensors in shard 1, the rest in shard 2.
  const half = Math.ceil(entries.length / 2);
  const parts = [entries.slice(0, half), entries.slice(half)];
  const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  const shards = parts.map((part) => writeSafetensors(part, { metadata }));
  const weightMap = {};
  let totalSize = 0;
  parts.forEach((part, index) => {
    for (const entry of part) weightMap[entry.name] = names[index];
  });
  for (const shard of shards) {
    const headerLength = Number(new DataView(shard.buffer).getBigUint64(0, true));
    totalSize += shard.length - 8 - headerLength;
  }
  const sortedMap = Object.fromEntries(Object.keys(weightMap).sort().map((name) => [name, weightMap[name]]));
  const index = { metadata: { total_size: totalSize }, weight_map: sortedMap };
  return { names, shards, indexText: JSON.stringify(index, null, 2) };
}

export function tinyCheckpoint({ arch = 'gpt2', dtype = 'F32', naming, seed = 1, shards = false, ...overrides } = {}) {
  const variants = namingVariants[arch] ?? familyVariants[arch];
  if (!variants) throw new Error(`tinyCheckpoint: unknown arch ${arch}`);
  const name = naming ?? Object.keys(variants)[0];
  const variant = variants[name];
  if (!variant) throw new Error(`tinyCheckpoint: unknown ${arch} naming ${naming} (have ${Object.keys(variants).join(', ')})`);
  if (!torchDtypes[dtype]) throw new Error(`tinyCheckpoint: dtype ${dtype} is not F32, F16 or BF16`);

  const config = { ...baseConfig(arch, dtype), ...variant.config, ...overrides };
  // An override of undefined removes the key (to test a config's defaults).
  for (const key of Object.keys(config)) if (config[key] === undefined) delete config[key];

  const tensors = {};
  const hubNames = {};
  const entries = [];
  for (const spec of referenceTensorShapes(arch, config, { maskedLmHead: hasMaskedLmHead(arch, variant) })) {
    if (spec.name === 'lm_head.weight' && !variant.lmHead) continue;
    // float32 master weights, as a torch model holds them, then rounded to
    // the file's dtype as .half() / .bfloat16() would: the reference must
    // see exactly the values the file holds.
    const values = initialValues(arch, spec.name, spec.shape, seed);
    tensors[spec.name] = values.map((v) => storedValue(dtype, Math.fround(v)));
    hubNames[spec.name] = hubName(arch, variant, spec.name);
    entries.push({ name: hubNames[spec.name], dtype, shape: spec.shape, values: tensors[spec.name] });
  }
  entries.push(...ignoredEntries(arch, variant, config, dtype, seed));

  const metadata = { format: 'pt' };
  const files = {
    'config.json': JSON.stringify(config, null, 2),
    'model.safetensors': writeSafetensors(entries, { metadata }),
  };
  let shardList = null;
  if (shards) {
    const split = shardFiles(entries, metadata);
    split.names.forEach((fileName, index) => { files[fileName] = split.shards[index]; });
    files['model.safetensors.index.json'] = split.indexText;
    shardList = split.shards;
  }
  return { arch, dtype, naming: name, config, files, shards: shardList, tensors, entries, hubNames };
}

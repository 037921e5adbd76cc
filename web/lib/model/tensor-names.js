// Hub tensor names -> the core's canonical names (src/model/tensors.cpp).
//
// The same weights are saved under several spellings: GPT-2 with or without
// the `transformer.` prefix (GPT2LMHeadModel vs GPT2Model), BERT with or
// without `bert.` and with the old `LayerNorm.gamma/beta`, Llama's base model
// without `model.`. Buffers that are not weights (GPT-2's causal-mask `bias`,
// BERT's `position_ids`, Llama's `inv_freq`) and heads attnlens does not run
// (BERT's pooler and `cls.*`) are recognised and skipped.

// Returns the canonical name, or null for a tensor the model does not use.
const normalizers = {
  gpt2(name) {
    const bare = name.startsWith('transformer.') ? name.slice('transformer.'.length) : name;
    if (/^h\.\d+\.attn\.(bias|masked_bias)$/.test(bare)) return null;
    return bare;
  },
  bert(name) {
    let bare = name.startsWith('bert.') ? name.slice('bert.'.length) : name;
    if (bare.startsWith('pooler.') || bare.startsWith('cls.') || bare === 'embeddings.position_ids') return null;
    bare = bare.replace(/\.LayerNorm\.gamma$/, '.LayerNorm.weight').replace(/\.LayerNorm\.beta$/, '.LayerNorm.bias');
    return bare;
  },
  llama(name) {
    if (name.endsWith('.rotary_emb.inv_freq')) return null;
    if (name === 'lm_head.weight' || name.startsWith('model.')) return name;
    return `model.${name}`;
  },
};

/** The canonical name of a hub tensor for `architecture`, or null when it is skipped. */
export function canonicalTensorName(architecture, hubName) {
  return normalizers[architecture](hubName);
}

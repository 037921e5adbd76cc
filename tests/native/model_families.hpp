// The knobs of the three families the native tests build (test-side, as
// web/lib/model/families/ sets them for gpt2, bert and llama checkpoints):
// the tensor layout plus the math it goes with.
#pragma once

#include "model/config.hpp"

namespace model_families {

namespace m = attnlens::model;

inline void set_family(m::ModelConfig& c, m::Architecture architecture) {
    c.architecture = architecture;
    const bool bert = architecture == m::Architecture::bert, llama = architecture == m::Architecture::llama;
    c.norm = llama ? m::NormKind::rms : m::NormKind::layer;
    c.position = llama ? m::PositionKind::rotary : m::PositionKind::learned;
    c.post_norm = bert, c.causal = !bert, c.gated_mlp = llama;
    c.embedding_norm = bert, c.final_norm = !bert;
    // Llama's biases are off unless its config asks (attention_bias, mlp_bias).
    c.attention_bias = c.attention_output_bias = c.mlp_bias = !llama;
    if (!bert) c.type_vocab_size = 0;
}

// set_family, and what the family's usual checkpoints say besides: GPT-2's
// tanh GELU; BERT's erf GELU, two token types and no LM head (an encoder);
// Llama's SiLU. The sizes are the test's.
inline m::ModelConfig usual_config(m::Architecture architecture) {
    m::ModelConfig c;
    set_family(c, architecture);
    const bool bert = architecture == m::Architecture::bert, llama = architecture == m::Architecture::llama;
    c.activation = bert ? m::Activation::gelu_erf : llama ? m::Activation::silu : m::Activation::gelu_tanh;
    if (bert) c.type_vocab_size = 2, c.has_lm_head = false;
    return c;
}

// The small BERT of the forward tests (model_electra_test narrows its embeddings).
inline m::ModelConfig small_bert() {
    m::ModelConfig c = usual_config(m::Architecture::bert);
    c.layers = 2, c.heads = 3, c.kv_heads = 3, c.model_width = 18, c.head_width = 6, c.mlp_width = 30;
    c.vocab_size = 17, c.max_positions = 10;
    c.norm_epsilon = 1e-12f;
    return c;
}

}  // namespace model_families

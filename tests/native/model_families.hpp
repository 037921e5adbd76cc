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

}  // namespace model_families

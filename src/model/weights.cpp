#include "weights.hpp"

namespace attnlens::model {

ModelWeights::ModelWeights(const ModelConfig& config)
    : layers(config.layers + config.decoder_layers), specs_(model_tensors(config)), keep_16_bit_(config.keep_16_bit) {
    for (std::size_t i = 0; i < specs_.size(); ++i) index_.emplace(specs_[i].name, i);
}

Weight* ModelWeights::slot(TensorRole role, std::size_t layer) {
    using Role = TensorRole;
    switch (role) {
        case Role::word_embedding: return &word_embedding;
        case Role::position_embedding: return &position_embedding;
        case Role::type_embedding: return &type_embedding;
        case Role::embedding_norm: return &embedding_norm;
        case Role::embedding_norm_bias: return &embedding_norm_bias;
        case Role::embedding_projection: return &embedding_projection;
        case Role::embedding_projection_bias: return &embedding_projection_bias;
        case Role::decoder_position_embedding: return &decoder_position_embedding;
        case Role::decoder_embedding_norm: return &decoder_embedding_norm;
        case Role::decoder_embedding_norm_bias: return &decoder_embedding_norm_bias;
        case Role::relative_bias: return &relative_bias;
        case Role::decoder_relative_bias: return &decoder_relative_bias;
        case Role::encoder_final_norm: return &encoder_final_norm;
        case Role::final_norm: return &final_norm;
        case Role::final_norm_bias: return &final_norm_bias;
        case Role::lm_head: return &lm_head;
        case Role::lm_head_bias: return &lm_head_bias;
        case Role::mlm_transform: return &mlm_transform;
        case Role::mlm_transform_bias: return &mlm_transform_bias;
        case Role::mlm_norm: return &mlm_norm;
        case Role::mlm_norm_bias: return &mlm_norm_bias;
        case Role::output_projection: return &output_projection;
        default: break;
    }
    if (layer >= layers.size()) return nullptr;
    LayerWeights& l = layers[layer];
    switch (role) {
        case Role::attention_norm: return &l.attention_norm;
        case Role::attention_norm_bias: return &l.attention_norm_bias;
        case Role::qkv: return &l.qkv;
        case Role::qkv_bias: return &l.qkv_bias;
        case Role::query: return &l.query;
        case Role::query_bias: return &l.query_bias;
        case Role::key: return &l.key;
        case Role::key_bias: return &l.key_bias;
        case Role::value: return &l.value;
        case Role::value_bias: return &l.value_bias;
        case Role::attention_output: return &l.attention_output;
        case Role::attention_output_bias: return &l.attention_output_bias;
        case Role::mlp_norm: return &l.mlp_norm;
        case Role::mlp_norm_bias: return &l.mlp_norm_bias;
        case Role::mlp_up: return &l.mlp_up;
        case Role::mlp_up_bias: return &l.mlp_up_bias;
        case Role::mlp_gate: return &l.mlp_gate;
        case Role::mlp_gate_bias: return &l.mlp_gate_bias;
        case Role::mlp_down: return &l.mlp_down;
        case Role::mlp_down_bias: return &l.mlp_down_bias;
        case Role::cross_norm: return &l.cross_norm;
        case Role::cross_norm_bias: return &l.cross_norm_bias;
        case Role::cross_query: return &l.cross_query;
        case Role::cross_query_bias: return &l.cross_query_bias;
        case Role::cross_key: return &l.cross_key;
        case Role::cross_key_bias: return &l.cross_key_bias;
        case Role::cross_value: return &l.cross_value;
        case Role::cross_value_bias: return &l.cross_value_bias;
        case Role::cross_output: return &l.cross_output;
        case Role::cross_output_bias: return &l.cross_output_bias;
        default: return nullptr;
    }
}

std::string ModelWeights::load(const std::string& name, WeightType type, const void* data, RowRange rows,
                               std::size_t count) {
    const auto found = index_.find(name);
    if (found == index_.end()) return "unknown tensor \"" + name + "\": the model has no tensor of that name";
    if (finished_) return "tensor \"" + name + "\" arrived after finish(): load every tensor before finishing";
    const TensorSpec& spec = specs_[found->second];
    Weight* target = slot(spec.role, spec.layer);
    if (target->loaded) return "tensor \"" + name + "\" is loaded twice";
    if (spec.role == TensorRole::word_embedding) word_embedding_type_ = type;
    return load_weight_rows(spec, type, data, rows, count, *target, keep_16_bit_);
}

std::string ModelWeights::load(const std::string& name, WeightType type, const void* data, std::size_t count) {
    const auto found = index_.find(name);
    const RowRange all{0, found == index_.end() ? 0 : tensor_rows(specs_[found->second].shape)};
    return load(name, type, data, all, count);
}

std::string ModelWeights::finish() {
    if (finished_) return {};
    std::string missing;
    std::size_t missing_count = 0;
    for (const TensorSpec& spec : specs_) {
        const Weight& weight = *slot(spec.role, spec.layer);
        // A partly loaded tensor is missing rows, optional or not (a partial
        // LM head must not silently fall back to the tied one).
        const bool partial = !weight.loaded && weight.rows_loaded > 0;
        if (weight.loaded || (spec.optional && !partial)) continue;
        // Name the first few; a wrong naming scheme misses every tensor.
        if (++missing_count <= 8)
            missing += (missing.empty() ? "" : ", ") + spec.name +
                       (partial ? " (rows [" + std::to_string(weight.rows_loaded) + ", " +
                                      std::to_string(tensor_rows(spec.shape)) + ") did not arrive)"
                                : "");
    }
    if (missing_count > 8) missing += " and " + std::to_string(missing_count - 8) + " more";
    if (missing_count > 0)
        return std::to_string(missing_count) + " required tensor" + (missing_count == 1 ? " is" : "s are") +
               " missing: " + missing;
    finished_ = true;
    return {};
}

std::size_t ModelWeights::bytes() const {
    std::size_t total = word_embedding.bytes() + position_embedding.bytes() + type_embedding.bytes() +
                        embedding_norm.bytes() + embedding_norm_bias.bytes() + embedding_projection.bytes() +
                        embedding_projection_bias.bytes() + decoder_position_embedding.bytes() +
                        decoder_embedding_norm.bytes() + decoder_embedding_norm_bias.bytes() + relative_bias.bytes() +
                        decoder_relative_bias.bytes() + encoder_final_norm.bytes() + final_norm.bytes() +
                        final_norm_bias.bytes() + lm_head.bytes() + lm_head_bias.bytes() + mlm_transform.bytes() +
                        mlm_transform_bias.bytes() + mlm_norm.bytes() + mlm_norm_bias.bytes() +
                        output_projection.bytes();
    for (const LayerWeights& l : layers)
        for (const Weight* w : {&l.attention_norm, &l.attention_norm_bias, &l.qkv, &l.qkv_bias, &l.query,
                                &l.query_bias, &l.key, &l.key_bias, &l.value, &l.value_bias, &l.attention_output,
                                &l.attention_output_bias, &l.mlp_norm, &l.mlp_norm_bias, &l.mlp_up, &l.mlp_up_bias,
                                &l.mlp_gate, &l.mlp_gate_bias, &l.mlp_down, &l.mlp_down_bias, &l.cross_norm,
                                &l.cross_norm_bias, &l.cross_query, &l.cross_query_bias, &l.cross_key,
                                &l.cross_key_bias, &l.cross_value, &l.cross_value_bias, &l.cross_output,
                                &l.cross_output_bias})
            total += w->bytes();
    return total;
}

}  // namespace attnlens::model

// Everything a model learned, by what it does in the forward pass (not by
// the names its files use): one Weight per TensorRole, per layer where the
// role is per layer. Tensors arrive one at a time by canonical name
// (model_tensors); finish() checks nothing required is missing and ties the
// LM head.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "config.hpp"
#include "tensors.hpp"
#include "weight.hpp"

namespace attnlens::model {

struct LayerWeights {
    Weight attention_norm, attention_norm_bias;
    Weight qkv, qkv_bias;  // GPT-2's fused [Q | K | V] projection
    Weight query, query_bias, key, key_bias, value, value_bias;  // BERT, Llama
    Weight attention_output, attention_output_bias;
    Weight mlp_norm, mlp_norm_bias;
    Weight mlp_up, mlp_up_bias, mlp_gate, mlp_gate_bias, mlp_down, mlp_down_bias;
    // A decoder layer's cross-attention and its norm (encoder-decoders only).
    Weight cross_norm, cross_norm_bias, cross_query, cross_query_bias, cross_key, cross_key_bias;
    Weight cross_value, cross_value_bias, cross_output, cross_output_bias;
};

class ModelWeights {
public:
    // Allocates nothing big: the tensors come later.
    explicit ModelWeights(const ModelConfig& config);

    // Rows `rows` of a tensor (see RowRange and load_weight_rows: in order,
    // the first range allocates the tensor). "" or a sentence naming the
    // tensor and the problem (unknown name, loaded twice, rows out of order,
    // wrong count, not finite, out of memory). After an error in a range the
    // tensor holds nothing; load it again from row 0.
    std::string load(const std::string& name, WeightType type, const void* data, RowRange rows, std::size_t count);
    // The whole tensor at once.
    std::string load(const std::string& name, WeightType type, const void* data, std::size_t count);
    // "" when every required tensor is loaded and no tensor is partly loaded
    // (every row of every tensor arrived exactly once), else an error listing
    // the missing ones. Ties the LM head to the word embedding when it has none.
    std::string finish();
    bool finished() const { return finished_; }
    // ModelConfig::keep_16_bit, changed before any tensor loads (Model::set_weight_storage).
    void set_keep_16_bit(bool keep_16_bit) { keep_16_bit_ = keep_16_bit; }
    std::size_t bytes() const;

    Weight word_embedding, position_embedding, type_embedding, embedding_norm, embedding_norm_bias;
    Weight embedding_projection, embedding_projection_bias;  // ELECTRA's embeddings_project
    // An encoder-decoder's decoder embeddings (its word embedding is shared).
    Weight decoder_position_embedding, decoder_embedding_norm, decoder_embedding_norm_bias;
    Weight relative_bias, decoder_relative_bias, encoder_final_norm;  // T5's
    // Every layer; an encoder-decoder's decoder layers follow its encoder's.
    std::vector<LayerWeights> layers;
    Weight final_norm, final_norm_bias, lm_head, lm_head_bias;
    Weight mlm_transform, mlm_transform_bias, mlm_norm, mlm_norm_bias;  // an encoder's masked-LM head
    Weight output_projection;                                           // OPT's project_out

    // B = lm_head^T (d x V, packed): lm_head, or the word embedding when tied.
    const Weight& output_embedding() const { return lm_head.loaded ? lm_head : word_embedding; }
    // The dtype the word embedding arrived in (ModelConfig::embedding_scale is rounded to it).
    WeightType word_embedding_type() const { return word_embedding_type_; }

    // The slot of a role; null for a layer index past the end.
    Weight* slot(TensorRole role, std::size_t layer);
    const Weight* slot(TensorRole role, std::size_t layer) const {
        return const_cast<ModelWeights*>(this)->slot(role, layer);
    }

private:
    std::vector<TensorSpec> specs_;
    std::map<std::string, std::size_t> index_;  // canonical name -> specs_ position
    bool keep_16_bit_ = false;                  // ModelConfig::keep_16_bit
    WeightType word_embedding_type_ = WeightType::f32;
    bool finished_ = false;
};

}  // namespace attnlens::model

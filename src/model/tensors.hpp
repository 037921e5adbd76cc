// The canonical tensors of each architecture: names, shapes as the hub's
// files store them, and, for the loader, what each one is for and how it is
// held in memory. The list is the contract with the JavaScript layer, which
// maps hub names onto these (see /tmp/attnlens-models-contract.md, issue 10).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"

namespace attnlens::model {

// What a tensor does in the forward pass. Per-layer roles come with a layer
// index. "up" is the MLP's first projection (GPT-2 c_fc, BERT
// intermediate.dense, Llama up_proj), "down" its last (c_proj,
// output.dense, down_proj), "gate" Llama's gate_proj. GPT-2's c_attn is the
// fused [Q | K | V] projection (qkv).
enum class TensorRole {
    word_embedding, position_embedding, type_embedding, embedding_norm, embedding_norm_bias,
    embedding_projection, embedding_projection_bias,
    // An encoder-decoder's decoder embeddings (the word embedding is shared).
    decoder_position_embedding, decoder_embedding_norm, decoder_embedding_norm_bias,
    // T5's relative position bias tables ([buckets, heads]) and its encoder's final norm.
    relative_bias, decoder_relative_bias, encoder_final_norm,
    attention_norm, attention_norm_bias,
    qkv, qkv_bias, query, query_bias, key, key_bias, value, value_bias,
    attention_output, attention_output_bias,
    mlp_norm, mlp_norm_bias,
    mlp_up, mlp_up_bias, mlp_gate, mlp_gate_bias, mlp_down, mlp_down_bias,
    // A decoder layer's cross-attention (BART's encoder_attn) and its norm.
    cross_norm, cross_norm_bias, cross_query, cross_query_bias, cross_key, cross_key_bias,
    cross_value, cross_value_bias, cross_output, cross_output_bias,
    final_norm, final_norm_bias, lm_head, lm_head_bias,
    // An encoder's masked-LM head transforms each row before lm_head (BERT's
    // cls.predictions.transform: dense, then activation, then LayerNorm).
    mlm_transform, mlm_transform_bias, mlm_norm, mlm_norm_bias,
    // OPT's project_out: the model width back to the word embeddings' before the head.
    output_projection,
};

// How a tensor is held once loaded.
enum class TensorLayout {
    vector,  // [n]: as is
    rows,    // [rows, width] looked up by row (position and token-type embeddings): as is, row-major
    in_out,  // [in, out] (GPT-2 Conv1D): B = W, packed with kernels::pack_panels
    out_in,  // [out, in] (Linear, and the word embedding [V, d]): B = W^T, packed with
             // kernels::pack_transposed_panels. For the word embedding B = E^T (d x V):
             // the LM head's operand, and rows of E are gathered from its panels.
};

// True for the roles every layer has its own tensor of.
bool is_per_layer(TensorRole role);

struct TensorSpec {
    std::string name;
    std::vector<std::size_t> shape;
    bool optional = false;
    // For the loader (not part of the JavaScript surface):
    TensorRole role = TensorRole::word_embedding;
    std::size_t layer = 0;  // for per-layer roles
    TensorLayout layout = TensorLayout::vector;
    // GPT-NeoX's fused query_key_value: its rows (weight) or values (bias)
    // come per head, [Q_h | K_h | V_h] each this wide, and are stored as the
    // forward pass reads them, [Q | K | V] head by head. 0: as they come.
    std::size_t head_interleave = 0;
};

// Every tensor of a valid config (validate(config) == ""), in a stable
// order: embeddings, then each layer, then the final norm and LM head.
std::vector<TensorSpec> model_tensors(const ModelConfig& config);

// The encoder-decoder layouts' tensors (seq2seq_tensors.cpp), appended to `specs`.
void append_seq2seq_tensors(const ModelConfig& config, std::vector<TensorSpec>& specs);
// layout_error() of an encoder-decoder layout.
std::string seq2seq_layout_error(const ModelConfig& config);

// "" when the layout (config.architecture) names every tensor the knobs ask
// for, else a sentence naming the knob it cannot name (for validate()).
std::string layout_error(const ModelConfig& config);

// Elements of a shape, in 64 bits (the shapes of a valid config cannot overflow it).
std::uint64_t element_count(const std::vector<std::size_t>& shape);

// Float32 values of every required tensor (the optional LM head excluded:
// usually tied), in 64 bits; for validate(), so it needs only the size
// bounds checked, not a valid config.
std::uint64_t parameter_count(const ModelConfig& config);

// "[3, 48]"
std::string shape_text(const std::vector<std::size_t>& shape);

}  // namespace attnlens::model

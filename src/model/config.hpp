// What a transformer checkpoint is, independent of how its files name things:
// the architecture, its sizes and its few numeric constants. The JavaScript
// layer maps a Hugging Face config.json onto this (web/lib/model/config.js).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../attention/float_buffer.hpp"

namespace attnlens::model {

enum class Architecture { gpt2, bert, llama };
enum class Activation { gelu_tanh, gelu_erf, silu };

struct ModelConfig {
    Architecture architecture = Architecture::gpt2;
    std::size_t layers = 0, heads = 0, kv_heads = 0, model_width = 0, head_width = 0, mlp_width = 0;
    std::size_t vocab_size = 0, max_positions = 0, type_vocab_size = 0;
    float norm_epsilon = 1e-5f, rope_theta = 10000.0f;
    Activation activation = Activation::gelu_tanh;
    bool has_lm_head = true;      // false for bert
    bool attention_bias = false;  // llama only (gpt2 and bert always have biases)
    bool mlp_bias = false;        // llama only
    // Storage, not architecture: keep the matrices of F16 and BF16
    // checkpoints at 2 bytes a weight (products widen them a panel at a
    // time) instead of converting them to float32 at load. Half the memory,
    // so models twice as large fit in WebAssembly's 2 GiB; the same results
    // bit for bit (widening is exact); a little slower (performance.md).
    bool keep_16_bit = false;
};

// Upper bounds on single sizes. They keep every product of two sizes (a
// weight's element count) far below 2^64, so the checks below can be done in
// 64-bit arithmetic without overflow; the 2 GiB check then makes every
// weight's element count fit a 32-bit size_t too (WebAssembly).
constexpr std::size_t kMaxLayers = 4096;
constexpr std::size_t kMaxHeads = 4096;
constexpr std::size_t kMaxWidth = std::size_t(1) << 20;       // model, head, MLP and attention widths
constexpr std::size_t kMaxVocabulary = std::size_t(1) << 24;  // also type vocabulary
constexpr std::size_t kMaxPositions = std::size_t(1) << 24;
// kMaxMemoryBytes (the 2 GiB of a wasm32 memory): attention/float_buffer.hpp.

// "" when the model can be built and run, otherwise one sentence naming the
// problem and the offending number.
std::string validate(const ModelConfig& config);
// validate()'s last check alone: the weights, as keep_16_bit stores them,
// fit in memory. For a config validate() accepted with another storage.
std::string validate_storage(const ModelConfig& config);

// Sizes derived from the config, named once.
inline std::size_t query_width(const ModelConfig& c) { return c.heads * c.head_width; }     // H * hd
inline std::size_t key_value_width(const ModelConfig& c) { return c.kv_heads * c.head_width; }  // G * hd
// Columns of the fused projection output [Q | K | V] the forward pass uses.
inline std::size_t qkv_width(const ModelConfig& c) { return query_width(c) + 2 * key_value_width(c); }

const char* architecture_name(Architecture architecture);
const char* activation_name(Activation activation);
// False when the name is not one of architecture_name()'s / activation_name()'s.
bool parse_architecture(const std::string& name, Architecture& out);
bool parse_activation(const std::string& name, Activation& out);

}  // namespace attnlens::model

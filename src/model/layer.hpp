// One transformer layer, written once for every family: they differ only in
// ModelConfig's knobs (norm, position, post_norm, causal, gated_mlp, biases).
// Internal to src/model (forward.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../attention/attention.hpp"
#include "config.hpp"
#include "../attention/float_buffer.hpp"
#include "forward.hpp"
#include "weights.hpp"

namespace attnlens::model {

// A layer's attention sizes, as multi_head_layer takes them.
MultiHeadShape multi_head_shape(const ModelConfig& config);

// Buffers and their sizes in floats: the one list an allocation fills and a
// memory estimate (footprint.hpp) sums, so the two cannot drift apart.
using BufferSizes = std::vector<std::pair<FloatBuffer*, std::uint64_t>>;
std::uint64_t total_floats(const BufferSizes& buffers);

// The working memory of one forward pass over n tokens, allocated once and
// reused by every layer.
struct Activations {
    std::size_t n = 0;
    FloatBuffer x;           // n x d: the residual stream
    FloatBuffer embedded;    // n x embeddingWidth: the embeddings before their projection (ELECTRA only)
    FloatBuffer normed;      // n x d: a half's normalized input; the final hidden state
    FloatBuffer qkv;         // n x qkv_width: Q (H heads), K and V (G heads each), laid out by multi_head_layer
    FloatBuffer heads;       // n x (H*hd): the heads' outputs side by side
    FloatBuffer projected;   // n x d: a half's output before the residual add
    FloatBuffer up, gate;    // n x I (gate: gated MLPs only)
    FloatBuffer mlp_input;   // n x d: the MLP's normalized input, taken before attention adds (parallel residual only)
    FloatBuffer rotary_cos, rotary_sin;  // n x rotated_width/2 (rotary only)
    // How each stage is split over threads, and the widened-panel scratch of
    // 16-bit weights (keep_16_bit), one per thread.
    ProductRun products;
    FloatBuffer panel_scratch;
    // One per thread the heads may use, reused by every layer, sized before
    // any thread starts (a WebAssembly memory grown by a worker leaves the
    // main thread's JS views stale).
    std::vector<AttentionWorkspace> workspaces;

    // "" or an out-of-memory sentence naming the sizes.
    std::string allocate(const ModelConfig& config, std::size_t tokens, const ThreadPolicy& policy);

    // What allocate() allocates: each buffer and its floats for n tokens.
    BufferSizes buffer_sizes(const ModelConfig& config, std::size_t tokens, const ThreadPolicy& policy);
    // Attention workspaces allocate() makes room for (sized by the heads as they run).
    static std::size_t workspace_count(const ModelConfig& config, const ThreadPolicy& policy);
    static std::uint64_t panel_scratch_floats(const ModelConfig& config);
};

// Normalizes every row of `in` (n x width, width 0: d) into `out` (may be
// `in`) with the config's norm and the given weight (and bias, for LayerNorm).
void normalize_rows(const ModelConfig& config, const Weight& weight, const Weight& bias, const float* in, float* out,
                    std::size_t rows, std::size_t width = 0);

// Layer l's self-attention projections, and a decoder layer's
// cross-attention ones, as the multi-head layer takes them.
MultiHeadProjections projections_of(const LayerWeights& l);
MultiHeadProjections cross_projections_of(const LayerWeights& l);

// Where an attention sublayer's keys and values come from besides acts.x:
// a context (cross-attention over an encoder's output) and a cache of
// earlier keys and values (multi_head.hpp KeyValueCache). Empty: acts.x.
struct SublayerInput {
    const float* context = nullptr;
    std::size_t context_tokens = 0;
    KeyValueCache* cache = nullptr;
};

// One attention sublayer: its norm (before, or with post_norm after the
// residual add), multi_head_layer, the residual. Reads and updates acts.x.
void attention_sublayer(const ModelConfig& config, const MultiHeadProjections& projections, const Weight& norm,
                        const Weight& norm_bias, Activations& acts, const SublayerInput& input,
                        const AttentionOptions& options, const PositionHook& positions, float* attention,
                        MultiHeadTrace* trace);

// The attention half of layer `l` (its norm, then multi_head_layer): reads
// and updates acts.x. `attention`: null or H x n x n, where the heads'
// weights go. `trace`: null, or allocated by allocate_trace: filled with
// the options and every step but layer_output.
// `layer`: the layer's index (its window, layer_window). `cache`: null, or
// the layer's keys and values of earlier positions (run()'s ForwardCache):
// acts.x then holds the rows from position cache->filled on.
void attention_half(const ModelConfig& config, std::size_t layer, const LayerWeights& l, Activations& acts,
                    const std::uint8_t* key_mask, float* attention, MultiHeadTrace* trace,
                    KeyValueCache* cache = nullptr);

// The options layer `layer`'s self-attention runs with (its scale, causal
// mask, window and the key mask).
AttentionOptions layer_options(const ModelConfig& config, std::size_t layer, const std::uint8_t* key_mask);

// Where an attention sublayer without a cache left Q, K and V in acts.qkv
// (multi_head.hpp QkvLayout: the layer's fused or separate projections lay
// them out differently). With a cache, Q is still there.
QkvLayout layer_rows(const ModelConfig& config, const LayerWeights& l, const Activations& acts);

// Where the attention half left V (bias included) in acts.qkv: kv head g's
// values at columns g * hd of rows `stride` floats apart.
const float* layer_values(const ModelConfig& config, const LayerWeights& l, const Activations& acts, std::size_t& stride);

// Allocates a model's record of one attention sublayer (every step for
// `input`'s queries and keys, and layer_output) and writes the model's math
// around it: architecture, layer, norm, position, residual layout. "" or
// an out-of-memory sentence.
std::string prepare_layer_trace(const ModelConfig& config, std::size_t layer, const MultiHeadInput& input,
                                MultiHeadTrace& trace);

// The MLP half: reads and updates acts.x.
void mlp_half(const ModelConfig& config, const LayerWeights& l, Activations& acts);

}  // namespace attnlens::model

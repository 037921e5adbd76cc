// The analyses that read a run's layers as they pass (model::LayerObserver):
// the logit lens and value-weighted attention. model.analyze hands one to
// the forward pass (src/bindings/analysis_bindings.cpp), then reads its status.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention/float_buffer.hpp"
#include "model/forward.hpp"

namespace attnlens::analysis {

// The most scratch the lens's logits (and its rows' inputs) take: with
// GPT-2's vocabulary 159 rows. The lens's rows of every layer go through the
// LM head together (a block of rows can hold several layers'), so the
// weights (154 MB in GPT-2 small) are read once per block, not once per
// layer: 12 layers x 1 position are one block, 12 x 128 rows ten.
constexpr std::uint64_t kLensScratchBytes = std::uint64_t(32) << 20;

// Where the results go (null: not wanted), for a run of n tokens.
struct LayerOutputs {
    std::size_t top_k = 0;             // 1 to the vocabulary size when the lens is wanted
    std::int32_t* lens_ids = nullptr;  // layers x P x top_k: [layer][i][rank], i indexing lens_positions
    float* lens_probs = nullptr;       // layers x P x top_k
    float* value_weighted = nullptr;   // layers x H x n x keys: [layer][head][query][key] (keys: LayerState's)
    // The P positions the lens reads, each < n, in any order; null: all n (P = n).
    const std::int32_t* lens_positions = nullptr;
    std::size_t lens_position_count = 0;
    std::uint64_t lens_scratch_bytes = kLensScratchBytes;  // smaller in tests, for several blocks
    // The layers of the stack the observer sees (0: config.layers; an
    // encoder-decoder's decoder passes its own): the lens's last rows go
    // through the LM head after the last of them.
    std::size_t layers = 0;
};

enum LayerStatus : int { kLayersDone = 0, kOutOfMemory = 1, kNoAttention = 2, kNoLanguageHead = 3, kBadTopK = 4,
                         kBadPositions = 5, kBadLayerCount = 6 };

class LayerAnalyses final : public model::LayerObserver {
public:
    explicit LayerAnalyses(const LayerOutputs& outputs) : out_(outputs) {}
    void attention_done(const model::LayerState& state) override;
    void layer_done(const model::LayerState& state) override;
    // kLayersDone, or the first problem met (the results are then incomplete):
    // kBadLayerCount when the run's layers were not LayerOutputs::layers.
    LayerStatus status() const;

    // The scratch (floats) the analyses allocate for a run whose attention
    // reads `keys` keys (n, or a cross-attention's source tokens): the lens
    // reading `lens_rows` rows (layers x positions; 0: no lens),
    // value-weighted attention or not. JavaScript counts it before the run.
    static std::uint64_t scratch_floats(const model::ModelConfig& c, std::size_t keys, std::size_t lens_rows,
                                        bool weighted);
    // Rows the lens sends through the LM head at once, of `rows` (layers x
    // positions): all of them while their logits (rows x vocabulary) fit
    // `scratch_bytes`, so the LM head's weights are read once per call; else
    // even blocks.
    static std::size_t lens_block_rows(const model::ModelConfig& c, std::size_t rows,
                                       std::uint64_t scratch_bytes = kLensScratchBytes);

private:
    bool ready(const model::LayerState& state);
    std::size_t lens_rows(std::size_t n) const;  // P
    std::size_t stack_layers(const model::ModelConfig& c) const;
    void lens_block(const model::LayerState& state);

    LayerOutputs out_;
    LayerStatus status_ = kLayersDone;
    bool allocated_ = false;
    FloatBuffer wo_, product_, norms_, pack_;  // value-weighted attention
    // The logit lens: the picked residual rows (of one or more layers) that
    // wait for the LM head, their normalized rows and logits. held_ rows
    // wait; rows before first_ (of layers x P, [layer][i]) are written.
    FloatBuffer picked_, normed_, logits_;
    std::size_t first_ = 0, held_ = 0;
    std::size_t expected_rows_ = 0;  // layers x P, once allocated
};

}  // namespace attnlens::analysis

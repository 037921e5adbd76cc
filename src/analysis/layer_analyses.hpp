// The analyses that read a run's layers as they pass (model::LayerObserver):
// the logit lens and value-weighted attention. model.analyze hands one to
// the forward pass (src/bindings/analysis_bindings.cpp), then reads its status.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention/float_buffer.hpp"
#include "model/forward.hpp"

namespace attnlens::analysis {

// Where the results go (null: not wanted), for a run of n tokens.
struct LayerOutputs {
    std::size_t top_k = 0;             // 1 to the vocabulary size when the lens is wanted
    std::int32_t* lens_ids = nullptr;  // layers x n x top_k: [layer][position][rank]
    float* lens_probs = nullptr;       // layers x n x top_k
    float* value_weighted = nullptr;   // layers x H x n x n: [layer][head][query][key]
};

enum LayerStatus : int { kLayersDone = 0, kOutOfMemory = 1, kNoAttention = 2, kNoLanguageHead = 3, kBadTopK = 4 };

class LayerAnalyses final : public model::LayerObserver {
public:
    explicit LayerAnalyses(const LayerOutputs& outputs) : out_(outputs) {}
    void attention_done(const model::LayerState& state) override;
    void layer_done(const model::LayerState& state) override;
    // kLayersDone, or the first problem met (the results are then incomplete).
    LayerStatus status() const { return status_; }

    // Positions the logit lens sends through the LM head at once: few, as
    // their logits (rows x vocabulary) are held, but more than one, so the
    // LM head is read once per block rather than once per position.
    static constexpr std::size_t kLensRows = 16;

private:
    bool ready(const model::LayerState& state);

    LayerOutputs out_;
    LayerStatus status_ = kLayersDone;
    bool allocated_ = false;
    FloatBuffer wo_, product_, norms_, pack_;  // value-weighted attention
    FloatBuffer normed_, logits_;              // the logit lens
};

}  // namespace attnlens::analysis

#include "analysis/layer_analyses.hpp"

#include <algorithm>
#include <utility>

#include "analysis/logit_lens.hpp"
#include "analysis/value_weighted.hpp"
#include "model/layer.hpp"  // multi_head_shape

namespace attnlens::analysis {

namespace {

// One thread for the value norms' products: the row-major W_O^h is packed
// into a single scratch (row_major_scratch of one thread).
const ThreadPolicy kOneThread{1, false};

}  // namespace

// Allocates the scratch once, at the first layer (the config is known then).
bool LayerAnalyses::ready(const model::LayerState& state) {
    if (status_ != kLayersDone) return false;
    if (allocated_) return true;
    allocated_ = true;
    const model::ModelConfig& c = state.config;
    const std::uint64_t d = c.model_width, rows = std::min(state.n, kLensRows);
    const bool weighted = out_.value_weighted != nullptr, lens = out_.lens_ids != nullptr;
    if (lens && !c.has_lm_head) return status_ = kNoLanguageHead, false;
    if (lens && (out_.top_k == 0 || out_.top_k > c.vocab_size || !out_.lens_probs)) return status_ = kBadTopK, false;
    if (weighted && !state.attention) return status_ = kNoAttention, false;
    // Allocated directly, not through allocate_all: its error sentence would
    // cost the module's download, and JavaScript names the problem from the status.
    const std::pair<FloatBuffer*, std::uint64_t> buffers[] = {
        {&wo_, weighted ? query_width(c) * d : 0},
        {&product_, weighted ? state.n * d : 0},
        {&norms_, weighted ? c.heads * state.n : 0},
        {&pack_, weighted ? row_major_scratch(c.head_width, d, kOneThread.limit).floats : 0},
        {&normed_, lens ? 2 * rows * d : 0},  // head_logits: the final norm's rows, then its head's
        {&logits_, lens ? rows * c.vocab_size : 0}};
    for (const auto& buffer : buffers)
        if (buffer.second * sizeof(float) > kMaxMemoryBytes || !buffer.first->allocate(std::size_t(buffer.second)))
            return status_ = kOutOfMemory, false;
    return true;
}

void LayerAnalyses::attention_done(const model::LayerState& state) {
    if (!out_.value_weighted || !ready(state)) return;
    const model::ModelConfig& c = state.config;
    const std::size_t n = state.n, d = c.model_width;
    // W_O, (H*hd) x d: head h's rows are h*hd .. (h+1)*hd - 1.
    unpack_columns(model::packed(state.weights.layers[state.layer].attention_output), 0, d, wo_.data(), d);
    ProductRun run{kOneThread, pack_.data(), 0};
    value_norms(state.values, state.values_stride, n, model::multi_head_shape(c), wo_.data(), run, product_.data(),
                norms_.data());
    value_weighted(state.attention, norms_.data(), c.heads, n, out_.value_weighted + state.layer * c.heads * n * n);
}

void LayerAnalyses::layer_done(const model::LayerState& state) {
    if (!out_.lens_ids || !ready(state)) return;
    const model::ModelConfig& c = state.config;
    const std::size_t n = state.n, d = c.model_width, V = c.vocab_size, k = out_.top_k;
    for (std::size_t first = 0; first < n; first += kLensRows) {
        const std::size_t rows = std::min(kLensRows, n - first);
        model::head_logits(c, state.weights, state.residual + first * d, rows, normed_.data(), logits_.data(),
                           state.products);
        for (std::size_t r = 0; r < rows; ++r) {
            const std::size_t at = (state.layer * n + first + r) * k;
            top_k_softmax(logits_.data() + r * V, V, k, out_.lens_ids + at, out_.lens_probs + at);
        }
    }
}

}  // namespace attnlens::analysis

#include "analysis/layer_analyses.hpp"

#include <algorithm>
#include <array>

#include "analysis/logit_lens.hpp"
#include "analysis/value_weighted.hpp"
#include "attention/threads.hpp"
#include "model/layer.hpp"  // multi_head_shape

namespace attnlens::analysis {

namespace {

// One thread for the value norms' products: the row-major W_O^h is packed
// into a single scratch (row_major_scratch of one thread).
const ThreadPolicy kOneThread{1, false};

// The floats of each scratch buffer, in the order of LayerAnalyses' members:
// value-weighted attention's W_O unpacked, one head's v W_O rows, the norms,
// W_O^h packed; the lens's block of picked residual rows, their normalized
// rows and logits.
// `keys`: the keys the attention reads (a cross-attention's source tokens).
std::array<std::uint64_t, 7> scratch_sizes(const model::ModelConfig& c, std::size_t keys, std::size_t block,
                                           bool weighted) {
    const std::uint64_t d = c.model_width;
    return {weighted ? query_width(c) * d : 0, weighted ? keys * d : 0, weighted ? c.heads * keys : 0,
            weighted ? row_major_scratch(c.head_width, d, kOneThread.limit).floats : 0,
            // picked rows; head_logits' scratch: the final norm's rows, then the
            // head's own projection's (a masked-LM transform, OPT's project_out); logits
            block * d, 2 * block * d, block * c.vocab_size};
}

// The lens's floats per row of a block: its share of scratch_sizes, derived
// from them so the block size and the allocation cannot disagree.
std::uint64_t lens_row_floats(const model::ModelConfig& c) {
    std::uint64_t total = 0;
    for (std::uint64_t floats : scratch_sizes(c, 0, 1, false)) total += floats;
    return total;
}

std::size_t keys_of(const model::LayerState& state) { return state.keys ? state.keys : state.n; }

}  // namespace

std::size_t LayerAnalyses::lens_block_rows(const model::ModelConfig& c, std::size_t rows, std::uint64_t scratch_bytes) {
    if (rows == 0) return 0;
    const std::uint64_t fit = std::max<std::uint64_t>(1, scratch_bytes / sizeof(float) / lens_row_floats(c));
    const std::uint64_t blocks = (rows + fit - 1) / fit;
    return std::size_t((rows + blocks - 1) / blocks);
}

std::uint64_t LayerAnalyses::scratch_floats(const model::ModelConfig& c, std::size_t keys, std::size_t lens_rows,
                                            bool weighted) {
    std::uint64_t total = 0;
    for (std::uint64_t floats : scratch_sizes(c, keys, lens_block_rows(c, lens_rows), weighted)) total += floats;
    return total;
}

std::size_t LayerAnalyses::lens_rows(std::size_t n) const {
    return out_.lens_positions ? out_.lens_position_count : n;
}

std::size_t LayerAnalyses::stack_layers(const model::ModelConfig& c) const {
    return out_.layers ? out_.layers : c.layers;
}

LayerStatus LayerAnalyses::status() const {
    // Rows still waiting for the head: the run had fewer layers than it said.
    if (status_ == kLayersDone && out_.lens_ids && first_ != expected_rows_) return kBadLayerCount;
    return status_;
}

// Allocates the scratch once, at the first layer (the config is known then).
bool LayerAnalyses::ready(const model::LayerState& state) {
    if (status_ != kLayersDone) return false;
    if (allocated_) return true;
    allocated_ = true;
    const model::ModelConfig& c = state.config;
    const bool weighted = out_.value_weighted != nullptr, lens = out_.lens_ids != nullptr;
    if (lens && !c.has_lm_head) return status_ = kNoLanguageHead, false;
    if (lens && (out_.top_k == 0 || out_.top_k > c.vocab_size || !out_.lens_probs)) return status_ = kBadTopK, false;
    if (lens && lens_rows(state.n) == 0) return status_ = kBadPositions, false;
    for (std::size_t i = 0; lens && out_.lens_positions && i < out_.lens_position_count; ++i)
        if (out_.lens_positions[i] < 0 || std::size_t(out_.lens_positions[i]) >= state.n) return status_ = kBadPositions, false;
    if (weighted && !state.attention) return status_ = kNoAttention, false;
    // Allocated directly, not through allocate_all: its error sentence would
    // cost the module's download, and JavaScript names the problem from the status.
    expected_rows_ = lens ? stack_layers(c) * lens_rows(state.n) : 0;
    const std::size_t block = lens_block_rows(c, expected_rows_, out_.lens_scratch_bytes);
    const auto sizes = scratch_sizes(c, keys_of(state), block, weighted);
    FloatBuffer* const buffers[] = {&wo_, &product_, &norms_, &pack_, &picked_, &normed_, &logits_};
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] * sizeof(float) > kMaxMemoryBytes || !buffers[i]->allocate(std::size_t(sizes[i])))
            return status_ = kOutOfMemory, false;
    return true;
}

void LayerAnalyses::attention_done(const model::LayerState& state) {
    if (!out_.value_weighted || !ready(state)) return;
    const model::ModelConfig& c = state.config;
    const std::size_t n = state.n, keys = keys_of(state), d = c.model_width;
    const model::Weight& output =
        state.attention_output ? *state.attention_output : state.weights.layers[state.layer].attention_output;
    // W_O, (H*hd) x d: head h's rows are h*hd .. (h+1)*hd - 1.
    unpack_columns(model::packed(output), 0, d, wo_.data(), d);
    ProductRun run{kOneThread, pack_.data(), 0};
    value_norms(state.values, state.values_stride, keys, model::multi_head_shape(c), wo_.data(), run, product_.data(),
                norms_.data());
    value_weighted(state.attention, norms_.data(), c.heads, n, keys,
                   out_.value_weighted + state.layer * c.heads * n * keys);
}

void LayerAnalyses::layer_done(const model::LayerState& state) {
    if (!out_.lens_ids || !ready(state)) return;
    const model::ModelConfig& c = state.config;
    const std::size_t d = c.model_width, rows = lens_rows(state.n);
    // The layers arrive in order: this layer's rows follow the earlier ones'.
    if (state.layer >= stack_layers(c) || state.layer * rows != first_ + held_) return void(status_ = kBadLayerCount);
    const std::size_t block = lens_block_rows(c, expected_rows_, out_.lens_scratch_bytes);
    for (std::size_t i = 0; i < rows; ++i) {
        const std::size_t position = out_.lens_positions ? std::size_t(out_.lens_positions[i]) : i;
        std::copy_n(state.residual + position * d, d, picked_.data() + held_ * d);
        // A full block, or the last layer's last row: through the head.
        if (++held_ == block || first_ + held_ == expected_rows_) lens_block(state);
    }
}

// The held rows (of this layer and maybe earlier ones) through the head at
// once, the LM head's weights read once for all: the same bits as a row at
// a time, since the product sums each output over the inner dimension in
// one order whatever its rows (kernels::matmul_packed) and the norms are
// per row. Then each row's top k on the run's threads, a row per part: the
// same bits on any thread count.
void LayerAnalyses::lens_block(const model::LayerState& state) {
    const model::ModelConfig& c = state.config;
    const std::size_t V = c.vocab_size, k = out_.top_k, count = held_, first = first_;
    model::head_logits(c, state.weights, picked_.data(), count, normed_.data(), logits_.data(), state.products);
    const std::size_t threads = state.products.policy.for_stage(double(count) * V, count);
    run_parts(count, threads, [&](std::size_t r, std::size_t) {
        const std::size_t at = (first + r) * k;
        top_k_softmax(logits_.data() + r * V, V, k, out_.lens_ids + at, out_.lens_probs + at);
    });
    first_ += count, held_ = 0;
}

}  // namespace attnlens::analysis

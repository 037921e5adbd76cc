#include "analysis/rollout.hpp"

#include "attention/float_buffer.hpp"
#include "attention/packed_matrix.hpp"

namespace attnlens::analysis {

namespace {

// Ã = 0.5 * mean over heads + 0.5 * I, for one layer's heads.
void residual_mixed(const float* layer_attention, std::size_t heads, std::size_t n, float* mixed) {
    const float head_weight = 0.5f / static_cast<float>(heads);
    for (std::size_t k = 0; k < n * n; ++k) mixed[k] = 0.0f;
    for (std::size_t head = 0; head < heads; ++head) {
        const float* weights = layer_attention + head * n * n;
        for (std::size_t k = 0; k < n * n; ++k) mixed[k] += head_weight * weights[k];
    }
    for (std::size_t i = 0; i < n; ++i) mixed[i * n + i] += 0.5f;
}

}  // namespace

std::uint64_t rollout_working_bytes(std::size_t tokens) {
    const std::size_t threads = ThreadPolicy::automatic_up_to_max().limit;
    return sizeof(float) * (std::uint64_t(tokens) * tokens + row_major_scratch(tokens, tokens, threads).floats);
}

std::string attention_rollout(const float* attention, const AttentionShape& shape, float* rollout) {
    const std::size_t n = shape.tokens, layer_size = n * n;
    if (shape.layers == 0 || shape.heads == 0 || n == 0) return {};
    residual_mixed(attention, shape.heads, n, rollout);
    if (shape.layers == 1) return {};
    // The products go through the model's own (project: the SIMD kernels,
    // on the module's threads), the previous rollout as a row-major B
    // packed a part at a time into `scratch`.
    const ThreadPolicy policy = ThreadPolicy::automatic_up_to_max();
    const ProductScratch sizes = row_major_scratch(n, n, policy.limit);
    FloatBuffer mixed, scratch;
    if (auto error = allocate_all({{&mixed, layer_size}, {&scratch, sizes.floats}}, "attention rollout", n);
        !error.empty())
        return error;
    const ProductRun product{policy, scratch.data(), sizes.stride};
    for (std::size_t layer = 1; layer < shape.layers; ++layer) {
        residual_mixed(attention + layer * shape.heads * layer_size, shape.heads, n, mixed.data());
        PackedMatrix previous;
        previous.row_major = rollout + (layer - 1) * layer_size;
        previous.inner = previous.cols = n;
        project(previous, nullptr, mixed.data(), n, n, rollout + layer * layer_size, n, product);
    }
    return {};
}

}  // namespace attnlens::analysis

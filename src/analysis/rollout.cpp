#include "analysis/rollout.hpp"

#include "attention/float_buffer.hpp"
#include "kernels/kernels.hpp"

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
    return sizeof(float) * (std::uint64_t(tokens) * tokens + kernels::packed_size(tokens, tokens));
}

std::string attention_rollout(const float* attention, const AttentionShape& shape, float* rollout) {
    const std::size_t n = shape.tokens, layer_size = n * n;
    if (shape.layers == 0 || shape.heads == 0 || n == 0) return {};
    residual_mixed(attention, shape.heads, n, rollout);
    if (shape.layers == 1) return {};
    FloatBuffer mixed, packed;
    if (auto error = allocate_all({{&mixed, layer_size}, {&packed, kernels::packed_size(n, n)}}, "attention rollout", n);
        !error.empty())
        return error;
    for (std::size_t layer = 1; layer < shape.layers; ++layer) {
        residual_mixed(attention + layer * shape.heads * layer_size, shape.heads, n, mixed.data());
        const float* previous = rollout + (layer - 1) * layer_size;
        kernels::pack_panels(previous, n, n, n, packed.data());
        kernels::matmul_packed(mixed.data(), n, packed.data(), n, rollout + layer * layer_size, n, n, n, n);
    }
    return {};
}

}  // namespace attnlens::analysis

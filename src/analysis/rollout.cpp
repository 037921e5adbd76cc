#include "analysis/rollout.hpp"

namespace attnlens::analysis {

namespace {

// Row i of Ã = 0.5 * mean over heads + 0.5 * I, for one layer's heads.
void residual_mixed_row(const float* layer_attention, std::size_t heads, std::size_t n, std::size_t i, float* row) {
    for (std::size_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (std::size_t head = 0; head < heads; ++head) sum += layer_attention[(head * n + i) * n + j];
        row[j] = 0.5f * sum / static_cast<float>(heads) + (i == j ? 0.5f : 0.0f);
    }
}

// Whether every entry of the n x n matrix above its diagonal is 0: a causal
// model's rollout (each layer's Ã is lower triangular, and so their products).
bool lower_triangular(const float* matrix, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j)
            if (matrix[i * n + j] != 0.0f) return false;
    return true;
}

}  // namespace

// Plain loops rather than the SIMD products: n^3 per layer is little beside
// the forward pass, and this costs the module few bytes (its download budget).
void attention_rollout(const float* attention, const AttentionShape& shape, float* rollout, float* row,
                       const float* before) {
    const std::size_t n = shape.tokens, layer_size = n * n;
    for (std::size_t layer = 0; layer < shape.layers; ++layer) {
        const float* layer_attention = attention + layer * shape.heads * layer_size;
        float* out = rollout + layer * layer_size;
        const float* previous = layer ? out - layer_size : before;  // null: this is the model's first layer
        const bool lower = previous && lower_triangular(previous, n);
        for (std::size_t i = 0; i < n; ++i) {
            residual_mixed_row(layer_attention, shape.heads, n, i, row);
            float* out_row = out + i * n;
            if (!previous) {
                for (std::size_t j = 0; j < n; ++j) out_row[j] = row[j];
                continue;
            }
            // out_row = row · previous, as a sum of previous's rows. Every
            // term is finite and non-negative, so a term that is 0 (a key the
            // row does not reach; for a causal model every k > i, and every
            // j > k of a lower-triangular previous) adds +0 to a sum that is
            // +0 or more: skipping it changes no bit. A causal model's layer
            // then costs n^3 / 6 multiply-adds, not n^3.
            for (std::size_t j = 0; j < n; ++j) out_row[j] = 0.0f;
            for (std::size_t k = 0; k < n; ++k) {
                const float weight = row[k];
                if (weight == 0.0f) continue;
                const float* previous_row = previous + k * n;
                const std::size_t end = lower ? k + 1 : n;
                for (std::size_t j = 0; j < end; ++j) out_row[j] += weight * previous_row[j];
            }
        }
    }
}

}  // namespace attnlens::analysis

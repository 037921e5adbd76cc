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

}  // namespace

// Plain loops rather than the SIMD products: n^3 per layer is little beside
// the forward pass, and this costs the module few bytes (its download budget).
void attention_rollout(const float* attention, const AttentionShape& shape, float* rollout, float* row) {
    const std::size_t n = shape.tokens, layer_size = n * n;
    for (std::size_t layer = 0; layer < shape.layers; ++layer) {
        const float* layer_attention = attention + layer * shape.heads * layer_size;
        float* out = rollout + layer * layer_size;
        const float* previous = layer ? out - layer_size : out;  // read from layer 1 on
        for (std::size_t i = 0; i < n; ++i) {
            residual_mixed_row(layer_attention, shape.heads, n, i, row);
            float* out_row = out + i * n;
            if (layer == 0) {
                for (std::size_t j = 0; j < n; ++j) out_row[j] = row[j];
                continue;
            }
            // out_row = row · previous, as a sum of previous's rows.
            for (std::size_t j = 0; j < n; ++j) out_row[j] = 0.0f;
            for (std::size_t k = 0; k < n; ++k)
                for (std::size_t j = 0; j < n; ++j) out_row[j] += row[k] * previous[k * n + j];
        }
    }
}

}  // namespace attnlens::analysis

#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

// Queries are processed this many at a time: enough rows to keep the matmul
// tiles busy, few enough that the score tile (rows x n) stays small.
constexpr std::size_t kQueryTile = 32;

// K (n x d_k) -> K^T (d_k x n), so Q K^T becomes a plain row-major matmul.
void transpose(const float* source, std::size_t rows, std::size_t cols, float* target) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) target[j * rows + i] = source[i * cols + j];
}

void hide_masked_keys(const AttentionShape& shape, const AttentionOptions& options,
                      std::size_t first_query, std::size_t query_count, float* scores) {
    if (!options.causal && options.key_mask == nullptr) return;
    constexpr float kHidden = -std::numeric_limits<float>::infinity();
    for (std::size_t r = 0; r < query_count; ++r) {
        float* row = scores + r * shape.keys;
        for (std::size_t j = 0; j < shape.keys; ++j)
            if (key_hidden(shape, options, first_query + r, j)) row[j] = kHidden;
    }
}

}  // namespace

float score_multiplier(const AttentionShape& shape, const AttentionOptions& options) {
    const float scale = options.scale ? *options.scale : 1.0f / std::sqrt(float(shape.key_width));
    return scale / options.temperature;
}

bool key_hidden(const AttentionShape& shape, const AttentionOptions& options, std::size_t query, std::size_t key) {
    if (options.key_mask != nullptr && options.key_mask[key] == 0) return true;
    // Causal alignment to the end: with m < n, the m queries are the last m
    // positions of the key sequence, so query i sits at position i + (n - m).
    if (options.causal && key + shape.queries > query + shape.keys) return true;
    return false;
}

std::string validate(const AttentionShape& shape, const AttentionOptions& options) {
    if (shape.queries == 0) return "queries (m) must be at least 1";
    if (shape.keys == 0) return "keys (n) must be at least 1";
    if (shape.key_width == 0) return "key width (dk) must be at least 1";
    if (shape.value_width == 0) return "value width (dv) must be at least 1";
    if (!(options.temperature > 0.0f) || !std::isfinite(options.temperature))
        return "temperature must be a finite number greater than 0";
    if (options.scale && !std::isfinite(*options.scale)) return "scale must be a finite number";
    return {};
}

void attention_scores(const float* q, const float* k, const AttentionShape& shape, float* scores) {
    std::vector<float> k_transposed(shape.key_width * shape.keys);
    transpose(k, shape.keys, shape.key_width, k_transposed.data());
    kernels::matmul(q, k_transposed.data(), scores, shape.queries, shape.key_width, shape.keys);
}

void attention(const float* q, const float* k, const float* v, const AttentionShape& shape,
               const AttentionOptions& options, float* output, float* weights) {
    const std::size_t m = shape.queries, n = shape.keys, dk = shape.key_width, dv = shape.value_width;
    const float multiplier = score_multiplier(shape, options);

    std::vector<float> k_transposed(dk * n);
    transpose(k, n, dk, k_transposed.data());
    // Without a weights buffer to write into, one tile of scores is reused.
    std::vector<float> score_tile(weights ? 0 : std::min(m, kQueryTile) * n);

    for (std::size_t first = 0; first < m; first += kQueryTile) {
        const std::size_t rows = std::min(kQueryTile, m - first);
        float* scores = weights ? weights + first * n : score_tile.data();
        kernels::matmul(q + first * dk, k_transposed.data(), scores, rows, dk, n);
        hide_masked_keys(shape, options, first, rows, scores);
        for (std::size_t r = 0; r < rows; ++r) kernels::softmax_row(scores + r * n, n, multiplier);
        kernels::matmul(scores, v, output + first * dv, rows, n, dv);
    }
}

}  // namespace attnlens

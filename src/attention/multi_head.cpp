#include "multi_head.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

// rows x d_model = input (rows x d_model) W (d_model x d_model) + bias.
// W is packed once into panels and reused by every row tile.
void project(const float* input, std::size_t rows, const float* w, const float* bias, std::size_t width,
             float* out, std::vector<float>& packed) {
    packed.resize(kernels::packed_size(width, width));
    kernels::pack_panels(w, width, width, width, packed.data());
    kernels::matmul_packed(input, width, packed.data(), width, out, width, rows, width, width);
    if (bias) kernels::add_row_bias(out, bias, rows, width);
}

}  // namespace

std::size_t key_count(const MultiHeadInput& input) {
    return input.context ? input.context_tokens : input.tokens;
}

std::string validate(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options) {
    if (input.tokens == 0) return "n (tokens) must be at least 1";
    if (input.context && input.context_tokens == 0) return "nContext must be at least 1 when a context is given";
    if (weights.model_width == 0) return "dModel must be at least 1";
    if (weights.heads == 0) return "heads must be at least 1";
    if (weights.model_width % weights.heads != 0)
        return "dModel (" + std::to_string(weights.model_width) + ") must be divisible by heads (" +
               std::to_string(weights.heads) + ")";
    if (!weights.wq || !weights.wk || !weights.wv || !weights.wo) return "wq, wk, wv and wo are required";
    const std::size_t dk = weights.model_width / weights.heads;
    return validate(AttentionShape{input.tokens, key_count(input), dk, dk}, options);
}

void multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                          const AttentionOptions& options, float* output, float* head_weights,
                          MultiHeadTrace* trace) {
    const std::size_t n = input.tokens, nk = key_count(input), d = weights.model_width;
    const std::size_t heads = weights.heads, dk = d / heads;
    const float* context = input.context ? input.context : input.x;

    std::vector<float> q(n * d), k(nk * d), v(nk * d), concatenated(n * d), packed;
    project(input.x, n, weights.wq, weights.bq, d, q.data(), packed);
    project(context, nk, weights.wk, weights.bk, d, k.data(), packed);
    project(context, nk, weights.wv, weights.bv, d, v.data(), packed);

    const AttentionShape shape{n, nk, dk, dk};
    if (trace) {
        trace->scores.assign(heads * n * nk, 0.0f);
        trace->scaled_scores.assign(heads * n * nk, 0.0f);
        trace->weights.assign(heads * n * nk, 0.0f);
    }
    // Each head works on its columns of Q, K, V in place (strided): no copies.
    AttentionWorkspace workspace;
    for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t column = h * dk;
        float* weights_h = head_weights ? head_weights + h * n * nk : (trace ? trace->weights.data() + h * n * nk : nullptr);
        attention_strided(q.data() + column, d, k.data() + column, d, v.data() + column, d, shape, options,
                          concatenated.data() + column, d, weights_h, workspace);
        if (trace) {
            float* scores = trace->scores.data() + h * n * nk;
            float* scaled = trace->scaled_scores.data() + h * n * nk;
            attention_scores(q.data() + column, d, k.data() + column, d, shape, scores);
            const float multiplier = score_multiplier(shape, options);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < nk; ++j)
                    scaled[i * nk + j] = key_hidden(shape, options, i, j)
                                             ? -std::numeric_limits<float>::infinity()
                                             : scores[i * nk + j] * multiplier;
            if (head_weights) std::copy_n(weights_h, n * nk, trace->weights.data() + h * n * nk);
        }
    }
    project(concatenated.data(), n, weights.wo, weights.bo, d, output, packed);

    if (trace) {
        trace->q = std::move(q);
        trace->k = std::move(k);
        trace->v = std::move(v);
        trace->concatenated_heads = std::move(concatenated);
    }
}

}  // namespace attnlens

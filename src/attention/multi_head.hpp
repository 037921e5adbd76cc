// Multi-head attention:
//
//   Q = X W_Q + b_Q,  K = C W_K + b_K,  V = C W_V + b_V   (C = X for self-attention)
//   head_h = attention(Q[:, h], K[:, h], V[:, h])          (columns h*d_k .. (h+1)*d_k - 1)
//   output = concat(head_1 .. head_H) W_O + b_O
//
// X is n x d_model, the context C is n_context x d_model, every W is
// d_model x d_model applied as X W, d_k = d_model / heads.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attention.hpp"

namespace attnlens {

struct MultiHeadWeights {
    std::size_t model_width = 0;  // d_model
    std::size_t heads = 0;
    const float* wq = nullptr;
    const float* wk = nullptr;
    const float* wv = nullptr;
    const float* wo = nullptr;
    const float* bq = nullptr;  // biases are optional (null = zero)
    const float* bk = nullptr;
    const float* bv = nullptr;
    const float* bo = nullptr;
};

struct MultiHeadInput {
    const float* x = nullptr;
    std::size_t tokens = 0;            // n
    const float* context = nullptr;    // null = self-attention on x
    std::size_t context_tokens = 0;    // n_context when context is set
};

// Every intermediate of one call, for step-by-step views. Matrices are
// row-major; per-head arrays are [head][query][key] or [head][row][col].
struct MultiHeadTrace {
    std::vector<float> q, k, v;             // n x d_model, nk x d_model, nk x d_model
    std::vector<float> scores;              // heads x n x nk: Q_h K_h^T
    std::vector<float> scaled_scores;       // heads x n x nk: scores * scale / temperature, masked = -inf
    std::vector<float> weights;             // heads x n x nk
    std::vector<float> concatenated_heads;  // n x d_model
};

std::size_t key_count(const MultiHeadInput& input);

// Empty when usable, otherwise a sentence naming the problem.
std::string validate(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options);

// output: n x d_model. head_weights (nullable): heads x n x nk.
// trace (nullable): filled with every intermediate.
// Each stage that is big enough to be worth waking a thread (about 2 M
// multiply-adds per thread) runs on up to max_threads() threads.
void multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                          const AttentionOptions& options, float* output, float* head_weights,
                          MultiHeadTrace* trace = nullptr);

// The same on up to `threads` threads in every stage, however small: the
// Q, K, V projections, then the heads, then the output projection, each
// split into independent parts (column panels of a product, whole heads),
// so the results are bit-identical for any thread count. Always 1 thread in
// a WebAssembly build without thread support.
void multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                          const AttentionOptions& options, float* output, float* head_weights,
                          MultiHeadTrace* trace, std::size_t threads);

}  // namespace attnlens

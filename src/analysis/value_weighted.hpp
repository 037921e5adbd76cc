// Value-weighted attention (Kobayashi et al., 2020, "Attention is not only a
// weight"): what head h moves from key j to query i is α_ij · v_j W_O^h, so
// its size ‖α_ij · v_j W_O^h‖ = α_ij ‖v_j W_O^h‖ says more than α_ij alone
// (a head can attend strongly to a token whose value is nearly zero).
// v_j is key j's value vector of head h's kv group (bias included), W_O^h
// the head's hd rows of the output projection.
#pragma once

#include <cstddef>

#include "attention/multi_head.hpp"

namespace attnlens::analysis {

// norms[h * n + j] = ‖v_j W_O^h‖ for every query head h and key j.
// values: n rows `stride` floats apart, kv head g at columns g * hd. wo: W_O
// as a dense row-major (H*hd) x d matrix. product: scratch, n x d floats.
// run: the products' policy; its panel_scratch must hold
// row_major_scratch(hd, d, run.policy.limit).
void value_norms(const float* values, std::size_t stride, std::size_t n, const MultiHeadShape& shape, const float* wo,
                 const ProductRun& run, float* product, float* norms);

// The same for query head h alone: norms[j] = ‖v_j W_O^h‖ (n floats).
void head_value_norms(const float* values, std::size_t stride, std::size_t n, const MultiHeadShape& shape,
                      const float* wo, std::size_t h, const ProductRun& run, float* product, float* norms);

// out[h][i][j] = α_hij norms[h * keys + j], each row divided by its sum so it
// sums to 1 (a row with nothing to move stays 0). attention and out: H x
// queries x keys (cross-attention: target queries over source keys).
void value_weighted(const float* attention, const float* norms, std::size_t heads, std::size_t queries,
                    std::size_t keys, float* out);

}  // namespace attnlens::analysis

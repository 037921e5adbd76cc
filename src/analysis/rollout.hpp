// Attention rollout (Abnar and Zuidema, 2020): how much each token's input
// reaches each position after layer l, following the residual stream.
//
//   Ã_l = 0.5 * (mean of layer l's heads) + 0.5 * I     (the residual's half)
//   rollout_0 = Ã_0,  rollout_l = Ã_l · rollout_(l-1)
//
// Rows of Ã_l sum to 1 when the weights' rows do, and so do rollout's.
// Decoder and encoder models alike: nothing here assumes a causal mask.
#pragma once

#include "analysis/detectors.hpp"

namespace attnlens::analysis {

// rollout[layer][query][key] (layers x tokens x tokens) from attention
// [layer][head][query][key]; `row` is scratch for `tokens` floats. Allocates
// nothing: each layer's Ã is formed a row at a time. `before`: null when
// attention's first layer is the model's, else the rollout after the layer
// before it (tokens x tokens), so that a caller can go a layer at a time
// with one layer's weights in memory, and get the same bits.
void attention_rollout(const float* attention, const AttentionShape& shape, float* rollout, float* row,
                       const float* before = nullptr);

}  // namespace attnlens::analysis

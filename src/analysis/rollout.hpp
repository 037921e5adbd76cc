// Attention rollout (Abnar and Zuidema, 2020): how much each token's input
// reaches each position after layer l, following the residual stream.
//
//   Ã_l = 0.5 * (mean of layer l's heads) + 0.5 * I     (the residual's half)
//   rollout_0 = Ã_0,  rollout_l = Ã_l · rollout_(l-1)
//
// Rows of Ã_l sum to 1 when the weights' rows do, and so do rollout's.
// Decoder and encoder models alike: nothing here assumes a causal mask.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/detectors.hpp"

namespace attnlens::analysis {

// Bytes attention_rollout allocates for `tokens` tokens (one Ã and the
// products' packing scratch for every thread it may use).
std::uint64_t rollout_working_bytes(std::size_t tokens);

// rollout[layer][query][key] (layers x tokens x tokens) from attention
// [layer][head][query][key]. "" or "out of memory: ...".
std::string attention_rollout(const float* attention, const AttentionShape& shape, float* rollout);

}  // namespace attnlens::analysis

// Value-weighted attention (value_weighted.hpp) of the run a model keeps
// (model::ForwardCache): the chosen heads of one layer, each from its
// weights recomputed from the kept queries and keys and the norms of its
// kept values through W_O. What model.run's attention { valueWeighted: true }
// and headWeights(layer, head, { valueWeighted: true }) return: no second
// forward pass, and no more than one head's n x n at a time besides the output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "model/forward.hpp"

namespace attnlens::analysis {

// out: the chosen heads of layer `layer` ([chosen head][query][key], heads
// ascending), each n x n, or B x B pooled by `pool` (B = ceil(n / pool),
// pooled.hpp: the largest value-weighted weight of each block).
// heads_chosen: c.heads flags (nonzero = chosen), or null for every head.
// "" or the problem (nothing kept, no such layer, a pool outside 1..n, memory).
std::string kept_value_weighted(const model::ModelConfig& config, const model::ModelWeights& weights,
                                const model::ForwardCache& cache, std::size_t layer,
                                const std::uint8_t* heads_chosen, std::size_t pool, float* out);

}  // namespace attnlens::analysis

// The logit lens (nostalgebraist, 2020): what the model would predict if it
// stopped after layer l, i.e. the residual stream after that layer through
// the model's own final norm and LM head (model::head_logits). After the
// last layer it is the model's own prediction.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens::analysis {

// The k most probable tokens of softmax(logits) over `count` logits, most
// probable first (equal logits: the smaller id first), and their
// probabilities (over all `count` tokens, not the k). 1 <= k <= count.
// One pass over the row: the logits are overwritten (with their exp).
void top_k_softmax(float* logits, std::size_t count, std::size_t k, std::int32_t* ids, float* probs);

}  // namespace attnlens::analysis

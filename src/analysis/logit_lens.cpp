#include "analysis/logit_lens.hpp"

#include <cmath>

namespace attnlens::analysis {

// Plain loops compiled for size (the module's download budget): an
// insertion into the sorted k best, rarely past the first comparison once
// they are found, and float exp (the forward's own) rather than double's.
void top_k_softmax(const float* logits, std::size_t count, std::size_t k, std::int32_t* ids, float* probs) {
    std::size_t held = 0;
    for (std::size_t v = 0; v < count; ++v) {
        // Ids come in increasing order: strictly greater keeps the smaller id first among equals.
        std::size_t at = held;
        while (at > 0 && logits[v] > logits[ids[at - 1]]) --at;
        if (at == k) continue;
        for (std::size_t i = held < k ? held++ : k - 1; i > at; --i) ids[i] = ids[i - 1];
        ids[at] = static_cast<std::int32_t>(v);
    }
    // Softmax's denominator from the largest logit (ids[0]): no overflow; summed in double.
    const float largest = logits[ids[0]];
    double total = 0;
    for (std::size_t v = 0; v < count; ++v) total += std::exp(logits[v] - largest);
    for (std::size_t i = 0; i < k; ++i) probs[i] = static_cast<float>(std::exp(logits[ids[i]] - largest) / total);
}

}  // namespace attnlens::analysis

#include "analysis/logit_lens.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.hpp"

namespace attnlens::analysis {

// One pass over the row in blocks that stay in L1: each block's top-k scan
// on its logits, then the softmax's exp pass over it (the SIMD
// softmax_block_online, a running max and sum), which overwrites them. The
// k best logits are therefore kept in `probs` until the end; only they need
// an exp of their own. The scan is an insertion into the sorted k best,
// rarely past the first comparison once they are found.
void top_k_softmax(float* logits, std::size_t count, std::size_t k, std::int32_t* ids, float* probs) {
    constexpr std::size_t kBlock = 1024;  // 4 KB
    std::size_t held = 0;
    float largest = -INFINITY, total = 0;
    for (std::size_t first = 0; first < count; first += kBlock) {
        const std::size_t end = std::min(count, first + kBlock);
        for (std::size_t v = first; v < end; ++v) {
            // Ids come in increasing order: strictly greater keeps the smaller id first among equals.
            const float logit = logits[v];
            std::size_t at = held;
            while (at > 0 && logit > probs[at - 1]) --at;
            if (at == k) continue;
            for (std::size_t i = held < k ? held++ : k - 1; i > at; --i) ids[i] = ids[i - 1], probs[i] = probs[i - 1];
            ids[at] = static_cast<std::int32_t>(v), probs[at] = logit;
        }
        kernels::softmax_block_online(logits + first, end - first, 1.0f, largest, total);
    }
    for (std::size_t i = 0; i < k; ++i) probs[i] = std::exp(probs[i] - largest) / total;
}

}  // namespace attnlens::analysis

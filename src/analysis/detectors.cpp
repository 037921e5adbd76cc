#include "analysis/detectors.hpp"

namespace attnlens::analysis {

namespace {

// Matched / total, or 0 for a head with no weight at all.
float share(double matched, double total) { return total > 0 ? static_cast<float>(matched / total) : 0.0f; }

}  // namespace

// One pass over each head's weights, every pattern tested per cell: n^2
// work per head, little beside the forward pass, in few bytes of
// WebAssembly (the module's download budget).
void head_scores(const float* attention, const AttentionShape& shape, const std::int32_t* ids, std::size_t period,
                 float* scores) {
    const std::size_t n = shape.tokens, heads = shape.head_count();
    for (std::size_t head = 0; head < heads; ++head) {
        // Sums in double: n^2 terms, and the tests compare with float64.
        double total = 0, matched[kDetectorCount] = {};
        for (std::size_t i = period; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const double a = attention[(head * n + i) * n + j];
                // A weight of 0 (every key after the query, in a causal
                // model) adds +0 to sums of non-negative terms: no bit changes.
                if (a == 0) continue;
                total += a;
                if (j + 1 == i) matched[kPreviousToken] += a;
                if (j == 0 && i > 0) matched[kFirstToken] += a;
                if (j == i) matched[kCurrentToken] += a;
                if (j < i && ids[j] == ids[i]) matched[kDuplicateToken] += a;
                // induction: the key after an earlier copy of the query's token
                if (period ? j + period == i + 1 : j > 0 && j <= i && ids[j - 1] == ids[i]) matched[kInduction] += a;
            }
        if (period) scores[head] = share(matched[kInduction], total);
        for (std::size_t d = 0; !period && d < kDetectorCount; ++d) scores[d * heads + head] = share(matched[d], total);
    }
}

}  // namespace attnlens::analysis

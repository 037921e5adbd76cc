#include "analysis/detectors.hpp"

namespace attnlens::analysis {

namespace {

// Matched / total, or 0 for a head with no weight at all.
float share(double matched, double total) { return total > 0 ? static_cast<float>(matched / total) : 0.0f; }

}  // namespace

void detector_scores(const float* attention, const AttentionShape& shape, const std::int32_t* ids, float* scores) {
    const std::size_t n = shape.tokens, per_detector = shape.head_count();
    for (std::size_t head = 0; head < per_detector; ++head) {
        const float* weights = attention + head * n * n;
        // Sums in double: n^2 terms, and the tests compare with float64.
        double total = 0, matched[kDetectorCount] = {};
        for (std::size_t i = 0; i < n; ++i) {
            const float* row = weights + i * n;
            for (std::size_t j = 0; j < n; ++j) total += row[j];
            matched[kCurrentToken] += row[i];
            if (i == 0) continue;
            matched[kPreviousToken] += row[i - 1];
            matched[kFirstToken] += row[0];
            for (std::size_t j = 0; j < i; ++j) {
                if (ids[j] != ids[i]) continue;
                matched[kDuplicateToken] += row[j];
                matched[kInduction] += row[j + 1];
            }
        }
        for (std::size_t detector = 0; detector < kDetectorCount; ++detector)
            scores[detector * per_detector + head] = share(matched[detector], total);
    }
}

void repeat_induction_scores(const float* attention, const AttentionShape& shape, std::size_t period, float* scores) {
    const std::size_t n = shape.tokens;
    for (std::size_t head = 0; head < shape.head_count(); ++head) {
        const float* weights = attention + head * n * n;
        double total = 0, matched = 0;
        for (std::size_t i = period; period > 0 && i < n; ++i) {
            const float* row = weights + i * n;
            for (std::size_t j = 0; j < n; ++j) total += row[j];
            matched += row[i - period + 1];
        }
        scores[head] = share(matched, total);
    }
}

}  // namespace attnlens::analysis

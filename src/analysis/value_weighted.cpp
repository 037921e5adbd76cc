#include "analysis/value_weighted.hpp"

#include <cmath>

namespace attnlens::analysis {

void head_value_norms(const float* values, std::size_t stride, std::size_t n, const MultiHeadShape& s,
                      const float* wo, std::size_t h, const ProductRun& run, float* product, float* norms) {
    const std::size_t hd = s.head_width, d = s.model_width, group = s.heads / s.kv_heads;
    // v_j W_O^h for every key j at once: the core's product, W_O^h as hd row-major rows of W_O.
    PackedMatrix head_rows;
    head_rows.row_major = wo + h * hd * d, head_rows.inner = hd, head_rows.cols = d;
    project(head_rows, nullptr, values + (h / group) * hd, stride, n, product, d, run);
    for (std::size_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::size_t c = 0; c < d; ++c) sum += double(product[j * d + c]) * product[j * d + c];
        norms[j] = static_cast<float>(std::sqrt(sum));
    }
}

void value_norms(const float* values, std::size_t stride, std::size_t n, const MultiHeadShape& s, const float* wo,
                 const ProductRun& run, float* product, float* norms) {
    for (std::size_t h = 0; h < s.heads; ++h) head_value_norms(values, stride, n, s, wo, h, run, product, norms + h * n);
}

void value_weighted(const float* attention, const float* norms, std::size_t heads, std::size_t queries,
                    std::size_t keys, float* out) {
    for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < queries; ++i) {
            const float* a = attention + (h * queries + i) * keys;
            float* row = out + (h * queries + i) * keys;
            double total = 0;
            for (std::size_t j = 0; j < keys; ++j) total += row[j] = a[j] * norms[h * keys + j];
            for (std::size_t j = 0; j < keys; ++j) row[j] = total > 0 ? static_cast<float>(row[j] / total) : 0.0f;
        }
}

}  // namespace attnlens::analysis

// Double-precision reference implementations for the native tests, written
// as directly from the formulas as possible and sharing no code with src/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace reference {

using Matrix = std::vector<double>;  // row-major

inline Matrix matmul(const Matrix& a, const Matrix& b, std::size_t rows, std::size_t inner, std::size_t cols) {
    Matrix c(rows * cols, 0.0);
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
            for (std::size_t p = 0; p < inner; ++p) c[i * cols + j] += a[i * inner + p] * b[p * cols + j];
    return c;
}

struct Attention {
    Matrix weights;  // m x n
    Matrix output;   // m x dv
};

struct Options {
    double scale = std::numeric_limits<double>::quiet_NaN();  // NaN = 1/sqrt(dk)
    double temperature = 1.0;
    bool causal = false;
    std::vector<std::uint8_t> key_mask;  // empty = keep all
};

inline Attention attention(const Matrix& q, const Matrix& k, const Matrix& v, std::size_t m, std::size_t n,
                           std::size_t dk, std::size_t dv, const Options& options = {}) {
    const double scale = std::isnan(options.scale) ? 1.0 / std::sqrt(double(dk)) : options.scale;
    Attention result{Matrix(m * n, 0.0), Matrix(m * dv, 0.0)};
    for (std::size_t i = 0; i < m; ++i) {
        std::vector<double> logits(n);
        std::vector<bool> visible(n);
        double max_logit = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < n; ++j) {
            // Query i is aligned to key position i + (n - m) under the causal mask.
            visible[j] = (options.key_mask.empty() || options.key_mask[j]) &&
                         (!options.causal || double(j) <= double(i) + double(n) - double(m));
            double dot = 0.0;
            for (std::size_t p = 0; p < dk; ++p) dot += q[i * dk + p] * k[j * dk + p];
            logits[j] = dot * scale / options.temperature;
            if (visible[j]) max_logit = std::max(max_logit, logits[j]);
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < n; ++j)
            if (visible[j]) sum += std::exp(logits[j] - max_logit);
        for (std::size_t j = 0; j < n; ++j) {
            const double w = visible[j] ? std::exp(logits[j] - max_logit) / sum : 0.0;
            result.weights[i * n + j] = w;
            for (std::size_t c = 0; c < dv; ++c) result.output[i * dv + c] += w * v[j * dv + c];
        }
    }
    return result;
}

inline Matrix random_matrix(std::mt19937& rng, std::size_t size, double low = -1.0, double high = 1.0) {
    std::uniform_real_distribution<double> dist(low, high);
    Matrix values(size);
    for (double& x : values) x = static_cast<float>(dist(rng));  // representable in float
    return values;
}

inline std::vector<float> to_float(const Matrix& values) { return std::vector<float>(values.begin(), values.end()); }

}  // namespace reference

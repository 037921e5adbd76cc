// Plain scalar reference kernels.
//
// Every SIMD kernel in simd_kernels.hpp has its twin here, written as the
// textbook loop. Tests compare the two; the non-SIMD WebAssembly build runs
// these directly. Layout everywhere: row-major, contiguous rows.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace attnlens::scalar {

inline float dot(const float* a, const float* b, std::size_t length) {
    float sum = 0.0f;
    for (std::size_t i = 0; i < length; ++i) sum += a[i] * b[i];
    return sum;
}

// C (rows x cols) = A (rows x inner) * B (inner x cols).
inline void matmul(const float* a, const float* b, float* c,
                   std::size_t rows, std::size_t inner, std::size_t cols) {
    for (std::size_t i = 0; i < rows; ++i) {
        float* c_row = c + i * cols;
        for (std::size_t j = 0; j < cols; ++j) c_row[j] = 0.0f;
        for (std::size_t p = 0; p < inner; ++p) {
            const float a_ip = a[i * inner + p];
            const float* b_row = b + p * cols;
            for (std::size_t j = 0; j < cols; ++j) c_row[j] += a_ip * b_row[j];
        }
    }
}

// y[i] = exp(x[i]) for i < length; exp(-inf) = 0.
inline void exp_inplace(float* x, std::size_t length) {
    for (std::size_t i = 0; i < length; ++i) x[i] = std::exp(x[i]);
}

// In place: row[j] = exp(multiplier * (row[j] - max)) / sum, with multiplier > 0.
// Masked entries hold -inf and become exactly 0. A row with no finite entry
// (every key masked) becomes all zeros rather than 0/0 = NaN. A row whose
// maximum overflowed to +inf splits its weight evenly over the +inf entries,
// the limit of the softmax as those scores grow.
inline void softmax_row(float* row, std::size_t length, float multiplier) {
    float max_value = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < length; ++j) max_value = row[j] > max_value ? row[j] : max_value;
    if (max_value == -std::numeric_limits<float>::infinity()) {
        for (std::size_t j = 0; j < length; ++j) row[j] = 0.0f;
        return;
    }
    if (max_value == std::numeric_limits<float>::infinity()) {
        std::size_t infinite = 0;
        for (std::size_t j = 0; j < length; ++j) infinite += row[j] == max_value;
        for (std::size_t j = 0; j < length; ++j) row[j] = row[j] == max_value ? 1.0f / float(infinite) : 0.0f;
        return;
    }
    float sum = 0.0f;
    for (std::size_t j = 0; j < length; ++j) {
        row[j] = std::exp(multiplier * (row[j] - max_value));
        sum += row[j];
    }
    const float inverse = 1.0f / sum;
    for (std::size_t j = 0; j < length; ++j) row[j] *= inverse;
}

// Adds bias (cols) to every row of c (rows x cols).
inline void add_row_bias(float* c, const float* bias, std::size_t rows, std::size_t cols) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) c[i * cols + j] += bias[j];
}

}  // namespace attnlens::scalar

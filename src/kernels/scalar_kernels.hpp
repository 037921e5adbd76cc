// Plain scalar reference kernels.
//
// Every SIMD kernel in simd_kernels.hpp has its twin here, written as the
// textbook loop. Tests compare the two; the non-SIMD WebAssembly build runs
// these directly. Layout everywhere: row-major, contiguous rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace attnlens::scalar {

// C (rows x cols) = A (rows x inner) * B (inner x cols): the plain product
// that both twins of the packed-panel product below are tested against.
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

// Largest of `start` and row[0..length): the first pass of both softmaxes.
inline float row_max(const float* row, std::size_t length, float start) {
    float max_value = start;
    for (std::size_t j = 0; j < length; ++j) max_value = row[j] > max_value ? row[j] : max_value;
    return max_value;
}

// In place row[j] = exp(multiplier * (row[j] - max_value)), returning their sum.
inline float exp_shifted_sum(float* row, std::size_t length, float multiplier, float max_value) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < length; ++j) {
        row[j] = std::exp(multiplier * (row[j] - max_value));
        sum += row[j];
    }
    return sum;
}

// In place: row[j] = exp(multiplier * (row[j] - max)) / sum, with multiplier > 0.
// Masked entries hold -inf and become exactly 0. A row with no finite entry
// (every key masked) becomes all zeros rather than 0/0 = NaN. A row whose
// maximum overflowed to +inf splits its weight evenly over the +inf entries,
// the limit of the softmax as those scores grow.
inline void softmax_row(float* row, std::size_t length, float multiplier) {
    const float max_value = row_max(row, length, -std::numeric_limits<float>::infinity());
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
    const float inverse = 1.0f / exp_shifted_sum(row, length, multiplier, max_value);
    for (std::size_t j = 0; j < length; ++j) row[j] *= inverse;
}

// One block of keys of an online (flash-style) softmax. `row` holds the
// block's scores (-inf = hidden); running_max / running_sum carry the row's
// maximum and sum of exp(multiplier * (x - max)) over the blocks before.
// On return row[j] = exp(multiplier * (row[j] - new_max)), the running values
// include this block, and the result is the factor exp(multiplier *
// (old_max - new_max)) by which everything accumulated before must be scaled.
// Requires finite or -inf scores (a +inf score returns NaN: callers check).
inline float softmax_block_online(float* row, std::size_t length, float multiplier, float& running_max,
                                  float& running_sum) {
    const float new_max = row_max(row, length, running_max);
    if (new_max == -std::numeric_limits<float>::infinity()) {
        for (std::size_t j = 0; j < length; ++j) row[j] = 0.0f;
        return 1.0f;
    }
    if (new_max == std::numeric_limits<float>::infinity()) return std::numeric_limits<float>::quiet_NaN();
    const float factor = running_max == -std::numeric_limits<float>::infinity()
                             ? 0.0f
                             : std::exp(multiplier * (running_max - new_max));
    running_sum = running_sum * factor + exp_shifted_sum(row, length, multiplier, new_max);
    running_max = new_max;
    return factor;
}

// |x|'s bit pattern as an int32: for every float, including Infinity and
// NaN, a larger |x| gives a larger value (NaN the largest).
inline std::int32_t magnitude_bits(float x) {
    std::int32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits & 0x7fffffff;
}
inline float float_from_bits(std::int32_t bits) {
    float x;
    std::memcpy(&x, &bits, sizeof x);
    return x;
}

// Packed-panel products: the twins of simd::pack_panels,
// simd::pack_transposed_panels and simd::matmul_packed. B (inner x cols) is
// stored as panels of kPanelWidth columns, each `inner` rows of kPanelWidth
// floats, zero padded. Pack and multiply with the same namespace's functions.
constexpr std::size_t kPanelWidth = 8;

inline std::size_t panel_count(std::size_t cols) { return (cols + kPanelWidth - 1) / kPanelWidth; }
inline std::size_t packed_size(std::size_t inner, std::size_t cols) { return panel_count(cols) * kPanelWidth * inner; }

// B is inner x cols with row stride ldb. Returns max |b| over B's elements
// (max_magnitude's contract: Infinity or NaN when one is not finite).
inline float pack_panels(const float* b, std::size_t ldb, std::size_t inner, std::size_t cols, float* packed) {
    std::int32_t largest = 0;
    for (std::size_t j = 0; j < panel_count(cols) * kPanelWidth; ++j)
        for (std::size_t p = 0; p < inner; ++p) {
            const float value = j < cols ? b[p * ldb + j] : 0.0f;
            packed[(j / kPanelWidth) * inner * kPanelWidth + p * kPanelWidth + j % kPanelWidth] = value;
            largest = std::max(largest, magnitude_bits(value));
        }
    return float_from_bits(largest);
}

// Packs K^T, where K is rows x inner with row stride ldk.
inline void pack_transposed_panels(const float* k, std::size_t ldk, std::size_t rows, std::size_t inner,
                                   float* packed) {
    for (std::size_t j = 0; j < panel_count(rows) * kPanelWidth; ++j)
        for (std::size_t p = 0; p < inner; ++p)
            packed[(j / kPanelWidth) * inner * kPanelWidth + p * kPanelWidth + j % kPanelWidth] =
                j < rows ? k[j * ldk + p] : 0.0f;
}

// C (rows x cols, ldc) = A (rows x inner, lda) times the first `inner` rows
// of the packed B (packed_inner x cols), plus bias (cols floats) when given.
inline void matmul_packed(const float* a, std::size_t lda, const float* packed, std::size_t packed_inner, float* c,
                          std::size_t ldc, std::size_t rows, std::size_t inner, std::size_t cols,
                          const float* bias = nullptr) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
            const float* panel = packed + (j / kPanelWidth) * packed_inner * kPanelWidth + j % kPanelWidth;
            float sum = 0.0f;
            for (std::size_t p = 0; p < inner; ++p) sum += a[i * lda + p] * panel[p * kPanelWidth];
            c[i * ldc + j] = bias ? sum + bias[j] : sum;
        }
}

// max |values[i]| (0 for length 0). The result is Infinity or NaN when some
// value is not finite, so one scan checks finiteness and finds the largest
// magnitude (which input validation needs to bound the arithmetic).
inline float max_magnitude(const float* values, std::size_t length) {
    std::int32_t best = 0;
    for (std::size_t i = 0; i < length; ++i) best = std::max(best, magnitude_bits(values[i]));
    return float_from_bits(best);
}

// GELU, tanh approximation (GPT-2's "gelu_new"), in place over `count` values:
//   x -> 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
inline void gelu_tanh(float* values, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        const float x = values[i];
        values[i] = 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    }
}

// SwiGLU's gating (Llama's MLP), in place: gate[i] = silu(gate[i]) * up[i],
// silu(x) = x / (1 + e^-x). For x -> -inf, e^-x overflows to inf and the
// quotient is -0, its limit.
inline void silu_gate(float* gate, const float* up, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// Adds bias (cols) to every row of c (rows x cols).
inline void add_row_bias(float* c, const float* bias, std::size_t rows, std::size_t cols) {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) c[i * cols + j] += bias[j];
}

}  // namespace attnlens::scalar

// SIMD kernels written once against xsimd::batch<float, Arch>.
//
// Natively Arch is the best instruction set of the build machine (AVX2+FMA on
// x86-64 with -march=native); in WebAssembly it is SSE4.1, which emscripten
// lowers onto wasm simd128 (xsimd 8.1 has no wasm arch of its own). Each
// function here has a scalar twin in scalar_kernels.hpp that tests compare it
// against. Tails shorter than one batch are handled by explicit scalar loops.
#pragma once

#include <xsimd/xsimd.hpp>

#include <cstddef>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "scalar_kernels.hpp"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif
// Clang 14 (emscripten 3.1.6's) accepts -mrelaxed-simd but emits the
// pre-standard opcodes, which no shipping engine validates: the relaxed
// build needs clang 16+ (web/scripts/toolchain.mjs uses Debian's clang-19).
#if defined(__wasm_relaxed_simd__) && defined(__clang_major__) && __clang_major__ < 16
#error "the relaxed-SIMD build needs clang 16 or newer: older ones emit pre-standard relaxed-SIMD opcodes"
#endif

namespace attnlens::simd {

using Arch = xsimd::default_arch;
using FloatBatch = xsimd::batch<float, Arch>;
using IntBatch = xsimd::batch<std::int32_t, Arch>;
constexpr std::size_t kWidth = FloatBatch::size;

// max(a, b) for non-NaN inputs. Emscripten lowers SSE's max (hence
// xsimd::max) to a compare and a bitselect, which V8 turns into four x86
// instructions; wasm's pseudo-maximum is one. (NaN: returns a, or b if a < b.)
inline FloatBatch fast_max(FloatBatch a, FloatBatch b) {
#if defined(__wasm_simd128__)
    return FloatBatch((FloatBatch::register_type)wasm_f32x4_pmax((v128_t)a.data, (v128_t)b.data));
#else
    return xsimd::max(a, b);
#endif
}

// a * b + c, the step of every matrix product. In the "relaxed" WebAssembly
// build (-mrelaxed-simd, clang 16 or newer) it is f32x4.relaxed_madd, which
// engines compile to one fused multiply-add (one rounding) on CPUs with FMA
// and to mul + add elsewhere: either stays within the products' tolerance,
// and a mul + add pair needs a temporary register the fused form does not.
// Otherwise xsimd::fma: fused natively with FMA, mul + add under SSE4.1
// emulation (plain simd128 has no multiply-add).
inline FloatBatch multiply_add(FloatBatch a, FloatBatch b, FloatBatch c) {
#if defined(__wasm_relaxed_simd__)
    return FloatBatch(
        (FloatBatch::register_type)wasm_f32x4_relaxed_madd((v128_t)a.data, (v128_t)b.data, (v128_t)c.data));
#else
    return xsimd::fma(a, b, c);
#endif
}

inline float horizontal_max(FloatBatch values) {
    alignas(64) float lanes[kWidth];
    values.store_aligned(lanes);
    float best = lanes[0];
    for (std::size_t i = 1; i < kWidth; ++i) best = lanes[i] > best ? lanes[i] : best;
    return best;
}

// ---- Packed-panel matrix products (attention and projections) ---------------
//
// The right-hand operand is repacked into panels of kPanelWidth columns, each
// stored as `inner` contiguous rows of kPanelWidth floats (zero padded past
// the last column), so the micro-kernel streams it with aligned-size loads
// and no stride. A panel is small (inner x kPanelWidth floats), stays in L1
// while every row block of the left operand passes over it.
//
// Register tile (kTileRows x kTileBatches accumulators). WebAssembly through
// V8 has 16 vector registers, one of them its scratch, and, in plain
// simd128, no fused multiply-add (mul then add needs a temporary). 2 rows x 4 vectors: 8
// accumulators + 4 panel loads + 1 broadcast + 1 temporary = 14 registers.
// Measured in Node 20 against 3x3, 3x4, 4x2, 5x2, 2x3 and 1x8 on one n=1024,
// d=64 head (Q K^T and weights x V), 2x4 was fastest by 10-20%: the panel of
// 16 columns also splits d_v = 64 into 4 full panels, where 12 columns leave
// a 4-column remainder that runs at a third of the speed. The relaxed build's
// fused multiply-add frees the temporary, but 3 x 4 (12 accumulators) still
// spills: measured in Chromium 156 on a 4-layer GPT-2-small-width forward,
// 3 x 4 took 1.7x the time of 2 x 4. Native AVX2 / AVX-512 with FMA fits 4 x 3.
#if defined(ATTNLENS_TILE_ROWS) && defined(ATTNLENS_TILE_BATCHES)  // for tuning experiments
constexpr std::size_t kTileRows = ATTNLENS_TILE_ROWS, kTileBatches = ATTNLENS_TILE_BATCHES;
#elif defined(__wasm__) || defined(__EMSCRIPTEN__)
constexpr std::size_t kTileRows = 2, kTileBatches = 4;
#else
constexpr std::size_t kTileRows = 4, kTileBatches = 3;
#endif
constexpr std::size_t kPanelWidth = kTileBatches * kWidth;

inline std::size_t panel_count(std::size_t cols) { return (cols + kPanelWidth - 1) / kPanelWidth; }
// Floats a packed copy of an inner x cols operand needs.
inline std::size_t packed_size(std::size_t inner, std::size_t cols) { return panel_count(cols) * kPanelWidth * inner; }

// Packs B (inner x cols, row stride ldb) into panels, and returns max |b|
// over B's elements as max_magnitude does (Infinity or NaN when one is not
// finite): a caller's matrix is scanned for NaN and Infinity on the packing's
// own loads (multi_head_attention). Callers that ignore the result pay
// nothing: inlined, the maximum is dead code.
inline float pack_panels(const float* b, std::size_t ldb, std::size_t inner, std::size_t cols, float* packed) {
    const IntBatch magnitude_mask(0x7fffffff);
    IntBatch largest(0);
    std::int32_t largest_tail = 0;
    for (std::size_t first = 0; first < cols; first += kPanelWidth) {
        const std::size_t width = std::min(kPanelWidth, cols - first);
        if (width == kPanelWidth) {
            // Full panels by whole vectors: the element loop below is not
            // vectorized, and packing a 768 x 768 projection with it took
            // 8% of the product's time in wasm.
            for (std::size_t p = 0; p < inner; ++p)
                for (std::size_t s = 0; s < kTileBatches; ++s) {
                    const FloatBatch values = FloatBatch::load_unaligned(b + p * ldb + first + s * kWidth);
                    values.store_unaligned(packed + p * kPanelWidth + s * kWidth);
                    largest = xsimd::max(largest, xsimd::bitwise_cast<IntBatch>(values) & magnitude_mask);
                }
            packed += inner * kPanelWidth;
            continue;
        }
        for (std::size_t p = 0; p < inner; ++p) {
            float* row = packed + p * kPanelWidth;
            for (std::size_t t = 0; t < width; ++t) {
                row[t] = b[p * ldb + first + t];
                largest_tail = std::max(largest_tail, scalar::magnitude_bits(row[t]));
            }
            for (std::size_t t = width; t < kPanelWidth; ++t) row[t] = 0.0f;
        }
        packed += inner * kPanelWidth;
    }
    alignas(64) std::int32_t lanes[kWidth];
    largest.store_aligned(lanes);
    for (std::size_t t = 0; t < kWidth; ++t) largest_tail = std::max(largest_tail, lanes[t]);
    return scalar::float_from_bits(largest_tail);
}

// Packs the transpose of K (rows x inner, row stride ldk): the panels of
// K^T (inner x rows), i.e. the operand of Q K^T, without forming K^T.
inline void pack_transposed_panels(const float* k, std::size_t ldk, std::size_t rows, std::size_t inner,
                                   float* packed) {
    for (std::size_t first = 0; first < rows; first += kPanelWidth) {
        const std::size_t width = std::min(kPanelWidth, rows - first);
        for (std::size_t t = 0; t < kPanelWidth; ++t) {
            const float* k_row = k + (first + t) * ldk;
            for (std::size_t p = 0; p < inner; ++p) packed[p * kPanelWidth + t] = t < width ? k_row[p] : 0.0f;
        }
        packed += inner * kPanelWidth;
    }
}

// C tile (Rows x width, width <= kPanelWidth) = A rows (lda) times one
// panel, or C tile += that product when `accumulate` (a later block of the
// inner dimension: the sums continue from C in the same order, so blocking
// changes no result bit). Batches = the vectors the width needs, so a narrow
// last panel (e.g. d_v = 40 is 2 panels of 16 + 8 in WebAssembly) costs no
// padded work. `bias` (null, or the tile's `width` columns of it) is added
// to the sums before they are stored: the same float addition as adding it
// to C afterwards, without a second pass over C.
template <std::size_t Rows, std::size_t Batches>
inline void panel_tile(const float* a, std::size_t lda, const float* panel, std::size_t inner, float* c,
                       std::size_t ldc, std::size_t width, bool accumulate, const float* bias = nullptr) {
    FloatBatch acc[Rows][Batches];
    if (!accumulate) {
        for (std::size_t r = 0; r < Rows; ++r)
            for (std::size_t s = 0; s < Batches; ++s) acc[r][s] = FloatBatch(0.0f);
    } else if (width == Batches * kWidth) {
        for (std::size_t r = 0; r < Rows; ++r)
            for (std::size_t s = 0; s < Batches; ++s) acc[r][s] = FloatBatch::load_unaligned(c + r * ldc + s * kWidth);
    } else {
        alignas(64) float partial[Batches * kWidth] = {};
        for (std::size_t r = 0; r < Rows; ++r) {
            for (std::size_t t = 0; t < width; ++t) partial[t] = c[r * ldc + t];
            for (std::size_t s = 0; s < Batches; ++s) acc[r][s] = FloatBatch::load_aligned(partial + s * kWidth);
        }
    }
    // Pointers that step, not indices: the loads then take their constant
    // offsets (the panel's vectors at 16, 32, 48 bytes) in the instruction,
    // and a step of the 2 x 4 tile costs V8 three adds, where p * 64 and
    // r * lda + p cost two shifts and three adds more (S4's products, one
    // thread, Chromium: web/docs/performance.md, round 15).
    const float* a_row[Rows];
    for (std::size_t r = 0; r < Rows; ++r) a_row[r] = a + r * lda;
    const float* const panel_end = panel + inner * kPanelWidth;
    for (const float* row = panel; row != panel_end; row += kPanelWidth) {
        FloatBatch b_p[Batches];
        for (std::size_t s = 0; s < Batches; ++s) b_p[s] = FloatBatch::load_unaligned(row + s * kWidth);
        for (std::size_t r = 0; r < Rows; ++r) {
            const FloatBatch a_rp(*a_row[r]++);
            for (std::size_t s = 0; s < Batches; ++s) acc[r][s] = multiply_add(a_rp, b_p[s], acc[r][s]);
        }
    }
    if (bias) {
        alignas(64) float padded[Batches * kWidth] = {};  // a narrow tile's bias, zeros past `width`
        std::copy_n(bias, width, padded);
        for (std::size_t s = 0; s < Batches; ++s) {
            const FloatBatch b = FloatBatch::load_aligned(padded + s * kWidth);
            for (std::size_t r = 0; r < Rows; ++r) acc[r][s] = acc[r][s] + b;
        }
    }
    if (width == Batches * kWidth) {
        for (std::size_t r = 0; r < Rows; ++r)
            for (std::size_t s = 0; s < Batches; ++s) acc[r][s].store_unaligned(c + r * ldc + s * kWidth);
        return;
    }
    alignas(64) float partial[Batches * kWidth];
    for (std::size_t r = 0; r < Rows; ++r) {
        for (std::size_t s = 0; s < Batches; ++s) acc[r][s].store_aligned(partial + s * kWidth);
        for (std::size_t t = 0; t < width; ++t) c[r * ldc + t] = partial[t];
    }
}

template <std::size_t Rows, std::size_t Batches = kTileBatches>
inline void panel_tile_for_width(const float* a, std::size_t lda, const float* panel, std::size_t inner, float* c,
                                 std::size_t ldc, std::size_t width, bool accumulate, const float* bias = nullptr) {
    if constexpr (Batches > 1) {
        if (width <= (Batches - 1) * kWidth) {
            panel_tile_for_width<Rows, Batches - 1>(a, lda, panel, inner, c, ldc, width, accumulate, bias);
            return;
        }
    }
    panel_tile<Rows, Batches>(a, lda, panel, inner, c, ldc, width, accumulate, bias);
}

// Rows of a panel that one pass over A's row tiles uses: a block of
// kInnerBlock x kPanelWidth floats (16 KB for 16-column panels) stays in L1
// while every row tile streams past it. A whole panel of a 768-wide
// projection (48 KB) would not.
#if defined(ATTNLENS_INNER_BLOCK)  // for tuning experiments
constexpr std::size_t kInnerBlock = ATTNLENS_INNER_BLOCK;
#else
constexpr std::size_t kInnerBlock = 256;
#endif

// C (rows x cols, ldc) = A (rows x inner, lda) B (+ bias, cols floats, or
// null), with B (packed_inner x cols, packed_inner >= inner) packed by
// pack_panels or pack_transposed_panels; only B's first `inner` rows are
// used, and only C's first cols columns are written. Panels are the outer
// loop, then blocks of kInnerBlock of the inner dimension (the first block
// stores C, later ones add to it, the last adds the bias), then A's row
// tiles: the panel block stays in L1 meanwhile. With the bias: the bits of
// the product without it, then scalar::add_row_bias (the tests' reference;
// that second pass over C cost a projection 1-2%).
inline void matmul_packed(const float* a, std::size_t lda, const float* packed, std::size_t packed_inner, float* c,
                          std::size_t ldc, std::size_t rows, std::size_t inner, std::size_t cols,
                          const float* bias = nullptr) {
    for (std::size_t first = 0; first < cols; first += kPanelWidth, packed += packed_inner * kPanelWidth) {
        const std::size_t width = std::min(kPanelWidth, cols - first);
        // block 0 always runs: with inner = 0 it stores C = 0 (+ bias).
        for (std::size_t block = 0; block == 0 || block < inner; block += kInnerBlock) {
            const std::size_t depth = std::min(kInnerBlock, inner - block);
            const float* panel = packed + block * kPanelWidth;
            const bool accumulate = block > 0;
            const float* block_bias = bias && block + kInnerBlock >= inner ? bias + first : nullptr;
            std::size_t i = 0;
            for (; i + kTileRows <= rows; i += kTileRows)
                panel_tile_for_width<kTileRows>(a + i * lda + block, lda, panel, depth, c + i * ldc + first, ldc, width,
                                                accumulate, block_bias);
            for (; i < rows; ++i)
                panel_tile_for_width<1>(a + i * lda + block, lda, panel, depth, c + i * ldc + first, ldc, width,
                                        accumulate, block_bias);
        }
    }
}

// 2^y for the softmax, whose arguments are <= 0, without float->int
// conversion instructions (under SSE emulation in wasm those are scalarized).
// y = n + f with n = round(y), f in [-0.5, 0.5]: n is rounded by adding
// 1.5 * 2^23 + 127, which leaves n + 127 in the float's low mantissa bits,
// so shifting those bits up by 23 is 2^n, already in the exponent field.
// f = y - n is exact. 2^f is a degree-5 polynomial with p(0) = 1 exactly,
// fitted (Lawson's iteration) for the least maximum relative error on
// [-0.5, 0.5]: 1.1e-7 with float coefficients; evaluated by Estrin's scheme,
// whose shorter dependency chain keeps more batches in flight than Horner's
// (measured in wasm: the exp pass at 1.0-1.2 ns per element, against
// 2.0-2.3 for the earlier base-e reduction with Horner's scheme).
// Base 2 also drops the two-constant ln 2 reduction a base-e exp needs.
// A single lower clamp at -127 rounds n to -127: the exponent field is then
// 0, so 2^y is exactly 0 (also for -inf). The cost: y in (-127, -126.5)
// gives 0 instead of a denormal below 1.2e-38, which no softmax weight
// (each >= 0, their sum >= 1) can notice. Valid for y <= 0 (n <= 128).
inline FloatBatch exp2_nonpositive(FloatBatch y) {
    const FloatBatch round_magic(12583039.0f);  // 1.5 * 2^23 + 127
    y = fast_max(y, FloatBatch(-127.0f));
    const FloatBatch shifted = y + round_magic;
    const FloatBatch f = y - (shifted - round_magic);
    const FloatBatch f2 = f * f;
    // The polynomial's five multiply-adds are fused where the build has FMA
    // (relaxed_madd in the relaxed build); the rounding above must not be.
    const FloatBatch low = multiply_add(FloatBatch(6.931470037e-01f), f, FloatBatch(1.0f));
    const FloatBatch mid = multiply_add(FloatBatch(5.550733954e-02f), f, FloatBatch(2.402224243e-01f));
    const FloatBatch high = multiply_add(FloatBatch(1.326472382e-03f), f, FloatBatch(9.671518579e-03f));
    const FloatBatch p = multiply_add(multiply_add(high, f2, mid), f2, low);
    return p * xsimd::bitwise_cast<FloatBatch>(xsimd::bitwise_cast<IntBatch>(shifted) << 23);
}

// Largest of `start` and row[0..length): the first pass of both softmaxes.
inline float row_max(const float* row, std::size_t length, float start) {
    FloatBatch max_batch(start);
    std::size_t j = 0;
    for (; j + kWidth <= length; j += kWidth) max_batch = fast_max(max_batch, FloatBatch::load_unaligned(row + j));
    float max_value = horizontal_max(max_batch);
    for (; j < length; ++j) max_value = row[j] > max_value ? row[j] : max_value;
    return max_value;
}

// In place row[j] = exp(multiplier * (row[j] - max_value)), returning their
// sum: the exp pass of both softmaxes. max_value is finite and >= every
// entry, so each argument is <= 0. Computed as 2^((x - max) * multiplier *
// log2(e)): the subtraction comes first because it is exact for the largest
// weights (x near max), where x * c - max * c would lose the difference.
inline float exp_shifted_sum(float* row, std::size_t length, float multiplier, float max_value) {
    const FloatBatch max_batch(max_value), to_base_2(multiplier * 1.44269504088896341f);
    FloatBatch sum_batch(0.0f);
    std::size_t j = 0;
    for (; j + kWidth <= length; j += kWidth) {
        const FloatBatch e = exp2_nonpositive((FloatBatch::load_unaligned(row + j) - max_batch) * to_base_2);
        e.store_unaligned(row + j);
        sum_batch += e;
    }
    float sum = xsimd::hadd(sum_batch);
    if (j < length) {
        // Tail through the same vector code (padding -inf gives 0).
        alignas(64) float tail[kWidth];
        for (std::size_t t = 0; t < kWidth; ++t)
            tail[t] = j + t < length ? row[j + t] : -std::numeric_limits<float>::infinity();
        const FloatBatch e = exp2_nonpositive((FloatBatch::load_aligned(tail) - max_batch) * to_base_2);
        e.store_aligned(tail);
        for (std::size_t t = 0; j + t < length; ++t) {
            row[j + t] = tail[t];
            sum += tail[t];
        }
    }
    return sum;
}

// Same contract as scalar::softmax_row: in place, max-subtracted,
// exp(multiplier * (x - max)) normalized; -inf entries give 0; an all -inf row
// gives zeros; +inf maxima share the weight evenly.
inline void softmax_row(float* row, std::size_t length, float multiplier) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float max_value = row_max(row, length, -kInf);
    if (max_value == -kInf || max_value == kInf) {
        scalar::softmax_row(row, length, multiplier);  // rare degenerate rows
        return;
    }
    const float sum = exp_shifted_sum(row, length, multiplier, max_value);
    const FloatBatch inverse(1.0f / sum);
    std::size_t j = 0;
    for (; j + kWidth <= length; j += kWidth) (FloatBatch::load_unaligned(row + j) * inverse).store_unaligned(row + j);
    for (; j < length; ++j) row[j] *= 1.0f / sum;
}

// Same contract as scalar::softmax_block_online.
inline float softmax_block_online(float* row, std::size_t length, float multiplier, float& running_max,
                                  float& running_sum) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float new_max = row_max(row, length, running_max);
    if (new_max == -kInf || new_max == kInf)
        return scalar::softmax_block_online(row, length, multiplier, running_max, running_sum);
    const float factor = running_max == -kInf ? 0.0f : std::exp(multiplier * (running_max - new_max));
    running_sum = running_sum * factor + exp_shifted_sum(row, length, multiplier, new_max);
    running_max = new_max;
    return factor;
}

// Same contract as scalar::max_magnitude. On the bits: clearing the sign
// makes |x| a non-negative float, and non-negative floats order like their
// bit patterns read as int32, so an integer maximum finds max |x| exactly,
// and Infinity and NaN (exponent all ones) come out above every finite value.
inline float max_magnitude(const float* values, std::size_t length) {
    const IntBatch magnitude_mask(0x7fffffff);
    IntBatch max0(0), max1(0);
    std::size_t i = 0;
    for (; i + 2 * kWidth <= length; i += 2 * kWidth) {
        max0 = xsimd::max(max0, xsimd::bitwise_cast<IntBatch>(FloatBatch::load_unaligned(values + i)) & magnitude_mask);
        max1 = xsimd::max(max1, xsimd::bitwise_cast<IntBatch>(FloatBatch::load_unaligned(values + i + kWidth)) &
                                    magnitude_mask);
    }
    alignas(64) std::int32_t lanes[kWidth];
    xsimd::max(max0, max1).store_aligned(lanes);
    std::int32_t best = 0;
    for (std::size_t t = 0; t < kWidth; ++t) best = std::max(best, lanes[t]);
    for (; i < length; ++i) best = std::max(best, scalar::magnitude_bits(values[i]));
    return scalar::float_from_bits(best);
}

// e^(-|x|), in (0, 1], and x's sign bit: the two pieces of tanh and sigmoid
// that exp2_nonpositive (argument <= 0) can give without overflow.
inline FloatBatch exp_negative_magnitude(FloatBatch x) {
    const FloatBatch magnitude = xsimd::abs(x);
    return exp2_nonpositive(magnitude * FloatBatch(-1.44269504088896341f));
}

// Same contract as scalar::gelu_tanh. tanh(u) = sign(u) (1 - e) / (1 + e)
// with e = e^(-2|u|): no overflow for any u, and 1 - e is exact where e is
// near 1 (Sterbenz), so the error is the exp's (~1e-7 absolute), which GELU's
// 0.5 x factor keeps small. The scalar tanh this replaces took ~10% of a
// GPT-2 forward in wasm (one libm call per MLP element).
inline void gelu_tanh(float* values, std::size_t count) {
    const FloatBatch half(0.5f), one(1.0f), cubic(0.044715f), sqrt_2_over_pi(0.7978845608028654f), sign(-0.0f);
    auto gelu = [&](FloatBatch x) {
        const FloatBatch u = sqrt_2_over_pi * multiply_add(cubic * x * x, x, x);
        const FloatBatch e = exp_negative_magnitude(u + u);
        const FloatBatch tanh_magnitude = (one - e) / (one + e);
        const FloatBatch tanh_u = xsimd::bitwise_or(tanh_magnitude, xsimd::bitwise_and(u, sign));
        return half * x * (one + tanh_u);
    };
    std::size_t i = 0;
    for (; i + kWidth <= count; i += kWidth) gelu(FloatBatch::load_unaligned(values + i)).store_unaligned(values + i);
    if (i < count) {
        alignas(64) float tail[kWidth] = {};
        std::copy(values + i, values + count, tail);
        gelu(FloatBatch::load_aligned(tail)).store_aligned(tail);
        std::copy(tail, tail + (count - i), values + i);
    }
}

// Same contract as scalar::silu_gate. sigmoid(x) from e = e^(-|x|):
// 1 / (1 + e) for x >= 0, e / (1 + e) for x < 0, neither overflowing.
inline void silu_gate(float* gate, const float* up, std::size_t count) {
    const FloatBatch one(1.0f), zero(0.0f);
    auto gated = [&](FloatBatch x, FloatBatch u) {
        const FloatBatch e = exp_negative_magnitude(x);
        const FloatBatch sigmoid = xsimd::select(x >= zero, one, e) / (one + e);
        return x * sigmoid * u;
    };
    std::size_t i = 0;
    for (; i + kWidth <= count; i += kWidth)
        gated(FloatBatch::load_unaligned(gate + i), FloatBatch::load_unaligned(up + i)).store_unaligned(gate + i);
    if (i < count) {
        alignas(64) float gate_tail[kWidth] = {}, up_tail[kWidth] = {};
        std::copy(gate + i, gate + count, gate_tail);
        std::copy(up + i, up + count, up_tail);
        gated(FloatBatch::load_aligned(gate_tail), FloatBatch::load_aligned(up_tail)).store_aligned(gate_tail);
        std::copy(gate_tail, gate_tail + (count - i), gate + i);
    }
}

}  // namespace attnlens::simd

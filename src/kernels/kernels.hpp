// The kernels the rest of attnlens calls: the SIMD versions, or the scalar
// references when the build has no SIMD (the fallback WebAssembly module for
// engines without wasm simd128 is compiled with ATTNLENS_SCALAR_ONLY).
#pragma once

#ifdef ATTNLENS_SCALAR_ONLY
#include "scalar_kernels.hpp"
namespace attnlens::kernels {
using namespace attnlens::scalar;
constexpr bool kSimd = false;
}  // namespace attnlens::kernels
#else
#include "simd_kernels.hpp"
namespace attnlens::kernels {
using simd::gelu_tanh;
using simd::silu_gate;
using simd::matmul_packed;
using simd::max_magnitude;
using simd::pack_panels;
using simd::pack_transposed_panels;
using simd::packed_size;
using simd::kPanelWidth;
using simd::softmax_row;
using simd::softmax_block_online;
constexpr bool kSimd = true;
}  // namespace attnlens::kernels
#endif

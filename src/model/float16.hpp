// The element types weights arrive in, and their conversion to float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace attnlens::model {

enum class WeightType { f32, f16, bf16 };

// "F32", "F16", "BF16": safetensors' names.
const char* weight_type_name(WeightType type);
bool parse_weight_type(const std::string& name, WeightType& out);
inline std::size_t weight_type_bytes(WeightType type) { return type == WeightType::f32 ? 4 : 2; }

// IEEE 754 binary16 (F16): 1 sign bit, 5 exponent bits (bias 15), 10
// fraction bits. Every F16 value is exactly a float32, so this is exact:
//   exponent 1..30: normal, (-1)^s 2^(e-15) 1.f -> rebias the exponent to 127
//   exponent 0:     zero or subnormal (-1)^s 2^-14 0.f -> normalized in float32,
//                   whose range reaches far lower (shift f until its leading
//                   1 is the implicit bit, lowering the exponent per shift)
//   exponent 31:    infinity (f = 0) or NaN (f != 0, payload kept in the top
//                   fraction bits, so a quiet NaN stays quiet)
inline float float16_to_float(std::uint16_t half) {
    const std::uint32_t sign = std::uint32_t(half & 0x8000u) << 16;
    std::uint32_t exponent = (half >> 10) & 0x1fu;
    std::uint32_t fraction = half & 0x3ffu;
    std::uint32_t bits;
    if (exponent == 0x1fu) {
        bits = sign | 0x7f800000u | (fraction << 13);
    } else if (exponent != 0) {
        bits = sign | ((exponent - 15 + 127) << 23) | (fraction << 13);
    } else if (fraction == 0) {
        bits = sign;  // +-0
    } else {
        // Subnormal: value = fraction * 2^-24. Normalize: the float32 exponent
        // starts at that of 2^-14 and drops by one per shift.
        exponent = 127 - 14;
        while ((fraction & 0x400u) == 0) {
            fraction <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((fraction & 0x3ffu) << 13);
    }
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// bfloat16 (BF16) is the upper half of a float32 (same sign and 8-bit
// exponent, 7 fraction bits): widening is a shift, exact for every pattern
// (subnormals, infinities and NaNs included).
inline float bfloat16_to_float(std::uint16_t half) {
    const std::uint32_t bits = std::uint32_t(half) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// float16_to_float for finite patterns only (exponent below 31), without
// branches, so that a loop of it vectorizes, and without subnormal float
// arithmetic, which x86 CPUs can take a hundred cycles over: a normal
// pattern is rebiased in the integer bits; a subnormal one (exponent 0) is
// its 10-bit fraction times 2^-24, the fraction read as a float by the
// 2^23 trick (the bits of 2^23 + m, minus 2^23: no int-to-float
// conversion, which the vectorizer scalarizes here). All exact, then selected.
// Weights kept at 16 bits were checked finite at load.
inline float finite_float16_to_float(std::uint16_t half) {
    const std::uint32_t magnitude = half & 0x7fffu;
    const std::uint32_t normal_bits = (magnitude << 13) + ((127u - 15u) << 23);
    float normal;
    std::memcpy(&normal, &normal_bits, sizeof normal);
    const std::uint32_t shifted_bits = magnitude | 0x4b000000u;  // 2^23 + magnitude, for magnitude < 2^23
    float shifted;
    std::memcpy(&shifted, &shifted_bits, sizeof shifted);
    const float subnormal = (shifted - 0x1p23f) * 0x1p-24f;
    const float unsigned_value = magnitude < 0x400u ? subnormal : normal;
    std::uint32_t bits;
    std::memcpy(&bits, &unsigned_value, sizeof bits);
    bits |= std::uint32_t(half & 0x8000u) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// out[i] = element first + i of `source` (little-endian elements of `type`,
// any alignment) as float32, for i in [0, count).
void convert_to_float(WeightType type, const void* source, std::size_t first, std::size_t count, float* out);

// `value` rounded to the nearest `type` value (ties to even), as float32:
// what torch.tensor(value, dtype=...) holds. For values whose F16 rounding
// is a normal number (2^-14 to 65504); any finite value for F32 and BF16.
float round_to_type(WeightType type, float value);

// Index of the first element of `source` that is not finite, or `count`
// when all are (the slow path after a fast check found one).
std::size_t first_non_finite(WeightType type, const void* source, std::size_t count);

}  // namespace attnlens::model

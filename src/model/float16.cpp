#include "float16.hpp"

#include <cmath>

namespace attnlens::model {

namespace {

// Element i of a 16-bit array at any alignment (weights are copied into the
// heap by JavaScript; nothing promises an even address). Safetensors and
// WebAssembly are both little-endian, as is every native target we build.
inline std::uint16_t half_at(const void* source, std::size_t i) {
    std::uint16_t half;
    std::memcpy(&half, static_cast<const unsigned char*>(source) + 2 * i, sizeof half);
    return half;
}

inline float float_at(const void* source, std::size_t i) {
    float value;
    std::memcpy(&value, static_cast<const unsigned char*>(source) + 4 * i, sizeof value);
    return value;
}

}  // namespace

const char* weight_type_name(WeightType type) {
    switch (type) {
        case WeightType::f32: return "F32";
        case WeightType::f16: return "F16";
        case WeightType::bf16: return "BF16";
    }
    return "?";
}

bool parse_weight_type(const std::string& name, WeightType& out) {
    for (auto type : {WeightType::f32, WeightType::f16, WeightType::bf16})
        if (name == weight_type_name(type)) {
            out = type;
            return true;
        }
    return false;
}

void convert_to_float(WeightType type, const void* source, std::size_t first, std::size_t count, float* out) {
    switch (type) {
        case WeightType::f32:
            std::memcpy(out, static_cast<const unsigned char*>(source) + 4 * first, 4 * count);
            return;
        case WeightType::f16:
            for (std::size_t i = 0; i < count; ++i) out[i] = float16_to_float(half_at(source, first + i));
            return;
        case WeightType::bf16:
            for (std::size_t i = 0; i < count; ++i) out[i] = bfloat16_to_float(half_at(source, first + i));
            return;
    }
}

float round_to_type(WeightType type, float value) {
    if (type == WeightType::f32) return value;
    // Both 16-bit types keep float32's leading mantissa bits: BF16 the top 7,
    // F16 (in its normal range) the top 10. Round the rest away to even.
    const int dropped = type == WeightType::bf16 ? 16 : 13;
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits += (std::uint32_t(1) << (dropped - 1)) - 1 + ((bits >> dropped) & 1);
    bits &= ~((std::uint32_t(1) << dropped) - 1);
    float rounded;
    std::memcpy(&rounded, &bits, sizeof rounded);
    return rounded;
}

std::size_t first_non_finite(WeightType type, const void* source, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        const float value = type == WeightType::f32   ? float_at(source, i)
                            : type == WeightType::f16 ? float16_to_float(half_at(source, i))
                                                      : bfloat16_to_float(half_at(source, i));
        if (!std::isfinite(value)) return i;
    }
    return count;
}

}  // namespace attnlens::model

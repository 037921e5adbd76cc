// F16 and BF16 to float32: every F16 bit pattern against an independent
// decode of its fields, BF16 on the cases that matter.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "model/float16.hpp"

namespace {

namespace m = attnlens::model;

// binary16 by its definition: (-1)^s * 2^(e-15) * (1 + f/1024), subnormal
// (-1)^s * 2^-14 * (f/1024), e = 31 infinity or NaN.
double decode_f16(std::uint16_t bits) {
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    const int exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
    if (exponent == 31) return fraction == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
    if (exponent == 0) return sign * std::ldexp(fraction / 1024.0, -14);
    return sign * std::ldexp(1.0 + fraction / 1024.0, exponent - 15);
}

std::uint32_t bits_of(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

}  // namespace

TEST_CASE("F16: every bit pattern converts exactly (zeros, subnormals, infinities, NaNs)", "[model][float16]") {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const auto half = static_cast<std::uint16_t>(bits);
        const float actual = m::float16_to_float(half);
        const double expected = decode_f16(half);
        if (std::isnan(expected)) {
            if (!std::isnan(actual)) FAIL("pattern " << bits << " should be NaN, got " << actual);
            // The payload stays: the fraction's bits are the float's top fraction bits.
            if ((bits_of(actual) & 0x7fffff) != (bits & 0x3ffu) << 13) FAIL("pattern " << bits << " lost its payload");
        } else if (double(actual) != expected || std::signbit(actual) != std::signbit(expected)) {
            FAIL("pattern " << bits << ": got " << actual << ", expected " << expected);
        }
        if ((bits & 0x8000) != 0 && (bits_of(actual) >> 31) != 1) FAIL("pattern " << bits << " lost its sign");
    }
    REQUIRE(m::float16_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
    REQUIRE(m::float16_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
    REQUIRE(m::float16_to_float(0x0400) == std::ldexp(1.0f, -14));  // smallest normal
    REQUIRE(m::float16_to_float(0x7bff) == 65504.0f);
    REQUIRE(m::float16_to_float(0x3c00) == 1.0f);
    REQUIRE(m::float16_to_float(0xc000) == -2.0f);
}

TEST_CASE("BF16: the upper half of a float32", "[model][float16]") {
    REQUIRE(m::bfloat16_to_float(0x3f80) == 1.0f);
    REQUIRE(m::bfloat16_to_float(0xc000) == -2.0f);
    REQUIRE(m::bfloat16_to_float(0x3e20) == 0.15625f);
    REQUIRE(m::bfloat16_to_float(0x7f7f) == 3.3895313892515355e38f);  // largest finite
    REQUIRE(m::bfloat16_to_float(0x0080) == std::numeric_limits<float>::min());  // smallest normal, 2^-126
    REQUIRE(m::bfloat16_to_float(0x0001) == std::ldexp(1.0f, -133));  // smallest subnormal
    REQUIRE(m::bfloat16_to_float(0x7f80) == std::numeric_limits<float>::infinity());
    REQUIRE(m::bfloat16_to_float(0xff80) == -std::numeric_limits<float>::infinity());
    REQUIRE(std::isnan(m::bfloat16_to_float(0x7fc0)));
    REQUIRE(std::isnan(m::bfloat16_to_float(0xff81)));
    const float negative_zero = m::bfloat16_to_float(0x8000);
    REQUIRE(negative_zero == 0.0f);
    REQUIRE(std::signbit(negative_zero));
}

TEST_CASE("convert_to_float reads any alignment, and first_non_finite finds the first bad element", "[model][float16]") {
    // Elements start at an odd address.
    const std::uint16_t halves[] = {0x3c00, 0xc000, 0x7c00, 0x0001, 0x7fc0};
    std::vector<unsigned char> bytes(1 + sizeof halves);
    std::memcpy(bytes.data() + 1, halves, sizeof halves);
    float out[3];
    m::convert_to_float(m::WeightType::f16, bytes.data() + 1, 1, 3, out);
    REQUIRE(out[0] == -2.0f);
    REQUIRE(std::isinf(out[1]));
    REQUIRE(out[2] == std::ldexp(1.0f, -24));
    REQUIRE(m::first_non_finite(m::WeightType::f16, bytes.data() + 1, 5) == 2);
    REQUIRE(m::first_non_finite(m::WeightType::f16, bytes.data() + 1, 2) == 2);  // none: the count
    REQUIRE(m::first_non_finite(m::WeightType::bf16, bytes.data() + 1, 5) == 4);  // 0x7fc0 is a NaN in both; 0x7c00 is finite in BF16
    const float floats[] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
    REQUIRE(m::first_non_finite(m::WeightType::f32, floats, 2) == 1);

    m::WeightType type;
    REQUIRE(m::parse_weight_type("BF16", type));
    REQUIRE(type == m::WeightType::bf16);
    REQUIRE(!m::parse_weight_type("bf16", type));
    REQUIRE(!m::parse_weight_type("F64", type));
}

TEST_CASE("finite_float16_to_float equals float16_to_float on every finite pattern", "[model][float16]") {
    std::size_t checked = 0;
    for (std::uint32_t pattern = 0; pattern <= 0xffffu; ++pattern) {
        const auto half = static_cast<std::uint16_t>(pattern);
        if ((half & 0x7c00u) == 0x7c00u) continue;  // infinities and NaNs are never stored at 16 bits
        const float expected = m::float16_to_float(half), actual = m::finite_float16_to_float(half);
        std::uint32_t expected_bits, actual_bits;
        std::memcpy(&expected_bits, &expected, sizeof expected_bits);
        std::memcpy(&actual_bits, &actual, sizeof actual_bits);
        if (expected_bits != actual_bits) FAIL("pattern " << pattern << ": " << actual << " != " << expected);
        ++checked;
    }
    REQUIRE(checked == 65536 - 2048);
}

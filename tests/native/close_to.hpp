// Element-wise comparison with a tolerance mixing absolute and relative error,
// reporting the first index that differs; and bit-for-bit equality.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

template <class Actual, class Expected>
void require_close(const Actual& actual, const Expected& expected, double tolerance) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double a = actual[i], e = expected[i];
        if (std::isinf(e) || std::isinf(a)) {
            INFO("index " << i);
            REQUIRE(a == e);
            continue;
        }
        if (std::abs(a - e) > tolerance * std::max(1.0, std::abs(e))) {
            INFO("index " << i << ": actual " << a << ", expected " << e << ", tolerance " << tolerance);
            REQUIRE(std::abs(a - e) <= tolerance * std::max(1.0, std::abs(e)));
        }
    }
}

// Equal sizes and the very same bits (so -0 differs from +0, and -inf or NaN
// compare too): what thread counts and storage must not change. Any two
// arrays of one element type (std::vector, the core's FloatBuffer).
template <class A, class B>
bool same_bits(const A& a, const B& b) {
    using Element = std::remove_cv_t<std::remove_pointer_t<decltype(a.data())>>;
    static_assert(std::is_same_v<Element, std::remove_cv_t<std::remove_pointer_t<decltype(b.data())>>>,
                  "same_bits compares arrays of one element type");
    return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(Element)) == 0);
}

// Element-wise comparison with a tolerance mixing absolute and relative error,
// reporting the first index that differs.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
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

// attnlens_bench_native: the kernels natively, SIMD (xsimd's best arch for
// this machine: AVX-512 or AVX2+FMA with -march=native) against their scalar
// twins, on the shapes the attention of issue 5 feeds them. Prints GFLOP/s
// (or ns per element for softmax/exp) and the SIMD speedup. Compare with the
// WebAssembly numbers of `npm run bench`, which run the same source.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "attention/attention.hpp"
#include "kernels/scalar_kernels.hpp"
#include "kernels/simd_kernels.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Best seconds per call over repeated batches lasting ~budget seconds in all.
double seconds_per_call(const std::function<void()>& call, double budget = 0.4) {
    call();
    int repeats = 1;
    for (;;) {
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i) call();
        if (std::chrono::duration<double>(Clock::now() - start).count() > 0.02) break;
        repeats *= 2;
    }
    double best = 1e30;
    const auto end = Clock::now() + std::chrono::duration<double>(budget);
    do {
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i) call();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / repeats);
    } while (Clock::now() < end);
    return best;
}

std::vector<float> random_floats(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(count);
    for (float& x : values) x = dist(rng);
    return values;
}

// Keeps results observable so the optimizer cannot drop the work.
volatile float sink;

void report(const char* name, double flops, double simd_seconds, double scalar_seconds) {
    std::printf("  %-44s %9.2f %9.2f %8.1fx\n", name, flops / simd_seconds / 1e9, flops / scalar_seconds / 1e9,
                scalar_seconds / simd_seconds);
}

template <class Kernels>
void matmul_packed_call(std::size_t rows, std::size_t inner, std::size_t cols, const std::vector<float>& a,
                        const std::vector<float>& packed, std::vector<float>& c) {
    Kernels::matmul_packed(a.data(), inner, packed.data(), inner, c.data(), cols, rows, inner, cols);
}

struct Simd {
    static constexpr auto matmul_packed = attnlens::simd::matmul_packed;
    static constexpr auto pack_panels = attnlens::simd::pack_panels;
    static constexpr auto packed_size = attnlens::simd::packed_size;
};
struct Scalar {
    static constexpr auto matmul_packed = attnlens::scalar::matmul_packed;
    static constexpr auto pack_panels = attnlens::scalar::pack_panels;
    static constexpr auto packed_size = attnlens::scalar::packed_size;
};

template <class Kernels>
double time_matmul(std::size_t rows, std::size_t inner, std::size_t cols) {
    const auto a = random_floats(rows * inner, 1), b = random_floats(inner * cols, 2);
    std::vector<float> packed(Kernels::packed_size(inner, cols)), c(rows * cols);
    Kernels::pack_panels(b.data(), cols, inner, cols, packed.data());
    const double seconds = seconds_per_call([&] { matmul_packed_call<Kernels>(rows, inner, cols, a, packed, c); });
    sink = c[0];
    return seconds;
}

void bench_matmul(const char* name, std::size_t rows, std::size_t inner, std::size_t cols) {
    report(name, 2.0 * rows * inner * cols, time_matmul<Simd>(rows, inner, cols), time_matmul<Scalar>(rows, inner, cols));
}

void bench_softmax(std::size_t length) {
    const auto source = random_floats(length, 3);
    std::vector<float> row(length);
    const auto run = [&](auto softmax) {
        return seconds_per_call([&] {
            std::copy(source.begin(), source.end(), row.begin());
            softmax(row.data(), length, 0.125f);
            sink = row[0];
        });
    };
    const double simd = run(attnlens::simd::softmax_row), scalar = run(attnlens::scalar::softmax_row);
    std::printf("  %-44s %7.2f ns %7.2f ns %8.1fx   (per element, incl. copy)\n", "softmax_row, n = 1024", 1e9 * simd / length,
                1e9 * scalar / length, scalar / simd);
}

// The whole single-head attention: the SIMD core, and the same steps composed
// from the scalar twins (packed products, softmax) for comparison.
void scalar_attention(const float* q, const float* k, const float* v, std::size_t n, std::size_t d, float* output,
                      float* weights) {
    namespace s = attnlens::scalar;
    std::vector<float> packed_keys(s::packed_size(d, n)), packed_values(s::packed_size(n, d));
    s::pack_transposed_panels(k, d, n, d, packed_keys.data());
    s::pack_panels(v, d, n, d, packed_values.data());
    s::matmul_packed(q, d, packed_keys.data(), d, weights, n, n, d, n);
    for (std::size_t i = 0; i < n; ++i) s::softmax_row(weights + i * n, n, 1.0f / 8.0f);
    s::matmul_packed(weights, n, packed_values.data(), n, output, d, n, n, d);
}

void bench_attention(std::size_t n, std::size_t d) {
    const auto q = random_floats(n * d, 4), k = random_floats(n * d, 5), v = random_floats(n * d, 6);
    std::vector<float> output(n * d), weights(n * n);
    const attnlens::AttentionShape shape{n, n, d, d};
    const attnlens::AttentionOptions options;
    const double simd = seconds_per_call(
        [&] { attnlens::attention(q.data(), k.data(), v.data(), shape, options, output.data(), weights.data()); });
    const double scalar = seconds_per_call(
        [&] { scalar_attention(q.data(), k.data(), v.data(), n, d, output.data(), weights.data()); });
    sink = output[0];
    char name[64];
    std::snprintf(name, sizeof name, "attention n = m = %zu, d = %zu, weights", n, d);
    report(name, 4.0 * n * n * d, simd, scalar);
}

}  // namespace

int main() {
    std::printf("attnlens native kernels: xsimd arch %s (%zu floats per vector), one thread\n",
                attnlens::simd::Arch::name(), attnlens::simd::kWidth);
    std::printf("  %-44s %9s %9s %9s\n", "kernel (GFLOP/s)", "SIMD", "scalar", "speedup");
    bench_matmul("Q K^T tile: 24 x 64 times 64 x 1024", 24, 64, 1024);
    bench_matmul("weights V: 24 x 1024 times 1024 x 64", 24, 1024, 64);
    bench_matmul("projection: 128 x 768 times 768 x 768", 128, 768, 768);
    bench_softmax(1024);
    bench_attention(64, 64);
    bench_attention(256, 64);
    bench_attention(1024, 64);
    return 0;
}

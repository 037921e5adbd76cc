// attnlens_bench_native: the kernels on the shapes the attention of issue 5
// feeds them, each timed against its scalar twin in the same process.
//
// The same source builds for every instruction set the report compares
// (tests/bench/native-vs-wasm.mjs drives them):
//   native, -march=native      xsimd's best arch here (AVX-512)
//   native, -mavx2 -mfma       AVX2 + FMA
//   emscripten, -msimd128      xsimd's sse4.1 arch, lowered onto wasm simd128
//   emscripten, no SIMD        ATTNLENS_SCALAR_ONLY: the kernels under test are
//                              the scalar twins, as in the fallback module
// "Under test" is whatever attnlens::kernels (and attnlens::attention) picks in
// that build, so every column times the code the library really runs.
//
// Before a row is reported, the kernel's result is compared with its scalar
// twin's (max |x - twin| / max |twin|) and the run fails when they disagree.
// Inputs come from std::mt19937's raw output, whose sequence the standard
// fixes, so every build sees the same numbers; the per-row checksum lets the
// driver check that all builds computed the same results.
//
//   attnlens_bench_native [--json] [--budget SECONDS] [--quick]
//     --json     one JSON object on stdout instead of the table
//     --budget   timing budget per kernel and variant (default 0.4 s)
//     --quick    --budget 0.001: every row runs, the timings mean nothing
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "kernels/kernels.hpp"
#include "kernels/scalar_kernels.hpp"

namespace {

namespace kernels = attnlens::kernels;
namespace twin = attnlens::scalar;
using Clock = std::chrono::steady_clock;

// Largest max |x - twin| / max |twin| a kernel may show. The SIMD products
// sum in another order and the softmax uses its own exp polynomial: both stay
// within a few 1e-7 on these shapes.
constexpr double kTolerance = 1e-5;

// Best seconds per call over repeated batches lasting ~budget seconds in all.
// First the call runs untimed for min(100 ms, budget): in Node, V8 starts
// WebAssembly on baseline code and swaps in optimized code a little later.
// A batch repeats the call until it lasts at least min(20 ms, budget), so the
// clock's resolution (coarser in WebAssembly) does not dominate.
double seconds_per_call(const std::function<void()>& call, double budget) {
    const double batch_seconds = std::min(0.02, budget);
    const auto warm = Clock::now() + std::chrono::duration<double>(std::min(0.1, budget));
    do call();
    while (Clock::now() < warm);
    int repeats = 1;
    for (;;) {
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i) call();
        if (std::chrono::duration<double>(Clock::now() - start).count() >= batch_seconds) break;
        repeats *= 2;
    }
    double best = std::numeric_limits<double>::infinity();
    const auto end = Clock::now() + std::chrono::duration<double>(budget);
    do {
        const auto start = Clock::now();
        for (int i = 0; i < repeats; ++i) call();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / repeats);
    } while (Clock::now() < end);
    return best;
}

// Uniform floats in [-1, 1) from mt19937's raw 32-bit outputs: 24 bits make
// an exactly representable float, identical under every standard library
// (unlike std::uniform_real_distribution, whose algorithm is unspecified).
std::vector<float> random_floats(std::size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<float> values(count);
    for (float& x : values) x = float(rng() >> 8) * (2.0f / 16777216.0f) - 1.0f;
    return values;
}

// max |got - reference| / max |reference|; infinite when anything is NaN or
// the lengths differ, so a broken kernel can never pass the tolerance check.
double relative_difference(const std::vector<float>& got, const std::vector<float>& reference) {
    if (got.size() != reference.size()) return std::numeric_limits<double>::infinity();
    double largest_difference = 0.0, largest_reference = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double difference = std::fabs(double(got[i]) - double(reference[i]));
        if (!(difference <= largest_difference)) largest_difference = difference;  // NaN sticks
        largest_reference = std::max(largest_reference, std::fabs(double(reference[i])));
    }
    if (std::isnan(largest_difference)) return std::numeric_limits<double>::infinity();
    return largest_reference > 0.0 ? largest_difference / largest_reference : largest_difference;
}

// A fingerprint of a result that other builds can compare within a relative
// tolerance: sum of |x_i| times a position weight in [1, 2). The weights make
// it see where values are (every softmax row sums to 1 whatever its shape);
// the absolute values keep signs from cancelling, so rounding differences
// move it by no more than they move the largest element, relatively.
double checksum(const std::vector<float>& values) {
    double sum = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i)
        sum += std::fabs(double(values[i])) * (1.0 + double((i * 7919) % 1024) / 1024.0);
    return sum;
}

// One row of the report. `work` is FLOPs (a multiply-add counts 2) when the
// unit is GFLOP/s, elements when it is ns per element.
struct Row {
    std::string id, label;
    bool per_element = false;
    double work = 0.0;
    double seconds = 0.0, twin_seconds = 0.0;
    double difference = 0.0, result_checksum = 0.0, twin_checksum = 0.0;
};

struct Settings {
    bool json = false;
    double budget = 0.4;
};

// Times the kernel under test and its scalar twin. When they are the same
// code (a kernel row of a scalar-only build), the twin runs once untimed, to
// fill its buffers for the check.
void time_both(Row& row, const Settings& settings, const std::function<void()>& tested,
               const std::function<void()>& scalar_twin, bool twin_is_tested) {
    row.seconds = seconds_per_call(tested, settings.budget);
    if (twin_is_tested) {
        scalar_twin();
        row.twin_seconds = row.seconds;
    } else {
        row.twin_seconds = seconds_per_call(scalar_twin, settings.budget);
    }
}

void compare(Row& row, const std::vector<float>& result, const std::vector<float>& twin_result) {
    row.difference = std::max(row.difference, relative_difference(result, twin_result));
    row.result_checksum += checksum(result);
    row.twin_checksum += checksum(twin_result);
}

// C = A B with B packed into panels beforehand (as attention packs K^T and V
// once per head), both namespaces packing with their own panel width.
Row bench_matmul(const char* id, const char* what, std::size_t rows, std::size_t inner, std::size_t cols,
                 const Settings& settings) {
    Row row;
    row.id = id;
    const auto dims = [](std::size_t r, std::size_t c) { return std::to_string(r) + "x" + std::to_string(c); };
    row.label = std::string(what) + ": " + dims(rows, inner) + " * " + dims(inner, cols);
    row.work = 2.0 * rows * inner * cols;
    const auto a = random_floats(rows * inner, 1), b = random_floats(inner * cols, 2);
    std::vector<float> packed(kernels::packed_size(inner, cols)), twin_packed(twin::packed_size(inner, cols));
    kernels::pack_panels(b.data(), cols, inner, cols, packed.data());
    twin::pack_panels(b.data(), cols, inner, cols, twin_packed.data());
    std::vector<float> c(rows * cols), twin_c(rows * cols);
    time_both(
        row, settings,
        [&] { kernels::matmul_packed(a.data(), inner, packed.data(), inner, c.data(), cols, rows, inner, cols); },
        [&] {
            twin::matmul_packed(a.data(), inner, twin_packed.data(), inner, twin_c.data(), cols, rows, inner, cols);
        },
        !kernels::kSimd);
    compare(row, c, twin_c);
    return row;
}

// One softmax row in place; each call first restores the scores, so the copy
// is part of the time (as it was in every earlier report).
Row bench_softmax(std::size_t length, const Settings& settings) {
    Row row;
    row.id = "softmax_row";
    row.label = "softmax_row, n = " + std::to_string(length) + " (per element, incl. copy)";
    row.per_element = true;
    row.work = double(length);
    // Scores of a realistic spread: q.k / sqrt(d) for d = 64 spans a few units.
    auto scores = random_floats(length, 3);
    for (float& x : scores) x *= 8.0f;
    std::vector<float> result(length), twin_result(length);
    time_both(
        row, settings,
        [&] {
            std::copy(scores.begin(), scores.end(), result.begin());
            kernels::softmax_row(result.data(), length, 0.125f);
        },
        [&] {
            std::copy(scores.begin(), scores.end(), twin_result.begin());
            twin::softmax_row(twin_result.data(), length, 0.125f);
        },
        !kernels::kSimd);
    compare(row, result, twin_result);
    return row;
}

// The whole single-head attention as the library runs it, against the same
// steps composed from the scalar twins (packed products, row softmax).
void twin_attention(const float* q, const float* k, const float* v, std::size_t n, std::size_t d, float* output,
                    float* weights) {
    std::vector<float> packed_keys(twin::packed_size(d, n)), packed_values(twin::packed_size(n, d));
    twin::pack_transposed_panels(k, d, n, d, packed_keys.data());
    twin::pack_panels(v, d, n, d, packed_values.data());
    twin::matmul_packed(q, d, packed_keys.data(), d, weights, n, n, d, n);
    for (std::size_t i = 0; i < n; ++i) twin::softmax_row(weights + i * n, n, 1.0f / std::sqrt(float(d)));
    twin::matmul_packed(weights, n, packed_values.data(), n, output, d, n, n, d);
}

// with_weights = false times the output-only path (online softmax over key
// blocks, no n x n buffer); its twin still forms the weights.
Row bench_attention(std::size_t n, std::size_t d, bool with_weights, const Settings& settings) {
    Row row;
    row.id = "attention_" + std::to_string(n) + (with_weights ? "" : "_output_only");
    row.label = "attention n = m = " + std::to_string(n) + ", d = " + std::to_string(d) +
                (with_weights ? ", weights" : ", output only");
    row.work = 4.0 * n * n * d;
    // Scaled so the scores spread like a trained model's (|q.k| / 8 of a few units).
    auto q = random_floats(n * d, 4), k = random_floats(n * d, 5);
    const auto v = random_floats(n * d, 6);
    for (float& x : q) x *= 2.0f;
    for (float& x : k) x *= 2.0f;
    std::vector<float> output(n * d), weights(with_weights ? n * n : 0), twin_output(n * d), twin_weights(n * n);
    const attnlens::AttentionShape shape{n, n, d, d};
    const attnlens::AttentionOptions options;
    time_both(
        row, settings,
        [&] {
            attnlens::attention(q.data(), k.data(), v.data(), shape, options, output.data(),
                                with_weights ? weights.data() : nullptr);
        },
        [&] { twin_attention(q.data(), k.data(), v.data(), n, d, twin_output.data(), twin_weights.data()); },
        false);
    compare(row, output, twin_output);
    if (with_weights) compare(row, weights, twin_weights);
    return row;
}

std::string build_description() {
#ifdef ATTNLENS_SCALAR_ONLY
    return "scalar twins (ATTNLENS_SCALAR_ONLY)";
#else
    return std::string("xsimd ") + attnlens::simd::Arch::name() + ", " + std::to_string(attnlens::simd::kWidth) +
           " floats per vector, " + std::to_string(attnlens::simd::kTileRows) + "x" +
           std::to_string(attnlens::simd::kTileBatches) + " register tile"
#if defined(__wasm_relaxed_simd__)
           + ", relaxed-SIMD FMA"
#endif
        ;
#endif
}

const char* platform() {
#if defined(__EMSCRIPTEN__)
    return "wasm";
#else
    return "native";
#endif
}

double rate(const Row& row, double seconds) {
    return row.per_element ? 1e9 * seconds / row.work : row.work / seconds / 1e9;
}

void print_table(const std::vector<Row>& rows, const Settings& settings) {
    std::printf("attnlens kernels (%s): %s, one thread, budget %.3g s per timing\n", platform(),
                build_description().c_str(), settings.budget);
    std::printf("  %-52s %9s    %9s    %8s %9s\n", "kernel (GFLOP/s, or ns per element)",
                kernels::kSimd ? "SIMD" : "scalar", "scalar twin", "speedup", "max diff");
    for (const Row& row : rows) {
        const char* unit = row.per_element ? " ns" : "   ";
        std::printf("  %-52s %9.2f%s %9.2f%s %7.1fx %9.1e\n", row.label.c_str(), rate(row, row.seconds), unit,
                    rate(row, row.twin_seconds), unit, row.twin_seconds / row.seconds, row.difference);
    }
}

// A number for JSON, which has no Infinity or NaN (a broken kernel's
// difference or checksum): those become null.
std::string json_number(double value, const char* format) {
    if (!std::isfinite(value)) return "null";
    char text[40];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

// Labels hold only letters, digits, spaces and "^x*=,:()": no JSON escaping needed.
void print_json(const std::vector<Row>& rows, const Settings& settings) {
    std::printf("{\"platform\":\"%s\",\"build\":\"%s\",\"simd\":%s,\"budget\":%.6g,\"tolerance\":%.3g,\"rows\":[",
                platform(), build_description().c_str(), kernels::kSimd ? "true" : "false", settings.budget,
                kTolerance);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        std::printf("%s\n{\"id\":\"%s\",\"label\":\"%s\",\"unit\":\"%s\",\"work\":%.17g,\"seconds\":%.9g,"
                    "\"twin_seconds\":%.9g,\"difference\":%s,\"checksum\":%s,\"twin_checksum\":%s}",
                    i ? "," : "", row.id.c_str(), row.label.c_str(), row.per_element ? "ns/element" : "GFLOP/s",
                    row.work, row.seconds, row.twin_seconds, json_number(row.difference, "%.3g").c_str(),
                    json_number(row.result_checksum, "%.17g").c_str(), json_number(row.twin_checksum, "%.17g").c_str());
    }
    std::printf("]}\n");
}

int bench_main(int argc, char** argv) {
    Settings settings;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json")) {
            settings.json = true;
        } else if (!std::strcmp(argv[i], "--quick")) {
            settings.budget = 0.001;
        } else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) {
            settings.budget = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--json] [--budget SECONDS] [--quick]\n", argv[0]);
            return 2;
        }
    }
    if (!(settings.budget > 0.0)) {
        std::fprintf(stderr, "--budget must be a positive number of seconds\n");
        return 2;
    }

    std::vector<Row> rows;
    // Q K^T for one block of queries, that block's weights times V, and a
    // BERT-base projection of 128 tokens.
    rows.push_back(bench_matmul("qk_tile", "Q K^T tile (packed)", 24, 64, 1024, settings));
    rows.push_back(bench_matmul("weights_v", "weights V", 24, 1024, 64, settings));
    rows.push_back(bench_matmul("projection", "projection", 128, 768, 768, settings));
    rows.push_back(bench_softmax(1024, settings));
    rows.push_back(bench_attention(64, 64, true, settings));
    rows.push_back(bench_attention(256, 64, true, settings));
    rows.push_back(bench_attention(1024, 64, true, settings));
    rows.push_back(bench_attention(1024, 64, false, settings));

    if (settings.json) {
        print_json(rows, settings);
    } else {
        print_table(rows, settings);
    }
    int failures = 0;
    for (const Row& row : rows) {
        if (row.difference <= kTolerance) continue;
        std::fprintf(stderr, "%s: result differs from the scalar twin by %.3g (tolerance %.1g)\n", row.id.c_str(),
                     row.difference, kTolerance);
        ++failures;
    }
    return failures ? 1 : 0;
}

}  // namespace

#if defined(__EMSCRIPTEN__) && __clang_major__ >= 15
// The relaxed build's clang 19 names main(int, char**) `__main_argc_argv` in
// WebAssembly; emscripten 3.1.6's JavaScript only calls an export named
// `main`, and without one the program never runs. So export it by that name.
extern "C" __attribute__((export_name("main"))) int attnlens_bench_entry(int argc, char** argv) {
    return bench_main(argc, argv);
}
#else
int main(int argc, char** argv) { return bench_main(argc, argv); }
#endif

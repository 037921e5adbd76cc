// multi_head_attention split over threads: the projections by column panels,
// the heads by whole heads. Neither split touches the order of any sum, so
// 1, 2, 3 and 8 threads must give the same bits in every output, head weight
// and trace array; and those bits must be the ones of the plain composition
// (whole-matrix products, then one head after another) that the threaded
// code reorganizes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "attention/multi_head.hpp"
#include "close_to.hpp"
#include "kernels/kernels.hpp"

namespace {

std::vector<float> random_floats(std::mt19937& rng, std::size_t count, float amplitude = 1.0f) {
    std::uniform_real_distribution<float> uniform(-amplitude, amplitude);
    std::vector<float> values(count);
    for (auto& value : values) value = uniform(rng);
    return values;
}

struct Layer {
    std::size_t n, nk, d, heads;
    bool cross, biases, causal, masked;
    float temperature;
};

struct LayerData {
    std::vector<float> x, context, w[4], b[4];
    std::vector<std::uint8_t> mask;
    attnlens::MultiHeadInput input;
    attnlens::MultiHeadWeights weights;
    attnlens::AttentionOptions options;
};

LayerData make_layer(const Layer& layer, std::mt19937& rng) {
    LayerData data;
    const std::size_t d = layer.d;
    data.x = random_floats(rng, layer.n * d);
    if (layer.cross) data.context = random_floats(rng, layer.nk * d);
    for (int i = 0; i < 4; ++i) {
        data.w[i] = random_floats(rng, d * d, 0.5f);
        if (layer.biases) data.b[i] = random_floats(rng, d, 0.2f);
    }
    data.input = {data.x.data(), layer.n, layer.cross ? data.context.data() : nullptr, layer.cross ? layer.nk : 0};
    auto bias = [&](int i) { return layer.biases ? data.b[i].data() : nullptr; };
    data.weights = {d,        layer.heads, data.w[0].data(), data.w[1].data(), data.w[2].data(), data.w[3].data(),
                    bias(0),  bias(1),     bias(2),          bias(3)};
    data.options.causal = layer.causal;
    data.options.temperature = layer.temperature;
    if (layer.masked) {
        data.mask.assign(layer.nk, 1);
        for (std::size_t j = 1; j < layer.nk; j += 3) data.mask[j] = 0;
        data.options.key_mask = data.mask.data();
    }
    REQUIRE(attnlens::validate(data.input, data.weights, data.options).empty());
    return data;
}

// Everything one call produces, in each of the three ways to call it.
struct Results {
    std::vector<float> output, head_weights;                        // head weights requested, no trace
    std::vector<float> output_only;                                 // neither (the output-only attention path)
    std::vector<float> traced_output;                               // trace, no head weights
    attnlens::MultiHeadTrace trace;                                 // its trace
    std::vector<float> both_output, both_weights;                   // trace and head weights
    attnlens::MultiHeadTrace both_trace;
};

Results run(const Layer& layer, const LayerData& data, std::size_t threads) {
    const std::size_t out = layer.n * layer.d, per_heads = layer.heads * layer.n * layer.nk;
    // Prefilled with a value no result has, so an element left unwritten shows.
    Results r{std::vector<float>(out, 7.0f), std::vector<float>(per_heads, 7.0f), std::vector<float>(out, 7.0f),
              std::vector<float>(out, 7.0f), {}, std::vector<float>(out, 7.0f), std::vector<float>(per_heads, 7.0f),
              {}};
    attnlens::multi_head_attention(data.input, data.weights, data.options, r.output.data(), r.head_weights.data(),
                                   nullptr, threads);
    attnlens::multi_head_attention(data.input, data.weights, data.options, r.output_only.data(), nullptr, nullptr,
                                   threads);
    attnlens::multi_head_attention(data.input, data.weights, data.options, r.traced_output.data(), nullptr, &r.trace,
                                   threads);
    attnlens::multi_head_attention(data.input, data.weights, data.options, r.both_output.data(),
                                   r.both_weights.data(), &r.both_trace, threads);
    return r;
}

void check_same_trace(const attnlens::MultiHeadTrace& a, const attnlens::MultiHeadTrace& b) {
    using T = attnlens::MultiHeadTrace;
    for (auto step : {&T::q, &T::k, &T::v, &T::scores, &T::scaled_scores, &T::weights, &T::concatenated_heads})
        CHECK(same_bits(a.*step, b.*step));
}

void check_same(const Results& a, const Results& b) {
    for (auto array : {&Results::output, &Results::head_weights, &Results::output_only, &Results::traced_output,
                       &Results::both_output, &Results::both_weights})
        CHECK(same_bits(a.*array, b.*array));
    check_same_trace(a.trace, b.trace);
    check_same_trace(a.both_trace, b.both_trace);
}

// The layer as a plain sequence of kernel calls: each projection one packed
// product over all its columns, then the heads one after another with
// attention_strided. The threaded code must reproduce these bits.
struct Plain {
    std::vector<float> q, k, v, concatenated, output, weights;
};

std::vector<float> whole_product(const float* input, std::size_t rows, const float* w, const float* bias,
                                 std::size_t d) {
    std::vector<float> packed(attnlens::kernels::packed_size(d, d)), out(rows * d);
    attnlens::kernels::pack_panels(w, d, d, d, packed.data());
    attnlens::kernels::matmul_packed(input, d, packed.data(), d, out.data(), d, rows, d, d);
    // Added afterwards, one float addition each: the bits the product's fused bias must give.
    if (bias) attnlens::scalar::add_row_bias(out.data(), bias, rows, d);
    return out;
}

Plain plain_layer(const Layer& layer, const LayerData& data) {
    const std::size_t n = layer.n, nk = layer.nk, d = layer.d, dk = d / layer.heads;
    const float* context = layer.cross ? data.context.data() : data.x.data();
    const auto& w = data.weights;
    Plain plain;
    plain.q = whole_product(data.x.data(), n, w.wq, w.bq, d);
    plain.k = whole_product(context, nk, w.wk, w.bk, d);
    plain.v = whole_product(context, nk, w.wv, w.bv, d);
    plain.concatenated.assign(n * d, 0.0f);
    plain.weights.assign(layer.heads * n * nk, 0.0f);
    const attnlens::AttentionShape shape{n, nk, dk, dk};
    for (std::size_t h = 0; h < layer.heads; ++h)
        attnlens::attention_strided(plain.q.data() + h * dk, d, plain.k.data() + h * dk, d, plain.v.data() + h * dk,
                                    d, shape, data.options, plain.concatenated.data() + h * dk, d,
                                    plain.weights.data() + h * n * nk);
    plain.output = whole_product(plain.concatenated.data(), n, w.wo, w.bo, d);
    return plain;
}

}  // namespace

TEST_CASE("multi_head_attention on 1, 2, 3 and 8 threads gives bit-identical results", "[multi_head][threads]") {
    std::mt19937 rng(2024);
    const Layer layers[] = {
        // n, nk, d, heads, cross, biases, causal, masked, temperature
        {37, 37, 96, 6, false, true, false, false, 1.0f},  // several panels and heads per thread
        {21, 45, 64, 4, true, true, false, true, 0.7f},    // cross-attention, key mask
        {30, 30, 48, 8, false, false, true, false, 1.0f},  // causal
        {11, 26, 40, 5, true, true, true, true, 1.5f},     // causal cross (queries aligned to the end) + key mask
        {9, 9, 30, 2, false, true, false, true, 1.0f},     // heads < threads, a partial last panel
        {13, 6, 24, 1, true, false, true, false, 2.0f},    // one head; causal with fewer keys than queries
        {5, 5, 8, 1, false, true, false, false, 1.0f},     // fewer panels than threads
    };
    for (const Layer& layer : layers) {
        INFO("n=" << layer.n << " nk=" << layer.nk << " d=" << layer.d << " heads=" << layer.heads
                  << " cross=" << layer.cross << " causal=" << layer.causal << " masked=" << layer.masked);
        const LayerData data = make_layer(layer, rng);
        const Results one = run(layer, data, 1);

        // The single-thread bits are the plain composition's.
        const Plain plain = plain_layer(layer, data);
        CHECK(same_bits(one.output, plain.output));
        CHECK(same_bits(one.head_weights, plain.weights));
        CHECK(same_bits(one.trace.q, plain.q));
        CHECK(same_bits(one.trace.k, plain.k));
        CHECK(same_bits(one.trace.v, plain.v));
        CHECK(same_bits(one.trace.concatenated_heads, plain.concatenated));
        CHECK(same_bits(one.trace.weights, plain.weights));
        // The three call forms agree with each other (the output-only path
        // takes another softmax route, so it is only close).
        CHECK(same_bits(one.traced_output, one.output));
        CHECK(same_bits(one.both_output, one.output));
        CHECK(same_bits(one.both_weights, one.head_weights));
        for (std::size_t i = 0; i < one.output.size(); ++i) REQUIRE(one.output_only[i] == Approx(one.output[i]).margin(1e-5));
        // The trace's raw and scaled scores are what they claim to be:
        // scaled = raw * scale / temperature, -inf exactly where a mask hides the key.
        const std::size_t dk = layer.d / layer.heads;
        const attnlens::AttentionShape shape{layer.n, layer.nk, dk, dk};
        const float multiplier = attnlens::score_multiplier(shape, data.options);
        std::size_t hidden = 0;
        for (std::size_t h = 0; h < layer.heads; ++h)
            for (std::size_t i = 0; i < layer.n; ++i)
                for (std::size_t j = 0; j < layer.nk; ++j) {
                    const std::size_t at = (h * layer.n + i) * layer.nk + j;
                    const bool masked = (layer.masked && data.mask[j] == 0) ||
                                        (layer.causal && j + layer.n > i + layer.nk);
                    hidden += masked;
                    if (masked) {
                        REQUIRE(one.trace.scaled_scores[at] == -std::numeric_limits<float>::infinity());
                        REQUIRE(one.trace.weights[at] == 0.0f);
                    } else {
                        REQUIRE(one.trace.scaled_scores[at] == one.trace.scores[at] * multiplier);
                    }
                }
        CHECK((hidden > 0) == (layer.masked || (layer.causal && layer.n > 1)));

        for (std::size_t threads : {2, 3, 8}) {
            INFO(threads << " threads");
            check_same(run(layer, data, threads), one);
        }
    }
}

TEST_CASE("multi_head_attention picks its own thread count without changing a bit", "[multi_head][threads]") {
    // Big enough that a build with threads (ATTNLENS_THREADS) spreads every
    // stage: the projections and the heads are each well over 2 M multiply-adds.
    std::mt19937 rng(99);
    const Layer layer{64, 64, 256, 4, false, true, true, false, 1.0f};
    const LayerData data = make_layer(layer, rng);
    const Results one = run(layer, data, 1);
    std::vector<float> output(layer.n * layer.d, 7.0f), weights(layer.heads * layer.n * layer.nk, 7.0f);
    attnlens::multi_head_attention(data.input, data.weights, data.options, output.data(), weights.data());
    CHECK(same_bits(output, one.output));
    CHECK(same_bits(weights, one.head_weights));
    attnlens::MultiHeadTrace trace;
    std::vector<float> traced(layer.n * layer.d, 7.0f);
    attnlens::multi_head_attention(data.input, data.weights, data.options, traced.data(), nullptr, &trace);
    CHECK(same_bits(traced, one.output));
    check_same_trace(trace, one.trace);
}

// The threads module's multiHeadAttention begins Q while JavaScript still
// copies the other matrices in (StagedMultiHead): the same bits as one call,
// whatever the thread count, and K, V and W_O read only when finishing.
TEST_CASE("StagedMultiHead gives multi_head_attention's bits and reads K, V and W_O at finish", "[multi_head][threads]") {
    std::mt19937 rng(77);
    const Layer layers[] = {
        {37, 37, 96, 6, false, true, false, false, 1.0f},
        {21, 45, 64, 4, true, true, false, true, 0.7f},
        {9, 9, 30, 2, false, true, true, true, 1.0f},
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const Layer& layer : layers) {
        INFO("n=" << layer.n << " nk=" << layer.nk << " d=" << layer.d << " heads=" << layer.heads);
        const LayerData data = make_layer(layer, rng);
        const Results one = run(layer, data, 1);
        for (std::size_t threads : {1, 2, 3}) {
            INFO(threads << " threads");
            // K's, V's and W_O's matrices (and biases) not yet written at begin().
            std::vector<float> later[6];
            const float* sources[6] = {data.weights.wk, data.weights.wv, data.weights.wo,
                                       data.weights.bk, data.weights.bv, data.weights.bo};
            const std::size_t sizes[6] = {layer.d * layer.d, layer.d * layer.d, layer.d * layer.d, layer.d, layer.d, layer.d};
            for (int i = 0; i < 6; ++i) later[i].assign(sizes[i], nan);
            attnlens::MultiHeadWeights weights = data.weights;
            weights.wk = later[0].data(), weights.wv = later[1].data(), weights.wo = later[2].data();
            if (layer.biases) weights.bk = later[3].data(), weights.bv = later[4].data(), weights.bo = later[5].data();
            attnlens::StagedMultiHead staged;
            REQUIRE(staged.begin(data.input, weights, data.options, threads).empty());
            for (int i = 0; i < 6; ++i)
                if (sources[i]) std::copy_n(sources[i], sizes[i], later[i].begin());
            std::vector<float> output(one.output.size(), 7.0f), head_weights(one.head_weights.size(), 7.0f);
            REQUIRE(staged.finish(output.data(), head_weights.data()).empty());
            CHECK(same_bits(output, one.output));
            CHECK(same_bits(head_weights, one.head_weights));
            // Finished: a second finish has nothing to finish.
            CHECK(staged.finish(output.data(), head_weights.data()) == "no staged multi-head call was begun");

            // In halves: the head weights are written when finish_heads()
            // returns, the output (and W_O's magnitude) once complete() does.
            std::fill(output.begin(), output.end(), 7.0f);
            std::fill(head_weights.begin(), head_weights.end(), 7.0f);
            float magnitudes[4] = {-1, -1, -1, -1};
            weights.magnitudes = magnitudes;
            REQUIRE(staged.begin(data.input, weights, data.options, threads).empty());
            REQUIRE(staged.finish_heads(output.data(), head_weights.data()).empty());
            CHECK(same_bits(head_weights, one.head_weights));
            CHECK(staged.finish_heads(output.data(), head_weights.data()) == "no staged multi-head call was begun");
            staged.complete();
            CHECK(same_bits(output, one.output));
            CHECK(magnitudes[3] == attnlens::scalar::max_magnitude(data.weights.wo, layer.d * layer.d));
            CHECK(staged.finish(output.data(), head_weights.data()) == "no staged multi-head call was begun");
        }
    }
}

// Staging pays when the automatic policy gives begin()'s Q projection (n x d
// times d x d) a second thread: threads.hpp's rule of one thread per 2 M
// multiply-adds, its d*d weights each read counting as 8 (so two threads
// from 4 M). JavaScript asks before every threaded layer (web/lib/api.js).
TEST_CASE("StagedMultiHead::pays when the policy splits the Q projection", "[multi_head][threads]") {
    const attnlens::ThreadPolicy two{2, true};
    CHECK_FALSE(attnlens::StagedMultiHead::pays(8, 64, two));    // a tiny layer: 32 K multiply-adds
    CHECK(attnlens::StagedMultiHead::pays(128, 768, two));       // S4: 75 M
    CHECK_FALSE(attnlens::StagedMultiHead::pays(61, 256, two));  // 61 * 65,536 = 3,997,696
    CHECK(attnlens::StagedMultiHead::pays(62, 256, two));        // 4,063,232
    CHECK(attnlens::StagedMultiHead::pays(1, 768, two));         // one row, 8 * 589,824 weights read
    CHECK_FALSE(attnlens::StagedMultiHead::pays(1, 512, two));   // 8 * 262,144 = 2,097,152
    CHECK_FALSE(attnlens::StagedMultiHead::pays(128, 768, attnlens::ThreadPolicy{1, true}));  // no helper
}

TEST_CASE("StagedMultiHead: abandon, begin again, a call in between, and refused input", "[multi_head][threads]") {
    std::mt19937 rng(78);
    const Layer layer{37, 37, 96, 6, false, true, false, false, 1.0f};
    const LayerData data = make_layer(layer, rng);
    const Results one = run(layer, data, 1);
    std::vector<float> output(one.output.size()), head_weights(one.head_weights.size());
    attnlens::StagedMultiHead staged;
    // Abandoned halfway, then begun again: the first call leaves no trace.
    REQUIRE(staged.begin(data.input, data.weights, data.options, 2).empty());
    staged.abandon();
    CHECK(staged.finish(output.data(), head_weights.data()) == "no staged multi-head call was begun");
    REQUIRE(staged.begin(data.input, data.weights, data.options, 2).empty());
    // Another multi-head call while Q runs in the background finds the
    // helpers busy and runs alone: the same bits, for both.
    std::vector<float> other(one.output.size());
    attnlens::multi_head_attention(data.input, data.weights, data.options, other.data(), nullptr, nullptr, 2);
    CHECK(same_bits(other, one.output_only));
    REQUIRE(staged.begin(data.input, data.weights, data.options, 2).empty());  // a second begin abandons the first
    REQUIRE(staged.finish(output.data(), head_weights.data()).empty());
    CHECK(same_bits(output, one.output));
    CHECK(same_bits(head_weights, one.head_weights));
    // Refused input: the same sentence as multi_head_attention's validate().
    attnlens::MultiHeadWeights odd = data.weights;
    odd.heads = 5;
    CHECK(staged.begin(data.input, odd, data.options, 2) == attnlens::validate(data.input, odd, data.options));
    CHECK(staged.finish(output.data(), nullptr) == "no staged multi-head call was begun");
    REQUIRE(staged.begin(data.input, data.weights, data.options, 2).empty());
    CHECK(staged.finish(nullptr, nullptr) == "the output buffer is required");
    // Abandoned while the output projection runs: it waits for its parts.
    REQUIRE(staged.begin(data.input, data.weights, data.options, 2).empty());
    REQUIRE(staged.finish_heads(output.data(), head_weights.data()).empty());
    staged.abandon();
    CHECK(same_bits(head_weights, one.head_weights));
    staged.complete();  // nothing left to complete
}

// The matrices' NaN/Infinity check rides on their packing (web/lib reads
// MultiHeadWeights::magnitudes instead of scanning them): each call, on any
// thread count and staged, must report exactly max_magnitude of every
// matrix, and a matrix that is not finite must surface as such without the
// layer failing.
TEST_CASE("multi_head_attention reports each matrix's largest magnitude as it packs it", "[multi_head][threads]") {
    std::mt19937 rng(79);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const Layer layers[] = {
        {37, 37, 96, 6, false, true, false, false, 1.0f},
        {9, 9, 30, 2, false, true, true, true, 1.0f},  // a partial last panel
        {21, 45, 64, 4, true, true, false, true, 0.7f},
    };
    for (const Layer& layer : layers) {
        LayerData data = make_layer(layer, rng);
        const std::size_t dd = layer.d * layer.d;
        // One special value per matrix, at a place that lands in a different
        // panel (and for d = 30 in the partial one) in each.
        const std::size_t at[4] = {0, dd - 1, dd / 2 + 7, layer.d + 3};
        for (float special : {7.5f, -inf, nan}) {
            INFO("d=" << layer.d << " special " << special);
            for (int i = 0; i < 4; ++i) {
                std::vector<float> w[4] = {data.w[0], data.w[1], data.w[2], data.w[3]};
                w[i][at[i]] = special;
                attnlens::MultiHeadWeights weights = data.weights;
                weights.wq = w[0].data(), weights.wk = w[1].data(), weights.wv = w[2].data(), weights.wo = w[3].data();
                float expected[4];
                for (int m = 0; m < 4; ++m) expected[m] = attnlens::scalar::max_magnitude(w[m].data(), dd);
                REQUIRE_FALSE(std::memcmp(&expected[i], &expected[(i + 1) % 4], sizeof(float)) == 0);
                std::vector<float> output(layer.n * layer.d), head_weights(layer.heads * layer.n * layer.nk);
                for (std::size_t threads : {1, 2, 3}) {
                    INFO("matrix " << i << ", " << threads << " threads");
                    float found[4] = {-1, -1, -1, -1};
                    weights.magnitudes = found;
                    REQUIRE(attnlens::multi_head_attention(data.input, weights, data.options, output.data(),
                                                           head_weights.data(), nullptr, threads)
                                .empty());
                    CHECK(std::memcmp(found, expected, sizeof found) == 0);
                    std::fill_n(found, 4, -1.0f);
                    attnlens::StagedMultiHead staged;
                    REQUIRE(staged.begin(data.input, weights, data.options, threads).empty());
                    REQUIRE(staged.finish(output.data(), head_weights.data()).empty());
                    CHECK(std::memcmp(found, expected, sizeof found) == 0);
                }
            }
        }
    }
}

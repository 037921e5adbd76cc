// The logit lens and value-weighted attention (src/analysis/) against plain
// double-precision code written here: top-k by sorting the whole softmax,
// ‖v_j W_O^h‖ from the float64 reference forward's own V and W_O
// (model_reference.hpp), the lens from its residual stream after each layer
// through its own final norm and LM head.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "analysis/kept_value_weighted.hpp"
#include "analysis/layer_analyses.hpp"
#include "analysis/logit_lens.hpp"
#include "analysis/value_weighted.hpp"
#include "attention/pooled.hpp"
#include "close_to.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace analysis = attnlens::analysis;
namespace ref = model_reference;

// Ids of the k largest of `values`, by a full sort (ties: smaller id first), and their softmax probabilities.
void sorted_top_k(const std::vector<double>& values, std::size_t k, std::vector<std::int32_t>& ids, std::vector<double>& probs) {
    std::vector<std::int32_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return values[a] > values[b]; });
    double total = 0;
    for (double v : values) total += std::exp(v);
    ids.assign(order.begin(), order.begin() + k);
    probs.clear();
    for (std::int32_t id : ids) probs.push_back(std::exp(values[id]) / total);
}

m::ModelConfig tiny_config(m::Architecture architecture) {
    m::ModelConfig c;
    model_families::set_family(c, architecture);
    c.layers = 3, c.heads = 4, c.max_positions = 24, c.norm_epsilon = 1e-5f;
    if (architecture == m::Architecture::llama) {
        c.kv_heads = 2, c.model_width = 16, c.head_width = 6, c.mlp_width = 28, c.vocab_size = 37;  // GQA, hd != d / H
        c.activation = m::Activation::silu;
    } else {
        c.kv_heads = 4, c.model_width = 20, c.head_width = 5, c.mlp_width = 36, c.vocab_size = 41;
        c.activation = m::Activation::gelu_tanh;
    }
    return c;
}

// ‖v_j W_O^h‖ from the reference's record of a layer: head h's columns of the
// concatenated heads alone through the reference's own output projection.
std::vector<double> reference_norms(const ref::Config& c, const ref::Tensors& t, const ref::LayerRecord& record,
                                    std::size_t layer, std::size_t n) {
    const std::size_t width = c.heads * c.hd;
    std::vector<double> norms(c.heads * n);
    for (std::size_t h = 0; h < c.heads; ++h) {
        ref::Matrix one_head(n * width, 0.0);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t e = 0; e < c.hd; ++e) one_head[j * width + h * c.hd + e] = record.v[j * width + h * c.hd + e];
        const std::string p = (c.architecture == "gpt2" ? "h." : "model.layers.") + std::to_string(layer) + ".";
        const ref::Matrix out = c.architecture == "gpt2" ? ref::conv1d(one_head, n, ref::get(t, p + "attn.c_proj.weight"), nullptr)
                                                         : ref::linear(one_head, n, ref::get(t, p + "self_attn.o_proj.weight"), nullptr);
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::size_t e = 0; e < c.d; ++e) sum += out[j * c.d + e] * out[j * c.d + e];
            norms[h * n + j] = std::sqrt(sum);
        }
    }
    return norms;
}

// Layer l's value-weighted attention in float64 (H x n x n): the reference's
// weights times its value norms, each row divided by its sum.
std::vector<double> reference_value_weighted(const ref::Config& c, const ref::Tensors& t, const ref::Result& forward,
                                             std::size_t l, std::size_t n) {
    const auto norms = reference_norms(c, t, forward.layers[l], l, n);
    std::vector<double> out;
    for (std::size_t h = 0; h < c.heads; ++h)
        for (std::size_t i = 0; i < n; ++i) {
            const double* row = forward.attention.data() + ((l * c.heads + h) * n + i) * n;
            double total = 0;
            for (std::size_t j = 0; j < n; ++j) total += row[j] * norms[h * n + j];
            for (std::size_t j = 0; j < n; ++j) out.push_back(row[j] * norms[h * n + j] / total);
        }
    return out;
}

// The reference's residual stream after a layer through its final norm and LM head.
ref::Matrix reference_lens_logits(const ref::Config& c, const ref::Tensors& t, const ref::Matrix& residual, std::size_t n) {
    if (c.architecture == "gpt2")
        return ref::lm_logits(t, ref::layer_norm(residual, n, c.d, ref::get(t, "ln_f.weight"), ref::get(t, "ln_f.bias"), c.eps), n,
                              "lm_head.weight", "wte.weight");
    return ref::lm_logits(t, ref::rms_norm(residual, n, c.d, ref::get(t, "model.norm.weight"), c.eps), n, "lm_head.weight",
                          "model.embed_tokens.weight");
}

}  // namespace

TEST_CASE("top_k_softmax gives a full sort's first k and their softmax probabilities", "[analysis][lens]") {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> logit(-40, 40);  // repeats: ties go to the smaller id
    for (std::size_t count : {1u, 7u, 300u, 2500u})  // 2500: blocks of the one pass
        for (std::size_t k : {1u, 3u, 7u}) {
            if (k > count) continue;
            std::vector<float> logits(count);
            for (float& value : logits) value = logit(rng) / 4.0f + (count >= 300 ? 80.0f : 0.0f);  // large: needs the max shift
            std::vector<std::int32_t> ids(k), expected_ids;
            std::vector<float> probs(k);
            std::vector<double> expected_probs;
            sorted_top_k(std::vector<double>(logits.begin(), logits.end()), k, expected_ids, expected_probs);
            analysis::top_k_softmax(logits.data(), count, k, ids.data(), probs.data());  // overwrites the logits
            CHECK(ids == expected_ids);
            require_close(probs, expected_probs, 1e-6);
        }
}

TEST_CASE("value_weighted rows are α · norm, normalised; a row with nothing to move stays 0", "[analysis][value]") {
    const std::size_t n = 3;
    const std::vector<float> attention = {1, 0, 0, 0.5f, 0.5f, 0, 0.2f, 0.3f, 0.5f,  // head 0
                                          1, 0, 0, 0, 1, 0, 0, 0, 1};                   // head 1
    const std::vector<float> norms = {2, 1, 4, 0, 0, 3};
    std::vector<float> out(2 * n * n);
    analysis::value_weighted(attention.data(), norms.data(), 2, n, n, out.data());
    const std::vector<double> expected = {1, 0, 0, 2 / 3.0, 1 / 3.0, 0, 0.4 / 2.7, 0.3 / 2.7, 2 / 2.7,
                                          0, 0, 0, 0, 0, 0, 0, 0, 1};
    require_close(out, expected, 1e-6);
}

TEST_CASE("value_weighted of cross-attention: m queries over n other keys, each key's own norm", "[analysis][value]") {
    const std::vector<float> attention = {0.5f, 0.25f, 0.25f, 0, 1, 0};  // one head, 2 queries x 3 keys
    const std::vector<float> norms = {1, 2, 4};
    std::vector<float> out(6);
    analysis::value_weighted(attention.data(), norms.data(), 1, 2, 3, out.data());
    require_close(out, std::vector<double>{0.25, 0.25, 0.5, 0, 1, 0}, 1e-6);
}

TEST_CASE("LayerAnalyses: the logit lens and value-weighted attention of GPT-2 and Llama (GQA) match float64",
          "[analysis][lens][value]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        const m::ModelConfig c = tiny_config(architecture);
        INFO(m::architecture_name(architecture));
        REQUIRE(m::validate(c) == "");
        std::mt19937 rng(71);
        const auto tensors = model_fixture::random_tensors(c, rng, architecture == m::Architecture::llama);
        const auto model = model_fixture::load(c, tensors);
        // 21 tokens, with scratch for 8 rows: the lens in blocks of 7.
        const auto ids = model_fixture::random_ids(rng, 21, c.vocab_size);
        const std::size_t n = ids.size(), k = 4, L = c.layers, H = c.heads;
        std::vector<float> attention(L * H * n * n), logits(n * c.vocab_size), weighted(L * H * n * n, -1.0f), probs(L * n * k);
        std::vector<std::int32_t> lens(L * n * k, -1);
        analysis::LayerOutputs outputs{k, lens.data(), probs.data(), weighted.data()};
        outputs.lens_scratch_bytes = 8 * (3 * c.model_width + c.vocab_size) * sizeof(float);
        REQUIRE(analysis::LayerAnalyses::lens_block_rows(c, n, outputs.lens_scratch_bytes) == 7);
        analysis::LayerAnalyses analyses(outputs);
        m::RunRequest request;
        request.ids = ids.data(), request.count = n, request.attention = attention.data(), request.logits = logits.data();
        request.observer = &analyses;
        REQUIRE(model->run(request) == "");
        REQUIRE(analyses.status() == analysis::kLayersDone);

        const ref::Config rc = model_fixture::reference_config(c);
        const auto expected = ref::forward(rc, tensors, model_fixture::as_int(ids));
        std::vector<double> expected_weighted, expected_probs;
        std::vector<std::int32_t> expected_lens;
        for (std::size_t l = 0; l < L; ++l) {
            const auto layer_weighted = reference_value_weighted(rc, tensors, expected, l, n);
            expected_weighted.insert(expected_weighted.end(), layer_weighted.begin(), layer_weighted.end());
            const auto layer_logits = reference_lens_logits(rc, tensors, expected.layers[l].layer_output, n);
            for (std::size_t i = 0; i < n; ++i) {
                std::vector<std::int32_t> top;
                std::vector<double> top_probs;
                sorted_top_k(std::vector<double>(layer_logits.begin() + i * c.vocab_size, layer_logits.begin() + (i + 1) * c.vocab_size),
                             k, top, top_probs);
                expected_lens.insert(expected_lens.end(), top.begin(), top.end());
                expected_probs.insert(expected_probs.end(), top_probs.begin(), top_probs.end());
            }
        }
        require_close(weighted, expected_weighted, 1e-5);
        CHECK(lens == expected_lens);
        require_close(probs, expected_probs, 1e-5);
        // After the last layer the lens is the model's own prediction: run()'s logits' top k.
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::int32_t> top;
            std::vector<double> top_probs;
            sorted_top_k(std::vector<double>(logits.begin() + i * c.vocab_size, logits.begin() + (i + 1) * c.vocab_size), k, top, top_probs);
            CHECK(std::vector<std::int32_t>(lens.begin() + ((L - 1) * n + i) * k, lens.begin() + ((L - 1) * n + i + 1) * k) == top);
        }
    }
}

// The lens of the given positions, in blocks of any size, on any thread count.
TEST_CASE("LayerAnalyses: the lens of chosen positions, in blocks, on 1 to 3 threads: the full lens's bits", "[analysis][lens][threads]") {
    const m::ModelConfig c = tiny_config(m::Architecture::gpt2);
    std::mt19937 rng(17);
    const auto model = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
    const auto ids = model_fixture::random_ids(rng, 21, c.vocab_size);
    const std::size_t n = ids.size(), k = 3, L = c.layers, row_bytes = (3 * c.model_width + c.vocab_size) * sizeof(float);
    std::vector<float> attention(L * c.heads * n * n);
    // lens(positions, scratch rows, threads) -> {ids, probs}
    auto lens = [&](const std::vector<std::int32_t>& positions, std::size_t rows, std::size_t threads) {
        const std::size_t count = positions.empty() ? n : positions.size();
        std::vector<std::int32_t> top(L * count * k, -1);
        std::vector<float> probs(L * count * k, -1.0f);
        analysis::LayerOutputs outputs{k, top.data(), probs.data(), nullptr};
        if (!positions.empty()) outputs.lens_positions = positions.data(), outputs.lens_position_count = count;
        outputs.lens_scratch_bytes = rows * row_bytes;
        analysis::LayerAnalyses analyses(outputs);
        m::RunRequest request;
        request.ids = ids.data(), request.count = n, request.threads = threads, request.observer = &analyses;
        REQUIRE(model->run(request) == "");
        REQUIRE(analyses.status() == analysis::kLayersDone);
        return std::make_pair(top, probs);
    };
    const auto full = lens({}, n, 1);
    const std::vector<std::int32_t> positions = {20, 0, 7, 7, 13};
    for (std::size_t threads : {1, 2, 3})
        for (std::size_t rows : {std::size_t(1), std::size_t(2), n}) {
            CAPTURE(threads, rows);
            const auto all = lens({}, rows, threads);
            CHECK(all.first == full.first);
            CHECK(std::memcmp(all.second.data(), full.second.data(), full.second.size() * sizeof(float)) == 0);
            const auto some = lens(positions, rows, threads);
            for (std::size_t l = 0; l < L; ++l)
                for (std::size_t i = 0; i < positions.size(); ++i) {
                    const std::size_t at = (l * positions.size() + i) * k, from = (l * n + positions[i]) * k;
                    CHECK(std::equal(some.first.begin() + at, some.first.begin() + at + k, full.first.begin() + from));
                    CHECK(std::memcmp(some.second.data() + at, full.second.data() + from, k * sizeof(float)) == 0);
                }
        }
    // Positions past the text, or none at all, are refused.
    std::vector<std::int32_t> top(L * k);
    std::vector<float> probs(L * k);
    for (std::int32_t bad : {std::int32_t(n), -1}) {
        analysis::LayerOutputs outputs{k, top.data(), probs.data(), nullptr};
        outputs.lens_positions = &bad, outputs.lens_position_count = bad < 0 ? 0 : 1;
        analysis::LayerAnalyses analyses(outputs);
        m::RunRequest request;
        request.ids = ids.data(), request.count = n, request.observer = &analyses;
        REQUIRE(model->run(request) == "");
        CHECK(analyses.status() == analysis::kBadPositions);
    }
}

// Keeps every layer's residual stream (n x d each) as the run passes it.
class ResidualRecorder final : public m::LayerObserver {
public:
    std::vector<std::vector<float>> layers;
    void attention_done(const m::LayerState&) override {}
    void layer_done(const m::LayerState& state) override {
        layers.emplace_back(state.residual, state.residual + state.n * state.config.model_width);
    }
};

// The lens sends the rows of several layers through the LM head together, in
// blocks that straddle layers: each row's ids and probabilities must be the
// bits of that row alone through model::head_logits and top_k_softmax.
TEST_CASE("LayerAnalyses: every layer's lens rows through the LM head together, in any blocks: each row's bits alone",
          "[analysis][lens][threads]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        const m::ModelConfig c = tiny_config(architecture);
        INFO(m::architecture_name(architecture));
        std::mt19937 rng(29);
        const auto model = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
        const auto ids = model_fixture::random_ids(rng, 21, c.vocab_size);
        const std::size_t n = ids.size(), k = 3, L = c.layers, d = c.model_width, V = c.vocab_size;
        ResidualRecorder recorder;
        m::RunRequest request;
        request.ids = ids.data(), request.count = n, request.observer = &recorder;
        REQUIRE(model->run(request) == "");
        REQUIRE(recorder.layers.size() == L);
        const std::vector<std::int32_t> positions = {20, 0, 7, 7, 13, 4, 19};
        const std::size_t P = positions.size();
        // One row at a time: the head's product of a single row.
        std::vector<std::int32_t> expected_ids(L * P * k);
        std::vector<float> expected_probs(L * P * k), normed(2 * d), logits(V);
        const attnlens::ProductRun one_thread{attnlens::ThreadPolicy::exactly(1)};
        for (std::size_t l = 0; l < L; ++l)
            for (std::size_t i = 0; i < P; ++i) {
                m::head_logits(c, model->weights(), recorder.layers[l].data() + positions[i] * d, 1, normed.data(),
                               logits.data(), one_thread);
                const std::size_t at = (l * P + i) * k;
                analysis::top_k_softmax(logits.data(), V, k, expected_ids.data() + at, expected_probs.data() + at);
            }
        const std::size_t row_bytes = (3 * d + V) * sizeof(float);
        // Blocks of 1, 3 (the layers' 7 rows split across blocks), 7 and 11
        // rows, and all L x P in one: the LM head read once.
        for (std::size_t block : {std::size_t(1), std::size_t(3), P, std::size_t(11), L * P})
            for (std::size_t threads : {1, 3}) {
                CAPTURE(block, threads);
                std::vector<std::int32_t> got_ids(L * P * k, -1);
                std::vector<float> got_probs(L * P * k, -1.0f);
                analysis::LayerOutputs outputs{k, got_ids.data(), got_probs.data(), nullptr};
                outputs.lens_positions = positions.data(), outputs.lens_position_count = P, outputs.layers = L;
                outputs.lens_scratch_bytes = block * row_bytes;
                REQUIRE(analysis::LayerAnalyses::lens_block_rows(c, L * P, outputs.lens_scratch_bytes) <= block);
                analysis::LayerAnalyses analyses(outputs);
                request.threads = threads, request.observer = &analyses;
                REQUIRE(model->run(request) == "");
                REQUIRE(analyses.status() == analysis::kLayersDone);
                CHECK(got_ids == expected_ids);
                CHECK(same_bits(got_probs, expected_probs));
            }
    }
}

// A layer count that is not the run's is reported, and nothing is written
// past the lens's layers x P rows.
TEST_CASE("LayerAnalyses: a lens told the wrong layer count reports it", "[analysis][lens]") {
    const m::ModelConfig c = tiny_config(m::Architecture::gpt2);
    std::mt19937 rng(5);
    const auto model = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
    const std::vector<std::int32_t> ids = {1, 2, 3, 4};
    const std::int32_t position = 3;
    for (std::size_t layers : {c.layers - 1, c.layers + 1}) {
        CAPTURE(layers);
        std::vector<std::int32_t> top(layers * 2 + 2, -7);  // 2 = top k; the last 2: a guard
        std::vector<float> probs(top.size(), -7.0f);
        analysis::LayerOutputs outputs{2, top.data(), probs.data(), nullptr};
        outputs.lens_positions = &position, outputs.lens_position_count = 1, outputs.layers = layers;
        analysis::LayerAnalyses analyses(outputs);
        m::RunRequest request;
        request.ids = ids.data(), request.count = ids.size(), request.observer = &analyses;
        REQUIRE(model->run(request) == "");
        CHECK(analyses.status() == analysis::kBadLayerCount);
        CHECK(top[layers * 2] == -7);
        CHECK(top[layers * 2 + 1] == -7);
    }
}

TEST_CASE("LayerAnalyses::scratch_floats counts what the lens allocates, in blocks within kLensScratchBytes", "[analysis][lens]") {
    m::ModelConfig c;
    c.model_width = 768, c.vocab_size = 50257, c.heads = 12, c.head_width = 64;
    const std::uint64_t row = 3 * 768 + 50257;  // picked row, head_logits scratch (2 rows), logits
    CHECK(analysis::LayerAnalyses::lens_block_rows(c, 128) == 128);  // one block: the LM head read once
    CHECK(analysis::LayerAnalyses::lens_block_rows(c, 12 * 1) == 12);  // 12 layers' last position: one block
    CHECK(analysis::LayerAnalyses::lens_block_rows(c, 12 * 128) == 154);  // 12 layers x 128 positions: 10 blocks
    CHECK(analysis::LayerAnalyses::lens_block_rows(c, 1024) == 147);  // 7 even blocks
    CHECK(analysis::LayerAnalyses::lens_block_rows(c, 1024) * row * sizeof(float) <= analysis::kLensScratchBytes);
    CHECK(analysis::LayerAnalyses::scratch_floats(c, 1024, 1024, false) == 147 * row);
    CHECK(analysis::LayerAnalyses::scratch_floats(c, 1024, 1, false) == row);
    CHECK(analysis::LayerAnalyses::scratch_floats(c, 1024, 0, false) == 0);
    CHECK(analysis::LayerAnalyses::scratch_floats(c, 8, 0, true) > 0);
}

TEST_CASE("LayerAnalyses reports what it cannot do instead of failing", "[analysis]") {
    m::ModelConfig c = tiny_config(m::Architecture::gpt2);
    std::mt19937 rng(3);
    const auto model = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
    const std::vector<std::int32_t> ids = {1, 2, 3};
    std::vector<float> weighted(c.layers * c.heads * 9);
    analysis::LayerAnalyses analyses({0, nullptr, nullptr, weighted.data()});
    m::RunRequest request;
    request.ids = ids.data(), request.count = ids.size(), request.observer = &analyses;  // no attention asked
    REQUIRE(model->run(request) == "");
    CHECK(analyses.status() == analysis::kNoAttention);
    std::vector<std::int32_t> ids_out(c.layers * 3 * 2);
    std::vector<float> probs_out(ids_out.size());
    for (std::size_t top_k : {std::size_t(0), c.vocab_size + 1}) {  // bad k: refused, nothing written past the arrays
        analysis::LayerAnalyses lens({top_k, ids_out.data(), probs_out.data(), nullptr});
        request.observer = &lens;
        REQUIRE(model->run(request) == "");
        CHECK(lens.status() == analysis::kBadTopK);
    }
    c.has_lm_head = false;  // the same weights as an encoder-like model without a head
    const auto headless = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
    analysis::LayerAnalyses lens({2, ids_out.data(), probs_out.data(), nullptr});
    request.observer = &lens;
    REQUIRE(headless->run(request) == "");
    CHECK(lens.status() == analysis::kNoLanguageHead);
}

TEST_CASE("kept_value_weighted: chosen heads of a kept run, in full and pooled, match float64", "[analysis][value][pooled]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        const m::ModelConfig c = tiny_config(architecture);
        INFO(m::architecture_name(architecture));
        std::mt19937 rng(83);
        const auto tensors = model_fixture::random_tensors(c, rng, architecture == m::Architecture::llama);
        const auto model = model_fixture::load(c, tensors);
        const auto ids = model_fixture::random_ids(rng, 19, c.vocab_size);
        const std::size_t n = ids.size(), H = c.heads, factor = 4, side = attnlens::pooled_side(n, factor);
        m::ForwardCache cache;
        CHECK(analysis::kept_value_weighted(c, model->weights(), cache, 0, nullptr, 1, nullptr) ==
              "nothing is kept: run the model first");
        // The ids less their last three first: the run keeps 16 positions and computes 3.
        model_fixture::run(*model, std::vector<std::int32_t>(ids.begin(), ids.end() - 3), {}, 0, 0, &cache, false);
        model_fixture::run(*model, ids, {}, 0, 0, &cache, false);
        REQUIRE(cache.reused == n - 3);
        const ref::Config rc = model_fixture::reference_config(c);
        const auto expected = ref::forward(rc, tensors, model_fixture::as_int(ids));
        const std::uint8_t chosen[] = {0, 1, 0, 1};  // heads 1 and 3
        for (std::size_t l = 0; l < c.layers; ++l) {
            const auto all = reference_value_weighted(rc, tensors, expected, l, n);
            std::vector<double> wanted, wanted_pooled;
            for (std::size_t h : {1, 3}) {
                wanted.insert(wanted.end(), all.begin() + h * n * n, all.begin() + (h + 1) * n * n);
                for (std::size_t bi = 0; bi < side; ++bi)
                    for (std::size_t bj = 0; bj < side; ++bj) {
                        double largest = 0;
                        for (std::size_t i = bi * factor; i < std::min(n, (bi + 1) * factor); ++i)
                            for (std::size_t j = bj * factor; j < std::min(n, (bj + 1) * factor); ++j)
                                largest = std::max(largest, all[(h * n + i) * n + j]);
                        wanted_pooled.push_back(largest);
                    }
            }
            std::vector<float> out(2 * n * n, -1.0f), pooled(2 * side * side, -1.0f), every(H * n * n, -1.0f);
            REQUIRE(analysis::kept_value_weighted(c, model->weights(), cache, l, chosen, 1, out.data()) == "");
            require_close(out, wanted, 1e-5);
            REQUIRE(analysis::kept_value_weighted(c, model->weights(), cache, l, chosen, factor, pooled.data()) == "");
            require_close(pooled, wanted_pooled, 1e-5);
            REQUIRE(analysis::kept_value_weighted(c, model->weights(), cache, l, nullptr, 1, every.data()) == "");
            require_close(every, all, 1e-5);
        }
        std::vector<float> out(n * n);
        CHECK(analysis::kept_value_weighted(c, model->weights(), cache, c.layers, nullptr, 1, out.data()) == "no such layer");
        CHECK(analysis::kept_value_weighted(c, model->weights(), cache, 0, chosen, 0, out.data()) ==
              "pool factor 0 must be from 1 to 19 (the number of tokens)");
    }
}

// explain(): one layer's attention step by step. Its weights are run()'s
// for that layer, every step matches the float64 reference, and the steps
// agree with each other (scaled = scores * scale, weights = softmax, heads =
// weights v, output = heads wo + bo).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "close_to.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_reference::Matrix;
using model_reference::Tensors;

m::ModelConfig tiny(m::Architecture architecture) {
    m::ModelConfig c = model_families::usual_config(architecture);
    c.layers = 3, c.heads = 4, c.kv_heads = 4, c.model_width = 16, c.head_width = 4, c.mlp_width = 24;
    c.vocab_size = 11, c.max_positions = 16;
    if (architecture == m::Architecture::llama) {
        c.kv_heads = 2, c.head_width = 6, c.attention_bias = c.attention_output_bias = true;
        c.norm_epsilon = 1e-6f;
    }
    return c;
}

std::vector<float> as_vector(const attnlens::FloatBuffer& buffer) { return {buffer.data(), buffer.data() + buffer.size()}; }

// W in [in, out] orientation, d x (H*hd), from the file's tensors, for Q
// (which = 0), K (1) or V (2); kv columns repeated per query head (GQA).
Matrix file_projection(const m::ModelConfig& c, const Tensors& t, std::size_t layer, int which) {
    const std::size_t d = c.model_width, hd = c.head_width, H = c.heads, qw = H * hd, group = H / c.kv_heads;
    const std::string l = std::to_string(layer);
    Matrix w(d * qw);
    for (std::size_t p = 0; p < d; ++p)
        for (std::size_t col = 0; col < qw; ++col) {
            const std::size_t h = col / hd, source = which == 0 ? col : (h / group) * hd + col % hd;
            switch (c.architecture) {
                case m::Architecture::gpt2:
                    w[p * qw + col] = t.at("h." + l + ".attn.c_attn.weight").values[p * 3 * d + which * d + col];
                    break;
                case m::Architecture::bert: {
                    const char* name[] = {"query", "key", "value"};
                    w[p * qw + col] =
                        t.at("encoder.layer." + l + ".attention.self." + name[which] + ".weight").values[col * d + p];
                    break;
                }
                case m::Architecture::llama: {
                    const char* name[] = {"q_proj", "k_proj", "v_proj"};
                    w[p * qw + col] = t.at("model.layers." + l + ".self_attn." + name[which] + ".weight").values[source * d + p];
                    break;
                }
            }
        }
    return w;
}

// wo in [in, out] orientation ((H*hd) x d) and bo (d, zeros when absent).
std::pair<Matrix, Matrix> file_output_projection(const m::ModelConfig& c, const Tensors& t, std::size_t layer) {
    const std::size_t d = c.model_width, qw = c.heads * c.head_width;
    const std::string l = std::to_string(layer);
    const std::string name = c.architecture == m::Architecture::gpt2   ? "h." + l + ".attn.c_proj"
                             : c.architecture == m::Architecture::bert ? "encoder.layer." + l + ".attention.output.dense"
                                                                       : "model.layers." + l + ".self_attn.o_proj";
    const auto& w = t.at(name + ".weight").values;
    Matrix wo(qw * d), bo(d, 0.0);
    for (std::size_t p = 0; p < qw; ++p)
        for (std::size_t j = 0; j < d; ++j)
            wo[p * d + j] = c.architecture == m::Architecture::gpt2 ? w[p * d + j] : w[j * qw + p];
    if (t.count(name + ".bias")) bo = t.at(name + ".bias").values;
    return {wo, bo};
}

// The steps agree with each other.
void check_consistency(const m::ModelConfig& c, const attnlens::MultiHeadTrace& trace, std::size_t n,
                       const std::vector<std::uint8_t>& mask) {
    const std::size_t H = c.heads, hd = c.head_width, qw = H * hd;
    const bool causal = c.architecture != m::Architecture::bert;
    for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t row = h * n * n + i * n;
            double max_score = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < n; ++j) {
                const bool hidden = (causal && j > i) || (!mask.empty() && mask[j] == 0);
                const float scaled = trace.scaled_scores[row + j];
                if (hidden) {
                    REQUIRE(scaled == -std::numeric_limits<float>::infinity());
                    REQUIRE(trace.weights[row + j] == 0.0f);
                } else {
                    REQUIRE(scaled == Approx(trace.scores[row + j] / std::sqrt(double(hd))).epsilon(1e-6).margin(1e-7));
                    max_score = std::max(max_score, double(scaled));
                }
            }
            double sum = 0;
            for (std::size_t j = 0; j < n; ++j)
                if (std::isfinite(trace.scaled_scores[row + j])) sum += std::exp(trace.scaled_scores[row + j] - max_score);
            for (std::size_t j = 0; j < n; ++j) {
                const float scaled = trace.scaled_scores[row + j];
                const double expected = std::isfinite(scaled) ? std::exp(scaled - max_score) / sum : 0.0;
                REQUIRE(trace.weights[row + j] == Approx(expected).margin(1e-6));
            }
            for (std::size_t col = 0; col < hd; ++col) {
                double head = 0;
                for (std::size_t j = 0; j < n; ++j) head += trace.weights[row + j] * trace.v[j * qw + h * hd + col];
                REQUIRE(trace.concatenated_heads[i * qw + h * hd + col] == Approx(head).margin(1e-5));
            }
        }
}

void check_layer(const m::ModelConfig& c, const Tensors& tensors, const std::vector<std::int32_t>& ids,
                 const std::vector<std::uint8_t>& mask) {
    const auto model = model_fixture::load(c, tensors);
    const auto run = model_fixture::run(*model, ids, mask);
    const auto reference =
        model_reference::forward(model_fixture::reference_config(c), tensors, model_fixture::as_int(ids), mask);
    const std::size_t n = ids.size(), per_layer = c.heads * n * n, d = c.model_width, qw = c.heads * c.head_width;
    for (std::size_t layer = 0; layer < c.layers; ++layer) {
        INFO("layer " << layer);
        m::ExplainRequest request;
        request.ids = ids.data();
        request.count = n;
        request.layer = layer;
        request.key_mask = mask.empty() ? nullptr : mask.data();
        attnlens::MultiHeadTrace trace;
        REQUIRE(model->explain(request, trace) == "");
        // The record carries what it was computed with.
        REQUIRE(trace.architecture == m::architecture_name(c.architecture));
        REQUIRE(trace.layer == layer);
        REQUIRE(trace.causal == (c.architecture != m::Architecture::bert));
        REQUIRE(trace.key_mask == mask);
        REQUIRE_FALSE(trace.cross_attention);
        REQUIRE(trace.n == n);
        REQUIRE(trace.n_context == n);
        REQUIRE(trace.shape.kv_heads == c.kv_heads);
        REQUIRE(trace.scale == 1.0 / std::sqrt(double(c.head_width)));
        REQUIRE(as_vector(trace.context_x) == as_vector(trace.x));

        // run()'s attention for this layer, bit for bit (the same arithmetic).
        const std::vector<float> run_weights(run.attention.begin() + layer * per_layer,
                                             run.attention.begin() + (layer + 1) * per_layer);
        REQUIRE(as_vector(trace.weights) == run_weights);

        // The reference, step by step.
        const auto& expected = reference.layers[layer];
        require_close(as_vector(trace.x), expected.x, 1e-4);
        require_close(as_vector(trace.q), expected.q, 1e-4);
        require_close(as_vector(trace.k), expected.k, 1e-4);
        require_close(as_vector(trace.v), expected.v, 1e-4);
        require_close(as_vector(trace.scores), expected.scores, 1e-4);
        require_close(as_vector(trace.weights), expected.weights, 1e-5);
        require_close(as_vector(trace.concatenated_heads), expected.concatenated, 1e-4);
        require_close(as_vector(trace.output), expected.output, 1e-4);
        require_close(as_vector(trace.layer_output), expected.layer_output, 1e-4);

        // The weight matrices, in [in, out] orientation, are the file's.
        require_close(as_vector(trace.wq), file_projection(c, tensors, layer, 0), 0.0);
        require_close(as_vector(trace.wk), file_projection(c, tensors, layer, 1), 0.0);
        require_close(as_vector(trace.wv), file_projection(c, tensors, layer, 2), 0.0);
        const auto [wo, bo] = file_output_projection(c, tensors, layer);
        require_close(as_vector(trace.wo), wo, 0.0);

        check_consistency(c, trace, n, mask);
        // output = concatenated heads wo + bo
        Matrix output(n * d);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < d; ++j) {
                double sum = bo[j];
                for (std::size_t p = 0; p < qw; ++p) sum += trace.concatenated_heads[i * qw + p] * trace.wo[p * d + j];
                output[i * d + j] = sum;
            }
        require_close(as_vector(trace.output), output, 1e-5);
    }
}

}  // namespace

TEST_CASE("explain() matches run() and the reference for every layer, and its steps agree", "[model][explain]") {
    std::mt19937 rng(201);
    const std::vector<std::int32_t> ids{1, 4, 9, 2, 0, 10, 3};
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::bert, m::Architecture::llama}) {
        INFO(m::architecture_name(architecture));
        const auto config = tiny(architecture);
        const auto tensors = model_fixture::random_tensors(config, rng, false);
        check_layer(config, tensors, ids, {});
        check_layer(config, tensors, ids, {1, 1, 0, 1, 1, 1, 0});
    }
}

TEST_CASE("explain() refuses a layer that does not exist and bad ids", "[model][explain]") {
    std::mt19937 rng(202);
    const auto config = tiny(m::Architecture::gpt2);
    const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
    const std::vector<std::int32_t> ids{1, 2, 3};
    m::ExplainRequest request;
    request.ids = ids.data();
    request.count = ids.size();
    request.layer = 3;
    attnlens::MultiHeadTrace trace;
    REQUIRE_THAT(model->explain(request, trace), Catch::Contains("layer 3 does not exist") && Catch::Contains("3 layers"));
    request.layer = 0;
    const std::vector<std::int32_t> bad{1, 11};
    request.ids = bad.data();
    REQUIRE_THAT(model->explain(request, trace), Catch::Contains("token id 11 at position 1"));
}

// OPT's math on the core: learned positions read position_offset rows on
// (OPTLearnedPositionalEmbedding's 2), ReLU, and LayerNorms before each half
// (OPT-125m) or after it without a final norm (OPT-350m's
// do_layer_norm_before: false), OPT-350m's narrower word embeddings
// (project_in before the positions are added, project_out before the tied
// head) and positions numbered over the tokens a key mask keeps. Checked
// against a double-precision forward written here from modeling_opt.py
// (model_reference.hpp's Linear, LayerNorm and attention), in F32, F16 and BF16.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "close_to.hpp"
#include "model/blocks.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig opt_config(bool norm_before, bool biases, std::size_t embedding_width = 0) {
    m::ModelConfig c;
    c.architecture = m::Architecture::opt;
    c.layers = 2, c.heads = 3, c.kv_heads = 3, c.model_width = 18, c.head_width = 6, c.mlp_width = 26;
    c.vocab_size = 15, c.max_positions = 12 + 2, c.position_offset = 2;
    c.norm_epsilon = 1e-5f;
    c.activation = m::Activation::relu;
    c.post_norm = !norm_before, c.final_norm = norm_before;
    c.attention_bias = c.attention_output_bias = c.mlp_bias = biases;
    c.embedding_width = embedding_width, c.projection_before_positions = true;
    return c;
}

// OPTForCausalLM: project_in(embed_tokens) + embed_positions[cumsum(mask) *
// mask - 1 + 2], OPTDecoderLayer per layer, the decoder's final_layer_norm
// when norms come first, project_out, lm_head (tied to embed_tokens).
r::Result opt_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids,
                        const std::vector<std::uint8_t>& mask = {}) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d, E = config.embedding_width ? config.embedding_width : d;
    const bool before = !config.post_norm;
    const std::string decoder = "model.decoder.";
    r::Result result;
    const r::Matrix words = r::embed(r::get(t, decoder + "embed_tokens.weight"), ids, E);
    r::Matrix x = E == d ? words : r::linear(words, n, r::get(t, decoder + "project_in.weight"), nullptr);
    long kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const long keep = mask.empty() || mask[i] ? 1 : 0;
        kept += keep;
        const std::size_t row = std::size_t(kept * keep - 1 + 2);
        for (std::size_t j = 0; j < d; ++j) x[i * d + j] += r::get(t, decoder + "embed_positions.weight").values[row * d + j];
    }
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = decoder + "layers." + std::to_string(l) + ".";
        const auto norm = [&](const std::string& name, const r::Matrix& in) {
            return r::layer_norm(in, n, d, r::get(t, p + name + ".weight"), r::get(t, p + name + ".bias"), c.eps);
        };
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            const std::string bias = p + name + ".bias";
            return r::linear(in, n, r::get(t, p + name + ".weight"), r::has(t, bias) ? &r::get(t, bias) : nullptr);
        };
        r::LayerRecord record;
        record.x = before ? norm("self_attn_layer_norm", x) : x;
        r::attend(c, project("self_attn.q_proj", record.x), project("self_attn.k_proj", record.x),
                  project("self_attn.v_proj", record.x), n, true, mask, record, result.attention);
        r::add(x, project("self_attn.out_proj", record.concatenated));
        if (!before) x = norm("self_attn_layer_norm", x);
        r::Matrix hidden = project("fc1", before ? norm("final_layer_norm", x) : x);
        for (double& value : hidden) value = value > 0 ? value : 0.0;  // ReLU
        r::add(x, project("fc2", hidden));
        if (!before) x = norm("final_layer_norm", x);
    }
    result.hidden = before ? r::layer_norm(x, n, d, r::get(t, decoder + "final_layer_norm.weight"),
                                           r::get(t, decoder + "final_layer_norm.bias"), c.eps)
                           : x;
    const r::Matrix out = E == d ? result.hidden : r::linear(result.hidden, n, r::get(t, decoder + "project_out.weight"), nullptr);
    result.logits = r::linear(out, n, r::get(t, decoder + "embed_tokens.weight"), nullptr);
    return result;
}

}  // namespace

TEST_CASE("OPT: positions two rows on, ReLU, norms before or after each half match the double reference",
          "[model][opt]") {
    std::mt19937 rng(404);
    for (const bool before : {true, false}) {
        for (const bool biases : {true, false}) {
            INFO("norms before " << before << ", biases " << biases);
            const auto config = opt_config(before, biases);
            REQUIRE(m::validate(config) == "");
            REQUIRE(m::usable_positions(config) == 12);
            const auto tensors = model_fixture::random_tensors(config, rng, false);
            model_fixture::check_dtypes_against(
                config, tensors, rng, {std::size_t(1), std::size_t(5), std::size_t(12)},
                [&](const std::vector<int>& ids) { return opt_reference(config, tensors, ids); });
            m::RunRequest past;
            const std::vector<std::int32_t> too_many(13, 1);
            past.ids = too_many.data(), past.count = too_many.size();
            CHECK(model_fixture::load(config, tensors)->run(past) ==
                  "13 tokens are more than the model's 12 positions (maxPositions - positionOffset)");
        }
    }
}

TEST_CASE("OPT: positionOffset and ReLU are checked and named", "[model][opt]") {
    auto config = opt_config(true, true);
    config.position_offset = config.max_positions;
    CHECK(m::validate(config) == "positionOffset (14) leaves no position for a token: maxPositions (14) must be greater");
    config = opt_config(true, true);
    config.padding_idx = 1;
    CHECK(m::validate(config) == "paddingIdx and positionOffset number positions two ways: one must be unset");
    m::Activation parsed = m::Activation::silu;
    CHECK((m::parse_activation("relu", parsed) && parsed == m::Activation::relu));
    CHECK(m::activate(m::Activation::relu, -2.5f) == 0.0f);
    CHECK(m::activate(m::Activation::relu, 1.5f) == 1.5f);
}

TEST_CASE("OPT: project_in and project_out around narrower word embeddings, positions over the kept tokens",
          "[model][opt]") {
    std::mt19937 rng(405);
    for (const bool before : {true, false}) {
        INFO("norms before " << before);
        const auto config = opt_config(before, true, 8);
        REQUIRE(m::validate(config) == "");
        const auto tensors = model_fixture::random_tensors(config, rng, false);
        REQUIRE(tensors.at("model.decoder.project_in.weight").shape == std::vector<std::size_t>{18, 8});
        REQUIRE(tensors.at("model.decoder.project_out.weight").shape == std::vector<std::size_t>{8, 18});
        REQUIRE(tensors.at("model.decoder.embed_positions.weight").shape == std::vector<std::size_t>{14, 18});
        model_fixture::check_dtypes_against(
            config, tensors, rng, {std::size_t(1), std::size_t(7)},
            [&](const std::vector<int>& ids) { return opt_reference(config, tensors, ids); });
        // Left and right padding: masked tokens read row 1, the kept ones count from row 2.
        const auto model = model_fixture::load(config, tensors);
        for (const std::vector<std::uint8_t>& mask : {std::vector<std::uint8_t>{0, 0, 1, 1, 1, 1},
                                                      std::vector<std::uint8_t>{1, 1, 1, 1, 0, 0}}) {
            const auto ids = model_fixture::random_ids(rng, mask.size(), config.vocab_size);
            const auto actual = model_fixture::run(*model, ids, mask);
            const auto expected = opt_reference(config, tensors, model_fixture::as_int(ids), mask);
            require_close(actual.hidden, expected.hidden, 1e-4);
            require_close(actual.logits, expected.logits, 1e-4);
        }
    }
    // The head's projection writes model-width rows: word embeddings wider than the model are refused.
    CHECK(m::validate(opt_config(true, true, 20)) ==
          "the LM head reads rows embeddingWidth wide: embeddingWidth (20) must be at most modelWidth (18)");
}

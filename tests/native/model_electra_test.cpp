// ELECTRA's embeddings on the core's bert layout: word, position and token
// type embeddings embedding_width wide, their LayerNorm over that width,
// then embeddings_project (a Linear with bias) to the model width, before
// BERT's post-norm layers. Checked against a double-precision forward written
// here from modeling_electra.py (model_reference.hpp's helpers), in F32, F16 and BF16.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "close_to.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig electra_config(std::size_t embedding_width) {
    m::ModelConfig c = model_families::small_bert();
    c.embedding_width = embedding_width;
    return c;
}

// ElectraModel: ElectraEmbeddings (E wide), embeddings_project, then BertLayer-style post-norm layers.
r::Result electra_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d, E = config.embedding_width;
    const std::string e = "embeddings.";
    r::Result result;
    r::Matrix embedded(n * E);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < E; ++j)
            embedded[i * E + j] = r::get(t, e + "word_embeddings.weight").values[ids[i] * E + j] +
                                  r::get(t, e + "position_embeddings.weight").values[i * E + j] +
                                  r::get(t, e + "token_type_embeddings.weight").values[j];
    embedded = r::layer_norm(embedded, n, E, r::get(t, e + "LayerNorm.weight"), r::get(t, e + "LayerNorm.bias"), c.eps);
    r::Matrix x = r::linear(embedded, n, r::get(t, "embeddings_project.weight"), &r::get(t, "embeddings_project.bias"));
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            return r::linear(in, n, r::get(t, p + name + ".weight"), &r::get(t, p + name + ".bias"));
        };
        const auto norm = [&](const std::string& name, const r::Matrix& in) {
            return r::layer_norm(in, n, d, r::get(t, p + name + ".weight"), r::get(t, p + name + ".bias"), c.eps);
        };
        r::LayerRecord record;
        r::attend(c, project("attention.self.query", x), project("attention.self.key", x),
                  project("attention.self.value", x), n, false, {}, record, result.attention);
        r::add(x, project("attention.output.dense", record.concatenated));
        x = norm("attention.output.LayerNorm", x);
        r::Matrix y = project("output.dense", r::activate(c.activation, project("intermediate.dense", x)));
        r::add(y, x);
        x = norm("output.LayerNorm", y);
    }
    result.hidden = x;
    // ElectraForMaskedLM: generator_predictions (dense to E, gelu, LayerNorm over E), then
    // generator_lm_head, tied to the word embeddings, with its bias.
    if (config.has_lm_head) {
        const std::string h = "cls.predictions.transform.";
        r::Matrix y = r::activate("gelu_erf", r::linear(x, n, r::get(t, h + "dense.weight"), &r::get(t, h + "dense.bias")));
        y = r::layer_norm(y, n, E, r::get(t, h + "LayerNorm.weight"), r::get(t, h + "LayerNorm.bias"), c.eps);
        result.logits = r::linear(y, n, r::get(t, e + "word_embeddings.weight"), &r::get(t, "lm_head.bias"));
    }
    return result;
}

}  // namespace

TEST_CASE("ELECTRA: narrower embeddings, their norm and embeddings_project match the double reference",
          "[model][electra]") {
    std::mt19937 rng(707);
    const auto config = electra_config(8);
    REQUIRE(m::validate(config) == "");
    const auto tensors = model_fixture::random_tensors(config, rng, false);
    REQUIRE(tensors.at("embeddings_project.weight").shape == std::vector<std::size_t>{18, 8});
    REQUIRE(tensors.at("embeddings.word_embeddings.weight").shape == std::vector<std::size_t>{17, 8});
    model_fixture::check_dtypes_against(
        config, tensors, rng, {std::size_t(1), std::size_t(6), config.max_positions},
        [&](const std::vector<int>& ids) { return electra_reference(config, tensors, ids); });
    // embedding_width 0 or the model width: no projection, BERT's tensors.
    for (const std::size_t width : {std::size_t(0), std::size_t(18)}) {
        bool projection = false;
        for (const auto& spec : m::model_tensors(electra_config(width))) projection |= spec.name == "embeddings_project.weight";
        CHECK(!projection);
    }
    // The generator's masked-LM head: its transform is E wide, its decoder the word embeddings.
    auto generator = electra_config(8);
    generator.has_lm_head = true;
    REQUIRE(m::validate(generator) == "");
    const auto with_head = model_fixture::random_tensors(generator, rng, false);
    REQUIRE(with_head.at("cls.predictions.transform.dense.weight").shape == std::vector<std::size_t>{8, 18});
    REQUIRE(with_head.at("lm_head.bias").shape == std::vector<std::size_t>{17});
    REQUIRE(with_head.count("lm_head.weight") == 0);
    model_fixture::check_dtypes_against(
        generator, with_head, rng, {std::size_t(1), std::size_t(6), generator.max_positions},
        [&](const std::vector<int>& ids) { return electra_reference(generator, with_head, ids); });

    auto llama = electra_config(8);
    model_families::set_family(llama, m::Architecture::llama);
    llama.head_width = 6;
    CHECK(m::validate(llama) == "the llama tensor layout has no embedding projection: embeddingWidth must be 0 or modelWidth");
}

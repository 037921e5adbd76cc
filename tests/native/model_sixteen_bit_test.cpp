// keep_16_bit: the matrices of F16 and BF16 checkpoints stay at 2 bytes a
// weight and are widened a panel at a time. Widening is exact, so the model
// gives the very bits of the same checkpoint converted to float32 at load:
// run() on one and on several threads, explain() (whose weight matrices are
// unpacked from 16-bit panels), a tied LM head (embedding rows gathered from
// them), and tensors staged in ranges of rows. The matrices take half the bytes.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_fixture::random_ids;
using model_fixture::random_tensors;
using model_fixture::same_bits;

// Sizes with partial panels (d = 40, I = 72, vocab = 53) and grouped queries.
m::ModelConfig config_of(m::Architecture architecture, bool keep_16_bit) {
    m::ModelConfig c = model_families::usual_config(architecture);
    c.layers = 2, c.heads = 4, c.kv_heads = 4, c.model_width = 40, c.head_width = 10, c.mlp_width = 72;
    c.vocab_size = 53, c.max_positions = 24;
    c.norm_epsilon = 1e-5f;
    if (architecture == m::Architecture::llama) c.kv_heads = 2;
    c.keep_16_bit = keep_16_bit;
    return c;
}

// Every tensor in `type`, staged `rows_per_range` rows at a time.
std::unique_ptr<m::Model> load_in_ranges(const m::ModelConfig& config, const model_reference::Tensors& tensors,
                                         const std::string& type, std::size_t rows_per_range) {
    auto model = std::make_unique<m::Model>(config);
    for (const auto& [name, tensor] : tensors) {
        const auto encoded = model_fixture::encode(tensor.values, type);
        const std::size_t rows = m::tensor_rows(tensor.shape), width = m::row_values(tensor.shape);
        const std::size_t element_bytes = type == "F32" ? 4 : 2;
        for (std::size_t first = 0; first < rows; first += rows_per_range) {
            const std::size_t count = std::min(rows_per_range, rows - first);
            INFO(name << " rows " << first);
            REQUIRE(model->load_tensor(name, type, encoded.bytes() + first * width * element_bytes,
                                       m::RowRange{first, count}, count * width) == "");
        }
    }
    REQUIRE(model->finish() == "");
    return model;
}

}  // namespace

TEST_CASE("16-bit matrices give the bits of float32 ones, in half the bytes", "[model][sixteen-bit]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::bert, m::Architecture::llama}) {
        for (const char* type : {"F16", "BF16"}) {
            CAPTURE(m::architecture_name(architecture), type);
            std::mt19937 rng(400 + static_cast<int>(architecture));
            const auto wide = config_of(architecture, false), narrow = config_of(architecture, true);
            const auto tensors = random_tensors(wide, rng, false);  // GPT-2 and Llama: a tied LM head
            const auto as_float = model_fixture::load(wide, tensors, type);
            const auto as_16_bit = load_in_ranges(narrow, tensors, type, 7);
            const auto ids = random_ids(rng, 19, wide.vocab_size);

            const auto expected = model_fixture::run(*as_float, ids, {}, 1);
            for (std::size_t threads : {1, 3}) {
                CAPTURE(threads);
                const auto actual = model_fixture::run(*as_16_bit, ids, {}, threads);
                CHECK(same_bits(actual.attention, expected.attention));
                CHECK(same_bits(actual.hidden, expected.hidden));
                CHECK(same_bits(actual.logits, expected.logits));
            }

            const auto wide_trace = model_fixture::explain(*as_float, ids, 1);
            const auto narrow_trace = model_fixture::explain(*as_16_bit, ids, 1);
            using T = attnlens::MultiHeadTrace;
            for (auto step : {&T::wq, &T::wk, &T::wv, &T::wo, &T::weights, &T::layer_output})
                CHECK(same_bits(narrow_trace.*step, wide_trace.*step));

            // The matrices are most of the bytes: the 16-bit model takes
            // little more than half (vectors and position rows stay float32).
            CHECK(as_16_bit->weight_bytes() < as_float->weight_bytes() * 6 / 10);
            CHECK(as_16_bit->weight_bytes() > as_float->weight_bytes() / 2);
        }
    }
}

TEST_CASE("keep_16_bit leaves float32 checkpoints as they are, and refuses rows of another type", "[model][sixteen-bit]") {
    std::mt19937 rng(410);
    const auto wide = config_of(m::Architecture::gpt2, false), narrow = config_of(m::Architecture::gpt2, true);
    const auto tensors = random_tensors(wide, rng, false);
    const std::vector<std::int32_t> ids{1, 2, 3, 5, 8, 13, 21};
    const auto as_float = model_fixture::load(wide, tensors, "F32");
    const auto kept = model_fixture::load(narrow, tensors, "F32");
    CHECK(kept->weight_bytes() == as_float->weight_bytes());
    CHECK(same_bits(model_fixture::run(*kept, ids).logits, model_fixture::run(*as_float, ids).logits));

    m::Model model(narrow);
    const auto& wte = tensors.at("wte.weight");
    const auto f16 = model_fixture::encode(wte.values, "F16");
    const auto bf16 = model_fixture::encode(wte.values, "BF16");
    const std::size_t width = wte.shape[1];
    REQUIRE(model.load_tensor("wte.weight", "F16", f16.bytes(), m::RowRange{0, 2}, 2 * width) == "");
    REQUIRE_THAT(model.load_tensor("wte.weight", "BF16", bf16.bytes() + 2 * width * 2, m::RowRange{2, 1}, width),
                 Catch::Contains("are BF16, but its first rows were F16"));
}

TEST_CASE("a 16-bit matrix holding infinity or NaN is refused like a float32 one", "[model][sixteen-bit]") {
    std::mt19937 rng(420);
    const auto narrow = config_of(m::Architecture::gpt2, true);
    const auto tensors = random_tensors(narrow, rng, false);
    auto encoded = model_fixture::encode(tensors.at("h.0.mlp.c_fc.weight").values, "F16");
    encoded.halves[45] = 0x7c00;  // +infinity
    m::Model model(narrow);
    REQUIRE_THAT(model.load_tensor("h.0.mlp.c_fc.weight", "F16", encoded.bytes(), encoded.halves.size()),
                 Catch::Contains("not finite") && Catch::Contains("index 45"));
}

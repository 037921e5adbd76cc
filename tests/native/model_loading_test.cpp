// Loading weights: packing into panels and back, F16/BF16 blocks, and every
// refusal of load_tensor / finish / run with a message naming the problem.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "model/weight.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using Catch::Contains;

m::ModelConfig small_gpt2() {
    m::ModelConfig c;
    c.layers = 1, c.heads = 2, c.kv_heads = 2, c.model_width = 8, c.head_width = 4, c.mlp_width = 16;
    c.vocab_size = 5, c.max_positions = 6;
    return c;
}

m::TensorSpec spec(std::vector<std::size_t> shape, m::TensorLayout layout) {
    m::TensorSpec s;
    s.name = "test.weight";
    s.shape = std::move(shape);
    s.layout = layout;
    return s;
}

}  // namespace

TEST_CASE("packed weights: columns gathered and unpacked are the file's, from F32, F16 and BF16", "[model][weights]") {
    std::mt19937 rng(301);
    std::uniform_int_distribution<int> step(-32, 32);
    // Big enough that F16 and BF16 are converted in several blocks of panels.
    const std::size_t rows = 4100, cols = 600;
    std::vector<double> values(rows * cols);
    for (double& value : values) value = step(rng) / 64.0;
    std::vector<float> f32(values.begin(), values.end());
    std::vector<std::uint16_t> f16, bf16;
    for (double value : values) {
        f16.push_back(model_fixture::exact_f16(value));
        bf16.push_back(model_fixture::exact_bf16(value));
    }
    for (auto layout : {m::TensorLayout::in_out, m::TensorLayout::out_in}) {
        const bool transposed = layout == m::TensorLayout::out_in;  // B = W^T
        const std::size_t inner = transposed ? cols : rows, width = transposed ? rows : cols;
        for (auto [type, data] : {std::pair<m::WeightType, const void*>{m::WeightType::f32, f32.data()},
                                  {m::WeightType::f16, f16.data()},
                                  {m::WeightType::bf16, bf16.data()}}) {
            INFO("layout " << int(layout) << ", type " << m::weight_type_name(type));
            m::Weight w;
            REQUIRE(m::load_weight(spec({rows, cols}, layout), type, data, rows * cols, w) == "");
            REQUIRE(w.inner == inner);
            REQUIRE(w.cols == width);
            // B(p, j) for a few columns, through gather_column and unpack_columns.
            std::vector<float> column(inner), block(inner * 3);
            for (std::size_t j : {std::size_t(0), std::size_t(17), width / 2, width - 3}) {
                m::gather_column(w, j, column.data());
                m::unpack_columns(w, j, 3, block.data(), 3);
                for (std::size_t p = 0; p < inner; ++p) {
                    const auto file = [&](std::size_t jj) { return values[transposed ? jj * cols + p : p * cols + jj]; };
                    REQUIRE(column[p] == file(j));
                    for (std::size_t c = 0; c < 3; ++c) REQUIRE(block[p * 3 + c] == file(j + c));
                }
            }
        }
    }
}

TEST_CASE("a misaligned F32 buffer is converted through the block path", "[model][weights]") {
    std::vector<unsigned char> bytes(1 + 6 * 4);
    const float values[6] = {1, 2, 3, 4, 5, 6};
    std::memcpy(bytes.data() + 1, values, sizeof values);
    m::Weight w;
    REQUIRE(m::load_weight(spec({2, 3}, m::TensorLayout::out_in), m::WeightType::f32, bytes.data() + 1, 6, w) == "");
    std::vector<float> b(3 * 2);
    m::unpack_columns(w, 0, 2, b.data(), 2);
    REQUIRE(b == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("a value that is not finite is refused with its index", "[model][weights]") {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (auto layout : {m::TensorLayout::vector, m::TensorLayout::rows, m::TensorLayout::in_out, m::TensorLayout::out_in}) {
        const bool vector = layout == m::TensorLayout::vector;
        const auto shape = vector ? std::vector<std::size_t>{6} : std::vector<std::size_t>{2, 3};
        std::vector<float> data{0, 1, 2, 3, 4, 5};
        data[4] = nan;
        m::Weight w;
        REQUIRE_THAT(m::load_weight(spec(shape, layout), m::WeightType::f32, data.data(), 6, w),
                     Contains("\"test.weight\"") && Contains("not finite") && Contains("index 4"));
        REQUIRE(!w.loaded);
        REQUIRE(w.values.empty());
        data[4] = 4;
        data[5] = -inf;
        REQUIRE_THAT(m::load_weight(spec(shape, layout), m::WeightType::f32, data.data(), 6, w), Contains("index 5"));
        // F16 infinity (0x7C00) and BF16 NaN (0x7FC0).
        std::vector<std::uint16_t> halves{0x3C00, 0x7C00, 0, 0, 0, 0};
        REQUIRE_THAT(m::load_weight(spec(shape, layout), m::WeightType::f16, halves.data(), 6, w), Contains("index 1"));
        halves = {0, 0, 0, 0x7FC0, 0, 0};
        REQUIRE_THAT(m::load_weight(spec(shape, layout), m::WeightType::bf16, halves.data(), 6, w), Contains("index 3"));
    }
    std::vector<float> data{0, 1, 2, 3, 4, 5};
    data[4] = nan;
    m::Weight w;
    REQUIRE_THAT(m::load_weight(spec({2, 3}, m::TensorLayout::rows), m::WeightType::f32, data.data(), 6, w),
                 Contains("element [1, 1] of [2, 3]"));
}

TEST_CASE("load_tensor refuses unknown names, wrong counts and dtypes, and repeats", "[model][weights]") {
    m::Model model(small_gpt2());
    std::vector<float> ln(8, 1.0f);
    REQUIRE_THAT(model.load_tensor("transformer.h.0.ln_1.weight", "F32", ln.data(), 8),
                 Contains("unknown tensor \"transformer.h.0.ln_1.weight\""));
    REQUIRE_THAT(model.load_tensor("h.0.ln_1.weight", "F32", ln.data(), 7),
                 Contains("\"h.0.ln_1.weight\" has 7 values") && Contains("[8]") && Contains("needs 8"));
    REQUIRE_THAT(model.load_tensor("h.0.ln_1.weight", "F64", ln.data(), 8),
                 Contains("dtype \"F64\"") && Contains("F32, F16 and BF16"));
    REQUIRE(model.load_tensor("h.0.ln_1.weight", "F32", ln.data(), 8) == "");
    REQUIRE_THAT(model.load_tensor("h.0.ln_1.weight", "F32", ln.data(), 8), Contains("loaded twice"));
    REQUIRE_THAT(model.load_tensor("h.0.ln_2.weight", "F32", nullptr, 8), Contains("null"));
}

TEST_CASE("finish lists the missing tensors; run before it is refused", "[model][weights]") {
    std::mt19937 rng(302);
    const auto config = small_gpt2();
    auto tensors = model_fixture::random_tensors(config, rng, false);
    tensors.erase("h.0.attn.c_attn.bias");
    tensors.erase("ln_f.weight");
    m::Model model(config);
    for (const auto& [name, tensor] : tensors) {
        const std::vector<float> values(tensor.values.begin(), tensor.values.end());
        REQUIRE(model.load_tensor(name, "F32", values.data(), values.size()) == "");
    }
    const std::vector<std::int32_t> ids{1, 2};
    m::RunRequest request;
    request.ids = ids.data();
    request.count = 2;
    REQUIRE_THAT(model.run(request), Contains("not finished"));
    REQUIRE_THAT(model.finish(), Contains("2 required tensors are missing") && Contains("h.0.attn.c_attn.bias") &&
                                     Contains("ln_f.weight"));
    // A file without any of the expected names: the list is cut short.
    m::Model empty(config);
    REQUIRE_THAT(empty.finish(), Contains("16 required tensors are missing") && Contains("and 8 more"));
}

TEST_CASE("run refuses bad requests with a clear message", "[model][weights]") {
    std::mt19937 rng(303);
    const auto config = small_gpt2();
    const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
    std::vector<std::int32_t> ids{1, 2, 5};
    std::vector<float> logits(7 * 5);
    m::RunRequest request;
    request.ids = ids.data();
    request.count = 3;
    REQUIRE_THAT(model->run(request), Contains("token id 5 at position 2") && Contains("0 to 4"));
    ids[2] = -1;
    REQUIRE_THAT(model->run(request), Contains("token id -1"));
    ids.assign(7, 0);
    request.ids = ids.data();
    request.count = 7;
    REQUIRE_THAT(model->run(request), Contains("7 tokens are more than the model's 6 positions"));
    request.count = 0;
    REQUIRE_THAT(model->run(request), Contains("no tokens"));
    request.count = 2;
    request.ids = nullptr;
    REQUIRE_THAT(model->run(request), Contains("null"));
    request.ids = ids.data();
    request.logits = logits.data();
    REQUIRE(model->run(request) == "");

    m::ModelConfig bert = config;
    bert.architecture = m::Architecture::bert;
    bert.type_vocab_size = 1;
    bert.has_lm_head = false;
    const auto encoder = model_fixture::load(bert, model_fixture::random_tensors(bert, rng, false));
    REQUIRE_THAT(encoder->run(request), Contains("bert models have no language-model head"));
}

TEST_CASE("a model built from an invalid config answers every call with the config's error", "[model][weights]") {
    auto config = small_gpt2();
    config.heads = 3;
    m::Model model(config);
    float value = 0;
    REQUIRE_THAT(model.load_tensor("wte.weight", "F32", &value, 1), Contains("config is invalid") && Contains("heads (3)"));
    REQUIRE_THAT(model.finish(), Contains("config is invalid"));
    REQUIRE(model.weight_bytes() == 0);
    m::RunRequest request;
    REQUIRE_THAT(model.run(request), Contains("config is invalid"));
}

TEST_CASE("run refuses outputs too large for WebAssembly memory before computing", "[model][weights]") {
    // A valid, tiny Llama with a long context: its attention for 40000
    // tokens would be 6.4 GB.
    m::ModelConfig c;
    c.architecture = m::Architecture::llama;
    c.layers = 1, c.heads = 1, c.kv_heads = 1, c.model_width = 2, c.head_width = 2, c.mlp_width = 1;
    c.vocab_size = 3, c.max_positions = std::size_t(1) << 17, c.activation = m::Activation::silu;
    std::mt19937 rng(304);
    const auto model = model_fixture::load(c, model_fixture::random_tensors(c, rng, false));
    const std::vector<std::int32_t> ids(40000, 1);
    float never_written = 0;
    m::RunRequest request;
    request.ids = ids.data();
    request.count = ids.size();
    request.attention = &never_written;
    REQUIRE_THAT(model->run(request), Contains("40000 tokens do not fit") && Contains("6400000000 bytes"));
}

// Loading weights: packing into panels and back, F16/BF16 blocks, and every
// refusal of load_tensor / finish / run with a message naming the problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/kernels.hpp"
#include "model_families.hpp"
#include "model/weight.hpp"
#include "model_fixture.hpp"

namespace {

using model_fixture::same_bits;

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
                attnlens::gather_column(m::packed(w), j, column.data());
                attnlens::unpack_columns(m::packed(w), j, 3, block.data(), 3);
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
    attnlens::unpack_columns(m::packed(w), 0, 2, b.data(), 2);
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
    model_families::set_family(bert, m::Architecture::bert);
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
    model_families::set_family(c, m::Architecture::llama);
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

// ---- Loading in row ranges (how JavaScript stages big tensors) ----------------

namespace {

// The packed floats of `w`, bit for bit.
bool same_bits(const m::Weight& a, const m::Weight& b) {
    return a.values.size() == b.values.size() && a.inner == b.inner && a.cols == b.cols && a.layout == b.layout &&
           (a.values.empty() || std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0);
}

// Loads `data` (rows x width elements of `type`) in ranges of the given sizes (cycled).
std::string load_in_ranges(const m::TensorSpec& s, m::WeightType type, const unsigned char* data,
                           const std::vector<std::size_t>& sizes, m::Weight& w) {
    const std::size_t rows = m::tensor_rows(s.shape), width = m::row_values(s.shape);
    const std::size_t row_bytes = width * m::weight_type_bytes(type);
    std::size_t next = 0;
    for (std::size_t first = 0; first < rows; ++next) {
        const std::size_t count = std::min(sizes[next % sizes.size()], rows - first);
        if (auto error = m::load_weight_rows(s, type, data + first * row_bytes, {first, count}, count * width, w);
            !error.empty())
            return error;
        REQUIRE(w.loaded == (first + count == rows));
        first += count;
    }
    return {};
}

// Every tensor of `tensors` in ranges of `rows_per_range` rows (the last may be
// shorter), through Model::load_tensor as the Embind binding calls it.
std::unique_ptr<m::Model> load_chunked(const m::ModelConfig& config, const model_reference::Tensors& tensors,
                                       const std::string& type, std::size_t rows_per_range) {
    auto model = std::make_unique<m::Model>(config);
    for (const auto& [name, tensor] : tensors) {
        const model_fixture::EncodedTensor encoded = model_fixture::encode(tensor.values, type);
        const unsigned char* bytes = encoded.bytes();
        const std::size_t rows = m::tensor_rows(tensor.shape), width = m::row_values(tensor.shape);
        const std::size_t row_bytes = width * (type == "F32" ? 4 : 2);
        for (std::size_t first = 0; first < rows; first += rows_per_range) {
            const std::size_t count = std::min(rows_per_range, rows - first);
            INFO(name << " rows " << first << " + " << count);
            REQUIRE(model->load_tensor(name, type, bytes + first * row_bytes, m::RowRange{first, count},
                                       count * width) == "");
        }
    }
    REQUIRE(model->finish() == "");
    return model;
}

}  // namespace

TEST_CASE("a tensor loaded in row ranges packs to the same floats as loaded whole, for any split", "[model][weights]") {
    std::mt19937 rng(305);
    std::uniform_int_distribution<int> step(-32, 32);
    // 4100 x 600 so that F16 / BF16 ranges are converted in several scratch blocks.
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{101, 37}, {4100, 600}}) {
        std::vector<double> values(rows * cols);
        for (double& value : values) value = step(rng) / 64.0;
        std::vector<float> f32(values.begin(), values.end());
        std::vector<unsigned char> misaligned(1 + f32.size() * 4);
        std::memcpy(misaligned.data() + 1, f32.data(), f32.size() * 4);
        std::vector<std::uint16_t> f16, bf16;
        for (double value : values) {
            f16.push_back(model_fixture::exact_f16(value));
            bf16.push_back(model_fixture::exact_bf16(value));
        }
        const std::size_t panel = attnlens::kernels::kPanelWidth;
        // Single rows, panel-aligned ranges, ranges that start inside a panel,
        // and one range of everything.
        const std::vector<std::vector<std::size_t>> splits = {
            {1}, {7}, {panel}, {2 * panel + 3, 5}, {rows / 3 + 1}, {1500, 2600}, {rows}};
        for (auto layout : {m::TensorLayout::vector, m::TensorLayout::rows, m::TensorLayout::in_out,
                            m::TensorLayout::out_in}) {
            const bool vector = layout == m::TensorLayout::vector;
            if (vector && rows > 200) continue;
            const auto s = spec(vector ? std::vector<std::size_t>{rows * cols} : std::vector<std::size_t>{rows, cols},
                                layout);
            for (auto [type, data] :
                 {std::pair<m::WeightType, const unsigned char*>{m::WeightType::f32,
                                                                 reinterpret_cast<const unsigned char*>(f32.data())},
                  {m::WeightType::f32, misaligned.data() + 1},
                  {m::WeightType::f16, reinterpret_cast<const unsigned char*>(f16.data())},
                  {m::WeightType::bf16, reinterpret_cast<const unsigned char*>(bf16.data())}}) {
                m::Weight whole;
                REQUIRE(m::load_weight(s, type, data, rows * cols, whole) == "");
                for (const auto& sizes : splits) {
                    INFO("rows " << rows << ", layout " << int(layout) << ", type " << m::weight_type_name(type)
                                 << ", first range " << sizes[0]);
                    m::Weight w;
                    REQUIRE(load_in_ranges(s, type, data, sizes, w) == "");
                    REQUIRE(w.loaded);
                    REQUIRE(same_bits(w, whole));
                }
            }
        }
    }
}

TEST_CASE("row ranges out of order, repeated, past the end or of the wrong size are refused", "[model][weights]") {
    const auto s = spec({40, 3}, m::TensorLayout::out_in);
    std::vector<float> data(40 * 3, 0.5f);
    m::Weight w;
    REQUIRE(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 10}, 30, w) == "");
    REQUIRE(w.rows_loaded == 10);
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {5, 10}, 30, w),
                 Contains("\"test.weight\"") && Contains("rows [5, 15) arrive twice"));
    // Any error drops the rows stored before: the tensor starts again at row 0.
    REQUIRE(w.values.empty());
    REQUIRE(w.rows_loaded == 0);
    REQUIRE(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 10}, 30, w) == "");
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {20, 10}, 30, w),
                 Contains("rows [20, 30) arrive before rows [10, 20)") && Contains("in order"));
    REQUIRE(w.values.empty());
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {30, 11}, 33, w),
                 Contains("rows [30, 41) are past the end of its 40 rows"));
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 10}, 29, w),
                 Contains("rows [0, 10) have 29 values, but need 30 (10 rows of 3)"));
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 0}, 0, w), Contains("empty range"));
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, nullptr, {0, 10}, 30, w), Contains("null"));
    REQUIRE(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 40}, 120, w) == "");
    REQUIRE(w.loaded);
    REQUIRE_THAT(m::load_weight_rows(s, m::WeightType::f32, data.data(), {0, 40}, 120, w), Contains("already loaded"));
    REQUIRE(w.loaded);  // a repeat does not drop a loaded tensor
}

TEST_CASE("a value that is not finite in a later range is refused with its index in the whole tensor",
          "[model][weights]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (auto layout : {m::TensorLayout::vector, m::TensorLayout::rows, m::TensorLayout::in_out, m::TensorLayout::out_in}) {
        const bool vector = layout == m::TensorLayout::vector;
        const auto s = spec(vector ? std::vector<std::size_t>{60} : std::vector<std::size_t>{20, 3}, layout);
        const std::size_t rows = m::tensor_rows(s.shape), width = m::row_values(s.shape);
        std::vector<float> data(60, 0.25f);
        data[47] = nan;  // element [15, 2] of [20, 3]
        std::vector<std::uint16_t> halves(60, 0x3400);
        halves[47] = 0x7E00;  // F16 NaN
        for (auto [type, bytes, size] : {std::tuple<m::WeightType, const unsigned char*, std::size_t>{
                                             m::WeightType::f32, reinterpret_cast<const unsigned char*>(data.data()), 4},
                                         {m::WeightType::f16, reinterpret_cast<const unsigned char*>(halves.data()), 2}}) {
            INFO("layout " << int(layout) << ", type " << m::weight_type_name(type));
            m::Weight w;
            const std::size_t half = rows / 2;
            REQUIRE(m::load_weight_rows(s, type, bytes, {0, half}, half * width, w) == "");
            REQUIRE_THAT(m::load_weight_rows(s, type, bytes + half * width * size, {half, rows - half},
                                             (rows - half) * width, w),
                         Contains("\"test.weight\"") && Contains("not finite") && Contains("index 47"));
            REQUIRE(!w.loaded);
            REQUIRE(w.values.empty());
            REQUIRE(w.rows_loaded == 0);
        }
    }
}

TEST_CASE("a model loaded in row ranges runs bit for bit as one loaded whole", "[model][weights]") {
    std::mt19937 rng(306);
    m::ModelConfig gpt2 = small_gpt2();
    gpt2.vocab_size = 53, gpt2.max_positions = 20;  // a wte of several panels and a narrow last one
    m::ModelConfig bert = gpt2;
    model_families::set_family(bert, m::Architecture::bert), bert.type_vocab_size = 2, bert.has_lm_head = false;
    bert.activation = m::Activation::gelu_erf, bert.norm_epsilon = 1e-12f;
    m::ModelConfig llama = gpt2;
    model_families::set_family(llama, m::Architecture::llama), llama.kv_heads = 1, llama.activation = m::Activation::silu;
    llama.attention_bias = llama.attention_output_bias = true, llama.mlp_bias = true;
    const std::vector<std::int32_t> ids{3, 52, 0, 17, 9, 41, 30};
    for (const auto& config : {gpt2, bert, llama}) {
        for (bool lm_head : {false, true}) {
            if (lm_head && !config.has_lm_head) continue;
            const auto tensors = model_fixture::random_tensors(config, rng, lm_head);
            for (const std::string type : {"F32", "F16", "BF16"}) {
                const auto whole = model_fixture::load(config, tensors, type);
                const auto expected = model_fixture::run(*whole, ids);
                for (std::size_t rows_per_range : {std::size_t(1), std::size_t(5), std::size_t(16)}) {
                    INFO(m::architecture_name(config.architecture) << (lm_head ? " with lm_head" : "") << ", " << type
                                                                     << ", " << rows_per_range << " rows per range");
                    const auto chunked = load_chunked(config, tensors, type, rows_per_range);
                    REQUIRE(chunked->weight_bytes() == whole->weight_bytes());
                    const auto got = model_fixture::run(*chunked, ids);
                    REQUIRE(same_bits(got.attention, expected.attention));
                    REQUIRE(same_bits(got.hidden, expected.hidden));
                    REQUIRE(same_bits(got.logits, expected.logits));
                }
            }
        }
    }
}

TEST_CASE("finish refuses a tensor whose rows did not all arrive, the optional LM head too", "[model][weights]") {
    std::mt19937 rng(307);
    const auto config = small_gpt2();
    const auto tensors = model_fixture::random_tensors(config, rng, true);
    for (const std::string partial : {"wte.weight", "h.0.mlp.c_fc.weight", "lm_head.weight"}) {
        INFO(partial);
        m::Model model(config);
        for (const auto& [name, tensor] : tensors) {
            const std::vector<float> values(tensor.values.begin(), tensor.values.end());
            if (name != partial) {
                REQUIRE(model.load_tensor(name, "F32", values.data(), values.size()) == "");
                continue;
            }
            const std::size_t width = m::row_values(tensor.shape);
            REQUIRE(model.load_tensor(name, "F32", values.data(), m::RowRange{0, 2}, 2 * width) == "");
            // Rows of a tensor that is being loaded cannot repeat either.
            REQUIRE_THAT(model.load_tensor(name, "F32", values.data(), m::RowRange{0, 2}, 2 * width),
                         Contains("arrive twice"));
            REQUIRE(model.load_tensor(name, "F32", values.data(), m::RowRange{0, 2}, 2 * width) == "");
        }
        const std::size_t rows = m::tensor_rows(tensors.at(partial).shape);
        REQUIRE_THAT(model.finish(), Contains("1 required tensor is missing") &&
                                         Contains(partial + " (rows [2, " + std::to_string(rows) + ") did not arrive)"));
    }
    // A whole tensor after all of its rows arrived in ranges is a repeat.
    m::Model model(config);
    const std::vector<float> ln(8, 1.0f);
    REQUIRE(model.load_tensor("h.0.ln_1.weight", "F32", ln.data(), m::RowRange{0, 5}, 5) == "");
    REQUIRE(model.load_tensor("h.0.ln_1.weight", "F32", ln.data() + 5, m::RowRange{5, 3}, 3) == "");
    REQUIRE_THAT(model.load_tensor("h.0.ln_1.weight", "F32", ln.data(), 8), Contains("loaded twice"));
}

TEST_CASE("loading: the weight storage is chosen once, before the first tensor, and checked", "[model][loading]") {
    // About 0.7 G parameters: 2.6 GiB as float32, 1.3 GiB at 16 bits.
    m::ModelConfig wide;
    wide.layers = 12, wide.heads = 16, wide.kv_heads = 16, wide.model_width = 2048, wide.head_width = 128;
    wide.mlp_width = 8192, wide.vocab_size = 50257, wide.max_positions = 1024;
    wide.keep_16_bit = true;
    m::Model model(wide);
    REQUIRE(model.config_problem() == "");
    REQUIRE_THAT(model.set_weight_storage(false), Contains("as float32") && Contains("more than the 2.0 GiB"));
    REQUIRE(model.config().keep_16_bit);  // refused: unchanged
    REQUIRE(model.set_weight_storage(true) == "");

    m::Model small(small_gpt2());
    REQUIRE(small.set_weight_storage(true) == "");
    REQUIRE(small.config().keep_16_bit);
    REQUIRE(small.set_weight_storage(false) == "");
    REQUIRE_FALSE(small.config().keep_16_bit);
    const std::vector<float> values(5 * 8, 0.25f);
    REQUIRE(small.load_tensor("wte.weight", "F32", values.data(), values.size()) == "");
    REQUIRE_THAT(small.set_weight_storage(true), Contains("before the first tensor loads"));
    REQUIRE(small.set_weight_storage(false) == "");  // no change asked

    m::ModelConfig broken = small_gpt2();
    broken.heads = 3;
    m::Model invalid(broken);
    REQUIRE_THAT(invalid.config_problem(), Contains("kvHeads (2) must divide heads (3)"));
    REQUIRE_THAT(invalid.set_weight_storage(true), Contains("the model config is invalid: "));
}

TEST_CASE("loading: stored_bytes is what a loaded tensor holds, for every layout, dtype and storage", "[model][loading]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::bert, m::Architecture::llama}) {
        m::ModelConfig c = small_gpt2();
        model_families::set_family(c, architecture);
        if (architecture == m::Architecture::bert) c.type_vocab_size = 2;
        if (architecture == m::Architecture::bert) c.has_lm_head = false;
        REQUIRE(m::validate(c) == "");
        for (const m::TensorSpec& spec : m::model_tensors(c))
            for (auto type : {m::WeightType::f32, m::WeightType::f16, m::WeightType::bf16})
                for (bool keep_16_bit : {false, true}) {
                    INFO(spec.name << " " << m::weight_type_name(type) << (keep_16_bit ? " kept at 16 bits" : ""));
                    const std::size_t count = m::element_count(spec.shape);
                    const std::vector<std::uint8_t> zeros(count * m::weight_type_bytes(type), 0);
                    m::Weight weight;
                    REQUIRE(m::load_weight(spec, type, zeros.data(), count, weight, keep_16_bit) == "");
                    const std::uint64_t held = weight.values.size() * sizeof(float) + weight.halves.size() * 2;
                    REQUIRE(m::stored_bytes(spec, type, keep_16_bit) == held);
                }
    }
}

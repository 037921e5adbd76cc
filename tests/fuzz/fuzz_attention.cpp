// libFuzzer target over the C++ entry points the WebAssembly module exposes:
// attention, multi_head_attention and sentence_attention, with arbitrary
// small dimensions (zero included), options, values and text.
//
// Built with -fsanitize=fuzzer,address,undefined (see tests/fuzz/run.mjs).
// Checks beyond "no crash, no sanitizer report": inputs the validators
// reject are never computed on; for finite inputs of moderate size the
// weights are finite and every row sums to 1, or to 0 when all its keys are
// hidden, and the outputs are finite.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/multi_head.hpp"
#include "pipeline/sentence_attention.hpp"

namespace {

constexpr std::size_t kMaxSize = 24;

void require(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

// Values are either moderate (exact steps in [-16, 16], where overflow is
// impossible and the sum checks apply) or raw bit patterns (NaN, Inf,
// huge, denormal), where only "no crash" applies.
struct Values {
    bool raw = false;

    std::vector<float> take(FuzzedDataProvider& data, std::size_t count) const {
        std::vector<float> values(count);
        for (float& value : values) {
            if (raw) {
                const auto bits = data.ConsumeIntegral<std::uint32_t>();
                static_assert(sizeof bits == sizeof value);
                std::memcpy(&value, &bits, sizeof value);
            } else {
                value = static_cast<float>(data.ConsumeIntegralInRange<int>(-512, 512)) / 32.0f;
            }
        }
        return values;
    }
};

bool all_finite(const std::vector<float>& values) {
    for (float value : values)
        if (!std::isfinite(value)) return false;
    return true;
}

// Rows of `weights` (rows x cols) sum to 1, or are all 0 when every key is hidden.
void check_weights(const std::vector<float>& weights, std::size_t rows, std::size_t cols,
                   const attnlens::AttentionShape& shape, const attnlens::AttentionOptions& options) {
    require(all_finite(weights), "weights are finite");
    for (std::size_t i = 0; i < rows; ++i) {
        double sum = 0;
        bool any_visible = false;
        for (std::size_t j = 0; j < cols; ++j) {
            const float w = weights[i * cols + j];
            require(w >= 0.0f && w <= 1.0f + 1e-6f, "weights lie in [0, 1]");
            const bool hidden = attnlens::key_hidden(shape, options, i % shape.queries, j);
            if (hidden) require(w == 0.0f, "hidden keys get weight 0");
            any_visible = any_visible || !hidden;
            sum += w;
        }
        if (any_visible) require(std::fabs(sum - 1.0) < 1e-4, "visible rows sum to 1");
        else require(sum == 0.0, "fully hidden rows are 0");
    }
}

attnlens::AttentionOptions take_options(FuzzedDataProvider& data, std::vector<std::uint8_t>& mask, std::size_t keys,
                                        bool allow_scale, const Values& values) {
    attnlens::AttentionOptions options;
    options.causal = data.ConsumeBool();
    if (data.ConsumeBool()) {
        mask.resize(keys);
        for (auto& keep : mask) keep = data.ConsumeIntegralInRange<std::uint8_t>(0, 2);
        options.key_mask = mask.data();
    }
    if (values.raw) {
        // Anything at all, valid or not: only "no crash" is checked.
        options.temperature = data.ConsumeFloatingPoint<float>();
        if (allow_scale && data.ConsumeBool()) options.scale = data.ConsumeFloatingPoint<float>();
    } else {
        // What the JS layer admits at moderate sizes: scale and temperature > 0
        // (its softmax needs a non-negative multiplier), plus invalid zeros
        // and negatives for the validators.
        options.temperature = data.ConsumeBool() ? 1.0f : data.ConsumeFloatingPointInRange<float>(-1.0f, 8.0f);
        if (options.temperature > 0.0f && options.temperature < 0.05f) options.temperature = 0.05f;
        if (allow_scale && data.ConsumeBool()) {
            const float scale = data.ConsumeFloatingPointInRange<float>(0.01f, 4.0f);
            options.scale = scale;
        }
    }
    return options;
}

void fuzz_attention(FuzzedDataProvider& data, const Values& values) {
    const attnlens::AttentionShape shape{data.ConsumeIntegralInRange<std::size_t>(0, kMaxSize),
                                         data.ConsumeIntegralInRange<std::size_t>(0, kMaxSize),
                                         data.ConsumeIntegralInRange<std::size_t>(0, kMaxSize),
                                         data.ConsumeIntegralInRange<std::size_t>(0, kMaxSize)};
    std::vector<std::uint8_t> mask;
    const auto options = take_options(data, mask, shape.keys, true, values);
    if (!attnlens::validate(shape, options).empty()) return;
    const auto q = values.take(data, shape.queries * shape.key_width);
    const auto k = values.take(data, shape.keys * shape.key_width);
    const auto v = values.take(data, shape.keys * shape.value_width);
    std::vector<float> output(shape.queries * shape.value_width), weights(shape.queries * shape.keys);
    attnlens::attention(q.data(), k.data(), v.data(), shape, options, output.data(),
                        data.ConsumeBool() ? weights.data() : nullptr);
    if (values.raw) return;
    attnlens::attention(q.data(), k.data(), v.data(), shape, options, output.data(), weights.data());
    check_weights(weights, shape.queries, shape.keys, shape, options);
    require(all_finite(output), "attention output is finite");
}

void fuzz_multi_head(FuzzedDataProvider& data, const Values& values) {
    const std::size_t heads = data.ConsumeIntegralInRange<std::size_t>(0, 4);
    const std::size_t width = data.ConsumeIntegralInRange<std::size_t>(0, 12);
    attnlens::MultiHeadInput input;
    input.tokens = data.ConsumeIntegralInRange<std::size_t>(0, 12);
    const bool cross = data.ConsumeBool();
    if (cross) input.context_tokens = data.ConsumeIntegralInRange<std::size_t>(0, 12);
    const std::size_t keys = cross ? input.context_tokens : input.tokens;
    std::vector<std::uint8_t> mask;
    const auto options = take_options(data, mask, keys, false, values);

    const auto x = values.take(data, input.tokens * width);
    auto context = values.take(data, input.context_tokens * width);
    // A cross-attention call always passes a real pointer (an empty vector's
    // data() may be null, which would silently mean self-attention).
    if (cross && context.empty()) context.resize(1);
    std::vector<std::vector<float>> matrices, biases;
    for (int i = 0; i < 4; ++i) matrices.push_back(values.take(data, width * width));
    for (int i = 0; i < 4; ++i) biases.push_back(data.ConsumeBool() ? values.take(data, width) : std::vector<float>{});
    input.x = x.data();
    input.context = cross ? context.data() : nullptr;
    attnlens::MultiHeadWeights weights;
    weights.model_width = width;
    weights.heads = heads;
    weights.wq = matrices[0].data();
    weights.wk = matrices[1].data();
    weights.wv = matrices[2].data();
    weights.wo = matrices[3].data();
    const auto bias = [&](int i) { return biases[i].empty() ? nullptr : biases[i].data(); };
    weights.bq = bias(0);
    weights.bk = bias(1);
    weights.bv = bias(2);
    weights.bo = bias(3);
    if (!attnlens::validate(input, weights, options).empty()) return;
    require(attnlens::key_count(input) == keys, "the key count is the context's for cross-attention");

    std::vector<float> output(input.tokens * width), head_weights(heads * input.tokens * keys);
    attnlens::MultiHeadTrace trace;
    require(attnlens::multi_head_attention(input, weights, options, output.data(), head_weights.data(), &trace).empty(),
            "a small multi-head call has the memory it needs");
    if (values.raw) return;
    const attnlens::AttentionShape shape{input.tokens, keys, width / heads, width / heads};
    check_weights(head_weights, heads * input.tokens, keys, shape, options);
    require(std::vector<float>(trace.weights.data(), trace.weights.data() + trace.weights.size()) == head_weights,
            "the trace holds the returned weights");
    require(all_finite(output), "multi-head output is finite");
}

void fuzz_sentence(FuzzedDataProvider& data) {
    attnlens::SentenceOptions options;
    options.model_width = data.ConsumeIntegralInRange<std::size_t>(0, 40);
    options.heads = data.ConsumeIntegralInRange<std::size_t>(0, 8);
    options.seed = data.ConsumeIntegral<std::uint32_t>();
    options.causal = data.ConsumeBool();
    options.temperature = data.ConsumeFloatingPointInRange<float>(-1.0f, 4.0f);
    if (options.temperature > 0.0f && options.temperature < 0.05f) options.temperature = 0.05f;  // as in take_options
    options.identity_projections = data.ConsumeBool();
    const bool cross = data.ConsumeBool();
    const std::string context = data.ConsumeRandomLengthString(200);
    const std::string text = data.ConsumeRandomLengthString(400);
    if (!attnlens::validate(options).empty()) return;
    attnlens::MultiHeadTrace result;
    if (!attnlens::sentence_attention(text, context, cross, options, result).empty()) {
        require(result.tokens.empty(), "a refused sentence leaves the record untouched");
        return;
    }
    const std::size_t n = result.tokens.size(), keys = result.context_tokens.size();
    require(result.weights.size() == options.heads * n * keys, "sentence weights have heads*n*keys entries");
    attnlens::AttentionOptions attention_options;
    attention_options.causal = options.causal;
    const attnlens::AttentionShape shape{n, keys, options.model_width / options.heads, options.model_width / options.heads};
    const std::vector<float> weights(result.weights.data(), result.weights.data() + result.weights.size());
    check_weights(weights, options.heads * n, keys, shape, attention_options);
    require(all_finite(std::vector<float>(result.output.data(), result.output.data() + result.output.size())),
            "sentence output is finite");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    FuzzedDataProvider data(bytes, size);
    Values values;
    switch (data.ConsumeIntegralInRange<int>(0, 4)) {
        case 0: fuzz_attention(data, values); break;
        case 1: values.raw = true; fuzz_attention(data, values); break;
        case 2: fuzz_multi_head(data, values); break;
        case 3: values.raw = true; fuzz_multi_head(data, values); break;
        default: fuzz_sentence(data); break;
    }
    return 0;
}

// Embind bindings: a thin skin over the C++ core.
//
// Array arguments arrive as addresses in the WebAssembly heap, allocated and
// filled by the JavaScript layer (web/lib/), which also validates every
// argument first. The core is validated again here, and any problem comes
// back as a non-empty error string rather than an abort, so the module keeps
// working after bad input. Nothing here knows about the public JS API.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/multi_head.hpp"
#include "kernels/kernels.hpp"
#include "pipeline/sentence_attention.hpp"
#include "pipeline/tokenizer.hpp"

namespace {

using emscripten::val;

template <class T>
const T* address(std::uintptr_t value) {
    return reinterpret_cast<const T*>(value);
}
template <class T>
T* mutable_address(std::uintptr_t value) {
    return reinterpret_cast<T*>(value);
}

attnlens::AttentionOptions attention_options(bool has_scale, float scale, float temperature, bool causal,
                                             std::uintptr_t key_mask) {
    attnlens::AttentionOptions options;
    if (has_scale) options.scale = scale;
    options.temperature = temperature;
    options.causal = causal;
    options.key_mask = address<std::uint8_t>(key_mask);
    return options;
}

// Attention for `heads` stacked heads (see attnlens::attention_heads). A null
// weights pointer selects the output-only path (no m x n buffer).
std::string attention_heads_raw(std::uintptr_t q, std::uintptr_t k, std::uintptr_t v, std::size_t heads,
                                std::size_t m, std::size_t n, std::size_t dk, std::size_t dv, bool has_scale,
                                float scale, float temperature, bool causal, std::uintptr_t key_mask,
                                std::uintptr_t output, std::uintptr_t weights) {
    const attnlens::AttentionShape shape{m, n, dk, dv};
    const auto options = attention_options(has_scale, scale, temperature, causal, key_mask);
    if (auto error = attnlens::validate(shape, options); !error.empty()) return error;
    if (heads == 0) return "heads must be at least 1";
    if (!q || !k || !v || !output) return "q, k, v and output buffers are required";
    attnlens::attention_heads(address<float>(q), address<float>(k), address<float>(v), heads, shape, options,
                              mutable_address<float>(output), mutable_address<float>(weights));
    return {};
}

// max |x| over `count` floats at `values`; Infinity or NaN when one is not
// finite. One SIMD pass lets JS validate inputs already copied into the heap.
float max_magnitude(std::uintptr_t values, std::size_t count) {
    return attnlens::kernels::max_magnitude(address<float>(values), count);
}

// The arguments both multi-head entry points share, unpacked and validated.
struct MultiHeadCall {
    attnlens::MultiHeadInput input;
    attnlens::MultiHeadWeights weights;
    attnlens::AttentionOptions options;
    std::string error;  // empty when the call may run
};

MultiHeadCall multi_head_call(std::uintptr_t x, std::size_t n, std::uintptr_t context, std::size_t n_context,
                              std::size_t model_width, std::size_t heads, std::uintptr_t wq, std::uintptr_t wk,
                              std::uintptr_t wv, std::uintptr_t wo, std::uintptr_t bq, std::uintptr_t bk,
                              std::uintptr_t bv, std::uintptr_t bo, bool causal, std::uintptr_t key_mask,
                              float temperature, std::uintptr_t output) {
    MultiHeadCall call;
    call.input = {address<float>(x), n, address<float>(context), n_context};
    call.weights = {model_width,         heads,               address<float>(wq), address<float>(wk),
                    address<float>(wv),  address<float>(wo),  address<float>(bq), address<float>(bk),
                    address<float>(bv),  address<float>(bo)};
    call.options = attention_options(false, 0.0f, temperature, causal, key_mask);
    call.error = attnlens::validate(call.input, call.weights, call.options);
    if (call.error.empty() && (!x || !output)) call.error = "x and output buffers are required";
    return call;
}

std::string multi_head_attention_raw(std::uintptr_t x, std::size_t n, std::uintptr_t context,
                                     std::size_t n_context, std::size_t model_width, std::size_t heads,
                                     std::uintptr_t wq, std::uintptr_t wk, std::uintptr_t wv, std::uintptr_t wo,
                                     std::uintptr_t bq, std::uintptr_t bk, std::uintptr_t bv, std::uintptr_t bo,
                                     bool causal, std::uintptr_t key_mask, float temperature,
                                     std::uintptr_t output, std::uintptr_t head_weights) {
    const auto call = multi_head_call(x, n, context, n_context, model_width, heads, wq, wk, wv, wo, bq, bk, bv, bo,
                                      causal, key_mask, temperature, output);
    if (!call.error.empty()) return call.error;
    attnlens::multi_head_attention(call.input, call.weights, call.options, mutable_address<float>(output),
                                   mutable_address<float>(head_weights));
    return {};
}

// A fresh Float32Array holding a copy of the vector (safe after the heap grows).
val float_array(const std::vector<float>& values) {
    return val::global("Float32Array").new_(emscripten::typed_memory_view(values.size(), values.data()));
}

void set_trace(val& result, const attnlens::MultiHeadTrace& trace) {
    result.set("q", float_array(trace.q));
    result.set("k", float_array(trace.k));
    result.set("v", float_array(trace.v));
    result.set("scores", float_array(trace.scores));
    result.set("scaledScores", float_array(trace.scaled_scores));
    result.set("weights", float_array(trace.weights));
    result.set("concatenatedHeads", float_array(trace.concatenated_heads));
}

val error_object(const std::string& error) {
    val result = val::object();
    result.set("error", error);
    return result;
}

// Multi-head attention on caller-given matrices, keeping every intermediate:
// returns { error } or { q, k, v, scores, scaledScores, weights,
// concatenatedHeads }; the final output goes to the `output` buffer.
val explain_matrices_raw(std::uintptr_t x, std::size_t n, std::uintptr_t context, std::size_t n_context,
                         std::size_t model_width, std::size_t heads, std::uintptr_t wq, std::uintptr_t wk,
                         std::uintptr_t wv, std::uintptr_t wo, std::uintptr_t bq, std::uintptr_t bk,
                         std::uintptr_t bv, std::uintptr_t bo, bool causal, std::uintptr_t key_mask,
                         float temperature, std::uintptr_t output) {
    const auto call = multi_head_call(x, n, context, n_context, model_width, heads, wq, wk, wv, wo, bq, bk, bv, bo,
                                      causal, key_mask, temperature, output);
    if (!call.error.empty()) return error_object(call.error);
    attnlens::MultiHeadTrace trace;
    attnlens::multi_head_attention(call.input, call.weights, call.options, mutable_address<float>(output), nullptr,
                                   &trace);
    val result = val::object();
    set_trace(result, trace);
    return result;
}

// Token count of UTF-8 text, so JS can check limits and memory before the
// sentence pipeline allocates anything.
std::size_t token_count(const std::string& text) { return attnlens::tokenize(text).size(); }

val token_list(const std::vector<attnlens::Token>& tokens) {
    val list = val::array();
    for (const auto& token : tokens) {
        val entry = val::object();
        entry.set("text", token.text);
        entry.set("offset", token.offset);
        list.call<void>("push", entry);
    }
    return list;
}

// Returns { error } or every step of the sentence pipeline as plain JS data.
val sentence_attention(const std::string& text, const std::string& context_text, bool cross_attention,
                       std::size_t model_width, std::size_t heads, std::uint32_t seed, bool causal,
                       float temperature, bool identity_projections) {
    attnlens::SentenceOptions options;
    options.model_width = model_width;
    options.heads = heads;
    options.seed = seed;
    options.causal = causal;
    options.temperature = temperature;
    options.identity_projections = identity_projections;
    val result = val::object();
    std::string error = attnlens::validate(options);
    attnlens::SentenceAttention steps;
    if (error.empty()) error = attnlens::sentence_attention(text, context_text, cross_attention, options, steps);
    if (!error.empty()) {
        result.set("error", error);
        return result;
    }
    result.set("tokens", token_list(steps.tokens));
    result.set("contextTokens", token_list(steps.context_tokens));
    result.set("x", float_array(steps.x));
    result.set("contextX", float_array(steps.context_x));
    result.set("wq", float_array(steps.wq));
    result.set("wk", float_array(steps.wk));
    result.set("wv", float_array(steps.wv));
    result.set("wo", float_array(steps.wo));
    set_trace(result, steps.trace);
    result.set("output", float_array(steps.output));
    return result;
}

bool simd_build() { return attnlens::kernels::kSimd; }

// Bytes currently allocated by malloc: lets tests prove calls leave no leak.
std::size_t heap_bytes_in_use() { return mallinfo().uordblks; }

std::size_t max_sentence_tokens() { return attnlens::kMaxSentenceTokens; }

// Threads attention may use: 1, except in a pthreads build (ATTNLENS_THREADS).
std::size_t max_threads() { return attnlens::max_threads(); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
    emscripten::function("attentionHeadsRaw", &attention_heads_raw);
    emscripten::function("maxMagnitude", &max_magnitude);
    emscripten::function("multiHeadAttentionRaw", &multi_head_attention_raw);
    emscripten::function("explainMatricesRaw", &explain_matrices_raw);
    emscripten::function("sentenceAttention", &sentence_attention);
    emscripten::function("tokenCount", &token_count);
    emscripten::function("isSimdBuild", &simd_build);
    emscripten::function("heapBytesInUse", &heap_bytes_in_use);
    emscripten::function("maxSentenceTokens", &max_sentence_tokens);
    emscripten::function("maxThreads", &max_threads);
}

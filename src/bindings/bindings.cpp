// Embind bindings: a thin skin over the C++ core.
//
// Every call takes one request struct (a value_object) and returns one
// result: an error string ("" = done), or a record / { error } object.
// Array fields are addresses in the WebAssembly heap, allocated and filled
// by the JavaScript layer (web/lib/), which also validates every argument
// first. The core is validated again here, and any problem comes back as an
// error rather than an abort, so the module keeps working after bad input.
// The sizes and limits JavaScript checks against come from here too
// (*Bytes, max*), computed next to the code that allocates.
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
#include "record.hpp"

namespace {

using emscripten::val;
using attnlens::bindings::error_object;
using attnlens::bindings::record_object;

template <class T>
T* heap(std::uintptr_t address) {
    return reinterpret_cast<T*>(address);
}

// ---- Requests as JavaScript sends them ---------------------------------------------

// attentionHeads: `heads` stacked heads (see attnlens::attention_heads). A
// zero weights address selects the output-only path (no m x n buffer).
struct AttentionRequest {
    std::uintptr_t q = 0, k = 0, v = 0;  // float32: heads x m x dk, heads x n x dk, heads x n x dv
    std::size_t heads = 1, m = 0, n = 0, dk = 0, dv = 0;
    bool hasScale = false;
    float scale = 0, temperature = 1;
    bool causal = false;
    std::uintptr_t keyMask = 0;               // uint8 x n, or 0
    std::uintptr_t output = 0, weights = 0;  // float32: heads x m x dv, heads x m x n (or 0)
};

// The sizes of an attentionHeads call, for its memory estimate.
struct AttentionSize {
    std::size_t heads = 1, m = 0, n = 0, dk = 0, dv = 0;
    bool weights = false;  // the m x n weights returned (not the output-only path)
};

// multiHeadAttention and explainMatrices: the caller's matrices. With every
// address 0, the sizes multiHeadBytes reads (nContext 0: self-attention).
struct MultiHeadRequest {
    std::uintptr_t x = 0;
    std::size_t n = 0;
    std::uintptr_t context = 0;  // 0 = self-attention
    std::size_t nContext = 0;
    std::size_t dModel = 0, heads = 0;
    std::uintptr_t wq = 0, wk = 0, wv = 0, wo = 0, bq = 0, bk = 0, bv = 0, bo = 0;  // biases: 0 = none
    bool causal = false;
    std::uintptr_t keyMask = 0;
    float temperature = 1;
    std::uintptr_t output = 0, weights = 0;  // multiHeadAttention only (explainMatrices returns its record)
    // 0, or 4 floats: max |wq|, |wk|, |wv|, |wo| as packed (MultiHeadWeights::magnitudes)
    std::uintptr_t magnitudes = 0;
};

// explainSentence: the text's (and context's) UTF-8 bytes, the settings,
// and the bytes the call may allocate.
struct SentenceRequest {
    std::string text, context;
    bool crossAttention = false;
    std::size_t dModel = 64, heads = 4;
    std::uint32_t seed = 1;
    bool causal = false;
    float temperature = 1;
    bool identity = false;
    double maxBytes = 0;
};

// ---- Conversions ---------------------------------------------------------------

attnlens::AttentionOptions options_of(bool has_scale, float scale, float temperature, bool causal,
                                      std::uintptr_t key_mask) {
    attnlens::AttentionOptions options;
    if (has_scale) options.scale = scale;
    options.temperature = temperature;
    options.causal = causal;
    options.key_mask = heap<const std::uint8_t>(key_mask);
    return options;
}

// The request unpacked and validated.
struct MultiHeadCall {
    attnlens::MultiHeadInput input;
    attnlens::MultiHeadWeights weights;
    attnlens::AttentionOptions options;
    std::string error;  // empty when the call may run
};

MultiHeadCall multi_head_call(const MultiHeadRequest& r) {
    MultiHeadCall call;
    call.input = {heap<const float>(r.x), r.n, heap<const float>(r.context), r.context ? r.nContext : 0};
    call.weights = {r.dModel, r.heads, heap<const float>(r.wq), heap<const float>(r.wk), heap<const float>(r.wv),
                    heap<const float>(r.wo), heap<const float>(r.bq), heap<const float>(r.bk), heap<const float>(r.bv),
                    heap<const float>(r.bo), heap<float>(r.magnitudes)};
    call.options = options_of(false, 0.0f, r.temperature, r.causal, r.keyMask);
    call.error = attnlens::validate(call.input, call.weights, call.options);
    if (call.error.empty() && !r.x) call.error = "the x buffer is required";
    return call;
}

attnlens::SentenceOptions sentence_options(const SentenceRequest& r) {
    attnlens::SentenceOptions options;
    options.model_width = r.dModel;
    options.heads = r.heads;
    options.seed = r.seed;
    options.causal = r.causal;
    options.temperature = r.temperature;
    options.identity_projections = r.identity;
    return options;
}

// ---- Calls ---------------------------------------------------------------------

std::string attention_heads(const AttentionRequest& r) {
    const attnlens::AttentionShape shape{r.m, r.n, r.dk, r.dv};
    const auto options = options_of(r.hasScale, r.scale, r.temperature, r.causal, r.keyMask);
    if (auto error = attnlens::validate(shape, options); !error.empty()) return error;
    if (r.heads == 0) return "heads must be at least 1";
    if (!r.q || !r.k || !r.v || !r.output) return "q, k, v and output buffers are required";
    attnlens::attention_heads(heap<const float>(r.q), heap<const float>(r.k), heap<const float>(r.v), r.heads, shape,
                              options, heap<float>(r.output), heap<float>(r.weights));
    return {};
}

double attention_bytes(const AttentionSize& s) {
    return double(attnlens::attention_heads_bytes({s.m, s.n, s.dk, s.dv}, s.heads, s.weights));
}

std::string multi_head_attention(const MultiHeadRequest& r) {
    const auto call = multi_head_call(r);
    if (!call.error.empty()) return call.error;
    if (!r.output) return "the output buffer is required";
    return attnlens::multi_head_attention(call.input, call.weights, call.options, heap<float>(r.output),
                                          heap<float>(r.weights));
}

// The threads module's multiHeadAttention in stages (web/lib/api.js):
// multiHeadBegin once x, wq and bq are in the heap (the helper starts
// projecting Q), multiHeadFinish once the rest is (it returns with the head
// weights written and the output projection begun on the helper),
// multiHeadComplete once the caller has copied the head weights out (the
// output and the magnitudes are then written), multiHeadAbandon when the
// caller gives up in between. One staged call at a time per module.
attnlens::StagedMultiHead& staged_layer() {
    static attnlens::StagedMultiHead staged;
    return staged;
}

// Whether multiHeadBegin would start the Q projection on the helper for n
// queries of width dModel: when not, multiHeadAttention does the same in
// one call instead of three. Two numbers, not a request: a value_object
// costs microseconds to read, and this asks before every threaded layer.
bool multi_head_staging_pays(std::size_t n, std::size_t model_width) {
    return attnlens::StagedMultiHead::pays(n, model_width);
}

std::string multi_head_begin(const MultiHeadRequest& r) {
    const auto call = multi_head_call(r);
    if (!call.error.empty()) return call.error;
    return staged_layer().begin(call.input, call.weights, call.options);
}

// Two pointers, not the request begin() read: a value_object costs
// microseconds to read, on the thread the helper waits for.
std::string multi_head_finish(std::uintptr_t output, std::uintptr_t weights) {
    return staged_layer().finish_heads(heap<float>(output), heap<float>(weights));
}

// Before a staged call's copies: the helper is awake when begin() starts it.
void wake_helpers() { attnlens::wake_helpers(attnlens::max_threads()); }

void multi_head_complete() { staged_layer().complete(); }

void multi_head_abandon() { staged_layer().abandon(); }

// The record of the caller's matrices, or { error }.
val explain_matrices(const MultiHeadRequest& r) {
    const auto call = multi_head_call(r);
    if (!call.error.empty()) return error_object(call.error);
    attnlens::MultiHeadTrace record;
    if (auto error = attnlens::multi_head_attention(call.input, call.weights, call.options, nullptr, nullptr, &record);
        !error.empty())
        return error_object(error);
    return record_object(record);
}

// The bytes multiHeadAttention (head weights returned) or, traced,
// explainMatrices (every step kept) allocates for the request's sizes.
double multi_head_bytes(const MultiHeadRequest& r, bool traced) {
    if (r.heads == 0 || r.dModel % r.heads != 0) return 0;  // refused before it runs
    return double(attnlens::multi_head_bytes(r.n, r.nContext ? r.nContext : r.n, r.dModel, r.heads, !traced, traced));
}

// One call tokenizes, checks and runs the sentence pipeline: its record, or
// { error }, or what JavaScript words its own refusals from:
// { refused: 'text' | 'context', tokens } (no tokens, or more than
// limits().maxSentenceTokens) and { refused: 'memory', bytes, n, nContext } (more
// than request.maxBytes).
val explain_sentence(const SentenceRequest& r) {
    const attnlens::SentenceOptions options = sentence_options(r);
    if (auto error = attnlens::validate(options); !error.empty()) return error_object(error);
    const attnlens::SentenceTokens tokens = attnlens::tokenize_sentence(r.text, r.context, r.crossAttention);
    val refusal = val::object();
    if (const auto counts = attnlens::check_token_counts(tokens); !counts.fits) {
        refusal.set("refused", counts.context ? "context" : "text");
        refusal.set("tokens", counts.count);
        return refusal;
    }
    const std::size_t n = tokens.queries.size(), n_context = tokens.keys.size();
    // The text arrives as a std::string copied from a temporary heap buffer: twice its bytes.
    const double bytes = double(attnlens::sentence_bytes(n, n_context, r.crossAttention, options)) +
                         2.0 * double(r.text.size() + r.context.size());
    if (bytes > r.maxBytes) {
        refusal.set("refused", "memory");
        refusal.set("bytes", bytes);
        refusal.set("n", n);
        refusal.set("nContext", n_context);
        return refusal;
    }
    attnlens::MultiHeadTrace record;
    if (auto error = attnlens::sentence_attention(tokens, options, record); !error.empty()) return error_object(error);
    return record_object(record);
}

// max |x| over `count` floats at `values`; Infinity or NaN when one is not
// finite. One SIMD pass lets JS validate inputs already copied into the heap.
float max_magnitude(std::uintptr_t values, std::size_t count) {
    return attnlens::max_magnitude(heap<const float>(values), count);
}

bool simd_build() { return attnlens::kernels::kSimd; }

// Bytes currently allocated by malloc: lets tests prove calls leave no leak.
std::size_t heap_bytes_in_use() { return mallinfo().uordblks; }


// Threads attention may use: 1, except in a pthreads build (ATTNLENS_THREADS).
std::size_t max_threads() { return attnlens::max_threads(); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
    using emscripten::value_object;
    value_object<AttentionRequest>("AttentionRequest")
        .field("q", &AttentionRequest::q)
        .field("k", &AttentionRequest::k)
        .field("v", &AttentionRequest::v)
        .field("heads", &AttentionRequest::heads)
        .field("m", &AttentionRequest::m)
        .field("n", &AttentionRequest::n)
        .field("dk", &AttentionRequest::dk)
        .field("dv", &AttentionRequest::dv)
        .field("hasScale", &AttentionRequest::hasScale)
        .field("scale", &AttentionRequest::scale)
        .field("temperature", &AttentionRequest::temperature)
        .field("causal", &AttentionRequest::causal)
        .field("keyMask", &AttentionRequest::keyMask)
        .field("output", &AttentionRequest::output)
        .field("weights", &AttentionRequest::weights);
    value_object<AttentionSize>("AttentionSize")
        .field("heads", &AttentionSize::heads)
        .field("m", &AttentionSize::m)
        .field("n", &AttentionSize::n)
        .field("dk", &AttentionSize::dk)
        .field("dv", &AttentionSize::dv)
        .field("weights", &AttentionSize::weights);
    value_object<MultiHeadRequest>("MultiHeadRequest")
        .field("x", &MultiHeadRequest::x)
        .field("n", &MultiHeadRequest::n)
        .field("context", &MultiHeadRequest::context)
        .field("nContext", &MultiHeadRequest::nContext)
        .field("dModel", &MultiHeadRequest::dModel)
        .field("heads", &MultiHeadRequest::heads)
        .field("wq", &MultiHeadRequest::wq)
        .field("wk", &MultiHeadRequest::wk)
        .field("wv", &MultiHeadRequest::wv)
        .field("wo", &MultiHeadRequest::wo)
        .field("bq", &MultiHeadRequest::bq)
        .field("bk", &MultiHeadRequest::bk)
        .field("bv", &MultiHeadRequest::bv)
        .field("bo", &MultiHeadRequest::bo)
        .field("causal", &MultiHeadRequest::causal)
        .field("keyMask", &MultiHeadRequest::keyMask)
        .field("temperature", &MultiHeadRequest::temperature)
        .field("output", &MultiHeadRequest::output)
        .field("weights", &MultiHeadRequest::weights)
        .field("magnitudes", &MultiHeadRequest::magnitudes);
    value_object<SentenceRequest>("SentenceRequest")
        .field("text", &SentenceRequest::text)
        .field("context", &SentenceRequest::context)
        .field("crossAttention", &SentenceRequest::crossAttention)
        .field("dModel", &SentenceRequest::dModel)
        .field("heads", &SentenceRequest::heads)
        .field("seed", &SentenceRequest::seed)
        .field("causal", &SentenceRequest::causal)
        .field("temperature", &SentenceRequest::temperature)
        .field("identity", &SentenceRequest::identity)
        .field("maxBytes", &SentenceRequest::maxBytes);

    emscripten::function("attentionHeads", &attention_heads);
    emscripten::function("attentionBytes", &attention_bytes);
    emscripten::function("multiHeadAttention", &multi_head_attention);
    emscripten::function("multiHeadStagingPays", &multi_head_staging_pays);
    emscripten::function("multiHeadBegin", &multi_head_begin);
    emscripten::function("multiHeadFinish", &multi_head_finish);
    emscripten::function("wakeHelpers", &wake_helpers);
    emscripten::function("multiHeadComplete", &multi_head_complete);
    emscripten::function("multiHeadAbandon", &multi_head_abandon);
    emscripten::function("explainMatrices", &explain_matrices);
    emscripten::function("multiHeadBytes", &multi_head_bytes);
    emscripten::function("explainSentence", &explain_sentence);
    emscripten::function("maxMagnitude", &max_magnitude);
    emscripten::function("isSimdBuild", &simd_build);
    emscripten::function("heapBytesInUse", &heap_bytes_in_use);
    emscripten::function("maxThreads", &max_threads);
}

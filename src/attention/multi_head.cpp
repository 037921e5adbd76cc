#include "multi_head.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

bool row_major_cache(const MultiHeadInput& input) { return input.cache && !input.cache->is_packed(); }

// Rows of K and V a call projects into memory.qkv: all of them, or with a
// packed cache the new rows' (packed into the cache after).
std::size_t projected_keys(const MultiHeadInput& input) { return input.context ? input.context_tokens : input.tokens; }


// Column offsets of query head h's Q, and of its kv head's K and V, in
// their rows.
struct HeadColumns {
    std::size_t q, kv;
};
HeadColumns head_columns(const MultiHeadShape& s, std::size_t h) {
    const std::size_t kv_head = h / (s.heads / s.kv_heads);  // grouped-query attention
    return {h * s.head_width, kv_head * s.head_width};
}

// Q of every row, and into the cache K and V of the rows it lacks: the new
// rows (self-attention), or the whole context the first time.
void project_cached(const MultiHeadInput& input, const MultiHeadShape& s, const MultiHeadProjections& w,
                    const QkvLayout& at, const ProductRun& products) {
    const std::size_t d = s.model_width;
    KeyValueCache& cache = *input.cache;
    if (input.context && cache.filled > 0)
        return project(w.query, w.query_bias, input.x, d, input.tokens, at.q, at.ldq, products);
    const float* source = input.context ? input.context : input.x;
    const std::size_t rows = input.context ? input.context_tokens : input.tokens;
    float* k = at.k + cache.filled * at.ldkv;
    float* v = at.v + cache.filled * at.ldkv;
    project_together({{&w.query, w.query_bias, input.x, d, input.tokens, at.q, at.ldq},
                      {&w.key, w.key_bias, source, d, rows, k, at.ldkv},
                      {&w.value, w.value_bias, source, d, rows, v, at.ldkv}},
                     products);
}

// Q = X W_Q + b_Q of unfused projections, as project_together() takes it.
Product query_product(const MultiHeadInput& input, const MultiHeadShape& s, const MultiHeadProjections& w,
                      const QkvLayout& at) {
    return {&w.query, w.query_bias, input.x, s.model_width, input.tokens, at.q, at.ldq};
}

// Q, K and V of every row; only K and V when `query_projected` (a staged
// call's Q, projected while the caller wrote the other inputs).
void project_qkv(const MultiHeadInput& input, const MultiHeadShape& s, const MultiHeadProjections& w,
                 const QkvLayout& at, const ProductRun& products, bool query_projected) {
    const std::size_t d = s.model_width;
    const float* context = input.context ? input.context : input.x;
    if (w.fused()) return project(w.qkv, w.qkv_bias, input.x, d, input.tokens, at.q, at.ldq, products);
    if (row_major_cache(input)) return project_cached(input, s, w, at, products);
    const std::size_t nk = projected_keys(input);
    const Product key{&w.key, w.key_bias, context, d, nk, at.k, at.ldkv};
    const Product value{&w.value, w.value_bias, context, d, nk, at.v, at.ldkv};
    if (query_projected) return project_together({key, value}, products);
    project_together({query_product(input, s, w, at), key, value}, products);
}

// Into a packed cache, at its `filled` positions: the new rows' keys (after
// positions) and values, each kv head on the threads its packing is worth.
void pack_new_positions(const MultiHeadInput& input, const MultiHeadShape& s, const QkvLayout& at,
                        const ThreadPolicy& policy) {
    KeyValueCache& cache = *input.cache;
    const std::size_t n = input.tokens;
    const double work = stage_work(0.0, double(n) * double(2 * s.key_value_width()));
    run_parts(s.kv_heads, policy.for_stage(work, s.kv_heads), [&](std::size_t g, std::size_t) {
        pack_positions(cache.packed, g, at.k, at.v, at.ldkv, cache.filled, n);
    });
}

// The trace's scaled scores (m x n): the raw scores plus the head's score
// bias (T5's position bias; the options' own block), times the multiplier,
// as the softmax takes them; -inf where a mask hides the key. (Its own
// function: its sizes stay in registers across the key_hidden calls, where
// a lambda's captured references would be reloaded.)
void scale_scores(const float* scores, const AttentionShape& shape, const AttentionOptions& options, float multiplier,
                  float* scaled) {
    const std::size_t m = shape.queries, n = shape.keys;
    const float* bias = options.score_bias;
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j)
            scaled[i * n + j] = key_hidden(shape, options, i, j)
                                    ? -std::numeric_limits<float>::infinity()
                                    : (scores[i * n + j] + (bias ? bias[i * n + j] : 0.0f)) * multiplier;
}

void record_options(const MultiHeadInput& input, const MultiHeadShape& s, const AttentionOptions& options,
                    MultiHeadTrace& trace) {
    trace.n = input.tokens;
    trace.n_context = key_count(input);
    trace.shape = s;
    trace.scale = options.scale ? double(*options.scale) : 1.0 / std::sqrt(double(s.head_width));
    trace.temperature = options.temperature;
    trace.causal = options.causal;
    trace.key_mask.clear();
    if (options.key_mask) trace.key_mask.assign(options.key_mask, options.key_mask + trace.n_context);
    trace.cross_attention = input.context != nullptr;
    trace.window = options.causal ? options.window : 0;  // the window applies only with causal (attention.hpp)
    const float* context = input.context ? input.context : input.x;
    std::copy_n(input.x, input.tokens * s.model_width, trace.x.data());
    std::copy_n(context, trace.n_context * s.model_width, trace.context_x.data());
}

// Q, K, V per query head (a kv head's columns repeated for each of its
// query heads), the concatenated heads, and W_Q, W_K, W_V, W_O unpacked.
void record_steps(const MultiHeadShape& s, const MultiHeadProjections& w, const QkvLayout& at, const float* heads,
                  MultiHeadTrace& trace) {
    const std::size_t n = trace.n, nk = trace.n_context, hd = s.head_width, qw = s.query_width();
    for (std::size_t h = 0; h < s.heads; ++h) {
        const HeadColumns columns = head_columns(s, h);
        for (std::size_t i = 0; i < n; ++i)
            std::copy_n(at.q + i * at.ldq + columns.q, hd, trace.q.data() + i * qw + h * hd);
        for (std::size_t i = 0; i < nk; ++i) {
            std::copy_n(at.k + i * at.ldkv + columns.kv, hd, trace.k.data() + i * qw + h * hd);
            std::copy_n(at.v + i * at.ldkv + columns.kv, hd, trace.v.data() + i * qw + h * hd);
        }
    }
    // Each head's columns in its own matrix (the fused one holds [Q | K | V]):
    // whole column ranges (a copy per row), except that with grouped-query
    // attention each query head gets its kv head's columns.
    const PackedMatrix& query = w.fused() ? w.qkv : w.query;
    const PackedMatrix& key = w.fused() ? w.qkv : w.key;
    const PackedMatrix& value = w.fused() ? w.qkv : w.value;
    const std::size_t key_first = w.fused() ? qw : 0, value_first = w.fused() ? qw + s.key_value_width() : 0;
    unpack_columns(query, 0, qw, trace.wq.data(), qw);
    const bool grouped = s.kv_heads != s.heads;
    for (std::size_t h = 0; h < (grouped ? s.heads : 1); ++h) {
        const HeadColumns columns = head_columns(s, h);
        const std::size_t count = grouped ? hd : s.key_value_width();
        unpack_columns(key, key_first + columns.kv, count, trace.wk.data() + h * hd, qw);
        unpack_columns(value, value_first + columns.kv, count, trace.wv.data() + h * hd, qw);
    }
    unpack_columns(w.output, 0, s.model_width, trace.wo.data(), s.model_width);
    std::copy_n(heads, n * qw, trace.concatenated_heads.data());
}

ThreadPolicy policy_of(std::size_t threads) {
    return threads == 0 ? ThreadPolicy::automatic_up_to_max() : ThreadPolicy::exactly(threads);
}

MultiHeadShape shape_of(const MultiHeadWeights& weights) {
    return {weights.model_width, weights.heads, weights.heads, weights.model_width / weights.heads};
}

// The caller's d x d matrices as the layer's projections: row-major, each
// product packing the columns it computes while they are still in cache
// (and raising `largest`, W_Q's to W_O's, on the way).
MultiHeadProjections projections_of(const MultiHeadWeights& w, std::array<LargestMagnitude, 4>& largest) {
    const std::size_t d = w.model_width;
    const auto matrix = [d](const float* values, LargestMagnitude& seen) {
        return PackedMatrix{nullptr, nullptr, nullptr, values, d, d, &seen};
    };
    MultiHeadProjections p;
    p.query = matrix(w.wq, largest[0]), p.key = matrix(w.wk, largest[1]), p.value = matrix(w.wv, largest[2]);
    p.output = matrix(w.wo, largest[3]);
    p.query_bias = w.bq, p.key_bias = w.bk, p.value_bias = w.bv, p.output_bias = w.bo;
    return p;
}

// The floats multi_head_attention allocates besides the trace and the heads' scratch.
struct CallFloats {
    ProductScratch scratch;
    std::uint64_t qkv, heads;
};
CallFloats call_floats(std::size_t n, std::size_t n_context, const MultiHeadShape& s, std::size_t thread_limit) {
    const std::uint64_t d = s.model_width, rows = std::max(n, n_context);
    return {row_major_scratch(s.model_width, s.model_width, thread_limit), rows * s.qkv_width(), n * d};
}

// Every step of a trace and its size in floats.
struct TraceStep {
    FloatBuffer MultiHeadTrace::*buffer;
    std::uint64_t floats;
};
std::vector<TraceStep> trace_steps(std::uint64_t n, std::uint64_t nk, const MultiHeadShape& s) {
    const std::uint64_t d = s.model_width, qw = s.query_width();
    const std::uint64_t squares = s.heads * n * nk;
    using T = MultiHeadTrace;
    return {{&T::x, n * d},          {&T::context_x, nk * d},     {&T::wq, d * qw},
            {&T::wk, d * qw},        {&T::wv, d * qw},            {&T::wo, qw * d},
            {&T::q, n * qw},         {&T::k, nk * qw},            {&T::v, nk * qw},
            {&T::scores, squares},   {&T::scaled_scores, squares}, {&T::weights, squares},
            {&T::concatenated_heads, n * qw}, {&T::output, n * d}};
}

}  // namespace

QkvLayout qkv_layout(const MultiHeadShape& s, bool fused, const MultiHeadInput& input, float* qkv) {
    const std::size_t qw = s.query_width(), kvw = s.key_value_width();
    if (row_major_cache(input)) return {qkv, input.cache->keys, input.cache->values, qw, kvw};
    if (fused) return {qkv, qkv + qw, qkv + qw + kvw, s.qkv_width(), s.qkv_width()};
    float* k = qkv + input.tokens * qw;
    return {qkv, k, k + projected_keys(input) * kvw, qw, kvw};
}

std::size_t key_count(const MultiHeadInput& input) {
    if (input.context) return input.context_tokens;
    return input.tokens + (input.cache ? input.cache->filled : 0);
}

std::uint64_t trace_floats(std::size_t n, std::size_t n_context, const MultiHeadShape& shape) {
    std::uint64_t floats = 0;
    for (const TraceStep& step : trace_steps(n, n_context, shape)) floats += step.floats;
    return floats;
}

std::string allocate_trace(const MultiHeadInput& input, const MultiHeadShape& s, MultiHeadTrace& t) {
    std::vector<std::pair<FloatBuffer*, std::uint64_t>> buffers;
    for (const TraceStep& step : trace_steps(input.tokens, key_count(input), s))
        buffers.push_back({&(t.*step.buffer), step.floats});
    return allocate_each(buffers, "explaining a layer", input.tokens);
}

void multi_head_layer(const MultiHeadInput& input, const MultiHeadShape& s, const MultiHeadProjections& w,
                      const AttentionOptions& options, const PositionHook& positions, MultiHeadMemory& memory,
                      float* output, float* head_weights, MultiHeadTrace* trace) {
    const std::size_t n = input.tokens, nk = key_count(input), hd = s.head_width, qw = s.query_width();
    if (trace) {
        record_options(input, s, options, *trace);
        trace->qkv_bias = w.qkv_bias || w.query_bias || w.key_bias || w.value_bias;  // the fused one, or any of three
        trace->output_bias = w.output_bias != nullptr;
        trace->position_bias = options.score_bias != nullptr;
    }
    const QkvLayout at = qkv_layout(s, w.fused(), input, memory.qkv);
    project_qkv(input, s, w, at, memory.products, memory.query_projected);
    // The new rows' keys: in a row-major cache they follow its `filled` earlier rows.
    if (positions) positions(at.q, at.ldq, at.k + (row_major_cache(input) ? input.cache->filled : 0) * at.ldkv, at.ldkv, n);
    const bool packed = input.cache && input.cache->is_packed();
    if (packed) pack_new_positions(input, s, at, memory.products.policy);
    // The cache now holds every key this call attends over.
    if (input.cache) input.cache->filled = nk;

    const AttentionShape shape{n, nk, hd, hd};
    const float multiplier = score_multiplier(shape, options);
    // The heads on the threads the policy gives them, each thread with its
    // own workspace at its full size, so that no helper thread allocates (a
    // WebAssembly memory grown by a worker leaves the main thread's JS views
    // stale). A head writes only its columns of memory.heads and its own
    // n x n_context blocks.
    // Each head reads its nk keys and values (packing them, without a packed cache), whatever n.
    const double head_work =
        stage_work(double(n) * double(nk) * double(trace ? 3 * hd : 2 * hd), double(nk) * double(2 * hd));
    const std::size_t head_threads = memory.products.policy.for_stage(double(s.heads) * head_work, s.heads);
    std::vector<AttentionWorkspace>& workspaces = *memory.workspaces;
    if (workspaces.size() < head_threads) workspaces.resize(head_threads);
    for (std::size_t t = 0; t < head_threads; ++t)
        prepare_workspace(workspaces[t], shape, head_weights != nullptr || trace != nullptr, !packed || trace);
    run_parts(s.heads, head_threads, [&](std::size_t h, std::size_t thread) {
        const HeadColumns columns = head_columns(s, h);
        float* traced_weights = trace ? trace->weights.data() + h * n * nk : nullptr;
        float* weights = head_weights ? head_weights + h * n * nk : traced_weights;
        AttentionWorkspace& workspace = workspaces[thread];
        const float *q = at.q + columns.q, *k = at.k + columns.kv, *v = at.v + columns.kv;
        AttentionOptions head_options = options;
        if (options.score_bias) head_options.score_bias += h * n * nk;  // the head's own block
        if (packed)
            attention_packed(q, at.ldq, head_operands(input.cache->packed, columns.kv / hd), shape, head_options,
                             memory.heads + h * hd, qw, weights, workspace);
        else
            attention_strided(q, at.ldq, k, at.ldkv, v, at.ldkv, shape, head_options, memory.heads + h * hd, qw,
                              weights, workspace);
        if (!trace) return;  // (traced with a cache only while it was empty: k and v then hold every row)
        if (weights != traced_weights) std::copy_n(weights, n * nk, traced_weights);
        float* scores = trace->scores.data() + h * n * nk;
        attention_scores(q, at.ldq, k, at.ldkv, shape, scores, workspace);
        scale_scores(scores, shape, head_options, multiplier, trace->scaled_scores.data() + h * n * nk);
    });
    const Product output_product{&w.output, w.output_bias, memory.heads, qw, n, output, s.model_width};
    if (memory.output_started && !trace) {
        *memory.output_started = project_in_background(output_product, memory.products);
        return;
    }
    project_together({output_product}, memory.products);
    if (!trace) return;
    record_steps(s, w, at, memory.heads, *trace);
    if (output != trace->output.data()) std::copy_n(output, n * s.model_width, trace->output.data());
}

std::string validate(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options) {
    if (input.tokens == 0) return "n (tokens) must be at least 1";
    if (input.context && input.context_tokens == 0) return "nContext must be at least 1 when a context is given";
    if (weights.model_width == 0) return "dModel must be at least 1";
    if (weights.heads == 0) return "heads must be at least 1";
    if (weights.model_width % weights.heads != 0)
        return "dModel (" + std::to_string(weights.model_width) + ") must be divisible by heads (" +
               std::to_string(weights.heads) + ")";
    if (!weights.wq || !weights.wk || !weights.wv || !weights.wo) return "wq, wk, wv and wo are required";
    const std::size_t dk = weights.model_width / weights.heads;
    return validate(AttentionShape{input.tokens, key_count(input), dk, dk}, options);
}

// One call on the caller's matrices: its shape, projections, thread policy
// and memory (allocated on the calling thread before any thread starts).
struct StagedMultiHead::Call {
    MultiHeadInput input;
    MultiHeadShape shape;
    std::array<LargestMagnitude, 4> largest;  // of W_Q, W_K, W_V, W_O, as packed
    float* magnitudes;                        // MultiHeadWeights::magnitudes
    MultiHeadProjections projections;
    AttentionOptions options;
    ProductRun products;
    FloatBuffer scratch, qkv, heads;
    std::vector<AttentionWorkspace> workspaces;
    std::unique_ptr<BackgroundParts> query;   // a staged call's Q projection, once begun
    std::unique_ptr<BackgroundParts> output;  // its output projection, once finish_heads() began it

    Call(const MultiHeadInput& in, const MultiHeadWeights& weights, const AttentionOptions& opts, std::size_t threads)
        : input(in), shape(shape_of(weights)), magnitudes(weights.magnitudes),
          projections(projections_of(weights, largest)), options(opts),
          products{policy_of(threads)} {}

    std::string allocate() {
        const CallFloats floats = call_floats(input.tokens, key_count(input), shape, products.policy.limit);
        if (auto error = allocate_all({{&scratch, floats.scratch.floats}, {&qkv, floats.qkv}, {&heads, floats.heads}},
                                      "multi-head attention", input.tokens);
            !error.empty())
            return error;
        products.panel_scratch = scratch.data();
        products.panel_stride = floats.scratch.stride;
        return {};
    }

    void begin_query() {
        const QkvLayout at = qkv_layout(shape, false, input, qkv.data());
        query = project_in_background(query_product(input, shape, projections, at), products);
    }

    // The layer; with `output_later`, up to the heads (the output
    // projection begun: complete() ends it).
    void run(float* output, float* head_weights, MultiHeadTrace* trace, bool output_later = false) {
        MultiHeadMemory memory{qkv.data(), heads.data(), products, &workspaces};
        if (query) {
            query->finish();
            memory.query_projected = true;
        }
        if (output_later) memory.output_started = &this->output;
        multi_head_layer(input, shape, projections, options, {}, memory, output, head_weights, trace);
        if (!output_later) complete();
    }

    void complete() {
        if (output) output->finish();
        if (magnitudes)
            for (std::size_t i = 0; i < largest.size(); ++i) magnitudes[i] = largest[i].value();
    }
};

std::string multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                                 const AttentionOptions& options, float* output, float* head_weights,
                                 MultiHeadTrace* trace, std::size_t threads) {
    StagedMultiHead::Call call(input, weights, options, threads);
    if (auto error = call.allocate(); !error.empty()) return error;
    if (trace)
        if (auto error = allocate_trace(input, call.shape, *trace); !error.empty()) return error;
    call.run(output ? output : trace->output.data(), head_weights, trace);
    return {};
}

StagedMultiHead::StagedMultiHead() = default;
StagedMultiHead::~StagedMultiHead() = default;  // Call's BackgroundParts waits for its parts

std::string StagedMultiHead::begin(const MultiHeadInput& input, const MultiHeadWeights& weights,
                                   const AttentionOptions& options, std::size_t threads) {
    abandon();
    if (auto error = validate(input, weights, options); !error.empty()) return error;
    if (input.cache) return "a staged multi-head call takes no key-value cache";
    auto call = std::make_unique<Call>(input, weights, options, threads);
    if (auto error = call->allocate(); !error.empty()) return error;
    call->begin_query();
    call_ = std::move(call);
    return {};
}

bool StagedMultiHead::pays(std::size_t n, std::size_t model_width, const ThreadPolicy& policy) {
    const PackedMatrix query{nullptr, nullptr, nullptr, nullptr, model_width, model_width};  // begin_query()'s W_Q
    return product_threads({&query, nullptr, nullptr, model_width, n, nullptr, model_width}, policy) > 1;
}

std::string StagedMultiHead::finish(float* output, float* head_weights) {
    if (auto error = finish_heads(output, head_weights); !error.empty()) return error;
    complete();
    return {};
}

std::string StagedMultiHead::finish_heads(float* output, float* head_weights) {
    if (!call_ || call_->output) return "no staged multi-head call was begun";
    if (!output) return "the output buffer is required";
    call_->run(output, head_weights, nullptr, true);
    return {};
}

void StagedMultiHead::complete() {
    if (!call_) return;
    call_->complete();
    call_.reset();
}

void StagedMultiHead::abandon() { call_.reset(); }

std::uint64_t multi_head_bytes(std::size_t n, std::size_t n_context, std::size_t model_width, std::size_t heads,
                               bool with_weights, bool traced, std::size_t threads) {
    const MultiHeadShape s{model_width, heads, heads, model_width / heads};
    const std::size_t thread_limit = usable_threads(threads == 0 ? max_threads() : threads);
    const CallFloats floats = call_floats(n, n_context, s, thread_limit);
    const std::uint64_t trace = traced ? trace_floats(n, n_context, s) : 0;
    const std::uint64_t head_threads = std::min(thread_limit, heads);
    const AttentionShape shape{n, n_context, s.head_width, s.head_width};
    const std::uint64_t workspaces = head_threads * workspace_floats(shape, with_weights || traced);
    return (floats.scratch.floats + floats.qkv + floats.heads + trace + workspaces) * sizeof(float);
}

}  // namespace attnlens

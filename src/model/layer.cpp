#include "layer.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "../kernels/kernels.hpp"
#include "blocks.hpp"

namespace attnlens::model {

namespace {

// Allocates each (buffer, floats) pair; "" or an error naming the total.
std::string allocate_all(const BufferSizes& buffers, const char* what, std::size_t tokens) {
    const std::uint64_t total = total_floats(buffers);
    const std::string error = std::string("out of memory: ") + what + " for " + std::to_string(tokens) +
                              " tokens needs " + std::to_string(total * sizeof(float)) + " bytes";
    if (total * sizeof(float) > kMaxMemoryBytes) return error;
    for (const auto& buffer : buffers)
        if (!buffer.first->allocate(static_cast<std::size_t>(buffer.second))) {
            for (const auto& allocated : buffers) allocated.first->release();
            return error;
        }
    return {};
}

const Weight* bias_of(const Weight& bias) { return bias.loaded ? &bias : nullptr; }

// Q, K and V of every token into acts.qkv: [Q | K | V], one row per token.
void project_qkv(const ModelConfig& c, const ArchitectureTraits& traits, const LayerWeights& l, const float* input,
                 Activations& acts) {
    const std::size_t d = c.model_width, width = qkv_width(c), qw = query_width(c), kvw = key_value_width(c);
    float* qkv = acts.qkv.data();
    if (traits.fused_qkv) {
        project(l.qkv, bias_of(l.qkv_bias), input, d, acts.n, qkv, width, acts.products);
        return;
    }
    project(l.query, bias_of(l.query_bias), input, d, acts.n, qkv, width, acts.products);
    project(l.key, bias_of(l.key_bias), input, d, acts.n, qkv + qw, width, acts.products);
    project(l.value, bias_of(l.value_bias), input, d, acts.n, qkv + qw + kvw, width, acts.products);
}

// Rotates every query head and every key head of every token by its position.
void apply_rotary(const ModelConfig& c, Activations& acts) {
    const std::size_t width = qkv_width(c), hd = c.head_width, half = hd / 2;
    for (std::size_t p = 0; p < acts.n; ++p) {
        float* row = acts.qkv.data() + p * width;
        const float* cos = acts.rotary_cos.data() + p * half;
        const float* sin = acts.rotary_sin.data() + p * half;
        for (std::size_t h = 0; h < c.heads + c.kv_heads; ++h) rotary(row + h * hd, hd, cos, sin);
    }
}

// Column offsets into a row of acts.qkv of query head h's Q, K and V.
struct HeadColumns {
    std::size_t q, k, v;
};
HeadColumns head_columns(const ModelConfig& c, std::size_t h) {
    const std::size_t hd = c.head_width, qw = query_width(c), kvw = key_value_width(c);
    const std::size_t kv_head = h / (c.heads / c.kv_heads);  // grouped-query attention
    return {h * hd, qw + kv_head * hd, qw + kvw + kv_head * hd};
}

// The trace's per-query-head copies of Q, K, V (n x H*hd).
void trace_qkv(const ModelConfig& c, const Activations& acts, LayerTrace& trace) {
    const std::size_t width = qkv_width(c), hd = c.head_width, qw = query_width(c);
    for (std::size_t i = 0; i < acts.n; ++i)
        for (std::size_t h = 0; h < c.heads; ++h) {
            const HeadColumns columns = head_columns(c, h);
            const float* row = acts.qkv.data() + i * width;
            std::copy_n(row + columns.q, hd, trace.q.data() + i * qw + h * hd);
            std::copy_n(row + columns.k, hd, trace.k.data() + i * qw + h * hd);
            std::copy_n(row + columns.v, hd, trace.v.data() + i * qw + h * hd);
        }
}

// Raw and scaled scores of head h (n x n each) for the trace.
void trace_scores(const ModelConfig& c, const Activations& acts, const AttentionShape& shape,
                  const AttentionOptions& options, std::size_t h, AttentionWorkspace& workspace, LayerTrace& trace) {
    const std::size_t n = acts.n, width = qkv_width(c);
    const HeadColumns columns = head_columns(c, h);
    float* scores = trace.scores.data() + h * n * n;
    attention_scores(acts.qkv.data() + columns.q, width, acts.qkv.data() + columns.k, width, shape, scores,
                     workspace);
    const float multiplier = score_multiplier(shape, options);
    float* scaled = trace.scaled_scores.data() + h * n * n;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            scaled[i * n + j] = key_hidden(shape, options, i, j) ? -std::numeric_limits<float>::infinity()
                                                                 : scores[i * n + j] * multiplier;
}

// The end of each half: x += out (pre-norm), or x = norm(x + out) (post-norm).
void add_and_normalize(const ModelConfig& c, const ArchitectureTraits& traits, const Weight& norm,
                       const Weight& norm_bias, Activations& acts) {
    add_residual(acts.x.data(), acts.projected.data(), acts.n * c.model_width);
    if (!traits.pre_norm) normalize_rows(c, norm, norm_bias, acts.x.data(), acts.x.data(), acts.n);
}

}  // namespace

ArchitectureTraits traits_of(Architecture architecture) {
    switch (architecture) {
        case Architecture::gpt2: return {true, false, true, false, true, false};
        case Architecture::bert: return {false, false, false, false, false, false};
        case Architecture::llama: return {true, true, true, true, false, true};
    }
    return {};
}

BufferSizes Activations::buffer_sizes(const ModelConfig& c, std::size_t tokens, const ThreadPolicy& thread_policy) {
    const ArchitectureTraits traits = traits_of(c.architecture);
    const std::uint64_t rows = tokens, d = c.model_width, I = c.mlp_width, half = c.head_width / 2;
    return {{&x, rows * d},
            {&normed, rows * d},
            {&qkv, rows * qkv_width(c)},
            {&heads, rows * query_width(c)},
            {&projected, rows * d},
            {&up, rows * I},
            {&gate, traits.gated_mlp ? rows * I : 0},
            {&rotary_cos, traits.rotary ? rows * half : 0},
            {&rotary_sin, traits.rotary ? rows * half : 0},
            {&panel_scratch, c.keep_16_bit ? thread_policy.limit * panel_scratch_floats(c) : 0}};
}

std::uint64_t Activations::panel_scratch_floats(const ModelConfig& c) {
    // One widened panel per thread, as deep as the deepest product's inner
    // dimension (d, I, or H*hd for the output projection).
    return std::max({std::uint64_t(c.model_width), std::uint64_t(c.mlp_width), std::uint64_t(query_width(c))}) *
           kernels::kPanelWidth;
}

std::size_t Activations::workspace_count(const ModelConfig& c, const ThreadPolicy& thread_policy) {
    return std::min(thread_policy.limit, c.heads);
}

std::string Activations::allocate(const ModelConfig& c, std::size_t tokens, const ThreadPolicy& thread_policy) {
    n = tokens;
    products = ProductRun{thread_policy};
    workspaces.resize(workspace_count(c, thread_policy));
    auto error = allocate_all(buffer_sizes(c, tokens, thread_policy), "the forward pass", tokens);
    if (error.empty() && !panel_scratch.empty())
        products.panel_scratch = panel_scratch.data(), products.panel_stride = panel_scratch_floats(c);
    return error;
}

BufferSizes trace_buffer_sizes(const ModelConfig& c, std::size_t tokens, LayerTrace& t) {
    const std::uint64_t n = tokens, d = c.model_width, qw = query_width(c), squares = c.heads * n * n;
    return {{&t.x, n * d},
            {&t.wq, d * qw},
            {&t.wk, d * qw},
            {&t.wv, d * qw},
            {&t.wo, qw * d},
            {&t.q, n * qw},
            {&t.k, n * qw},
            {&t.v, n * qw},
            {&t.scores, squares},
            {&t.scaled_scores, squares},
            {&t.weights, squares},
            {&t.concatenated_heads, n * qw},
            {&t.output, n * d},
            {&t.layer_output, n * d}};
}

std::string allocate_trace(const ModelConfig& c, std::size_t tokens, LayerTrace& t) {
    return allocate_all(trace_buffer_sizes(c, tokens, t), "explaining a layer", tokens);
}

std::uint64_t total_floats(const BufferSizes& buffers) {
    std::uint64_t total = 0;
    for (const auto& buffer : buffers) total += buffer.second;
    return total;
}

void normalize_rows(const ModelConfig& c, const Weight& weight, const Weight& bias, const float* in, float* out,
                    std::size_t rows) {
    const std::size_t d = c.model_width;
    const bool rms = traits_of(c.architecture).rms_norm;
    for (std::size_t i = 0; i < rows; ++i) {
        if (rms) rms_norm(in + i * d, d, weight.values.data(), c.norm_epsilon, out + i * d);
        else layer_norm(in + i * d, d, weight.values.data(), bias.loaded ? bias.values.data() : nullptr,
                        c.norm_epsilon, out + i * d);
    }
}

void attention_half(const ModelConfig& c, const LayerWeights& l, Activations& acts, const std::uint8_t* key_mask,
                    float* attention, LayerTrace* trace) {
    const ArchitectureTraits traits = traits_of(c.architecture);
    const std::size_t n = acts.n, d = c.model_width, hd = c.head_width, qw = query_width(c), width = qkv_width(c);

    const float* input = acts.x.data();
    if (traits.pre_norm) {
        normalize_rows(c, l.attention_norm, l.attention_norm_bias, acts.x.data(), acts.normed.data(), n);
        input = acts.normed.data();
    }
    if (trace) std::copy_n(input, n * d, trace->x.data());
    project_qkv(c, traits, l, input, acts);
    if (traits.rotary) apply_rotary(c, acts);
    if (trace) trace_qkv(c, acts, *trace);

    const AttentionShape shape{n, n, hd, hd};  // scale 1 / sqrt(hd), the default
    AttentionOptions options;
    options.causal = traits.causal;
    options.key_mask = key_mask;
    // The heads on the threads the policy gives them, each thread with its
    // own workspace; a head writes only its own columns of acts.heads and
    // its own n x n block of weights.
    const bool with_weights = attention || trace;
    const double head_work = double(n) * double(n) * double(2 * hd);
    const std::size_t head_threads = std::min(acts.products.policy.for_stage(double(c.heads) * head_work, c.heads),
                                              acts.workspaces.size());
    for (std::size_t t = 0; t < head_threads; ++t) prepare_workspace(acts.workspaces[t], shape, with_weights);
    run_parts(c.heads, head_threads, [&](std::size_t h, std::size_t thread) {
        const HeadColumns columns = head_columns(c, h);
        float* weights = attention ? attention + h * n * n : trace ? trace->weights.data() + h * n * n : nullptr;
        const float* qkv = acts.qkv.data();
        AttentionWorkspace& workspace = acts.workspaces[thread];
        attention_strided(qkv + columns.q, width, qkv + columns.k, width, qkv + columns.v, width, shape, options,
                          acts.heads.data() + h * hd, qw, weights, workspace);
        if (!trace) return;
        if (weights != trace->weights.data() + h * n * n) std::copy_n(weights, n * n, trace->weights.data() + h * n * n);
        trace_scores(c, acts, shape, options, h, workspace, *trace);
    });
    project(l.attention_output, bias_of(l.attention_output_bias), acts.heads.data(), qw, n, acts.projected.data(), d,
            acts.products);
    if (trace) {
        std::copy_n(acts.heads.data(), n * qw, trace->concatenated_heads.data());
        std::copy_n(acts.projected.data(), n * d, trace->output.data());
    }
    add_and_normalize(c, traits, l.attention_norm, l.attention_norm_bias, acts);
}

void mlp_half(const ModelConfig& c, const LayerWeights& l, Activations& acts) {
    const ArchitectureTraits traits = traits_of(c.architecture);
    const std::size_t n = acts.n, d = c.model_width, I = c.mlp_width;
    const float* input = acts.x.data();
    if (traits.pre_norm) {
        normalize_rows(c, l.mlp_norm, l.mlp_norm_bias, acts.x.data(), acts.normed.data(), n);
        input = acts.normed.data();
    }
    project(l.mlp_up, bias_of(l.mlp_up_bias), input, d, n, acts.up.data(), I, acts.products);
    const float* hidden = acts.up.data();
    if (traits.gated_mlp) project(l.mlp_gate, bias_of(l.mlp_gate_bias), input, d, n, acts.gate.data(), I, acts.products);
    // Row by row, on threads when the policy gives them: an element's
    // activation does not depend on its neighbours (the vector kernels pad
    // the tail into a full vector), so any split gives the same bits. The
    // work counts a tanh or exp as ~10 multiply-adds.
    run_parts(n, acts.products.policy.for_stage(10.0 * double(n) * double(I), n), [&](std::size_t row, std::size_t) {
        if (traits.gated_mlp) gated_activate(c.activation, acts.gate.data() + row * I, acts.up.data() + row * I, I);
        else activate(c.activation, acts.up.data() + row * I, I);
    });
    if (traits.gated_mlp) hidden = acts.gate.data();
    project(l.mlp_down, bias_of(l.mlp_down_bias), hidden, I, n, acts.projected.data(), d, acts.products);
    add_and_normalize(c, traits, l.mlp_norm, l.mlp_norm_bias, acts);
}

void trace_weights(const ModelConfig& c, const LayerWeights& l, LayerTrace& trace) {
    const std::size_t d = c.model_width, hd = c.head_width, qw = query_width(c);
    if (traits_of(c.architecture).fused_qkv) {
        unpack_columns(l.qkv, 0, qw, trace.wq.data(), qw);
        unpack_columns(l.qkv, qw, qw, trace.wk.data(), qw);
        unpack_columns(l.qkv, 2 * qw, qw, trace.wv.data(), qw);
    } else {
        unpack_columns(l.query, 0, qw, trace.wq.data(), qw);
        // K and V columns relative to their own projections: head_columns()
        // gives offsets into [Q | K | V].
        const std::size_t kvw = key_value_width(c);
        for (std::size_t h = 0; h < c.heads; ++h) {
            const HeadColumns columns = head_columns(c, h);
            unpack_columns(l.key, columns.k - qw, hd, trace.wk.data() + h * hd, qw);
            unpack_columns(l.value, columns.v - qw - kvw, hd, trace.wv.data() + h * hd, qw);
        }
    }
    unpack_columns(l.attention_output, 0, d, trace.wo.data(), d);
}

}  // namespace attnlens::model

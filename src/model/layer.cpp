#include "layer.hpp"

#include <algorithm>

#include "../kernels/kernels.hpp"
#include "blocks.hpp"

namespace attnlens::model {

namespace {

// Separate Q, K, V and output projections (and their biases, when loaded).
MultiHeadProjections separate_projections(const Weight& q, const Weight& q_bias, const Weight& k, const Weight& k_bias,
                                          const Weight& v, const Weight& v_bias, const Weight& o, const Weight& o_bias) {
    MultiHeadProjections p;
    p.query = packed(q), p.key = packed(k), p.value = packed(v), p.output = packed(o);
    p.query_bias = bias_values(q_bias), p.key_bias = bias_values(k_bias), p.value_bias = bias_values(v_bias);
    p.output_bias = bias_values(o_bias);
    return p;
}

}  // namespace

MultiHeadProjections projections_of(const LayerWeights& l) {
    MultiHeadProjections p = separate_projections(l.query, l.query_bias, l.key, l.key_bias, l.value, l.value_bias,
                                                  l.attention_output, l.attention_output_bias);
    if (l.qkv.loaded) {  // the GPT-2 layout's fused [Q | K | V]
        p.qkv = packed(l.qkv);
        p.qkv_bias = bias_values(l.qkv_bias);
    }
    return p;
}

MultiHeadProjections cross_projections_of(const LayerWeights& l) {
    return separate_projections(l.cross_query, l.cross_query_bias, l.cross_key, l.cross_key_bias, l.cross_value,
                                l.cross_value_bias, l.cross_output, l.cross_output_bias);
}

namespace {

// Rotates the first rotated_width columns of every query head and every key
// head of every position by it (all of them but for partial rotary).
void apply_rotary(const ModelConfig& c, const Activations& acts, float* q, std::size_t ldq, float* k,
                  std::size_t ldk, std::size_t rows) {
    const std::size_t hd = c.head_width, turned = rotated_width(c), half = turned / 2;
    for (std::size_t p = 0; p < rows; ++p) {
        const float* cos = acts.rotary_cos.data() + p * half;
        const float* sin = acts.rotary_sin.data() + p * half;
        for (std::size_t h = 0; h < c.heads; ++h) rotary(q + p * ldq + h * hd, turned, cos, sin);
        for (std::size_t h = 0; h < c.kv_heads; ++h) rotary(k + p * ldk + h * hd, turned, cos, sin);
    }
}

// The end of each half: x += out (pre-norm), or x = norm(x + out) (post-norm).
void add_and_normalize(const ModelConfig& c, const Weight& norm, const Weight& norm_bias, Activations& acts) {
    add_residual(acts.x.data(), acts.projected.data(), acts.n * c.model_width);
    if (c.post_norm) normalize_rows(c, norm, norm_bias, acts.x.data(), acts.x.data(), acts.n);
}

}  // namespace

MultiHeadShape multi_head_shape(const ModelConfig& c) {
    return {c.model_width, c.heads, c.kv_heads, c.head_width};
}

BufferSizes Activations::buffer_sizes(const ModelConfig& c, std::size_t tokens, const ThreadPolicy& thread_policy) {
    const bool rotary = c.position == PositionKind::rotary;
    const std::uint64_t rows = tokens, d = c.model_width, I = c.mlp_width, half = rotated_width(c) / 2;
    const std::uint64_t E = embedded_width(c);
    return {{&x, rows * d},
            {&embedded, E != d ? rows * E : 0},
            {&normed, rows * d},
            {&qkv, rows * qkv_width(c)},
            {&heads, rows * query_width(c)},
            {&projected, rows * d},
            {&up, rows * I},
            {&gate, c.gated_mlp ? rows * I : 0},
            {&mlp_input, c.parallel_residual && !c.shared_norm ? rows * d : 0},
            {&rotary_cos, rotary ? rows * half : 0},
            {&rotary_sin, rotary ? rows * half : 0},
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
    auto error = allocate_each(buffer_sizes(c, tokens, thread_policy), "the forward pass", tokens);
    if (error.empty() && !panel_scratch.empty())
        products.panel_scratch = panel_scratch.data(), products.panel_stride = panel_scratch_floats(c);
    return error;
}

std::uint64_t total_floats(const BufferSizes& buffers) {
    std::uint64_t total = 0;
    for (const auto& buffer : buffers) total += buffer.second;
    return total;
}

void normalize_rows(const ModelConfig& c, const Weight& weight, const Weight& bias, const float* in, float* out,
                    std::size_t rows, std::size_t width) {
    const std::size_t d = width ? width : c.model_width;
    const bool rms = c.norm != NormKind::layer;
    const float offset = c.norm == NormKind::rms_plus_one ? 1.0f : 0.0f;
    for (std::size_t i = 0; i < rows; ++i) {
        if (rms) rms_norm(in + i * d, d, weight.values.data(), c.norm_epsilon, out + i * d, offset);
        else layer_norm(in + i * d, d, weight.values.data(), bias.loaded ? bias.values.data() : nullptr,
                        c.norm_epsilon, out + i * d);
    }
}

void attention_sublayer(const ModelConfig& c, const MultiHeadProjections& p, const Weight& norm, const Weight& norm_bias,
                        Activations& acts, const SublayerInput& in, const AttentionOptions& options,
                        const PositionHook& positions, float* attention, MultiHeadTrace* trace) {
    const float* input = acts.x.data();
    if (!c.post_norm) {
        normalize_rows(c, norm, norm_bias, acts.x.data(), acts.normed.data(), acts.n);
        input = acts.normed.data();
    }
    MultiHeadMemory memory{acts.qkv.data(), acts.heads.data(), acts.products, &acts.workspaces};
    multi_head_layer(MultiHeadInput{input, acts.n, in.context, in.context_tokens, in.cache}, multi_head_shape(c), p,
                     options, positions, memory, acts.projected.data(), attention, trace);
    add_and_normalize(c, norm, norm_bias, acts);
}

AttentionOptions layer_options(const ModelConfig& c, std::size_t layer, const std::uint8_t* key_mask) {
    AttentionOptions options;  // scale 1 / sqrt(hd) unless the model says otherwise
    if (c.attention_scale > 0.0f) options.scale = c.attention_scale;
    options.causal = c.causal;
    options.window = layer_window(c, layer);
    options.key_mask = key_mask;
    return options;
}

void attention_half(const ModelConfig& c, std::size_t layer, const LayerWeights& l, Activations& acts,
                    const std::uint8_t* key_mask, float* attention, MultiHeadTrace* trace, KeyValueCache* cache) {
    // Parallel residual: the MLP reads the layer's input, not attention's sum
    // (with a shared norm: acts.normed, which the attention leaves as it is).
    if (c.parallel_residual && !c.shared_norm)
        normalize_rows(c, l.mlp_norm, l.mlp_norm_bias, acts.x.data(), acts.mlp_input.data(), acts.n);
    const AttentionOptions options = layer_options(c, layer, key_mask);
    PositionHook positions;
    if (c.position == PositionKind::rotary)
        positions = [&](float* q, std::size_t ldq, float* k, std::size_t ldk, std::size_t rows) {
            apply_rotary(c, acts, q, ldq, k, ldk, rows);
        };
    attention_sublayer(c, projections_of(l), l.attention_norm, l.attention_norm_bias, acts, {nullptr, 0, cache},
                       options, positions, attention, trace);
}


QkvLayout layer_rows(const ModelConfig& c, const LayerWeights& l, const Activations& acts) {
    // fused: projections_of takes GPT-2's [Q | K | V] when it is loaded
    return qkv_layout(multi_head_shape(c), l.qkv.loaded, MultiHeadInput{nullptr, acts.n, nullptr, 0},
                      const_cast<float*>(acts.qkv.data()));
}

const float* layer_values(const ModelConfig& c, const LayerWeights& l, const Activations& acts, std::size_t& stride) {
    const QkvLayout rows = layer_rows(c, l, acts);
    stride = rows.ldkv;
    return rows.v;
}

void mlp_half(const ModelConfig& c, const LayerWeights& l, Activations& acts) {
    const std::size_t n = acts.n, d = c.model_width, I = c.mlp_width;
    const float* input = acts.x.data();
    if (c.parallel_residual) {
        input = c.shared_norm ? acts.normed.data() : acts.mlp_input.data();  // normalized by attention_half
    } else if (!c.post_norm) {
        normalize_rows(c, l.mlp_norm, l.mlp_norm_bias, acts.x.data(), acts.normed.data(), n);
        input = acts.normed.data();
    }
    project(packed(l.mlp_up), bias_values(l.mlp_up_bias), input, d, n, acts.up.data(), I, acts.products);
    const float* hidden = acts.up.data();
    if (c.gated_mlp) project(packed(l.mlp_gate), bias_values(l.mlp_gate_bias), input, d, n, acts.gate.data(), I, acts.products);
    // Row by row, on threads when the policy gives them: an element's
    // activation does not depend on its neighbours (the vector kernels pad
    // the tail into a full vector), so any split gives the same bits. The
    // work counts an element as 50 multiply-adds: GPT-2's GELU takes 2.2 ns
    // an element in Chromium, where a product does 50 multiply-adds (at 10,
    // M's 128 x 3072 stayed on one thread: 10 ms of a 450 ms forward).
    run_parts(n, acts.products.policy.for_stage(50.0 * double(n) * double(I), n), [&](std::size_t row, std::size_t) {
        if (c.gated_mlp) gated_activate(c.activation, acts.gate.data() + row * I, acts.up.data() + row * I, I);
        else activate(c.activation, acts.up.data() + row * I, I);
    });
    if (c.gated_mlp) hidden = acts.gate.data();
    project(packed(l.mlp_down), bias_values(l.mlp_down_bias), hidden, I, n, acts.projected.data(), d, acts.products);
    add_and_normalize(c, l.mlp_norm, l.mlp_norm_bias, acts);
}

}  // namespace attnlens::model

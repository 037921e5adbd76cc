#include "attention.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <vector>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

constexpr float kHidden = -std::numeric_limits<float>::infinity();

// Queries are processed this many at a time: scores, softmax and the
// weighted sum of values run on one block while its scores are still in
// cache; without a weights buffer only this block's scores exist (O(n)).
constexpr std::size_t kQueryBlock = 24;

// Keys that query `query` may see under the causal mask: j < query + 1 + (n - m),
// clamped to [0, n]. Without the causal mask, all n.
std::size_t visible_keys(const AttentionShape& shape, const AttentionOptions& options, std::size_t query) {
    if (!options.causal) return shape.keys;
    const std::size_t limit = query + 1 + shape.keys;  // compared with m added to both sides: no underflow
    return limit <= shape.queries ? 0 : std::min(shape.keys, limit - shape.queries);
}

// The first key a query may see: under a causal window, the `window` keys
// before visible_keys(); otherwise 0.
std::size_t first_visible_key(const AttentionOptions& options, std::size_t visible) {
    return options.causal && options.window > 0 && visible > options.window ? visible - options.window : 0;
}

// Hides the keys the key mask removes, the causally hidden keys of rows
// whose horizon is shorter than the block's, and the keys before a window.
void hide_masked_keys(const AttentionShape& shape, const AttentionOptions& options, std::size_t first_query,
                      std::size_t query_count, std::size_t block_visible, float* scores, std::size_t ld_scores) {
    for (std::size_t r = 0; r < query_count; ++r) {
        float* row = scores + r * ld_scores;
        const std::size_t visible = visible_keys(shape, options, first_query + r);
        for (std::size_t j = visible; j < block_visible; ++j) row[j] = kHidden;
        for (std::size_t j = 0, first = first_visible_key(options, visible); j < first; ++j) row[j] = kHidden;
        if (options.key_mask)
            for (std::size_t j = 0; j < visible; ++j)
                if (options.key_mask[j] == 0) row[j] = kHidden;
    }
}

}  // namespace

float max_magnitude(const float* values, std::size_t count) { return kernels::max_magnitude(values, count); }

float score_multiplier(const AttentionShape& shape, const AttentionOptions& options) {
    const float scale = options.scale ? *options.scale : 1.0f / std::sqrt(float(shape.key_width));
    return scale / options.temperature;
}

bool key_hidden(const AttentionShape& shape, const AttentionOptions& options, std::size_t query, std::size_t key) {
    if (options.key_mask != nullptr && options.key_mask[key] == 0) return true;
    // Causal alignment to the end: with m < n, the m queries are the last m
    // positions of the key sequence, so query i sits at position i + (n - m).
    if (options.causal && key + shape.queries > query + shape.keys) return true;
    // The window: key + window <= position, with position = query + (n - m).
    if (options.causal && options.window > 0 && key + options.window + shape.queries <= query + shape.keys) return true;
    return false;
}

std::string validate(const AttentionShape& shape, const AttentionOptions& options) {
    if (shape.queries == 0) return "queries (m) must be at least 1";
    if (shape.keys == 0) return "keys (n) must be at least 1";
    if (shape.key_width == 0) return "key width (dk) must be at least 1";
    if (shape.value_width == 0) return "value width (dv) must be at least 1";
    if (!(options.temperature > 0.0f) || !std::isfinite(options.temperature))
        return "temperature must be a finite number greater than 0";
    // A negative scale would turn masked -inf scores into +inf after scaling.
    if (options.scale && !(std::isfinite(*options.scale) && *options.scale > 0.0f))
        return "scale must be a finite number greater than 0";
    return {};
}

void attention_scores(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const AttentionShape& shape,
                      float* scores, AttentionWorkspace& workspace) {
    const std::size_t n = shape.keys, dk = shape.key_width;
    workspace.keys.resize(kernels::packed_size(dk, n));
    kernels::pack_transposed_panels(k, ldk, n, dk, workspace.keys.data());
    kernels::matmul_packed(q, ldq, workspace.keys.data(), dk, scores, n, shape.queries, dk, n);
}

namespace {

// The operands of one call: Q, and K^T and V in the micro-kernels' panel
// layout (packed into the workspace, or kept so by a cache).
struct Operands {
    const float* q;
    std::size_t ldq;
    PackedOperands kv;
};

// Rows [first, first + rows) with every score materialized: scores (rows x n,
// row stride n) become the weights, then output = weights V.
void dense_block(const Operands& in, const AttentionShape& shape, const AttentionOptions& options, float multiplier,
                 std::size_t first, std::size_t rows, float* scores, float* output, std::size_t ld_output) {
    const std::size_t n = shape.keys, dk = shape.key_width, dv = shape.value_width;
    // Under the causal mask the block's last row sees the most keys; no work
    // is spent on keys none of its rows can see.
    const std::size_t visible = visible_keys(shape, options, first + rows - 1);
    kernels::matmul_packed(in.q + first * in.ldq, in.ldq, in.kv.keys, dk, scores, n, rows, dk, visible);
    hide_masked_keys(shape, options, first, rows, visible, scores, n);
    for (std::size_t r = 0; r < rows; ++r) {
        float* row = scores + r * n;
        if (options.score_bias)  // hidden keys stay -inf
            for (std::size_t j = 0; j < visible; ++j) row[j] += options.score_bias[(first + r) * n + j];
        // Each row's softmax over its own visible keys, not the block's: the
        // kernel's vector body and scalar tail split a row by its length, so
        // a row gets the same bits in any block, whatever the query count (an
        // incremental run computes only the new rows, src/model/forward.cpp).
        const std::size_t own = visible_keys(shape, options, first + r);
        kernels::softmax_row(row, own, multiplier);
        std::fill(row + own, row + n, 0.0f);
    }
    if (output) kernels::matmul_packed(scores, n, in.kv.values, in.kv.value_rows, output, ld_output, rows, visible, dv);
}

// Keys per step of the output-only path: whole panels, and few enough that a
// block's scores (kQueryBlock x kKeyStep) stay in cache next to its panels.
constexpr std::size_t kKeyStep = kernels::kPanelWidth * 16;

// Rows [first, first + rows) without materializing the weights: keys are
// visited kKeyStep at a time with an online softmax (running maximum and sum
// per row; earlier partial outputs rescaled when the maximum grows), the
// flash-attention scheme. Returns false, having written nothing, if a score
// is +inf (the dense path handles that limit exactly).
bool online_block(const Operands& in, const AttentionShape& shape, const AttentionOptions& options, float multiplier,
                  std::size_t first, std::size_t rows, AttentionWorkspace& work, float* output, std::size_t ld_output) {
    const std::size_t dk = shape.key_width, dv = shape.value_width;
    const std::size_t visible = visible_keys(shape, options, first + rows - 1);
    std::fill_n(work.running_max.begin(), rows, kHidden);
    std::fill_n(work.running_sum.begin(), rows, 0.0f);
    std::fill_n(work.accumulated.begin(), rows * dv, 0.0f);
    for (std::size_t key = 0; key < visible; key += kKeyStep) {
        const std::size_t length = std::min(kKeyStep, visible - key);
        float* scores = work.block_scores.data();
        kernels::matmul_packed(in.q + first * in.ldq, in.ldq, in.kv.keys + key * dk, dk, scores, kKeyStep, rows, dk,
                               length);
        if (options.causal || options.key_mask) {
            for (std::size_t r = 0; r < rows; ++r) {
                const std::size_t row_visible = visible_keys(shape, options, first + r);
                const std::size_t row_first = first_visible_key(options, row_visible);
                for (std::size_t j = 0; j < length; ++j)
                    if (key + j >= row_visible || key + j < row_first ||
                        (options.key_mask && options.key_mask[key + j] == 0))
                        scores[r * kKeyStep + j] = kHidden;
            }
        }
        for (std::size_t r = 0; r < rows; ++r) {
            const float factor = kernels::softmax_block_online(scores + r * kKeyStep, length, multiplier,
                                                               work.running_max[r], work.running_sum[r]);
            // +inf (or NaN, from overflowing inputs) scores: leave them to the dense path.
            if (std::isnan(factor) || std::isnan(work.running_sum[r])) return false;
            float* accumulated = work.accumulated.data() + r * dv;
            if (factor != 1.0f)
                for (std::size_t c = 0; c < dv; ++c) accumulated[c] *= factor;
        }
        kernels::matmul_packed(scores, kKeyStep, in.kv.values + key * kernels::kPanelWidth, in.kv.value_rows,
                               work.partial.data(), dv, rows, length, dv);
        for (std::size_t i = 0; i < rows * dv; ++i) work.accumulated[i] += work.partial[i];
    }
    for (std::size_t r = 0; r < rows; ++r) {
        // A row that saw no key (all masked) has sum 0 and gets zeros.
        const float sum = work.running_sum[r];
        const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
        for (std::size_t c = 0; c < dv; ++c)
            output[(first + r) * ld_output + c] = work.accumulated[r * dv + c] * inverse;
    }
    return true;
}

}  // namespace

namespace {

// Every buffer of a workspace and its size for this shape: K^T and V
// packed (when the call packs them), and without weights the online
// softmax's (O(kQueryBlock * (kKeyStep + dv + n)), no n x n scores).
template <class Visit>
void for_each_buffer(AttentionWorkspace& workspace, const AttentionShape& shape, bool with_weights, bool packs,
                     Visit visit) {
    const std::size_t n = shape.keys, dk = shape.key_width, dv = shape.value_width;
    if (packs) {
        visit(workspace.keys, kernels::packed_size(dk, n));
        visit(workspace.values, kernels::packed_size(n, dv));
    }
    if (with_weights) return;
    const std::size_t rows = std::min(shape.queries, kQueryBlock);
    visit(workspace.block_scores, rows * kKeyStep);
    visit(workspace.partial, rows * dv);
    visit(workspace.accumulated, rows * dv);
    visit(workspace.running_max, rows);
    visit(workspace.running_sum, rows);
    visit(workspace.fallback_scores, rows * n);
}

}  // namespace

void prepare_workspace(AttentionWorkspace& workspace, const AttentionShape& shape, bool with_weights, bool packs) {
    // Every packed element is written before use (padding included), so
    // resizing (which zeroes only new elements) is all they need.
    for_each_buffer(workspace, shape, with_weights, packs,
                    [](std::vector<float>& buffer, std::size_t floats) { buffer.resize(floats); });
}

std::uint64_t workspace_floats(const AttentionShape& shape, bool with_weights) {
    AttentionWorkspace unused;
    std::uint64_t floats = 0;
    for_each_buffer(unused, shape, with_weights, true, [&](std::vector<float>&, std::size_t size) { floats += size; });
    return floats;
}

namespace {

// Every query block of one call, on operands packed already.
void attend(const Operands& in, const AttentionShape& shape, const AttentionOptions& options, float* output,
            std::size_t ld_output, float* weights, AttentionWorkspace& workspace) {
    const std::size_t m = shape.queries, n = shape.keys;
    const float multiplier = score_multiplier(shape, options);
    if (weights) {
        for (std::size_t first = 0; first < m; first += kQueryBlock) {
            const std::size_t rows = std::min(kQueryBlock, m - first);
            dense_block(in, shape, options, multiplier, first, rows, weights + first * n,
                        output ? output + first * ld_output : nullptr, ld_output);
        }
        return;
    }
    // Output only: extra memory O(n * (dk + dv)) for the packed operands, no
    // n x n scores.
    for (std::size_t first = 0; first < m; first += kQueryBlock) {
        const std::size_t rows = std::min(kQueryBlock, m - first);
        // A score bias is added to materialized scores only (the dense path).
        if (!options.score_bias && online_block(in, shape, options, multiplier, first, rows, workspace, output, ld_output))
            continue;
        dense_block(in, shape, options, multiplier, first, rows, workspace.fallback_scores.data(), output + first * ld_output,
                    ld_output);
    }
}

}  // namespace

void attention_strided(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const float* v,
                       std::size_t ldv, const AttentionShape& shape, const AttentionOptions& options,
                       float* output, std::size_t ld_output, float* weights, AttentionWorkspace& workspace) {
    const std::size_t n = shape.keys, dk = shape.key_width, dv = shape.value_width;
    prepare_workspace(workspace, shape, weights != nullptr);  // no-op when already sized
    kernels::pack_transposed_panels(k, ldk, n, dk, workspace.keys.data());
    if (output) kernels::pack_panels(v, ldv, n, dv, workspace.values.data());
    attend({q, ldq, {workspace.keys.data(), workspace.values.data(), n}}, shape, options, output, ld_output, weights,
           workspace);
}

void attention_packed(const float* q, std::size_t ldq, const PackedOperands& kv, const AttentionShape& shape,
                      const AttentionOptions& options, float* output, std::size_t ld_output, float* weights,
                      AttentionWorkspace& workspace) {
    prepare_workspace(workspace, shape, weights != nullptr, false);  // no-op when already sized
    attend({q, ldq, kv}, shape, options, output, ld_output, weights, workspace);
}

void attention_strided(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const float* v,
                       std::size_t ldv, const AttentionShape& shape, const AttentionOptions& options,
                       float* output, std::size_t ld_output, float* weights) {
    AttentionWorkspace workspace;
    attention_strided(q, ldq, k, ldk, v, ldv, shape, options, output, ld_output, weights, workspace);
}

void attention_heads(const float* q, const float* k, const float* v, std::size_t heads, const AttentionShape& shape,
                     const AttentionOptions& options, float* output, float* weights, std::size_t threads) {
    const std::size_t m = shape.queries, n = shape.keys, dk = shape.key_width, dv = shape.value_width;
    threads = std::min(usable_threads(threads), std::max<std::size_t>(1, heads));
    // Each thread takes the next head nobody has taken yet (run_parts), with
    // its own scratch, sized here on the calling thread so that no helper grows the heap (a
    // WebAssembly memory grown by a worker leaves the main thread's JS views
    // stale until it next looks).
    std::vector<AttentionWorkspace> workspaces(threads);
    for (auto& workspace : workspaces) prepare_workspace(workspace, shape, weights != nullptr);
    run_parts(heads, threads, [&](std::size_t h, std::size_t thread) {
        attention_strided(q + h * m * dk, dk, k + h * n * dk, dk, v + h * n * dv, dv, shape, options,
                          output + h * m * dv, dv, weights ? weights + h * m * n : nullptr, workspaces[thread]);
    });
}

void attention_heads(const float* q, const float* k, const float* v, std::size_t heads, const AttentionShape& shape,
                     const AttentionOptions& options, float* output, float* weights) {
    // The core's one policy (threads.hpp): a thread per 2 M multiply-adds.
    const double work = double(shape.queries) * double(shape.keys) * double(shape.key_width + shape.value_width);
    const std::size_t threads = ThreadPolicy::automatic_up_to_max().for_stage(double(heads) * work, heads);
    attention_heads(q, k, v, heads, shape, options, output, weights, threads);
}

std::uint64_t attention_heads_bytes(const AttentionShape& shape, std::size_t heads, bool with_weights) {
    return std::min(max_threads(), std::max<std::size_t>(1, heads)) * workspace_floats(shape, with_weights) *
           sizeof(float);
}

void attention(const float* q, const float* k, const float* v, const AttentionShape& shape,
               const AttentionOptions& options, float* output, float* weights) {
    attention_strided(q, shape.key_width, k, shape.key_width, v, shape.value_width, shape, options, output,
                      shape.value_width, weights);
}

}  // namespace attnlens

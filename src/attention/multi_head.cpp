#include "multi_head.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <memory>
#include <vector>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

// A product's columns are computed kPanelWidth at a time (one packed panel
// of W): the unit that stages split over threads.
std::size_t panel_count(std::size_t width) { return (width + kernels::kPanelWidth - 1) / kernels::kPanelWidth; }

// out (rows x width) = input (rows x width) W (width x width) + bias.
struct Projection {
    const float* input;
    std::size_t rows;
    const float* w;
    const float* bias;  // null = none
    float* out;
};

// Columns [first, first + columns) of a projection (whole panels, except
// for the last columns of W): those panels of W are packed into `packed`
// and multiplied while still in cache, then the columns get their bias. An
// output element's arithmetic does not depend on which other columns are
// computed with it, so computing the panels in any groups, in any order and
// on any thread, gives the bits of one product over all columns.
void project_columns(const Projection& projection, std::size_t width, std::size_t first, std::size_t columns,
                     float* packed) {
    kernels::pack_panels(projection.w + first, width, width, columns, packed);
    kernels::matmul_packed(projection.input, width, packed, width, projection.out + first, width, projection.rows,
                           width, columns);
    if (!projection.bias) return;
    if (columns == width) {
        kernels::add_row_bias(projection.out, projection.bias, projection.rows, width);
    } else {
        for (std::size_t i = 0; i < projection.rows; ++i)
            kernels::add_row_bias(projection.out + i * width + first, projection.bias + first, 1, columns);
    }
}

// Columns a projection stage packs at once: all of them on one thread (one
// product per projection), one panel per part on more.
std::size_t columns_per_part(std::size_t width, std::size_t threads) {
    return threads == 1 ? width : kernels::kPanelWidth;
}

// Floats of packing scratch a projection stage on `threads` threads needs.
std::size_t projection_scratch(std::size_t width, std::size_t threads) {
    return threads * kernels::packed_size(width, columns_per_part(width, threads));
}

// The projections on `threads` threads, packing into `scratch` (at least
// projection_scratch() floats, allocated by the caller before any thread
// starts). With more threads, parts are single panels: first all of the
// first projection's, then the next one's, so the threads read the same
// input rows at the same time.
void project(std::initializer_list<Projection> projections, std::size_t width, std::size_t threads, float* scratch) {
    const std::size_t columns = columns_per_part(width, threads);
    const std::size_t per_projection = (width + columns - 1) / columns;
    const std::size_t scratch_per_thread = kernels::packed_size(width, columns);
    const Projection* list = projections.begin();
    run_parts(projections.size() * per_projection, threads, [&](std::size_t part, std::size_t thread) {
        const std::size_t first = part % per_projection * columns;
        project_columns(list[part / per_projection], width, first, std::min(columns, width - first),
                        scratch + thread * scratch_per_thread);
    });
}

// The trace's scaled scores (m x n): the raw scores times the multiplier,
// -inf where a mask hides the key. (Its own function: its sizes stay in
// registers across the key_hidden calls, where a lambda's captured
// references would be reloaded.)
void scale_scores(const float* scores, const AttentionShape& shape, const AttentionOptions& options, float multiplier,
                  float* scaled) {
    const std::size_t m = shape.queries, n = shape.keys;
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j)
            scaled[i * n + j] = key_hidden(shape, options, i, j) ? -std::numeric_limits<float>::infinity()
                                                                 : scores[i * n + j] * multiplier;
}

void run_multi_head(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options,
                    float* output, float* head_weights, MultiHeadTrace* trace, const ThreadPolicy& policy) {
    const std::size_t n = input.tokens, nk = key_count(input), d = weights.model_width;
    const std::size_t heads = weights.heads, dk = d / heads;
    const float* context = input.context ? input.context : input.x;
    const double square = double(d) * double(d);

    const std::size_t input_threads = policy.for_stage(double(n + 2 * nk) * square, 3 * panel_count(d));
    const std::size_t output_threads = policy.for_stage(double(n) * square, panel_count(d));

    // Everything the threads write is allocated here, before they start.
    // The packing scratch is left uninitialized: packing writes all of it.
    std::vector<float> q(n * d), k(nk * d), v(nk * d), concatenated(n * d);
    const std::unique_ptr<float[]> packing(
        new float[std::max(projection_scratch(d, input_threads), projection_scratch(d, output_threads))]);
    project({{input.x, n, weights.wq, weights.bq, q.data()},
             {context, nk, weights.wk, weights.bk, k.data()},
             {context, nk, weights.wv, weights.bv, v.data()}},
            d, input_threads, packing.get());

    const AttentionShape shape{n, nk, dk, dk};
    if (trace) {
        trace->scores.assign(heads * n * nk, 0.0f);
        trace->scaled_scores.assign(heads * n * nk, 0.0f);
        trace->weights.assign(heads * n * nk, 0.0f);
    }
    const float multiplier = score_multiplier(shape, options);
    // Each head works on its columns of Q, K, V in place (strided): no copies.
    auto run_head = [&](std::size_t h, AttentionWorkspace& workspace) {
        const std::size_t column = h * dk;
        float* weights_h = head_weights ? head_weights + h * n * nk : (trace ? trace->weights.data() + h * n * nk : nullptr);
        attention_strided(q.data() + column, d, k.data() + column, d, v.data() + column, d, shape, options,
                          concatenated.data() + column, d, weights_h, workspace);
        if (!trace) return;
        float* scores = trace->scores.data() + h * n * nk;
        attention_scores(q.data() + column, d, k.data() + column, d, shape, scores, workspace);
        scale_scores(scores, shape, options, multiplier, trace->scaled_scores.data() + h * n * nk);
        if (head_weights) std::copy_n(weights_h, n * nk, trace->weights.data() + h * n * nk);
    };
    const double head_work = double(n) * double(nk) * double(trace ? 3 * dk : 2 * dk);
    const std::size_t head_threads = policy.for_stage(double(heads) * head_work, heads);
    // One workspace per thread, at its full size, so neither attention_strided
    // nor attention_scores resizes it on a helper thread (a WebAssembly
    // memory grown by a worker leaves the main thread's JS views stale).
    std::vector<AttentionWorkspace> workspaces(head_threads);
    for (auto& workspace : workspaces) prepare_workspace(workspace, shape, head_weights != nullptr || trace != nullptr);
    run_parts(heads, head_threads, [&](std::size_t h, std::size_t thread) { run_head(h, workspaces[thread]); });

    project({{concatenated.data(), n, weights.wo, weights.bo, output}}, d, output_threads, packing.get());

    if (trace) {
        trace->q = std::move(q);
        trace->k = std::move(k);
        trace->v = std::move(v);
        trace->concatenated_heads = std::move(concatenated);
    }
}

}  // namespace

std::size_t key_count(const MultiHeadInput& input) {
    return input.context ? input.context_tokens : input.tokens;
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

void multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                          const AttentionOptions& options, float* output, float* head_weights,
                          MultiHeadTrace* trace) {
    run_multi_head(input, weights, options, output, head_weights, trace, ThreadPolicy::automatic_up_to_max());
}

void multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                          const AttentionOptions& options, float* output, float* head_weights,
                          MultiHeadTrace* trace, std::size_t threads) {
    run_multi_head(input, weights, options, output, head_weights, trace, ThreadPolicy::exactly(threads));
}

}  // namespace attnlens

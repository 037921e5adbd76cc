// Scaled dot-product attention for one head:
//
//   weights = softmax(Q K^T * scale / temperature)   (row-wise, masked keys -> 0)
//   output  = weights V
//
// Q is m x d_k, K is n x d_k, V is n x d_v, all row-major float32.
// The weights are m x n, the output m x d_v.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "threads.hpp"

namespace attnlens {

struct AttentionShape {
    std::size_t queries = 0;      // m: rows of Q
    std::size_t keys = 0;         // n: rows of K and V
    std::size_t key_width = 0;    // d_k: columns of Q and K
    std::size_t value_width = 0;  // d_v: columns of V
};

struct AttentionOptions {
    std::optional<float> scale;      // default 1 / sqrt(d_k)
    float temperature = 1.0f;        // scaled scores are divided by it; > 0
    bool causal = false;             // query i sees keys j <= i + (n - m)
    const std::uint8_t* key_mask = nullptr;  // n entries, nonzero = keep; null keeps all
    // With causal: a query sees only the `window` keys that end at its own
    // position (sliding-window attention, as Mistral's). 0: every earlier key.
    std::size_t window = 0;
    // null, or m x n values added to the raw scores (Q K^T) before the
    // multiplier: T5's relative position bias, whose scores are not scaled.
    // multi_head_layer reads H such blocks, one per query head.
    const float* score_bias = nullptr;
};

// The multiplier applied to raw scores before the softmax: scale / temperature.
float score_multiplier(const AttentionShape& shape, const AttentionOptions& options);

// True when the causal mask, its window or the key mask hides key j from query i.
bool key_hidden(const AttentionShape& shape, const AttentionOptions& options, std::size_t query, std::size_t key);

// kernels::max_magnitude over `count` floats, compiled here with the
// kernels' optimization: the bindings, built for size (-Oz, CMakeLists.txt),
// check every input matrix with it, and at -Oz the loop is not vectorized.
float max_magnitude(const float* values, std::size_t count);

// Empty when the shape and options are usable, otherwise a sentence naming
// the problem. The attention functions assume it returned empty.
std::string validate(const AttentionShape& shape, const AttentionOptions& options);

// Computes the output (m x d_v) and, when weights is not null, the weights
// (m x n). Without weights, extra memory is O(n * (d_k + tile)) with no
// n x n buffer, so very long sequences fit.
void attention(const float* q, const float* k, const float* v, const AttentionShape& shape,
               const AttentionOptions& options, float* output, float* weights);

// attention() on operands embedded in wider matrices (one head's columns of
// a multi-head Q, K, V): row i of Q starts at q + i * ldq, likewise K (ldk),
// V (ldv) and the output (ld_output). The weights, when given, are dense m x n.
// With weights, output may be null: the weights alone, the same bits (v is
// then not read; a model's kept rows, src/model/forward.cpp).
void attention_strided(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const float* v,
                       std::size_t ldv, const AttentionShape& shape, const AttentionOptions& options,
                       float* output, std::size_t ld_output, float* weights);

// Scratch memory of the attention functions: K^T and V packed into the
// micro-kernels' panels, and the output-only path's per-block buffers.
// Passing one workspace to a loop of calls (heads of a layer) allocates it
// once instead of once per call.
struct AttentionWorkspace {
    std::vector<float> keys, values;
    // Output-only (online softmax) path: one query block's scores for one key
    // step, its partial and accumulated outputs, running maxima and sums, and
    // the dense scores of the rare block that falls back (a +inf score).
    std::vector<float> block_scores, partial, accumulated, running_max, running_sum, fallback_scores;
};

// Sizes every buffer attention_strided() will use for this shape, with or
// without weights, so that the call itself allocates nothing: threads call
// this on the calling thread first (a WebAssembly memory grown by a worker
// leaves the main thread's JS views stale). Without `packs`, for
// attention_packed(): no room for K^T and V.
void prepare_workspace(AttentionWorkspace& workspace, const AttentionShape& shape, bool with_weights,
                       bool packs = true);

// Floats prepare_workspace() sizes a workspace to.
std::uint64_t workspace_floats(const AttentionShape& shape, bool with_weights);

// attention_strided() with caller-owned scratch memory.
void attention_strided(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const float* v,
                       std::size_t ldv, const AttentionShape& shape, const AttentionOptions& options,
                       float* output, std::size_t ld_output, float* weights, AttentionWorkspace& workspace);

// One head's K^T and V already in the micro-kernels' panel layout (a
// causal model's kept keys and values, packed_cache.hpp): `keys` as
// kernels::pack_transposed_panels leaves K^T (d_k x n); `values` as
// kernels::pack_panels leaves V (n x d_v), but with `value_rows` (>= n)
// rows to a panel.
struct PackedOperands {
    const float* keys = nullptr;
    const float* values = nullptr;
    std::size_t value_rows = 0;
};

// attention_strided() on operands packed beforehand: the same bits, without
// packing them (values are not read when output is null).
void attention_packed(const float* q, std::size_t ldq, const PackedOperands& kv, const AttentionShape& shape,
                      const AttentionOptions& options, float* output, std::size_t ld_output, float* weights,
                      AttentionWorkspace& workspace);

// `heads` independent attention() calls on stacked operands: head h reads
// q + h*m*dk, k + h*n*dk and v + h*n*dv, and writes output + h*m*dv and
// (when weights is not null) weights + h*m*n. The options, key mask
// included, apply to every head.
void attention_heads(const float* q, const float* k, const float* v, std::size_t heads, const AttentionShape& shape,
                     const AttentionOptions& options, float* output, float* weights);

// attention_heads() with the heads split over up to `threads` threads
// (at most one per head; always 1 in a WebAssembly build without thread
// support, where std::thread would abort). Results are bit-identical for any
// thread count: heads are independent. The overload above picks the count
// by the core's thread policy (threads.hpp).
void attention_heads(const float* q, const float* k, const float* v, std::size_t heads, const AttentionShape& shape,
                     const AttentionOptions& options, float* output, float* weights, std::size_t threads);

// Bytes of scratch the automatic attention_heads() allocates (a workspace
// per thread it may use), computed from the sizes it allocates.
std::uint64_t attention_heads_bytes(const AttentionShape& shape, std::size_t heads, bool with_weights);

// Raw scores Q K^T (m x n, dense), before scaling or masking, for
// step-by-step views. Rows of Q start every ldq floats, rows of K every ldk
// (one head's columns of a multi-head Q and K). K^T is packed into
// workspace.keys, which allocates nothing when it already holds
// packed_size(d_k, n) floats (as after an attention_strided() call on the
// same shape).
void attention_scores(const float* q, std::size_t ldq, const float* k, std::size_t ldk, const AttentionShape& shape,
                      float* scores, AttentionWorkspace& workspace);

}  // namespace attnlens

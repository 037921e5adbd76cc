// Multi-head attention, written once: a model's layer (src/model/layer.cpp),
// the caller's matrices (multi_head_attention below) and the sentence
// pipeline's seeded projections (src/pipeline) all run multi_head_layer.
//
//   Q = X W_Q + b_Q,  K = C W_K + b_K,  V = C W_V + b_V   (C = X for self-attention)
//   head_h = attention(Q_h, K_g, V_g), g = h / (H / G)     (G < H: grouped-query attention)
//   output = concat(head_1 .. head_H) W_O + b_O
//
// X is n x d, the context C is n_context x d; Q_h is columns h*hd .. (h+1)*hd - 1
// of Q, K_g and V_g those of kv head g in K and V.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attention.hpp"
#include "float_buffer.hpp"
#include "packed_cache.hpp"
#include "packed_matrix.hpp"

namespace attnlens {

struct MultiHeadShape {
    std::size_t model_width = 0;  // d
    std::size_t heads = 0;        // H query heads
    std::size_t kv_heads = 0;     // G key/value heads, H a multiple of G
    std::size_t head_width = 0;   // hd

    std::size_t query_width() const { return heads * head_width; }         // H * hd
    std::size_t key_value_width() const { return kv_heads * head_width; }  // G * hd
    // Columns of the layer's [Q | K | V] rows.
    std::size_t qkv_width() const { return query_width() + 2 * key_value_width(); }
};

// A decoder's keys and values kept from call to call, so that a generation
// step projects only its new tokens: rows of G*hd floats, as many as the
// caller allocated. Self-attention appends the new rows' K and V at row
// `filled` and attends over rows [0, filled + n); cross-attention projects
// the context's once (while `filled` is 0) and reuses them after. These
// rows take separate Q, K and V projections (an encoder-decoder's layers).
// Or, keys and values null and `packed` set (self-attention only): kept in
// the panel layout the heads read (packed_cache.hpp), into which a call
// packs only its new rows' keys and values, at position `filled`.
struct KeyValueCache {
    float* keys = nullptr;
    float* values = nullptr;
    std::size_t filled = 0;
    PackedKeyValues packed;

    KeyValueCache(float* kept_keys, float* kept_values, std::size_t filled_rows)
        : keys(kept_keys), values(kept_values), filled(filled_rows) {}
    KeyValueCache(const PackedKeyValues& kept, std::size_t filled_positions) : filled(filled_positions), packed(kept) {}
    bool is_packed() const { return packed.keys != nullptr; }
};

struct MultiHeadInput {
    const float* x = nullptr;
    std::size_t tokens = 0;          // n
    const float* context = nullptr;  // null = self-attention on x
    std::size_t context_tokens = 0;  // n_context when context is set
    // null, or K and V live here: see KeyValueCache (traced only while
    // `filled` is 0, when its rows are all the keys). The causal mask then
    // lets query i see keys up to filled + i.
    KeyValueCache* cache = nullptr;
};

// Keys a call attends over: the context's, x's, or with a self-attention
// cache its earlier rows and x's.
std::size_t key_count(const MultiHeadInput& input);

// The projections, packed (biases optional: null = none). Q, K and V come
// from one fused d x qkv_width matrix (GPT-2's c_attn; self-attention
// only, without a cache or with a packed one), or from three: d x (H*hd), d x (G*hd), d x (G*hd). W_O is (H*hd) x d.
struct MultiHeadProjections {
    PackedMatrix qkv;
    const float* qkv_bias = nullptr;
    PackedMatrix query, key, value;
    const float* query_bias = nullptr;
    const float* key_bias = nullptr;
    const float* value_bias = nullptr;
    PackedMatrix output;
    const float* output_bias = nullptr;

    bool fused() const { return qkv.cols != 0; }
};

// The one record of a multi-head layer: the options it ran with and every
// step, for step-by-step views. Matrices are row-major; per-head arrays are
// [head][query][key]. src/bindings/record.hpp turns it into JavaScript with
// these names in camelCase.
struct MultiHeadTrace {
    std::vector<std::string> tokens, context_tokens;  // the pipeline's; empty when the caller knows them
    std::size_t n = 0, n_context = 0;
    MultiHeadShape shape;
    double scale = 0;        // the score multiplier before temperature
    float temperature = 1;   // the scaled scores were divided by it
    bool causal = false;
    std::vector<std::uint8_t> key_mask;  // n_context entries (nonzero = keep), or empty: none
    bool cross_attention = false;        // keys and values from a context
    std::size_t window = 0;              // a causal query saw only this many keys ending at its own (0: all)
    bool qkv_bias = false;               // Q, K and V had biases added
    bool output_bias = false;            // the output had b_O added
    bool position_bias = false;          // a score bias (T5's relative positions) was added before the scale
    std::string architecture;            // a model's ("gpt2", "bert", "llama"), or "" (no model)
    std::size_t layer = 0;               // a model's layer
    // An encoder-decoder's kind of attention: "encoder", "decoder" or
    // "cross" (static strings); null for a model with one stack.
    const char* kind = nullptr;
    // A model's math around the layer, for step-by-step wording (set by the
    // model's explain; null or 0 without a model): config.hpp norm_name()
    // and position_name() (static strings), the columns of each head rotary
    // turned (0: none), whether attention and MLP both read the layer's input
    // (parallel residual) and whether the norm follows the residual sum (BERT).
    const char* norm = nullptr;
    const char* position = nullptr;
    std::size_t rotary_width = 0;
    bool parallel_residual = false, post_norm = false;
    FloatBuffer x, context_x;            // n x d, n_context x d: the inputs (a model's normalized)
    FloatBuffer wq, wk, wv;              // d x (H*hd), [in, out]; a kv head's columns repeated per query head
    FloatBuffer wo;                      // (H*hd) x d
    FloatBuffer q, k, v;                 // n x (H*hd), n_context x (H*hd) twice: after biases and positions
    FloatBuffer scores;                  // H x n x n_context: Q_h K_h^T
    FloatBuffer scaled_scores;           // (scores + position bias) * scale / temperature, hidden keys -inf
    FloatBuffer weights;                 // softmax of the scaled scores
    FloatBuffer concatenated_heads;      // n x (H*hd)
    FloatBuffer output;                  // n x d: concatenated_heads W_O + b_O
    FloatBuffer layer_output;            // a model's residual stream after the whole layer (else empty)
};

// Allocates every step of a trace; "" or an out-of-memory sentence.
std::string allocate_trace(const MultiHeadInput& input, const MultiHeadShape& shape, MultiHeadTrace& trace);

// Where a layer works, allocated by the caller before any thread starts.
struct MultiHeadMemory {
    float* qkv = nullptr;    // max(n, n_context) x qkv_width floats: Q (of x), K and V (of the context)
    float* heads = nullptr;  // n x (H*hd): the heads' outputs side by side
    ProductRun products;     // thread policy, 16-bit panel scratch
    std::vector<AttentionWorkspace>* workspaces = nullptr;  // grown here (calling thread) to the heads' threads
    bool query_projected = false;  // Q is already in place (StagedMultiHead); K and V are still to project
    // Null, or (no trace) the output projection is only started here, on the
    // helper threads, and left in *output_started for the caller to finish
    // (StagedMultiHead::finish_heads).
    std::unique_ptr<BackgroundParts>* output_started = nullptr;
};

// Called once Q, K and V are projected, before the heads: rotary position
// embedding rotates Q and K here (a model's self-attention: n rows). Row i
// of Q (H heads of hd) starts at q + i * ldq, of K (G heads) at k + i * ldk.
using PositionHook =
    std::function<void(float* q, std::size_t ldq, float* k, std::size_t ldk, std::size_t rows)>;

// The layer: output (n x d) = multi-head attention of input. head_weights:
// null or H x n x n_context. trace: null or allocated by allocate_trace,
// filled with the options and every step (not layer_output). Each stage is
// split over the threads memory.products.policy gives it, in parts whose
// results do not depend on the split: the same bits on any thread count.
void multi_head_layer(const MultiHeadInput& input, const MultiHeadShape& shape, const MultiHeadProjections& weights,
                      const AttentionOptions& options, const PositionHook& positions, MultiHeadMemory& memory,
                      float* output, float* head_weights, MultiHeadTrace* trace);

// Where multi_head_layer leaves Q, K and V in memory.qkv (biases included,
// Q and K after positions): one [Q | K | V] row per token when a fused
// projection writes them together, else three dense blocks (Q rows of
// H*hd, K and V rows of G*hd: shorter strides for the heads to read); with
// a row-major cache, K and V are its rows. Query head h's columns start at
// h * hd of its row, kv head g's at g * hd. multi_head_layer works there,
// and callers read them after it: analyses read V, a model keeps Q and K.
// `fused`: the layer runs with MultiHeadProjections::fused().
struct QkvLayout {
    float *q, *k, *v;
    std::size_t ldq, ldkv;
};
QkvLayout qkv_layout(const MultiHeadShape& shape, bool fused, const MultiHeadInput& input, float* qkv);

// The caller's matrices, unpacked: every W is d x d, applied as X W; H kv heads.
struct MultiHeadWeights {
    std::size_t model_width = 0;  // d
    std::size_t heads = 0;
    const float* wq = nullptr;
    const float* wk = nullptr;
    const float* wv = nullptr;
    const float* wo = nullptr;
    const float* bq = nullptr;  // biases are optional (null = zero)
    const float* bk = nullptr;
    const float* bv = nullptr;
    const float* bo = nullptr;
    // null, or 4 floats the call sets to max |wq|, |wk|, |wv|, |wo|, found
    // while packing them (Infinity or NaN when one is not finite): the
    // caller's NaN/Infinity check of the matrices without a scan of its own
    // (web/lib checks them after the layer, the results unseen till then).
    float* magnitudes = nullptr;
};

// Empty when usable, otherwise a sentence naming the problem.
std::string validate(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options);

// Packs the matrices, then runs multi_head_layer. output: n x d (may be
// null when a trace is given: the trace keeps the output).
// head_weights (nullable): H x n x n_context. trace (nullable): filled with
// every step (allocated here). "" or an out-of-memory sentence. threads 0:
// the core's automatic policy; n: exactly n threads in every stage (tests
// compare thread counts bit for bit). Always 1 in a WebAssembly build
// without thread support.
std::string multi_head_attention(const MultiHeadInput& input, const MultiHeadWeights& weights,
                                 const AttentionOptions& options, float* output, float* head_weights,
                                 MultiHeadTrace* trace = nullptr, std::size_t threads = 0);

// multi_head_attention in two calls, for a caller still writing its inputs
// when the layer could start (web/lib copies K's, V's and W_O's matrices
// into the WebAssembly heap meanwhile, on the threads module). begin() needs
// x, wq and bq written, the other matrices only addressed: it validates,
// allocates what the call needs, starts the Q projection on the helper
// threads and returns. finish() needs every input written: its thread takes
// the Q parts nobody has taken yet, then runs the rest of the layer. The
// same bits as multi_head_attention; on one thread begin() starts nothing
// and finish() does it all. abandon() (also the destructor, and a second
// begin()) waits for the started parts and frees the call's memory, for a
// caller that gives up in between (an input that turns out not finite).
// Self- and cross-attention without a cache, as multi_head_attention.
class StagedMultiHead {
public:
    StagedMultiHead();
    ~StagedMultiHead();
    std::string begin(const MultiHeadInput& input, const MultiHeadWeights& weights, const AttentionOptions& options,
                      std::size_t threads = 0);
    // Whether begin() starts anything for n queries of width model_width
    // (under its automatic policy, threads 0): the policy splits their Q
    // projection over the helpers. When it does not (a tiny layer), finish()
    // does it all, and the two calls only cost the caller more than one
    // multi_head_attention.
    static bool pays(std::size_t n, std::size_t model_width,
                     const ThreadPolicy& policy = ThreadPolicy::automatic_up_to_max());
    // output: n x d; head_weights (nullable): H x n x n_context.
    std::string finish(float* output, float* head_weights);
    // finish() in two halves, for a caller that copies the head weights out
    // while the helpers project the output: finish_heads() returns once
    // head_weights are written, with W_O's projection into `output` begun on
    // the helpers; complete() takes the parts left and frees the call (the
    // output is written, and W_O's magnitude known, when it returns).
    std::string finish_heads(float* output, float* head_weights);
    void complete();
    void abandon();

    struct Call;

private:
    std::unique_ptr<Call> call_;
};

// Floats allocate_trace() allocates for n queries and n_context keys (the
// model's explain() adds its layer_output).
std::uint64_t trace_floats(std::size_t n, std::size_t n_context, const MultiHeadShape& shape);

// Bytes multi_head_attention allocates for n queries and n_context keys
// (packed matrices, working rows, the heads' scratch, the trace when
// traced), on up to `threads` threads (0: max_threads()): computed from the
// same sizes the call allocates, so JavaScript never recomputes them.
std::uint64_t multi_head_bytes(std::size_t n, std::size_t n_context, std::size_t model_width, std::size_t heads,
                               bool with_weights, bool traced, std::size_t threads = 0);

}  // namespace attnlens

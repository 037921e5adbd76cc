// The forward pass of a loaded model over a sequence of token ids, and the
// step-by-step trace of one layer's attention (explain).
//
// Data flow, n tokens, d = model width:
//   ids -> embeddings -> x (n x d, the residual stream)
//   per layer: attention half (norm, Q K V, rotary, heads, output projection,
//              residual) then MLP half (norm, up/gate, activation, down, residual)
//   -> final norm -> hidden (n x d) -> logits = hidden E_out^T (n x V)
// GPT-2 and Llama normalize before each half (pre-LN), BERT after (post-LN).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "../attention/multi_head.hpp"
#include "weights.hpp"

namespace attnlens::model {

// One layer's state as run() computes it, for analyses that read more than
// the attention weights (src/analysis). Valid during the call only.
struct LayerState {
    const ModelConfig& config;
    const ModelWeights& weights;
    std::size_t layer = 0, n = 0;
    const float* attention = nullptr;  // H x n x n: this layer's weights, or null when the run returns none
    // V (bias included), n rows `values_stride` floats apart: kv head g's
    // values at columns g * hd.
    const float* values = nullptr;
    std::size_t values_stride = 0;
    const float* residual = nullptr;  // n x d: the residual stream after the whole layer (layer_done only)
    const ProductRun& products;       // the run's thread policy and 16-bit panel scratch
    // An encoder-decoder's sublayers (seq2seq.hpp) say which they are: the
    // keys each of the n queries attends over (0: n; cross-attention: the
    // source's), and the sublayer's output projection W_O (null: that of
    // weights.layers[layer], a decoder-only model's or an encoder's layer).
    std::size_t keys = 0;
    const Weight* attention_output = nullptr;
};

// Told each layer's state as run() passes it. An observer reports its own
// problems afterwards: run() does not stop for them.
class LayerObserver {
public:
    virtual void attention_done(const LayerState& state) = 0;  // after the attention half
    virtual void layer_done(const LayerState& state) = 0;      // after the whole layer

protected:
    ~LayerObserver() = default;
};

// What a model keeps of its last run, so that the next run of a causal model
// whose ids begin with the same tokens (and key mask) recomputes only the
// positions from the first that differs (an encoder's recomputes all), and
// any head's weights can be computed afterwards: per layer the queries, keys and values of
// every position (after rotary; the queries recompute the kept positions'
// attention rows), and the residual stream after the last layer (the kept
// positions' hidden state and logits). The keys and values are kept in the
// panel layout the heads read (attention/packed_cache.hpp), so that a run
// packs only its new positions'. Memory: layers x n x (H + G) x hd +
// layers x n x G x hd' + n x d floats, n = capacity (whole panels of
// kernels::kPanelWidth positions), hd' = hd rounded up to whole panels. A
// later position depends on an earlier one only through its keys and
// values, so the kept rows are exactly what a fresh run computes.
struct ForwardCache {
    std::vector<std::int32_t> ids;
    std::vector<std::uint8_t> key_mask;  // one per id (1 when the run had no mask)
    bool masked = false;                 // the run had a key mask
    std::size_t capacity = 0;   // positions each layer's blocks hold
    FloatBuffer queries;        // layers x capacity x H*hd
    FloatBuffer keys, values;   // per layer packed_keys_floats / packed_values_floats (kept_key_values)
    FloatBuffer residual;       // capacity x d
    std::size_t reused = 0;             // positions the last run took from the cache
    std::uint64_t generation = 0;       // counts runs and clears: what a head's weights were computed from

    std::uint64_t bytes() const;
    void clear();
};

struct RunRequest {
    const std::int32_t* ids = nullptr;
    std::size_t count = 0;                   // n
    const std::uint8_t* key_mask = nullptr;  // n entries, nonzero = keep; null keeps all
    float* attention = nullptr;  // null, or layers x heads x n x n: [layer][head][query][key]
    float* hidden = nullptr;     // null, or n x d (after the final norm for gpt2 and llama)
    float* logits = nullptr;     // null, or (n - logits_from) x V (models with an LM head only)
    // The first position whose logits are computed: a page that predicts
    // the next token needs only the last row (n - 1), a V x d product per
    // row saved (a third of GPT-2 small's forward at 32 tokens).
    std::size_t logits_from = 0;
    // 0: the core's automatic thread policy (threads.hpp); n: exactly n
    // threads in every stage (results are bit-identical for any count).
    std::size_t threads = 0;
    LayerObserver* observer = nullptr;  // null, or told every layer's state
    // null, or kept from run to run: see ForwardCache. A run with an
    // observer computes every position and leaves the cache as it is. Through a cache the heads always
    // take the path that computes their weights: without `attention`, the
    // same bits as with it (a run without a cache and without `attention`
    // takes the output-only path, whose sums differ in the last bits).
    ForwardCache* cache = nullptr;
    // With a cache: null (every layer, every head), or flags (nonzero =
    // chosen) of the c.layers layers and c.heads heads whose weights
    // `attention` holds, [chosen layer][chosen head][query][key].
    const std::uint8_t* layers_chosen = nullptr;
    const std::uint8_t* heads_chosen = nullptr;
    // With a cache: 1 (each head's n x n weights), or each head's weights
    // pooled by this factor (src/attention/pooled.hpp), B x B with B =
    // ceil(n / pool), so `attention` holds chosen layers x chosen heads x B x B.
    std::size_t pool = 1;
};

// Layer `layer`'s kept keys and values (a view of cache.keys and
// cache.values; only the cache's own runs write through it).
PackedKeyValues kept_key_values(const ModelConfig& config, const ForwardCache& cache, std::size_t layer);

// Head `head` of layer `layer`'s n x n weights of the run the cache holds,
// recomputed from its queries and keys: the bits that run returned (or
// would have); with `pool` above 1, pooled by it into B x B (B = ceil(n / pool),
// pooled.hpp), through one head's n x n of scratch. "" or the problem
// (nothing kept, no such layer or head, a pool factor outside 1..n, memory).
std::string kept_head_weights(const ModelConfig& config, const ForwardCache& cache, std::size_t layer,
                              std::size_t head, float* out, std::size_t pool = 1);

// The logits of `count` positions of the run the cache holds (count x V into
// `out`, row i position positions[i]'s: any of 0..n-1, in any order, repeats
// allowed), from its kept residual stream: each row the bits that run
// returned (or would have) for its position. A caller that shows the
// attention first runs without logits, then asks here for the rows it
// shows (until the next run): the last position's to predict the next
// token, a masked-LM head's [MASK] positions. `threads` as
// RunRequest::threads. "" or the problem (nothing kept, no LM head, no
// positions, one outside 0..n-1, memory).
std::string kept_logits(const ModelConfig& config, const ModelWeights& weights, const ForwardCache& cache,
                        const std::int32_t* positions, std::size_t count, std::size_t threads, float* out);

struct ExplainRequest {
    const std::int32_t* ids = nullptr;
    std::size_t count = 0;
    std::size_t layer = 0;
    const std::uint8_t* key_mask = nullptr;
    std::size_t threads = 0;  // as RunRequest::threads
};

// Both return "" or a sentence naming the problem (ids out of range, too
// many tokens, an LM head asked of a model without one, logits_from past the
// last token, memory). `weights`
// must be finished.
std::string run(const ModelConfig& config, const ModelWeights& weights, const RunRequest& request);

// The model's own head on `rows` rows of a residual stream (d wide): the
// final norm into `normed` (rows x 2d: the norm's rows, then scratch for the
// head's own projection), T5's logits scale, then the LM head into `logits` (rows x V). What run() applies after the last
// layer; the logit lens applies it after every layer. Models with an LM head only.
void head_logits(const ModelConfig& config, const ModelWeights& weights, const float* residual, std::size_t rows,
                 float* normed, float* logits, const ProductRun& products);

// "" when every one of `count` ids is in the vocabulary, else the first
// that is not, with its position.
std::string token_ids_error(const ModelConfig& config, const std::int32_t* ids, std::size_t count);

// Whether each token attends only to itself and earlier ones (a decoder:
// GPT-2, Llama) or to every token (an encoder: BERT). The one place this is
// decided; JavaScript reads it from ModelHandle.plan().
bool attends_causally(const ModelConfig& config);
// explain: layer `request.layer`'s attention as the one record of a
// multi-head layer (attention/multi_head.hpp), with its architecture, layer
// and layer_output (the residual stream after the whole layer).
std::string explain(const ModelConfig& config, const ModelWeights& weights, const ExplainRequest& request,
                    MultiHeadTrace& trace);

}  // namespace attnlens::model

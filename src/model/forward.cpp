#include "forward.hpp"

#include <algorithm>

#include "../attention/pooled.hpp"
#include "blocks.hpp"
#include "footprint.hpp"
#include "layer.hpp"

namespace attnlens::model {

namespace {

// The checks run() and explain() share.
std::string check_tokens(const ModelConfig& c, const ModelWeights& weights, const std::int32_t* ids,
                         std::size_t count) {
    if (!weights.finished()) return "the model is not finished: call finish() after loading its tensors";
    if (encoder_decoder(c)) return "an encoder-decoder model runs through its encoder and decoder (seq2seq.hpp)";
    if (count == 0) return "no tokens: a forward pass needs at least one token id";
    if (!ids) return "the token ids are missing (null address)";
    if (count > usable_positions(c))
        return std::to_string(count) + " tokens are more than the model's " + std::to_string(usable_positions(c)) +
               " positions (maxPositions" + (c.padding_idx >= 0 ? " - paddingIdx - 1" : "") +
               (c.position_offset > 0 ? " - positionOffset" : "") + ")";
    return token_ids_error(c, ids, count);
}

// logits (rows x V) = hidden (rows x d, after the final norm) times the LM
// head (+ its bias). Heads embedded_width wide first take each row there,
// into `scratch` (rows x d, not `hidden`): OPT's project_out, or an encoder's
// masked-LM transform LayerNorm(act(hidden W + b)) as
// BertPredictionHeadTransform computes it.
void project_logits(const ModelConfig& c, const ModelWeights& w, const float* hidden, std::size_t rows, float* scratch,
                    float* logits, const ProductRun& products) {
    std::size_t width = c.model_width;
    if (w.output_projection.loaded) {
        width = embedded_width(c);
        project(packed(w.output_projection), nullptr, hidden, c.model_width, rows, scratch, width, products);
        hidden = scratch;
    }
    if (w.mlm_transform.loaded) {
        width = embedded_width(c);
        project(packed(w.mlm_transform), bias_values(w.mlm_transform_bias), hidden, c.model_width, rows, scratch, width,
                products);
        activate(c.mlm_activation, scratch, rows * width);
        normalize_rows(c, w.mlm_norm, w.mlm_norm_bias, scratch, scratch, rows, width);
        hidden = scratch;
    }
    project(packed(w.output_embedding()), bias_values(w.lm_head_bias), hidden, width, rows, logits, c.vocab_size,
            products);
}

std::string no_lm_head(const ModelConfig& c) {
    return std::string(architecture_name(c.architecture)) + " models have no language-model head: no logits";
}

std::string logits_past_end(std::size_t from, std::size_t count) {
    return "logits from position " + std::to_string(from) + ": there are only " + std::to_string(count) +
           " tokens (positions 0 to " + std::to_string(count - 1) + ")";
}

ThreadPolicy policy_of(std::size_t threads) {
    return threads == 0 ? ThreadPolicy::automatic_up_to_max() : ThreadPolicy::exactly(threads);
}

// The position-table row of token t. RoBERTa: counted over non-pad tokens
// from padding_idx + 1; a pad token sits at padding_idx. OPT (an offset):
// counted over the tokens the key mask keeps, from the offset, a masked
// token at offset - 1 (OPTLearnedPositionalEmbedding's cumsum(mask) * mask
// - 1, read `offset` rows on). `seen`: the tokens counted before t.
std::size_t position_row(const ModelConfig& c, std::int32_t id, bool kept, std::size_t t, std::size_t& seen) {
    if (c.padding_idx >= 0) return id == c.padding_idx ? std::size_t(c.padding_idx) : std::size_t(c.padding_idx) + ++seen;
    if (c.position_offset == 0) return t;
    return kept ? c.position_offset + seen++ : c.position_offset - 1;
}

// rows (one per token from `first` to n - 1, width wide) += each token's
// learned position row, and token type 0's when the model has token types.
// ids and key_mask hold every token from 0: the position rows count them.
void add_positions(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
                   float* rows, std::size_t first, std::size_t n, std::size_t width) {
    std::size_t seen = 0;
    for (std::size_t t = 0; t < n; ++t) {
        const std::size_t position = position_row(c, ids[t], !key_mask || key_mask[t], t, seen);
        if (t < first) continue;
        float* row = rows + (t - first) * width;
        if (c.position == PositionKind::learned)
            add_residual(row, w.position_embedding.values.data() + position * width, width);
        if (c.type_vocab_size > 0) add_residual(row, w.type_embedding.values.data(), width);
    }
}

// x = the embeddings of the acts.n tokens from `first` on (ids and key_mask
// hold every token from 0): the word's (times the embedding scale), plus its
// learned position's and token type 0's when the model has them, then the
// embedding norm when it has one. Word embeddings narrower than the model
// are projected to its width: ELECTRA's embeddings_project takes the normed
// sum; OPT's project_in the word embeddings alone, before the (model-wide)
// positions are added (projection_before_positions).
void embed(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
           std::size_t first, Activations& acts) {
    const std::size_t E = embedded_width(c), m = acts.n, n = first + m;
    const bool projected = E != c.model_width;
    float* embedded = projected ? acts.embedded.data() : acts.x.data();
    const float scale = round_to_type(w.word_embedding_type(), c.embedding_scale);
    for (std::size_t i = 0; i < m; ++i) {
        float* row = embedded + i * E;
        gather_column(packed(w.word_embedding), std::size_t(ids[first + i]), row);  // E is kept as the panels of E^T
        if (c.embedding_scale > 0.0f)
            for (std::size_t j = 0; j < E; ++j) row[j] *= scale;
    }
    const bool after = projected && c.projection_before_positions;
    if (!after) add_positions(c, w, ids, key_mask, embedded, first, n, E);
    if (c.embedding_norm) normalize_rows(c, w.embedding_norm, w.embedding_norm_bias, embedded, embedded, m, E);
    if (projected)
        project(packed(w.embedding_projection), bias_values(w.embedding_projection_bias), embedded, E, m,
                acts.x.data(), c.model_width, acts.products);
    if (after) add_positions(c, w, ids, key_mask, acts.x.data(), first, n, c.model_width);
}

// The rotary angles and the embeddings of the acts.n positions from `first`
// on, once per pass (every layer uses them). A cached run computes only the
// positions its cache cannot give: embedding all n of 1024 tokens (a
// scattered read of the E^T panels per token) took ~2% of a one-position step.
void prepare(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
             Activations& acts, std::size_t first = 0) {
    if (c.position == PositionKind::rotary)
        rotary_tables(acts.n, rotated_width(c), c.rope_theta, acts.rotary_cos.data(), acts.rotary_sin.data(), first);
    embed(c, w, ids, key_mask, first, acts);
}

// The positions the cache can give a run: up to the first whose id or key
// mask differs from the last run's, at most n - 1 (the last row is always
// computed).
std::size_t reusable_positions(const ModelConfig& c, const ForwardCache& cache, const RunRequest& r) {
    if (!c.causal) return 0;  // every position attends to every other: a changed token changes all rows
    const std::size_t limit = std::min(cache.ids.size(), r.count - 1);
    std::size_t p = 0;
    while (p < limit && cache.ids[p] == r.ids[p] && cache.key_mask[p] == (r.key_mask ? r.key_mask[p] != 0 : 1)) ++p;
    return p;
}

// Makes room for n rows in every block, keeping the first `kept` rows.
std::string reserve(const ModelConfig& c, ForwardCache& cache, std::size_t n, std::size_t kept) {
    if (n <= cache.capacity) return {};
    // Grows by a quarter at least: typing at the end reallocates rarely, and
    // the spare rows stay a small part of O(layers x n x d).
    // Whole panels of keys (packed_capacity).
    const std::size_t capacity =
        packed_capacity(std::min(usable_positions(c), std::max(n, cache.capacity + cache.capacity / 4)));
    const std::uint64_t L = c.layers;
    const std::uint64_t qw = query_width(c), d = c.model_width;
    ForwardCache grown;
    grown.capacity = capacity;
    if (auto error = allocate_all({{&grown.queries, L * capacity * qw},
                                   {&grown.keys, L * packed_keys_floats(capacity, c.kv_heads, c.head_width)},
                                   {&grown.values, L * packed_values_floats(capacity, c.kv_heads, c.head_width)},
                                   {&grown.residual, capacity * d}},
                                  "the kept keys and values", n);
        !error.empty())
        return error;
    if (kept > 0) {
        for (std::size_t layer = 0; layer < L; ++layer) {
            std::copy_n(cache.queries.data() + layer * cache.capacity * qw, kept * qw,
                        grown.queries.data() + layer * capacity * qw);
            PackedKeyValues into = kept_key_values(c, grown, layer);
            copy_positions(kept_key_values(c, cache, layer), into, kept);
        }
        std::copy_n(cache.residual.data(), kept * d, grown.residual.data());
    }
    cache.queries = std::move(grown.queries), cache.keys = std::move(grown.keys);
    cache.values = std::move(grown.values), cache.residual = std::move(grown.residual);
    cache.capacity = capacity;
    return {};
}

// Head h's n x n weights of layer `layer`, recomputed from the kept queries
// and keys of all n positions: the very bits of the run. (Only the first
// rows' over only their keys would cost less, but a softmax over fewer keys
// differs in the last bits.) The weights alone: the outputs (weights x V,
// as much work again) were kept as the residual stream.
void kept_rows(const ModelConfig& c, const ForwardCache& cache, std::size_t layer, std::size_t h, std::size_t n,
               const std::uint8_t* key_mask, AttentionWorkspace& workspace, float* out) {
    const std::size_t hd = c.head_width, qw = query_width(c), kv_head = h / (c.heads / c.kv_heads);
    const PackedOperands kv = head_operands(kept_key_values(c, cache, layer), kv_head);
    attention_packed(cache.queries.data() + layer * cache.capacity * qw + h * hd, qw, kv, AttentionShape{n, n, hd, hd},
                     layer_options(c, layer, key_mask), nullptr, hd, out, workspace);
}

// Layer `layer`'s chosen heads' attention (each n x n, or B x B pooled by
// r.pool) of a cached run: the new rows' as the heads computed them
// (`fresh`: H x (n - kept) x n), or with kept positions every row recomputed
// (kept_rows) into `scratch` (n x n, one head: pooled runs only).
void write_attention(const ModelConfig& c, std::size_t layer, const RunRequest& r, const ForwardCache& cache,
                     std::size_t kept, const float* fresh, float* scratch, AttentionWorkspace& workspace, float* out) {
    const std::size_t n = r.count, side = pooled_side(n, r.pool);
    for (std::size_t h = 0; h < c.heads; ++h) {
        if (r.heads_chosen && !r.heads_chosen[h]) continue;
        const bool pooled = r.pool > 1;
        if (kept > 0) kept_rows(c, cache, layer, h, n, r.key_mask, workspace, pooled ? scratch : out);
        const float* head = kept > 0 ? scratch : fresh + h * n * n;
        if (pooled) pool_block_max(head, n, n, r.pool, out);
        else if (kept == 0) std::copy_n(head, n * n, out);
        out += side * side;
    }
}

// run() through a cache: only the rows from the first position the cache
// cannot give are computed. Afterwards the cache holds this run's rows.
std::string run_cached(const ModelConfig& c, const ModelWeights& w, const RunRequest& r, ForwardCache& cache) {
    const std::size_t n = r.count, d = c.model_width, qw = query_width(c);
    const std::size_t first = reusable_positions(c, cache, r), m = n - first;
    cache.ids.clear();  // invalid until this run completes
    ++cache.generation;
    if (auto error = reserve(c, cache, n, first); !error.empty()) return cache.clear(), error;
    Activations acts;
    FloatBuffer fresh_weights;
    if (auto error = acts.allocate(c, n, policy_of(r.threads)); !error.empty()) return error;
    // The heads always compute their weights (into a layer's worth of
    // scratch), whether or not the run returns them: the output-only path
    // sums in another order, and every run must leave the cache with the
    // same bits.
    FloatBuffer head_scratch;  // one head's n x n, pooled afterwards (RunRequest::pool)
    const bool pooled_kept = r.attention && r.pool > 1 && first > 0;
    if (auto error = allocate_all({{&fresh_weights, std::uint64_t(c.heads) * m * n},
                                   {&head_scratch, pooled_kept ? std::uint64_t(n) * n : 0}},
                                  "the attention of the new positions", n);
        !error.empty())
        return error;
    acts.n = m;  // the rows computed
    prepare(c, w, r.ids, r.key_mask, acts, first);
    if (acts.workspaces.empty()) acts.workspaces.resize(1);
    const std::size_t ldq = w.layers.empty() || !w.layers[0].qkv.loaded ? qw : qkv_width(c);
    float* attention = r.attention;  // the next chosen layer's block
    const std::size_t chosen_heads =
        r.heads_chosen ? c.heads - std::size_t(std::count(r.heads_chosen, r.heads_chosen + c.heads, 0)) : c.heads;
    for (std::size_t layer = 0; layer < c.layers; ++layer) {
        const std::size_t block = layer * cache.capacity;
        KeyValueCache kept(kept_key_values(c, cache, layer), first);
        attention_half(c, layer, w.layers[layer], acts, r.key_mask, fresh_weights.data(), nullptr, &kept);
        for (std::size_t i = 0; i < m; ++i)  // the new rows' queries (rotated), for the kept rows of later runs
            std::copy_n(acts.qkv.data() + i * ldq, qw, cache.queries.data() + (block + first + i) * qw);
        if (r.attention && (!r.layers_chosen || r.layers_chosen[layer])) {
            write_attention(c, layer, r, cache, first, fresh_weights.data(), head_scratch.data(), acts.workspaces[0],
                            attention);
            attention += chosen_heads * pooled_side(n, r.pool) * pooled_side(n, r.pool);
        }
        mlp_half(c, w.layers[layer], acts);
    }
    std::copy_n(acts.x.data(), m * d, cache.residual.data() + first * d);
    cache.ids.assign(r.ids, r.ids + n);
    cache.key_mask.resize(n);
    for (std::size_t i = 0; i < n; ++i) cache.key_mask[i] = r.key_mask ? r.key_mask[i] != 0 : 1;
    cache.masked = r.key_mask != nullptr;
    cache.reused = first;

    // The final norm of every row (the kept ones' from the cache), then the logits.
    const float* hidden = cache.residual.data();
    if (c.final_norm) {
        normalize_rows(c, w.final_norm, w.final_norm_bias, hidden, acts.normed.data(), n);
        hidden = acts.normed.data();
    }
    if (r.hidden) std::copy_n(hidden, n * d, r.hidden);
    if (r.logits)
        project_logits(c, w, hidden + r.logits_from * d, n - r.logits_from, acts.projected.data(), r.logits,
                       acts.products);
    return {};
}

}  // namespace

PackedKeyValues kept_key_values(const ModelConfig& c, const ForwardCache& cache, std::size_t layer) {
    const std::size_t capacity = cache.capacity, G = c.kv_heads, hd = c.head_width;
    // The buffers' owner may write through the view; const readers only read.
    float* keys = const_cast<float*>(cache.keys.data()) + layer * packed_keys_floats(capacity, G, hd);
    float* values = const_cast<float*>(cache.values.data()) + layer * packed_values_floats(capacity, G, hd);
    return {keys, values, capacity, G, hd};
}

std::string kept_head_weights(const ModelConfig& c, const ForwardCache& cache, std::size_t layer, std::size_t head,
                              float* out, std::size_t pool) {
    const std::size_t n = cache.ids.size();
    if (n == 0) return "nothing is kept: run the model first";
    if (layer >= c.layers || head >= c.heads) return "no such layer or head";
    if (auto error = check_pool_factor(pool, n, n); !error.empty()) return error;
    FloatBuffer scratch;
    if (auto error = allocate_all({{&scratch, pool > 1 ? std::uint64_t(n) * n : 0}}, "one head's weights", n);
        !error.empty())
        return error;
    AttentionWorkspace workspace;
    kept_rows(c, cache, layer, head, n, cache.masked ? cache.key_mask.data() : nullptr, workspace,
              pool > 1 ? scratch.data() : out);
    if (pool > 1) pool_block_max(scratch.data(), n, n, pool, out);
    return {};
}

std::string kept_logits(const ModelConfig& c, const ModelWeights& w, const ForwardCache& cache,
                        const std::int32_t* positions, std::size_t count, std::size_t threads, float* out) {
    const std::size_t n = cache.ids.size(), d = c.model_width;
    if (n == 0) return "nothing is kept: run the model first";
    if (!c.has_lm_head) return no_lm_head(c);
    if (count == 0 || !positions) return "no positions: the logits of at least one position were asked for";
    for (std::size_t i = 0; i < count; ++i)
        if (positions[i] < 0 || std::size_t(positions[i]) >= n)
            return "logits of position " + std::to_string(positions[i]) + ": there are only " + std::to_string(n) +
                   " tokens (positions 0 to " + std::to_string(n - 1) + ")";
    // As run_cached: the final norm of the rows, then the head, each row and
    // column summed as there (head_logits: its projection's scratch after the
    // normed rows). Each row's sums read that row alone, so rows gathered out
    // of the residual stream in any order get the bits they get in place.
    ProductRun products{policy_of(threads)};
    FloatBuffer normed, rows, panels;
    if (auto error = allocate_all({{&normed, 2 * std::uint64_t(count) * d}, {&rows, std::uint64_t(count) * d},
                                   {&panels, c.keep_16_bit ? products.policy.limit *
                                                                 Activations::panel_scratch_floats(c) : 0}},
                                  "the logits", count);
        !error.empty())
        return error;
    if (!panels.empty()) products.panel_scratch = panels.data(), products.panel_stride = Activations::panel_scratch_floats(c);
    for (std::size_t i = 0; i < count; ++i)
        std::copy_n(cache.residual.data() + std::size_t(positions[i]) * d, d, rows.data() + i * d);
    head_logits(c, w, rows.data(), count, normed.data(), out, products);
    return {};
}

std::uint64_t ForwardCache::bytes() const {
    return (queries.size() + keys.size() + values.size() + residual.size()) * sizeof(float) +
           ids.size() * (sizeof(std::int32_t) + 1);
}

void ForwardCache::clear() {
    ids.clear(), key_mask.clear();
    ids.shrink_to_fit(), key_mask.shrink_to_fit();
    queries.release(), keys.release(), values.release(), residual.release();
    capacity = reused = 0;
    ++generation;
}

std::string token_ids_error(const ModelConfig& c, const std::int32_t* ids, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
        if (ids[i] < 0 || std::size_t(ids[i]) >= c.vocab_size)
            return "token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                   " is outside the vocabulary (ids 0 to " + std::to_string(c.vocab_size - 1) + ")";
    return {};
}

std::string run(const ModelConfig& c, const ModelWeights& w, const RunRequest& request) {
    if (auto error = check_tokens(c, w, request.ids, request.count); !error.empty()) return error;
    if (request.logits && !c.has_lm_head) return no_lm_head(c);
    // The caller allocated the outputs, but their sizes are also products the
    // forward pass indexes with: they must fit a (32-bit in wasm) size_t.
    const std::uint64_t n64 = request.count;
    if (request.attention && request.count > 0)
        if (auto error = check_pool_factor(request.pool, request.count, request.count); !error.empty()) return error;
    const std::uint64_t side = request.attention ? pooled_side(request.count, std::max<std::size_t>(request.pool, 1)) : 0;
    const std::uint64_t attention_floats = std::uint64_t(c.layers) * c.heads * side * side;
    const std::uint64_t logits_floats = request.logits ? n64 * c.vocab_size : 0;
    if (std::max(attention_floats, logits_floats) * sizeof(float) > kMaxMemoryBytes)
        return "the outputs for " + std::to_string(request.count) + " tokens do not fit in WebAssembly memory (" +
               std::to_string(std::max(attention_floats, logits_floats) * sizeof(float)) + " bytes)";
    if (request.logits && request.logits_from >= request.count) return logits_past_end(request.logits_from, request.count);
    // An observer reads every position's state: such a run computes them all
    // and leaves the cache as it is (still the last cached run's).
    if (request.cache && !request.observer) return run_cached(c, w, request, *request.cache);
    if (request.layers_chosen || request.heads_chosen) return "a choice of layers and heads needs a cache";
    if (request.pool != 1) return "pooled attention needs a cache";
    Activations acts;
    if (auto error = acts.allocate(c, request.count, policy_of(request.threads)); !error.empty()) return error;
    prepare(c, w, request.ids, request.key_mask, acts);

    const std::size_t n = acts.n, d = c.model_width, per_layer = c.heads * n * n;
    for (std::size_t layer = 0; layer < c.layers; ++layer) {
        float* attention = request.attention ? request.attention + layer * per_layer : nullptr;
        attention_half(c, layer, w.layers[layer], acts, request.key_mask, attention, nullptr);
        LayerState state{c, w, layer, n, attention, nullptr, 0, nullptr, acts.products};
        if (request.observer) {
            state.values = layer_values(c, w.layers[layer], acts, state.values_stride);
            request.observer->attention_done(state);
        }
        mlp_half(c, w.layers[layer], acts);
        if (request.observer) state.residual = acts.x.data(), request.observer->layer_done(state);
    }

    // The final norm (encoders have none: their hidden state is the last layer's output).
    const float* hidden = acts.x.data();
    if (c.final_norm) {
        normalize_rows(c, w.final_norm, w.final_norm_bias, acts.x.data(), acts.normed.data(), n);
        hidden = acts.normed.data();
    }
    if (request.hidden) std::copy_n(hidden, n * d, request.hidden);
    // acts.projected is free after the last layer (and is not `hidden`).
    if (request.logits)
        project_logits(c, w, hidden + request.logits_from * d, n - request.logits_from, acts.projected.data(),
                       request.logits, acts.products);
    return {};
}

void head_logits(const ModelConfig& c, const ModelWeights& w, const float* residual, std::size_t rows, float* normed,
                 float* logits, const ProductRun& products) {
    if (c.final_norm) normalize_rows(c, w.final_norm, w.final_norm_bias, residual, normed, rows);
    // T5's tied head reads the normed rows times d_model^-0.5 (validate()
    // keeps logits_scale to models with a final norm).
    if (c.logits_scale > 0.0f)
        for (std::size_t i = 0; i < rows * c.model_width; ++i) normed[i] *= c.logits_scale;
    // The head's own projection writes after the normed rows.
    project_logits(c, w, c.final_norm ? normed : residual, rows, normed + rows * c.model_width, logits, products);
}

std::string explain(const ModelConfig& c, const ModelWeights& w, const ExplainRequest& request,
                    MultiHeadTrace& trace) {
    if (auto error = check_tokens(c, w, request.ids, request.count); !error.empty()) return error;
    if (request.layer >= c.layers)
        return "layer " + std::to_string(request.layer) + " does not exist: the model has " +
               std::to_string(c.layers) + " layers (0 to " + std::to_string(c.layers - 1) + ")";
    Activations acts;
    if (auto error = acts.allocate(c, request.count, policy_of(request.threads)); !error.empty()) return error;
    if (auto error = prepare_layer_trace(c, request.layer, {nullptr, request.count, nullptr, 0}, trace);
        !error.empty())
        return error;
    prepare(c, w, request.ids, request.key_mask, acts);

    // The layers before run with their weights materialized (into a scratch
    // buffer), as run() does when it returns attention: the same arithmetic,
    // so the trace holds exactly run()'s numbers for this layer.
    FloatBuffer earlier_weights;
    if (!earlier_weights.allocate(earlier_weights_floats(c, acts.n))) return "out of memory explaining a layer";
    for (std::size_t layer = 0; layer < request.layer; ++layer) {
        attention_half(c, layer, w.layers[layer], acts, request.key_mask, earlier_weights.data(), nullptr);
        mlp_half(c, w.layers[layer], acts);
    }
    const LayerWeights& l = w.layers[request.layer];
    attention_half(c, request.layer, l, acts, request.key_mask, nullptr, &trace);
    mlp_half(c, l, acts);
    std::copy_n(acts.x.data(), acts.n * c.model_width, trace.layer_output.data());
    return {};
}

bool attends_causally(const ModelConfig& config) { return config.causal; }

}  // namespace attnlens::model

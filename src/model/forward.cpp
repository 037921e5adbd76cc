#include "forward.hpp"

#include <algorithm>

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

// rows (n x width) += each token's learned position row, and token type 0's
// when the model has token types.
void add_positions(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
                   float* rows, std::size_t n, std::size_t width) {
    std::size_t seen = 0;
    for (std::size_t t = 0; t < n; ++t) {
        float* row = rows + t * width;
        if (c.position == PositionKind::learned) {
            const std::size_t position = position_row(c, ids[t], !key_mask || key_mask[t], t, seen);
            add_residual(row, w.position_embedding.values.data() + position * width, width);
        }
        if (c.type_vocab_size > 0) add_residual(row, w.type_embedding.values.data(), width);
    }
}

// x = the embeddings of the tokens: the word's (times the embedding scale),
// plus its learned position's and token type 0's when the model has them,
// then the embedding norm when it has one. Word embeddings narrower than the
// model are projected to its width: ELECTRA's embeddings_project takes the
// normed sum; OPT's project_in the word embeddings alone, before the
// (model-wide) positions are added (projection_before_positions).
void embed(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
           Activations& acts) {
    const std::size_t E = embedded_width(c), n = acts.n;
    const bool projected = E != c.model_width;
    float* embedded = projected ? acts.embedded.data() : acts.x.data();
    const float scale = round_to_type(w.word_embedding_type(), c.embedding_scale);
    for (std::size_t t = 0; t < n; ++t) {
        float* row = embedded + t * E;
        gather_column(packed(w.word_embedding), std::size_t(ids[t]), row);  // E is kept as the panels of E^T
        if (c.embedding_scale > 0.0f)
            for (std::size_t j = 0; j < E; ++j) row[j] *= scale;
    }
    const bool after = projected && c.projection_before_positions;
    if (!after) add_positions(c, w, ids, key_mask, embedded, n, E);
    if (c.embedding_norm) normalize_rows(c, w.embedding_norm, w.embedding_norm_bias, embedded, embedded, n, E);
    if (projected)
        project(packed(w.embedding_projection), bias_values(w.embedding_projection_bias), embedded, E, n,
                acts.x.data(), c.model_width, acts.products);
    if (after) add_positions(c, w, ids, key_mask, acts.x.data(), n, c.model_width);
}

// The rotary angles of positions 0..n-1, once per pass (every layer uses them).
void prepare(const ModelConfig& c, const ModelWeights& w, const std::int32_t* ids, const std::uint8_t* key_mask,
             Activations& acts) {
    if (c.position == PositionKind::rotary)
        rotary_tables(acts.n, rotated_width(c), c.rope_theta, acts.rotary_cos.data(), acts.rotary_sin.data());
    embed(c, w, ids, key_mask, acts);
}

}  // namespace

std::string token_ids_error(const ModelConfig& c, const std::int32_t* ids, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i)
        if (ids[i] < 0 || std::size_t(ids[i]) >= c.vocab_size)
            return "token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                   " is outside the vocabulary (ids 0 to " + std::to_string(c.vocab_size - 1) + ")";
    return {};
}

std::string run(const ModelConfig& c, const ModelWeights& w, const RunRequest& request) {
    if (auto error = check_tokens(c, w, request.ids, request.count); !error.empty()) return error;
    if (request.logits && !c.has_lm_head)
        return std::string(architecture_name(c.architecture)) + " models have no language-model head: no logits";
    // The caller allocated the outputs, but their sizes are also products the
    // forward pass indexes with: they must fit a (32-bit in wasm) size_t.
    const std::uint64_t n64 = request.count;
    const std::uint64_t attention_floats = request.attention ? std::uint64_t(c.layers) * c.heads * n64 * n64 : 0;
    const std::uint64_t logits_floats = request.logits ? n64 * c.vocab_size : 0;
    if (std::max(attention_floats, logits_floats) * sizeof(float) > kMaxMemoryBytes)
        return "the outputs for " + std::to_string(request.count) + " tokens do not fit in WebAssembly memory (" +
               std::to_string(std::max(attention_floats, logits_floats) * sizeof(float)) + " bytes)";
    if (request.logits && request.logits_from >= request.count)
        return "logits from position " + std::to_string(request.logits_from) + ": there are only " +
               std::to_string(request.count) + " tokens (positions 0 to " + std::to_string(request.count - 1) + ")";
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
    const MultiHeadInput layer_input{nullptr, request.count, nullptr, 0};
    if (auto error = allocate_trace(layer_input, multi_head_shape(c), trace); !error.empty()) return error;
    if (auto error = allocate_all({{&trace.layer_output, std::uint64_t(request.count) * c.model_width}},
                                  "explaining a layer", request.count);
        !error.empty())
        return error;
    trace.architecture = architecture_name(c.architecture);
    trace.layer = request.layer;
    trace.norm = norm_name(c.norm);
    trace.position = position_name(c.position);
    trace.rotary_width = c.position == PositionKind::rotary ? rotated_width(c) : 0;
    trace.parallel_residual = c.parallel_residual;
    trace.post_norm = c.post_norm;
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

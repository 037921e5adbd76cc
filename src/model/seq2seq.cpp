#include "seq2seq.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../attention/pooled.hpp"
#include "blocks.hpp"
#include "forward.hpp"
#include "layer.hpp"

namespace attnlens::model {

namespace {

// Adds Marian's sinusoid of `position` to a row of d values
// (MarianSinusoidalPositionalEmbedding: column k < d/2 holds
// sin(position / 10000^(2k/d)), column d/2 + k its cosine; computed in double
// and rounded to float32, as its numpy table is).
void add_sinusoid(std::size_t position, std::size_t d, float* row) {
    const std::size_t half = d / 2;
    for (std::size_t k = 0; k < half; ++k) {
        const double angle = double(position) / std::pow(10000.0, 2.0 * double(k) / double(d));
        row[k] += static_cast<float>(std::sin(angle));
        row[half + k] += static_cast<float>(std::cos(angle));
    }
}

// The encoder's or the decoder's embeddings of `count` ids whose first sits
// at `first_position`: the shared word embedding times the embedding scale
// (a Python float in BART and Marian: not rounded to the weights' dtype),
// plus the position (a learned row position_offset on, or a sinusoid), then
// the embedding norm when the model has one.
struct EmbeddingTables {
    const Weight &positions, &norm, &norm_bias;
};
void embed(const ModelConfig& c, const ModelWeights& w, const EmbeddingTables& tables, const std::int32_t* ids,
           std::size_t count, std::size_t first_position, float* out) {
    const std::size_t d = c.model_width;
    for (std::size_t t = 0; t < count; ++t) {
        float* row = out + t * d;
        gather_column(packed(w.word_embedding), std::size_t(ids[t]), row);
        if (c.embedding_scale > 0.0f)
            for (std::size_t j = 0; j < d; ++j) row[j] *= c.embedding_scale;
        const std::size_t position = first_position + t;
        if (c.position == PositionKind::learned)
            add_residual(row, tables.positions.values.data() + (position + c.position_offset) * d, d);
        else if (c.position == PositionKind::sinusoidal) add_sinusoid(position, d, row);
    }
    if (c.embedding_norm) normalize_rows(c, tables.norm, tables.norm_bias, out, out, count);
}

AttentionOptions options_of(const ModelConfig& c, bool causal, const FloatBuffer& score_bias = {}) {
    AttentionOptions options;
    if (c.attention_scale > 0.0f) options.scale = c.attention_scale;
    options.causal = causal;
    if (!score_bias.empty()) options.score_bias = score_bias.data();
    return options;
}

// T5Attention._relative_position_bucket of distance `relative` (key - query),
// in float32 where torch computes in float32.
std::size_t relative_bucket(std::ptrdiff_t relative, bool bidirectional, std::size_t buckets, std::size_t max_distance) {
    std::size_t bucket = 0, distance;
    if (bidirectional) {
        buckets /= 2;
        if (relative > 0) bucket += buckets;
        distance = std::size_t(relative < 0 ? -relative : relative);
    } else {
        distance = std::size_t(relative < 0 ? -relative : 0);
    }
    const std::size_t exact = buckets / 2;
    if (distance < exact) return bucket + distance;
    // math.log(max_distance / max_exact) in double, as log1p: std::log(double)
    // would link musl's 2 KB table into the download for this one constant.
    const float logarithmic = std::log(float(distance) / float(exact)) /
                              float(std::log1p(double(max_distance) / double(exact) - 1.0)) * float(buckets - exact);
    return bucket + std::min(exact + std::size_t(logarithmic), buckets - 1);
}

// The relative position bias of `queries` queries from position `first`
// over keys 0.. `keys` - 1, a block of queries x keys per head (every head,
// or only head `only` when it is below H): table [buckets, H]'s row of each
// distance's bucket. Nothing (and "") without relative positions.
std::string relative_bias(const ModelConfig& c, const Weight& table, bool bidirectional, std::size_t first,
                          std::size_t queries, std::size_t keys, FloatBuffer& out, std::size_t only = SIZE_MAX) {
    if (c.position != PositionKind::relative) return {};
    const std::size_t begin = only < c.heads ? only : 0, end = only < c.heads ? only + 1 : c.heads;
    if (auto error = allocate_all({{&out, std::uint64_t(end - begin) * queries * keys}}, "the position bias", queries);
        !error.empty())
        return error;
    for (std::size_t i = 0; i < queries; ++i)
        for (std::size_t j = 0; j < keys; ++j) {
            const std::size_t bucket = relative_bucket(std::ptrdiff_t(j) - std::ptrdiff_t(first + i), bidirectional,
                                                       c.relative_buckets, c.relative_max_distance);
            for (std::size_t h = begin; h < end; ++h)
                out.data()[((h - begin) * queries + i) * keys + j] = table.values.data()[bucket * c.heads + h];
        }
    return {};
}

// Where a sublayer of `layer` puts its H x rows x keys weights: straight
// into a choice of every head in full, else into `scratch` (sized by
// choice_scratch) when they are kept or chosen, else nowhere (the heads'
// output-only path).
float* layer_weights(const WeightsChoice& choice, std::size_t layer, std::size_t per_layer, FloatBuffer& scratch) {
    if (choice.out && choice.every_head_in_full()) return choice.out + layer * per_layer;
    return scratch.empty() ? nullptr : scratch.data();
}

// Floats of scratch a choice needs for H x rows x keys weights per layer:
// none when they go straight out, or when nothing is written or kept.
std::uint64_t choice_scratch(const WeightsChoice& choice, bool keep, std::uint64_t per_layer) {
    const bool through_scratch = choice.out ? !choice.every_head_in_full() : keep;
    return through_scratch ? per_layer : 0;
}

// Layer `layer`'s weights (H blocks of rows x keys at `weights`) as a
// partial choice takes them: its chosen heads, pooled, at `cursor`, which
// moves past them. A choice of every head in full was written in place.
void write_chosen(const WeightsChoice& choice, std::size_t layer, std::size_t heads, std::size_t rows,
                  std::size_t keys, const float* weights, float*& cursor) {
    if (!choice.out || choice.every_head_in_full() || (choice.layers && !choice.layers[layer])) return;
    const std::size_t size = pooled_side(rows, choice.pool) * pooled_side(keys, choice.pool);
    for (std::size_t h = 0; h < heads; ++h) {
        if (choice.heads && !choice.heads[h]) continue;
        const float* head = weights + h * rows * keys;
        if (choice.pool > 1) pool_block_max(head, rows, keys, choice.pool, cursor);
        else std::copy_n(head, rows * keys, cursor);
        cursor += size;
    }
}

// With keep: the rows of Q (H*hd floats each) a sublayer of layer `l`
// projected, copied from acts.qkv to `queries`, and of K (G*hd each) to
// `keys` unless null (a decoder's keys are in its caches). Seq2seq families
// have no rotary positions: Q and K are as projected.
void keep_rows(const ModelConfig& c, const LayerWeights& l, const Activations& acts, float* queries, float* keys) {
    const QkvLayout rows = layer_rows(c, l, acts);
    const std::size_t qw = query_width(c), kvw = key_value_width(c);
    for (std::size_t i = 0; i < acts.n; ++i) {
        std::copy_n(rows.q + i * rows.ldq, qw, queries + i * qw);
        if (keys) std::copy_n(rows.k + i * rows.ldkv, kvw, keys + i * kvw);
    }
}

std::string too_many(const char* what, std::size_t count, std::size_t limit) {
    return std::to_string(count) + " " + what + " tokens are more than the model's " + std::to_string(limit) +
           " positions";
}

// `record`: the record of `trace` when it asks for one of this stack's
// kinds (the encoder's, or with `decoder` the decoder's two), else null;
// allocated for `input`'s queries and keys, its kind written. A layer the
// stack lacks is refused (JavaScript names it before it calls: the core's
// refusal is short, as every byte of it is in the download).
std::string start_trace(const ModelConfig& c, const SublayerTrace& trace, bool decoder, std::size_t layers,
                        const MultiHeadInput& input, MultiHeadTrace*& record) {
    record = (trace.kind != AttentionKind::encoder) == decoder ? trace.record : nullptr;
    if (!record) return {};
    if (trace.layer >= layers) return "no such layer";
    record->kind = attention_kind_name(trace.kind);
    return prepare_layer_trace(c, trace.layer, input, *record);
}

}  // namespace

const char* attention_kind_name(AttentionKind kind) {
    return kind == AttentionKind::encoder ? "encoder" : kind == AttentionKind::decoder ? "decoder" : "cross";
}

std::string Seq2SeqSession::encode(const std::int32_t* ids, std::size_t count, std::size_t max_target,
                                   const WeightsChoice& encoder_attention, LayerObserver* observer,
                                   const SublayerTrace& trace, bool keep) {
    n_ = m_ = capacity_ = 0;
    keep_ = false;
    if (!encoder_decoder(c_)) return "the model has no decoder: decoderLayers is 0";
    if (!w_.finished()) return "the model is not finished: call finish() after loading its tensors";
    if (count == 0 || !ids) return "no source tokens: the encoder needs at least one token id";
    if (auto error = token_ids_error(c_, ids, count); !error.empty()) return "source " + error;
    const std::size_t positions = usable_positions(c_);
    if (count > positions) return too_many("source", count, positions);
    if (max_target == 0) return "no room for target tokens: the decoder needs at least one";
    if (max_target > positions) return too_many("target", max_target, positions);
    if (encoder_attention.pool == 0) return "pool factor 0 must be at least 1";

    const std::uint64_t d = c_.model_width, kvw = key_value_width(c_), qw = query_width(c_);
    const std::uint64_t layers = c_.decoder_layers, per_layer = std::uint64_t(c_.heads) * count * count;
    FloatBuffer scratch;  // one layer's weights when they are kept or chosen (layer_weights)
    if (auto error = allocate_all({{&encoded_, count * d},
                                   {&self_keys_, layers * max_target * kvw},
                                   {&self_values_, layers * max_target * kvw},
                                   {&cross_keys_, layers * count * kvw},
                                   {&cross_values_, layers * count * kvw},
                                   {&encoder_queries_, keep ? c_.layers * count * qw : 0},
                                   {&encoder_keys_, keep ? c_.layers * count * kvw : 0},
                                   {&decoder_queries_, keep ? layers * max_target * qw : 0},
                                   {&cross_queries_, keep ? layers * max_target * qw : 0},
                                   {&scratch, choice_scratch(encoder_attention, keep, per_layer)}},
                                  "the encoder-decoder's caches", count);
        !error.empty())
        return error;
    Activations acts;
    if (auto error = acts.allocate(c_, count, ThreadPolicy::automatic_up_to_max()); !error.empty()) return error;
    MultiHeadTrace* record;
    if (auto error = start_trace(c_, trace, false, c_.layers, {nullptr, count, nullptr, 0}, record); !error.empty())
        return error;
    embed(c_, w_, {w_.position_embedding, w_.embedding_norm, w_.embedding_norm_bias}, ids, count, 0, acts.x.data());
    FloatBuffer position_bias;
    if (auto error = relative_bias(c_, w_.relative_bias, true, 0, count, count, position_bias); !error.empty())
        return error;
    const AttentionOptions bidirectional = options_of(c_, false, position_bias);
    float* chosen = encoder_attention.out;  // the next chosen layer's block of a partial choice
    for (std::size_t layer = 0; layer < c_.layers; ++layer) {
        const LayerWeights& l = w_.layers[layer];
        float* attention = layer_weights(encoder_attention, layer, per_layer, scratch);
        MultiHeadTrace* traced = record && layer == trace.layer ? record : nullptr;
        attention_sublayer(c_, projections_of(l), l.attention_norm, l.attention_norm_bias, acts, {}, bidirectional, {},
                           attention, traced);
        if (keep)
            keep_rows(c_, l, acts, encoder_queries_.data() + layer * count * qw,
                      encoder_keys_.data() + layer * count * kvw);
        write_chosen(encoder_attention, layer, c_.heads, count, count, attention, chosen);
        LayerState state{c_, w_, layer, count, attention, nullptr, 0, nullptr, acts.products};
        if (observer) {
            state.values = layer_values(c_, l, acts, state.values_stride);
            observer->attention_done(state);
        }
        mlp_half(c_, l, acts);
        if (traced) std::copy_n(acts.x.data(), count * d, traced->layer_output.data());
        if (observer) state.residual = acts.x.data(), observer->layer_done(state);
    }
    // T5's encoder ends with its final norm (the decoder's is head_logits').
    if (c_.final_norm) normalize_rows(c_, w_.encoder_final_norm, {}, acts.x.data(), acts.x.data(), count);
    std::copy_n(acts.x.data(), count * d, encoded_.data());
    n_ = count;
    capacity_ = max_target;
    keep_ = keep;
    return {};
}

std::string Seq2SeqSession::decode(const std::int32_t* ids, std::size_t count, const DecodeOutputs& out) {
    if (n_ == 0) return "nothing is encoded: encode a source before decoding";
    if (count == 0 || !ids) return "no target tokens: a decoder step needs at least one token id";
    if (auto error = token_ids_error(c_, ids, count); !error.empty()) return "target " + error;
    if (m_ + count > capacity_)
        return std::to_string(m_ + count) + " target tokens are more than the " + std::to_string(capacity_) +
               " the encoding made room for";
    if (out.logits && out.logits_from >= count)
        return "logits from row " + std::to_string(out.logits_from) + ": the step has only " + std::to_string(count) +
               " tokens";
    if (out.trace.record && m_ > 0) return "a trace needs the step that starts the target";
    if (out.self_attention.pool == 0 || out.cross_attention.pool == 0) return "pool factor 0 must be at least 1";
    const std::size_t self_block = c_.heads * count * (m_ + count), cross_block = c_.heads * count * n_;
    Activations acts;
    FloatBuffer self_scratch, cross_scratch;  // one layer's weights of each kind when kept or chosen (layer_weights)
    if (auto error = allocate_all({{&self_scratch, choice_scratch(out.self_attention, keep_, self_block)},
                                   {&cross_scratch, choice_scratch(out.cross_attention, keep_, cross_block)}},
                                  "the attention of a decoder layer", count);
        !error.empty())
        return error;
    if (auto error = acts.allocate(c_, count, ThreadPolicy::automatic_up_to_max()); !error.empty()) return error;
    const bool trace_cross = out.trace.kind == AttentionKind::cross;
    MultiHeadTrace* record;
    const MultiHeadInput traced_input{nullptr, count, trace_cross ? encoded_.data() : nullptr, trace_cross ? n_ : 0};
    if (auto error = start_trace(c_, out.trace, true, c_.decoder_layers, traced_input, record); !error.empty())
        return error;
    embed(c_, w_, {w_.decoder_position_embedding, w_.decoder_embedding_norm, w_.decoder_embedding_norm_bias}, ids,
          count, m_, acts.x.data());
    FloatBuffer position_bias;
    if (auto error = relative_bias(c_, w_.decoder_relative_bias, false, m_, count, m_ + count, position_bias);
        !error.empty())
        return error;
    const AttentionOptions causal = options_of(c_, true, position_bias), bidirectional = options_of(c_, false);
    const std::size_t kvw = key_value_width(c_), qw = query_width(c_);
    float *self_chosen = out.self_attention.out, *cross_chosen = out.cross_attention.out;
    for (std::size_t i = 0; i < c_.decoder_layers; ++i) {
        const LayerWeights& l = w_.layers[c_.layers + i];
        // Layer i's caches: the m_ target tokens' keys and values so far, and
        // the source's (projected by the first step).
        KeyValueCache self{self_keys_.data() + i * capacity_ * kvw, self_values_.data() + i * capacity_ * kvw, m_};
        KeyValueCache cross{cross_keys_.data() + i * n_ * kvw, cross_values_.data() + i * n_ * kvw, m_ > 0 ? n_ : 0};
        float* self_weights = layer_weights(out.self_attention, i, self_block, self_scratch);
        float* cross_weights = layer_weights(out.cross_attention, i, cross_block, cross_scratch);
        MultiHeadTrace* traced = record && i == out.trace.layer ? record : nullptr;
        // With keep, each sublayer's queries of the step's rows (its keys are in the caches).
        const auto keep_queries = [&](FloatBuffer& kept) {
            if (keep_) keep_rows(c_, l, acts, kept.data() + (i * capacity_ + m_) * qw, nullptr);
        };
        attention_sublayer(c_, projections_of(l), l.attention_norm, l.attention_norm_bias, acts,
                           {nullptr, 0, &self}, causal, {}, self_weights, trace_cross ? nullptr : traced);
        keep_queries(decoder_queries_);
        write_chosen(out.self_attention, i, c_.heads, count, m_ + count, self_weights, self_chosen);
        // The observers read each sublayer's values where its cache keeps them.
        LayerState self_state{c_, w_, i, count, self_weights, self.values, kvw, nullptr, acts.products, self.filled,
                              &l.attention_output};
        if (out.self_observer) out.self_observer->attention_done(self_state);
        attention_sublayer(c_, cross_projections_of(l), l.cross_norm, l.cross_norm_bias, acts,
                           {encoded_.data(), n_, &cross}, bidirectional, {}, cross_weights,
                           trace_cross ? traced : nullptr);
        keep_queries(cross_queries_);
        write_chosen(out.cross_attention, i, c_.heads, count, n_, cross_weights, cross_chosen);
        LayerState cross_state{c_, w_, i, count, cross_weights, cross.values, kvw, nullptr, acts.products, n_,
                               &l.cross_output};
        if (out.cross_observer) out.cross_observer->attention_done(cross_state);
        mlp_half(c_, l, acts);
        if (traced) std::copy_n(acts.x.data(), count * c_.model_width, traced->layer_output.data());
        self_state.residual = cross_state.residual = acts.x.data();
        if (out.self_observer) out.self_observer->layer_done(self_state);
        if (out.cross_observer) out.cross_observer->layer_done(cross_state);
    }
    m_ += count;
    if (!out.logits) return {};
    const std::size_t rows = count - out.logits_from, d = c_.model_width;
    float* hidden = acts.x.data() + out.logits_from * d;
    // acts.normed holds the normed rows; the encoder-decoder layouts have no
    // head projection (masked-LM transform, project_out) to use the scratch after them.
    head_logits(c_, w_, hidden, rows, acts.normed.data(), out.logits, acts.products);
    return {};
}

std::string Seq2SeqSession::head_weights(AttentionKind kind, std::size_t layer, std::size_t head, std::size_t pool,
                                         float* out) const {
    if (!keep_) return "nothing is kept: run the model first";
    const bool encoder = kind == AttentionKind::encoder;
    if (layer >= (encoder ? c_.layers : c_.decoder_layers) || head >= c_.heads) return "no such layer or head";
    if (!encoder && m_ == 0) return "no target is decoded";
    if (pool == 0) return "pool factor 0 must be at least 1";
    const std::size_t rows = encoder ? n_ : m_, keys = kind == AttentionKind::decoder ? m_ : n_;
    const std::size_t qw = query_width(c_), kvw = key_value_width(c_), hd = c_.head_width;
    const std::size_t kv = head / (c_.heads / c_.kv_heads) * hd;
    FloatBuffer scratch, position_bias;
    if (auto error = allocate_all({{&scratch, pool > 1 ? std::uint64_t(rows) * keys : 0}}, "one head's weights", rows);
        !error.empty())
        return error;
    // As the run's sublayer: the queries it kept, the keys of its cache (the
    // encoder's kept apart), T5's position bias of this head alone.
    const float *q, *k;
    if (encoder) {
        q = encoder_queries_.data() + layer * n_ * qw, k = encoder_keys_.data() + layer * n_ * kvw;
    } else {
        const bool self = kind == AttentionKind::decoder;
        q = (self ? decoder_queries_ : cross_queries_).data() + layer * capacity_ * qw;
        k = self ? self_keys_.data() + layer * capacity_ * kvw : cross_keys_.data() + layer * n_ * kvw;
    }
    if (kind != AttentionKind::cross)
        if (auto error = relative_bias(c_, encoder ? w_.relative_bias : w_.decoder_relative_bias, encoder, 0, rows, keys,
                                       position_bias, head);
            !error.empty())
            return error;
    AttentionWorkspace workspace;
    attention_strided(q + head * hd, qw, k + kv, kvw, nullptr, kvw, AttentionShape{rows, keys, hd, hd},
                      options_of(c_, kind == AttentionKind::decoder, position_bias), nullptr, hd,
                      pool > 1 ? scratch.data() : out, workspace);
    if (pool > 1) pool_block_max(scratch.data(), rows, keys, pool, out);
    return {};
}

std::uint64_t Seq2SeqSession::bytes() const {
    std::uint64_t floats = 0;
    for (const FloatBuffer* buffer : {&encoded_, &self_keys_, &self_values_, &cross_keys_, &cross_values_,
                                      &encoder_queries_, &encoder_keys_, &decoder_queries_, &cross_queries_})
        floats += buffer->size();
    return floats * sizeof(float);
}

std::string explain_seq2seq(const ModelConfig& c, const ModelWeights& w, const std::int32_t* source,
                            std::size_t source_count, const std::int32_t* target, std::size_t target_count,
                            const SublayerTrace& trace) {
    // encode() and decode() refuse a model without a decoder, and a missing target.
    const bool decoder = trace.kind != AttentionKind::encoder;
    const std::size_t n = source_count, m = decoder ? target_count : 0, H = c.heads;
    // One buffer for the three kinds' weights: [encoder | decoder | cross].
    FloatBuffer weights;
    const std::uint64_t encoder_floats = std::uint64_t(c.layers) * H * n * n,
                        decoder_floats = std::uint64_t(c.decoder_layers) * H * m * m,
                        cross_floats = std::uint64_t(c.decoder_layers) * H * m * n;
    if (auto error = allocate_all({{&weights, encoder_floats + decoder_floats + cross_floats}},
                                  "the attention of every layer", std::max(n, m));
        !error.empty())
        return error;
    Seq2SeqSession session(c, w);
    auto error = session.encode(source, n, decoder ? m : 1, weights.data(), nullptr, trace);
    if (!error.empty() || !decoder) return error;
    DecodeOutputs outputs;
    outputs.self_attention = weights.data() + encoder_floats;
    outputs.cross_attention = weights.data() + encoder_floats + decoder_floats;
    outputs.trace = trace;
    return session.decode(target, m, outputs);
}

}  // namespace attnlens::model

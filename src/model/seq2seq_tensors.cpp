// The encoder-decoder layouts' tensors, as tables: BART's names
// (modeling_bart.py), which Marian's files share (modeling_marian.py; its
// sinusoidal positions are computed, not stored), and T5's (modeling_t5.py). Data, not code: a row per
// tensor, the sizes by name, and the knob that decides whether it exists.
#include "tensors.hpp"

namespace attnlens::model {

namespace {

using Role = TensorRole;
using Layout = TensorLayout;

enum class Size { none, model, mlp, vocab, positions, one, attention, buckets, heads };
// The knob a tensor depends on.
enum class When {
    always, learned_positions, embedding_norm, attention_bias, output_bias, mlp_bias, logits_bias, gated, not_gated
};

struct Row {
    const char* name;
    Size rows, cols;  // cols none: a vector [rows]
    Role role;
    Layout layout;
    When when;
    bool optional;
};

constexpr Row kEmbeddings[] = {
    {"model.shared.weight", Size::vocab, Size::model, Role::word_embedding, Layout::out_in, When::always, false},
    {"model.encoder.embed_positions.weight", Size::positions, Size::model, Role::position_embedding, Layout::rows,
     When::learned_positions, false},
    {"model.encoder.layernorm_embedding.weight", Size::model, Size::none, Role::embedding_norm, Layout::vector,
     When::embedding_norm, false},
    {"model.encoder.layernorm_embedding.bias", Size::model, Size::none, Role::embedding_norm_bias, Layout::vector,
     When::embedding_norm, false},
    {"model.decoder.embed_positions.weight", Size::positions, Size::model, Role::decoder_position_embedding,
     Layout::rows, When::learned_positions, false},
    {"model.decoder.layernorm_embedding.weight", Size::model, Size::none, Role::decoder_embedding_norm,
     Layout::vector, When::embedding_norm, false},
    {"model.decoder.layernorm_embedding.bias", Size::model, Size::none, Role::decoder_embedding_norm_bias,
     Layout::vector, When::embedding_norm, false},
};

// Every layer's, encoder and decoder (after the layer's prefix).
constexpr Row kLayer[] = {
    {"self_attn.q_proj.weight", Size::model, Size::model, Role::query, Layout::out_in, When::always, false},
    {"self_attn.q_proj.bias", Size::model, Size::none, Role::query_bias, Layout::vector, When::attention_bias, false},
    {"self_attn.k_proj.weight", Size::model, Size::model, Role::key, Layout::out_in, When::always, false},
    {"self_attn.k_proj.bias", Size::model, Size::none, Role::key_bias, Layout::vector, When::attention_bias, false},
    {"self_attn.v_proj.weight", Size::model, Size::model, Role::value, Layout::out_in, When::always, false},
    {"self_attn.v_proj.bias", Size::model, Size::none, Role::value_bias, Layout::vector, When::attention_bias, false},
    {"self_attn.out_proj.weight", Size::model, Size::model, Role::attention_output, Layout::out_in, When::always, false},
    {"self_attn.out_proj.bias", Size::model, Size::none, Role::attention_output_bias, Layout::vector, When::output_bias,
     false},
    {"self_attn_layer_norm.weight", Size::model, Size::none, Role::attention_norm, Layout::vector, When::always, false},
    {"self_attn_layer_norm.bias", Size::model, Size::none, Role::attention_norm_bias, Layout::vector, When::always,
     false},
    {"fc1.weight", Size::mlp, Size::model, Role::mlp_up, Layout::out_in, When::always, false},
    {"fc1.bias", Size::mlp, Size::none, Role::mlp_up_bias, Layout::vector, When::mlp_bias, false},
    {"fc2.weight", Size::model, Size::mlp, Role::mlp_down, Layout::out_in, When::always, false},
    {"fc2.bias", Size::model, Size::none, Role::mlp_down_bias, Layout::vector, When::mlp_bias, false},
    {"final_layer_norm.weight", Size::model, Size::none, Role::mlp_norm, Layout::vector, When::always, false},
    {"final_layer_norm.bias", Size::model, Size::none, Role::mlp_norm_bias, Layout::vector, When::always, false},
};

// A decoder layer's cross-attention over the encoder's output.
constexpr Row kCross[] = {
    {"encoder_attn.q_proj.weight", Size::model, Size::model, Role::cross_query, Layout::out_in, When::always, false},
    {"encoder_attn.q_proj.bias", Size::model, Size::none, Role::cross_query_bias, Layout::vector, When::attention_bias,
     false},
    {"encoder_attn.k_proj.weight", Size::model, Size::model, Role::cross_key, Layout::out_in, When::always, false},
    {"encoder_attn.k_proj.bias", Size::model, Size::none, Role::cross_key_bias, Layout::vector, When::attention_bias,
     false},
    {"encoder_attn.v_proj.weight", Size::model, Size::model, Role::cross_value, Layout::out_in, When::always, false},
    {"encoder_attn.v_proj.bias", Size::model, Size::none, Role::cross_value_bias, Layout::vector, When::attention_bias,
     false},
    {"encoder_attn.out_proj.weight", Size::model, Size::model, Role::cross_output, Layout::out_in, When::always, false},
    {"encoder_attn.out_proj.bias", Size::model, Size::none, Role::cross_output_bias, Layout::vector,
     When::output_bias, false},
    {"encoder_attn_layer_norm.weight", Size::model, Size::none, Role::cross_norm, Layout::vector, When::always, false},
    {"encoder_attn_layer_norm.bias", Size::model, Size::none, Role::cross_norm_bias, Layout::vector, When::always,
     false},
};

// BART's final_logits_bias is a [1, V] buffer: one row added to every row of logits.
constexpr Row kHead[] = {
    {"final_logits_bias", Size::one, Size::vocab, Role::lm_head_bias, Layout::rows, When::logits_bias, false},
    {"lm_head.weight", Size::vocab, Size::model, Role::lm_head, Layout::out_in, When::always, true},
};

// T5: shared embeddings; per block (after "encoder.block.{i}.layer." or the
// decoder's) self-attention in layer 0, the decoder's cross-attention in
// layer 1, the feed-forward in the last layer; no biases; RMS norms.
constexpr Row kT5Embeddings[] = {
    {"shared.weight", Size::vocab, Size::model, Role::word_embedding, Layout::out_in, When::always, false},
};
constexpr Row kT5EncoderBias[] = {
    {"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", Size::buckets, Size::heads,
     Role::relative_bias, Layout::rows, When::always, false},
};
constexpr Row kT5DecoderBias[] = {
    {"decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", Size::buckets, Size::heads,
     Role::decoder_relative_bias, Layout::rows, When::always, false},
};
constexpr Row kT5Self[] = {
    {"0.SelfAttention.q.weight", Size::attention, Size::model, Role::query, Layout::out_in, When::always, false},
    {"0.SelfAttention.k.weight", Size::attention, Size::model, Role::key, Layout::out_in, When::always, false},
    {"0.SelfAttention.v.weight", Size::attention, Size::model, Role::value, Layout::out_in, When::always, false},
    {"0.SelfAttention.o.weight", Size::model, Size::attention, Role::attention_output, Layout::out_in, When::always,
     false},
    {"0.layer_norm.weight", Size::model, Size::none, Role::attention_norm, Layout::vector, When::always, false},
};
constexpr Row kT5Cross[] = {
    {"1.EncDecAttention.q.weight", Size::attention, Size::model, Role::cross_query, Layout::out_in, When::always, false},
    {"1.EncDecAttention.k.weight", Size::attention, Size::model, Role::cross_key, Layout::out_in, When::always, false},
    {"1.EncDecAttention.v.weight", Size::attention, Size::model, Role::cross_value, Layout::out_in, When::always, false},
    {"1.EncDecAttention.o.weight", Size::model, Size::attention, Role::cross_output, Layout::out_in, When::always,
     false},
    {"1.layer_norm.weight", Size::model, Size::none, Role::cross_norm, Layout::vector, When::always, false},
};
// After the block's feed-forward layer index ("1." encoder, "2." decoder).
constexpr Row kT5FeedForward[] = {
    {"DenseReluDense.wi.weight", Size::mlp, Size::model, Role::mlp_up, Layout::out_in, When::not_gated, false},
    {"DenseReluDense.wi_0.weight", Size::mlp, Size::model, Role::mlp_gate, Layout::out_in, When::gated, false},
    {"DenseReluDense.wi_1.weight", Size::mlp, Size::model, Role::mlp_up, Layout::out_in, When::gated, false},
    {"DenseReluDense.wo.weight", Size::model, Size::mlp, Role::mlp_down, Layout::out_in, When::always, false},
    {"layer_norm.weight", Size::model, Size::none, Role::mlp_norm, Layout::vector, When::always, false},
};
constexpr Row kT5FinalNorms[] = {
    {"encoder.final_layer_norm.weight", Size::model, Size::none, Role::encoder_final_norm, Layout::vector, When::always,
     false},
    {"decoder.final_layer_norm.weight", Size::model, Size::none, Role::final_norm, Layout::vector, When::always, false},
};

std::size_t size_of(const ModelConfig& c, Size size) {
    switch (size) {
        case Size::none: return 0;
        case Size::model: return c.model_width;
        case Size::mlp: return c.mlp_width;
        case Size::vocab: return c.vocab_size;
        case Size::positions: return c.max_positions;
        case Size::one: return 1;
        case Size::attention: return query_width(c);
        case Size::buckets: return c.relative_buckets;
        case Size::heads: return c.heads;
    }
    return 0;
}

bool wanted(const ModelConfig& c, When when) {
    switch (when) {
        case When::always: return true;
        case When::learned_positions: return c.position == PositionKind::learned;
        case When::embedding_norm: return c.embedding_norm;
        case When::attention_bias: return c.attention_bias;
        case When::output_bias: return c.attention_output_bias;
        case When::mlp_bias: return c.mlp_bias;
        case When::logits_bias: return c.lm_head_bias;
        case When::gated: return c.gated_mlp;
        case When::not_gated: return !c.gated_mlp;
    }
    return false;
}

// One function for every table (not a template per table size: the download counts each copy).
void append_rows(const ModelConfig& c, const Row* rows, std::size_t count, const std::string& prefix, std::size_t layer,
                 std::vector<TensorSpec>& specs) {
    for (const Row* row_at = rows; row_at != rows + count; ++row_at) {
        const Row& row = *row_at;
        if (!wanted(c, row.when)) continue;
        std::vector<std::size_t> shape{size_of(c, row.rows)};
        if (row.cols != Size::none) shape.push_back(size_of(c, row.cols));
        specs.push_back(TensorSpec{prefix + row.name, std::move(shape), row.optional, row.role, layer, row.layout, 0});
    }
}

template <std::size_t N>
void append(const ModelConfig& c, const Row (&rows)[N], const std::string& prefix, std::size_t layer,
            std::vector<TensorSpec>& specs) {
    append_rows(c, rows, N, prefix, layer, specs);
}



void append_t5_tensors(const ModelConfig& c, std::vector<TensorSpec>& specs) {
    append(c, kT5Embeddings, "", 0, specs);
    append(c, kT5EncoderBias, "", 0, specs);
    append(c, kT5DecoderBias, "", 0, specs);
    for (std::size_t i = 0; i < c.layers; ++i) {
        const std::string prefix = "encoder.block." + std::to_string(i) + ".layer.";
        append(c, kT5Self, prefix, i, specs);
        append(c, kT5FeedForward, prefix + "1.", i, specs);
    }
    for (std::size_t i = 0; i < c.decoder_layers; ++i) {
        const std::string prefix = "decoder.block." + std::to_string(i) + ".layer.";
        append(c, kT5Self, prefix, c.layers + i, specs);
        append(c, kT5Cross, prefix, c.layers + i, specs);
        append(c, kT5FeedForward, prefix + "2.", c.layers + i, specs);
    }
    append(c, kT5FinalNorms, "", 0, specs);
    append(c, kHead, "", 0, specs);
}

}  // namespace

void append_seq2seq_tensors(const ModelConfig& c, std::vector<TensorSpec>& specs) {
    if (c.architecture == Architecture::t5) return append_t5_tensors(c, specs);
    append(c, kEmbeddings, "", 0, specs);
    for (std::size_t i = 0; i < c.layers; ++i) append(c, kLayer, "model.encoder.layers." + std::to_string(i) + ".", i, specs);
    // Decoder layers follow the encoder's in ModelWeights::layers.
    for (std::size_t i = 0; i < c.decoder_layers; ++i) {
        const std::string prefix = "model.decoder.layers." + std::to_string(i) + ".";
        append(c, kLayer, prefix, c.layers + i, specs);
        append(c, kCross, prefix, c.layers + i, specs);
    }
    append(c, kHead, "", 0, specs);
}

std::string seq2seq_layout_error(const ModelConfig& c) {
    const std::string layout = std::string("the ") + architecture_name(c.architecture) + " tensor layout has no ";
    if (!encoder_decoder(c))
        return std::string("the ") + architecture_name(c.architecture) +
               " tensor layout is an encoder-decoder: decoderLayers must be at least 1";
    if (c.type_vocab_size > 0) return layout + "token-type embedding: typeVocabSize must be 0";
    if (embedded_width(c) != c.model_width) return layout + "embedding projection: embeddingWidth must be 0";
    if (c.padding_idx >= 0) return layout + "RoBERTa position numbering: paddingIdx must be -1";
    if (c.parallel_residual) return layout + "parallel residual: parallelResidual must be false";
    if (!c.has_lm_head) return layout + "model without its LM head: hasLmHead must be true";
    if (c.architecture == Architecture::t5) {
        if (c.norm != NormKind::rms) return layout + "LayerNorms: norm must be rms";
        if (c.post_norm) return layout + "norms after each half: postNorm must be false";
        if (c.position != PositionKind::relative) return layout + "position table: position must be relative";
        if (c.attention_bias || c.attention_output_bias || c.mlp_bias || c.lm_head_bias)
            return layout + "biases: attentionBias, attentionOutputBias, mlpBias and lmHeadBias must be false";
        if (!c.final_norm) return layout + "model without its final norms: finalNorm must be true";
        if (c.embedding_norm) return layout + "embedding norm: embeddingNorm must be false";
        return {};
    }
    if (c.position == PositionKind::relative) return layout + "relative positions: position must be learned or sinusoidal";
    if (c.logits_scale > 0.0f) return layout + "scaled LM head: logitsScale must be 0";
    if (c.norm != NormKind::layer) return layout + "RMS norms: norm must be layer";
    if (!c.post_norm) return layout + "norms before each half: postNorm must be true";
    if (c.position == PositionKind::rotary) return layout + "rotary positions: position must be learned or sinusoidal";
    if (c.gated_mlp) return layout + "gate projection: gatedMlp must be false";
    if (c.final_norm) return layout + "final norms: finalNorm must be false";
    return {};
}

}  // namespace attnlens::model

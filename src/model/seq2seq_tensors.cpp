// The encoder-decoder layouts' tensors, as tables: BART's names
// (modeling_bart.py), which Marian's files share (modeling_marian.py; its
// sinusoidal positions are computed, not stored). Data, not code: a row per
// tensor, the sizes by name, and the knob that decides whether it exists.
#include "tensors.hpp"

namespace attnlens::model {

namespace {

using Role = TensorRole;
using Layout = TensorLayout;

enum class Size { none, model, mlp, vocab, positions, one };
// The knob a tensor depends on.
enum class When { always, learned_positions, embedding_norm, attention_bias, output_bias, mlp_bias, logits_bias };

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

std::size_t size_of(const ModelConfig& c, Size size) {
    switch (size) {
        case Size::none: return 0;
        case Size::model: return c.model_width;
        case Size::mlp: return c.mlp_width;
        case Size::vocab: return c.vocab_size;
        case Size::positions: return c.max_positions;
        case Size::one: return 1;
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
    }
    return false;
}

template <std::size_t N>
void append(const ModelConfig& c, const Row (&rows)[N], const std::string& prefix, std::size_t layer,
            std::vector<TensorSpec>& specs) {
    for (const Row& row : rows) {
        if (!wanted(c, row.when)) continue;
        std::vector<std::size_t> shape{size_of(c, row.rows)};
        if (row.cols != Size::none) shape.push_back(size_of(c, row.cols));
        specs.push_back(TensorSpec{prefix + row.name, std::move(shape), row.optional, row.role, layer, row.layout, 0});
    }
}

}  // namespace

void append_seq2seq_tensors(const ModelConfig& c, std::vector<TensorSpec>& specs) {
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
    if (!encoder_decoder(c)) return "the bart tensor layout is an encoder-decoder: decoderLayers must be at least 1";
    if (c.norm != NormKind::layer) return layout + "RMS norms: norm must be layer";
    if (!c.post_norm) return layout + "norms before each half: postNorm must be true";
    if (c.position == PositionKind::rotary) return layout + "rotary positions: position must be learned or sinusoidal";
    if (c.gated_mlp) return layout + "gate projection: gatedMlp must be false";
    if (c.final_norm) return layout + "final norms: finalNorm must be false";
    if (!c.has_lm_head) return layout + "model without its LM head: hasLmHead must be true";
    if (c.type_vocab_size > 0) return layout + "token-type embedding: typeVocabSize must be 0";
    if (embedded_width(c) != c.model_width) return layout + "embedding projection: embeddingWidth must be 0";
    if (c.padding_idx >= 0) return layout + "RoBERTa position numbering: paddingIdx must be -1";
    if (c.parallel_residual) return layout + "parallel residual: parallelResidual must be false";
    return {};
}

}  // namespace attnlens::model

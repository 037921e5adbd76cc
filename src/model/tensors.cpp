#include "tensors.hpp"

#include <algorithm>

namespace attnlens::model {

namespace {

using Shape = std::vector<std::size_t>;
using Role = TensorRole;
using Layout = TensorLayout;

// Appends specs to a list, with the layer's name prefix and index.
class SpecList {
public:
    explicit SpecList(std::vector<TensorSpec>& specs) : specs_(specs) {}

    void in_layer(std::string prefix, std::size_t layer) {
        prefix_ = std::move(prefix);
        layer_ = layer;
    }
    // A tensor [rows, cols] (cols 0: a vector [rows]) named prefix + name.
    // Sizes and a C string, so that each of the layouts' many calls stays small.
    struct Dims {
        std::size_t rows = 0, cols = 0;
    };
    void add(const char* name, Dims dims, Role role, Layout layout, bool optional = false) {
        push(prefix_ + name, dims, role, layout, optional, 0);
    }
    // A Linear/Conv1D weight and its bias [out] (head_interleave: TensorSpec's).
    void add_projection(const char* name, Dims dims, Role role, Layout layout, bool with_bias,
                        std::size_t head_interleave = 0) {
        const std::size_t out = layout == Layout::in_out ? dims.cols : dims.rows;
        const std::string base = prefix_ + name;
        push(base + ".weight", dims, role, layout, false, head_interleave);
        if (with_bias) push(base + ".bias", {out, 0}, next(role), Layout::vector, false, head_interleave);
    }
    // A norm's weight and, for LayerNorm, its bias (the role after the weight's).
    void add_norm(const char* name, std::size_t width, Role role, bool with_bias) {
        const std::string base = prefix_ + name;
        push(base + ".weight", {width, 0}, role, Layout::vector, false, 0);
        if (with_bias) push(base + ".bias", {width, 0}, next(role), Layout::vector, false, 0);
    }

private:
    static Role next(Role role) { return static_cast<Role>(static_cast<int>(role) + 1); }
    void push(std::string name, Dims dims, Role role, Layout layout, bool optional, std::size_t head_interleave) {
        Shape shape = dims.cols ? Shape{dims.rows, dims.cols} : Shape{dims.rows};
        specs_.push_back(TensorSpec{std::move(name), std::move(shape), optional, role, layer_, layout, head_interleave});
    }

    std::vector<TensorSpec>& specs_;
    std::string prefix_;
    std::size_t layer_ = 0;
};

// The bias role of each projection role is the next enumerator (query ->
// query_bias, ...): add_projection and add_norm rely on that.
static_assert(static_cast<int>(Role::qkv_bias) == static_cast<int>(Role::qkv) + 1);
static_assert(static_cast<int>(Role::query_bias) == static_cast<int>(Role::query) + 1);
static_assert(static_cast<int>(Role::key_bias) == static_cast<int>(Role::key) + 1);
static_assert(static_cast<int>(Role::value_bias) == static_cast<int>(Role::value) + 1);
static_assert(static_cast<int>(Role::attention_output_bias) == static_cast<int>(Role::attention_output) + 1);
static_assert(static_cast<int>(Role::mlp_up_bias) == static_cast<int>(Role::mlp_up) + 1);
static_assert(static_cast<int>(Role::mlp_gate_bias) == static_cast<int>(Role::mlp_gate) + 1);
static_assert(static_cast<int>(Role::mlp_down_bias) == static_cast<int>(Role::mlp_down) + 1);
static_assert(static_cast<int>(Role::embedding_norm_bias) == static_cast<int>(Role::embedding_norm) + 1);
static_assert(static_cast<int>(Role::embedding_projection_bias) == static_cast<int>(Role::embedding_projection) + 1);
static_assert(static_cast<int>(Role::attention_norm_bias) == static_cast<int>(Role::attention_norm) + 1);
static_assert(static_cast<int>(Role::mlp_norm_bias) == static_cast<int>(Role::mlp_norm) + 1);
static_assert(static_cast<int>(Role::final_norm_bias) == static_cast<int>(Role::final_norm) + 1);

// Each layout names the tensors the knobs ask for: a LayerNorm has a bias,
// an RMSNorm none; biases, learned positions, token types and the extra
// norms only when the config has them (layout_error refuses what a layout
// cannot name).
void gpt2_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width;
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("wte.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    if (c.position == PositionKind::learned)
        list.add("wpe.weight", {c.max_positions, d}, Role::position_embedding, Layout::rows);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("h." + std::to_string(i) + ".", i);
        list.add_norm("ln_1", d, Role::attention_norm, norm_bias);
        list.add_projection("attn.c_attn", {d, 3 * d}, Role::qkv, Layout::in_out, c.attention_bias);
        list.add_projection("attn.c_proj", {d, d}, Role::attention_output, Layout::in_out, c.attention_output_bias);
        list.add_norm("ln_2", d, Role::mlp_norm, norm_bias);
        list.add_projection("mlp.c_fc", {d, I}, Role::mlp_up, Layout::in_out, c.mlp_bias);
        list.add_projection("mlp.c_proj", {I, d}, Role::mlp_down, Layout::in_out, c.mlp_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("ln_f", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);
}

void bert_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width, E = embedded_width(c);
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("embeddings.word_embeddings.weight", {c.vocab_size, E}, Role::word_embedding, Layout::out_in);
    if (c.position == PositionKind::learned)
        list.add("embeddings.position_embeddings.weight", {c.max_positions, E}, Role::position_embedding, Layout::rows);
    if (c.type_vocab_size > 0)
        list.add("embeddings.token_type_embeddings.weight", {c.type_vocab_size, E}, Role::type_embedding, Layout::rows);
    if (c.embedding_norm) list.add_norm("embeddings.LayerNorm", E, Role::embedding_norm, norm_bias);
    // ELECTRA's embeddings_project (a Linear [d, E] with its bias).
    if (E != d) list.add_projection("embeddings_project", {d, E}, Role::embedding_projection, Layout::out_in, true);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("encoder.layer." + std::to_string(i) + ".", i);
        list.add_projection("attention.self.query", {d, d}, Role::query, Layout::out_in, c.attention_bias);
        list.add_projection("attention.self.key", {d, d}, Role::key, Layout::out_in, c.attention_bias);
        list.add_projection("attention.self.value", {d, d}, Role::value, Layout::out_in, c.attention_bias);
        list.add_projection("attention.output.dense", {d, d}, Role::attention_output, Layout::out_in,
                            c.attention_output_bias);
        list.add_norm("attention.output.LayerNorm", d, Role::attention_norm, norm_bias);
        list.add_projection("intermediate.dense", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("output.dense", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
        list.add_norm("output.LayerNorm", d, Role::mlp_norm, norm_bias);
    }
}

void llama_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width, q = query_width(c), kv = key_value_width(c);
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("model.embed_tokens.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("model.layers." + std::to_string(i) + ".", i);
        list.add_norm("input_layernorm", d, Role::attention_norm, norm_bias);
        list.add_projection("self_attn.q_proj", {q, d}, Role::query, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.k_proj", {kv, d}, Role::key, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.v_proj", {kv, d}, Role::value, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.o_proj", {d, q}, Role::attention_output, Layout::out_in, c.attention_output_bias);
        list.add_norm("post_attention_layernorm", d, Role::mlp_norm, norm_bias);
        if (c.gated_mlp) list.add_projection("mlp.gate_proj", {I, d}, Role::mlp_gate, Layout::out_in, c.mlp_bias);
        list.add_projection("mlp.up_proj", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("mlp.down_proj", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("model.norm", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);
}

// GPT-NeoX (Pythia): Llama-like names under gpt_neox., LayerNorms, one fused
// query_key_value Linear whose rows come per head, and its own embed_out
// (named lm_head here, as every layout names the head).
void gpt_neox_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width;
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("gpt_neox.embed_in.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("gpt_neox.layers." + std::to_string(i) + ".", i);
        list.add_norm("input_layernorm", d, Role::attention_norm, norm_bias);
        list.add_projection("attention.query_key_value", {3 * d, d}, Role::qkv, Layout::out_in, c.attention_bias,
                            c.head_width);
        list.add_projection("attention.dense", {d, d}, Role::attention_output, Layout::out_in, c.attention_output_bias);
        list.add_norm("post_attention_layernorm", d, Role::mlp_norm, norm_bias);
        list.add_projection("mlp.dense_h_to_4h", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("mlp.dense_4h_to_h", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("gpt_neox.final_layer_norm", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);  // the hub's embed_out
}

// GPT-Neo (TinyStories): GPT-2's names and embeddings with Linear ([out, in])
// q/k/v/out projections under attn.attention. and a Linear MLP.
void gpt_neo_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width;
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("wte.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    if (c.position == PositionKind::learned)
        list.add("wpe.weight", {c.max_positions, d}, Role::position_embedding, Layout::rows);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("h." + std::to_string(i) + ".", i);
        list.add_norm("ln_1", d, Role::attention_norm, norm_bias);
        list.add_projection("attn.attention.q_proj", {d, d}, Role::query, Layout::out_in, c.attention_bias);
        list.add_projection("attn.attention.k_proj", {d, d}, Role::key, Layout::out_in, c.attention_bias);
        list.add_projection("attn.attention.v_proj", {d, d}, Role::value, Layout::out_in, c.attention_bias);
        list.add_projection("attn.attention.out_proj", {d, d}, Role::attention_output, Layout::out_in,
                            c.attention_output_bias);
        list.add_norm("ln_2", d, Role::mlp_norm, norm_bias);
        list.add_projection("mlp.c_fc", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("mlp.c_proj", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("ln_f", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);
}

// OPT: model.decoder. names, a position table of maxPositions rows (OPT's
// max_position_embeddings + 2), a norm per half named after its place.
void opt_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width;
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("model.decoder.embed_tokens.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    if (c.position == PositionKind::learned)
        list.add("model.decoder.embed_positions.weight", {c.max_positions, d}, Role::position_embedding, Layout::rows);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("model.decoder.layers." + std::to_string(i) + ".", i);
        list.add_projection("self_attn.q_proj", {d, d}, Role::query, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.k_proj", {d, d}, Role::key, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.v_proj", {d, d}, Role::value, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.out_proj", {d, d}, Role::attention_output, Layout::out_in, c.attention_output_bias);
        list.add_norm("self_attn_layer_norm", d, Role::attention_norm, norm_bias);
        list.add_projection("fc1", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("fc2", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
        list.add_norm("final_layer_norm", d, Role::mlp_norm, norm_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("model.decoder.final_layer_norm", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);
}

// Phi: model.* names, one input_layernorm per layer (shared_norm), dense
// as the attention output, fc1/fc2, final_layernorm, lm_head with its bias.
void phi_tensors(const ModelConfig& c, SpecList& list) {
    const std::size_t d = c.model_width, I = c.mlp_width, q = query_width(c), kv = key_value_width(c);
    const bool norm_bias = c.norm == NormKind::layer;
    list.add("model.embed_tokens.weight", {c.vocab_size, d}, Role::word_embedding, Layout::out_in);
    for (std::size_t i = 0; i < c.layers; ++i) {
        list.in_layer("model.layers." + std::to_string(i) + ".", i);
        list.add_norm("input_layernorm", d, Role::attention_norm, norm_bias);
        list.add_projection("self_attn.q_proj", {q, d}, Role::query, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.k_proj", {kv, d}, Role::key, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.v_proj", {kv, d}, Role::value, Layout::out_in, c.attention_bias);
        list.add_projection("self_attn.dense", {d, q}, Role::attention_output, Layout::out_in, c.attention_output_bias);
        if (!c.shared_norm) list.add_norm("post_attention_layernorm", d, Role::mlp_norm, norm_bias);
        list.add_projection("mlp.fc1", {I, d}, Role::mlp_up, Layout::out_in, c.mlp_bias);
        list.add_projection("mlp.fc2", {d, I}, Role::mlp_down, Layout::out_in, c.mlp_bias);
    }
    list.in_layer("", 0);
    if (c.final_norm) list.add_norm("model.final_layernorm", d, Role::final_norm, norm_bias);
    list.add("lm_head.weight", {c.vocab_size, d}, Role::lm_head, Layout::out_in, true);
    if (c.lm_head_bias) list.add("lm_head.bias", {c.vocab_size, 0}, Role::lm_head_bias, Layout::vector);
}

void append_tensors(const ModelConfig& config, std::vector<TensorSpec>& specs) {
    SpecList list(specs);
    switch (config.architecture) {
        case Architecture::gpt2: gpt2_tensors(config, list); break;
        case Architecture::bert: bert_tensors(config, list); break;
        case Architecture::llama: llama_tensors(config, list); break;
        case Architecture::gpt_neox: gpt_neox_tensors(config, list); break;
        case Architecture::gpt_neo: gpt_neo_tensors(config, list); break;
        case Architecture::opt: opt_tensors(config, list); break;
        case Architecture::phi: phi_tensors(config, list); break;
        case Architecture::bart:
        case Architecture::t5: append_seq2seq_tensors(config, specs); break;
    }
}

}  // namespace

std::string layout_error(const ModelConfig& c) {
    const std::string layout = std::string("the ") + architecture_name(c.architecture) + " tensor layout has no ";
    if (c.architecture == Architecture::bart || c.architecture == Architecture::t5) return seq2seq_layout_error(c);
    if (encoder_decoder(c)) return layout + "decoder: decoderLayers must be 0";
    if (c.position == PositionKind::sinusoidal || c.position == PositionKind::relative)
        return layout + "sinusoidal or relative positions: position must be learned or rotary";
    if (c.logits_scale > 0.0f) return layout + "scaled LM head: logitsScale must be 0";
    const bool bert = c.architecture == Architecture::bert;
    if (bert && c.has_lm_head) return "bert models have no language-model head here: hasLmHead must be false";
    if (bert && c.gated_mlp) return layout + "gate projection: gatedMlp must be false";
    if (bert && c.final_norm) return layout + "final norm: finalNorm must be false";
    if (!bert && c.embedding_norm) return layout + "embedding norm: embeddingNorm must be false";
    if (!bert && embedded_width(c) != c.model_width)
        return layout + "embedding projection: embeddingWidth must be 0 or modelWidth";
    if (!bert && c.type_vocab_size > 0) return layout + "token-type embedding: typeVocabSize must be 0";
    if (c.architecture != Architecture::llama && c.gated_mlp) return layout + "gate projection: gatedMlp must be false";
    if (c.architecture != Architecture::phi && c.lm_head_bias) return layout + "LM head bias: lmHeadBias must be false";
    if (c.architecture == Architecture::phi && !c.shared_norm)
        return layout + "MLP norm (one input_layernorm per layer): sharedNorm must be true";
    const bool position_table = c.architecture == Architecture::gpt2 || c.architecture == Architecture::bert ||
                                c.architecture == Architecture::gpt_neo || c.architecture == Architecture::opt;
    if (!position_table && c.position == PositionKind::learned)
        return layout + "position embedding: position must be rotary";
    return {};
}

std::vector<TensorSpec> model_tensors(const ModelConfig& config) {
    std::vector<TensorSpec> specs;
    append_tensors(config, specs);
    return specs;
}

bool is_per_layer(TensorRole role) {
    return static_cast<int>(role) >= static_cast<int>(Role::attention_norm) &&
           static_cast<int>(role) <= static_cast<int>(Role::cross_output_bias);
}

std::uint64_t element_count(const std::vector<std::size_t>& shape) {
    std::uint64_t count = 1;
    for (std::size_t size : shape) count *= size;
    return count;
}

std::uint64_t parameter_count(const ModelConfig& config) {
    // Every layer has the same tensors: list one layer, not thousands (an
    // encoder-decoder: one encoder layer, index 0, and one decoder layer).
    ModelConfig one_layer = config;
    one_layer.layers = 1;
    one_layer.decoder_layers = std::min<std::size_t>(config.decoder_layers, 1);
    std::uint64_t shared = 0, per_layer = 0, per_decoder_layer = 0;
    for (const TensorSpec& spec : model_tensors(one_layer)) {
        if (spec.optional) continue;
        if (!is_per_layer(spec.role)) shared += element_count(spec.shape);
        else (spec.layer == 0 ? per_layer : per_decoder_layer) += element_count(spec.shape);
    }
    return shared + per_layer * config.layers + per_decoder_layer * config.decoder_layers;
}

std::string shape_text(const std::vector<std::size_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

}  // namespace attnlens::model

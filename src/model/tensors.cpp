#include "tensors.hpp"

#include <algorithm>

namespace attnlens::model {

namespace {

using Shape = std::vector<std::size_t>;
using Role = TensorRole;
using Layout = TensorLayout;

// A tensor size as a function of the config (none: the tensor is a vector).
enum class Size : std::uint8_t { none, model, three_model, mlp, query, key_value, embedded, vocab, positions, types };

// When a row is listed: always, or when the config asks for what it names.
enum class When : std::uint8_t {
    always, learned_positions, token_types, embedding_norm, embedding_projection, gated_mlp, final_norm, lm_head,
};

// A row's bias [out]: none, always, a LayerNorm's (an RMSNorm has none), or
// when the knob of its kind asks for one.
enum class Bias : std::uint8_t { none, always, layer_norm, attention, attention_output, mlp, lm_head };

// One row of a layout's table, as llama.cpp describes an architecture's
// tensors: the module (its weight is module.weight, its bias module.bias with
// the role after the weight's), what it does, its shape and when it is listed.
// Per-layer rows (is_per_layer(role)) are listed once per layer under the
// table's layer prefix; the rows before them and after them once.
struct Row {
    const char* module;
    Role role;
    Size rows, cols;  // cols none: a vector [rows]
    Layout layout;
    When when;
    Bias bias;
    bool optional;  // the LM head: usually tied to the word embedding
    bool per_head;  // GPT-NeoX's fused per-head Q/K/V (TensorSpec::head_interleave = head_width)
};

// The rows' kinds, so that a table reads as a list of modules.
constexpr Row embedding(const char* module, Role role, Size rows, Layout layout, When when = When::always,
                        Size width = Size::embedded) {
    return {module, role, rows, width, layout, when, Bias::none, false, false};
}
constexpr Row norm(const char* module, Role role, When when = When::always, Size width = Size::model) {
    return {module, role, width, Size::none, Layout::vector, when, Bias::layer_norm, false, false};
}
// A Linear weight [out, in].
constexpr Row linear(const char* module, Role role, Size out, Size in, Bias bias, When when = When::always) {
    return {module, role, out, in, Layout::out_in, when, bias, false, false};
}
// A GPT-2 Conv1D weight [in, out].
constexpr Row conv1d(const char* module, Role role, Size in, Size out, Bias bias) {
    return {module, role, in, out, Layout::in_out, When::always, bias, false, false};
}
// Optional: without it the head is tied to the word embedding (embedded_width wide: ELECTRA's are narrower).
constexpr Row lm_head(Bias bias = Bias::none) {
    return {"lm_head", Role::lm_head, Size::vocab, Size::embedded, Layout::out_in, When::lm_head, bias, true, false};
}

// The bias role of each weight role is the next enumerator (query ->
// query_bias, ...): append() relies on that.
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
static_assert(static_cast<int>(Role::lm_head_bias) == static_cast<int>(Role::lm_head) + 1);
static_assert(static_cast<int>(Role::mlm_transform_bias) == static_cast<int>(Role::mlm_transform) + 1);
static_assert(static_cast<int>(Role::mlm_norm_bias) == static_cast<int>(Role::mlm_norm) + 1);

constexpr Bias kAttention = Bias::attention, kOutput = Bias::attention_output, kMlp = Bias::mlp;
constexpr Size d = Size::model, I = Size::mlp;

// GPT-2: Conv1D projections, the fused [Q | K | V] c_attn.
constexpr Row kGpt2[] = {
    embedding("wte", Role::word_embedding, Size::vocab, Layout::out_in),
    embedding("wpe", Role::position_embedding, Size::positions, Layout::rows, When::learned_positions),
    norm("ln_1", Role::attention_norm),
    conv1d("attn.c_attn", Role::qkv, d, Size::three_model, kAttention),
    conv1d("attn.c_proj", Role::attention_output, d, d, kOutput),
    norm("ln_2", Role::mlp_norm),
    conv1d("mlp.c_fc", Role::mlp_up, d, I, kMlp),
    conv1d("mlp.c_proj", Role::mlp_down, I, d, kMlp),
    norm("ln_f", Role::final_norm, When::final_norm),
    lm_head(),
};

// BERT (and the encoders mapped onto it): post-norm layers; ELECTRA's
// embeddings are embedding_width wide, then embeddings_project. The
// masked-LM head when the checkpoint has one: BertForMaskedLM's
// cls.predictions (its decoder, tied to the word embedding, named lm_head
// here as every layout names the head, with the bias it always has).
constexpr Row kBert[] = {
    embedding("embeddings.word_embeddings", Role::word_embedding, Size::vocab, Layout::out_in),
    embedding("embeddings.position_embeddings", Role::position_embedding, Size::positions, Layout::rows,
              When::learned_positions),
    embedding("embeddings.token_type_embeddings", Role::type_embedding, Size::types, Layout::rows, When::token_types),
    norm("embeddings.LayerNorm", Role::embedding_norm, When::embedding_norm, Size::embedded),
    linear("embeddings_project", Role::embedding_projection, d, Size::embedded, Bias::always,
           When::embedding_projection),
    linear("attention.self.query", Role::query, d, d, kAttention),
    linear("attention.self.key", Role::key, d, d, kAttention),
    linear("attention.self.value", Role::value, d, d, kAttention),
    linear("attention.output.dense", Role::attention_output, d, d, kOutput),
    norm("attention.output.LayerNorm", Role::attention_norm),
    linear("intermediate.dense", Role::mlp_up, I, d, kMlp),
    linear("output.dense", Role::mlp_down, d, I, kMlp),
    norm("output.LayerNorm", Role::mlp_norm),
    linear("cls.predictions.transform.dense", Role::mlm_transform, Size::embedded, d, Bias::always, When::lm_head),
    norm("cls.predictions.transform.LayerNorm", Role::mlm_norm, When::lm_head, Size::embedded),
    lm_head(Bias::always),
};

// Llama (and Qwen2, Mistral, Gemma): grouped-query widths, the gate when gated.
constexpr Row kLlama[] = {
    embedding("model.embed_tokens", Role::word_embedding, Size::vocab, Layout::out_in),
    norm("input_layernorm", Role::attention_norm),
    linear("self_attn.q_proj", Role::query, Size::query, d, kAttention),
    linear("self_attn.k_proj", Role::key, Size::key_value, d, kAttention),
    linear("self_attn.v_proj", Role::value, Size::key_value, d, kAttention),
    linear("self_attn.o_proj", Role::attention_output, d, Size::query, kOutput),
    norm("post_attention_layernorm", Role::mlp_norm),
    linear("mlp.gate_proj", Role::mlp_gate, I, d, kMlp, When::gated_mlp),
    linear("mlp.up_proj", Role::mlp_up, I, d, kMlp),
    linear("mlp.down_proj", Role::mlp_down, d, I, kMlp),
    norm("model.norm", Role::final_norm, When::final_norm),
    lm_head(),
};

// GPT-NeoX (Pythia): one fused query_key_value whose rows come per head; its
// embed_out is named lm_head here, as every layout names the head.
constexpr Row kGptNeox[] = {
    embedding("gpt_neox.embed_in", Role::word_embedding, Size::vocab, Layout::out_in),
    norm("input_layernorm", Role::attention_norm),
    {"attention.query_key_value", Role::qkv, Size::three_model, d, Layout::out_in, When::always, kAttention, false, true},
    linear("attention.dense", Role::attention_output, d, d, kOutput),
    norm("post_attention_layernorm", Role::mlp_norm),
    linear("mlp.dense_h_to_4h", Role::mlp_up, I, d, kMlp),
    linear("mlp.dense_4h_to_h", Role::mlp_down, d, I, kMlp),
    norm("gpt_neox.final_layer_norm", Role::final_norm, When::final_norm),
    lm_head(),
};

// GPT-Neo (TinyStories): GPT-2's names with Linear projections.
constexpr Row kGptNeo[] = {
    embedding("wte", Role::word_embedding, Size::vocab, Layout::out_in),
    embedding("wpe", Role::position_embedding, Size::positions, Layout::rows, When::learned_positions),
    norm("ln_1", Role::attention_norm),
    linear("attn.attention.q_proj", Role::query, d, d, kAttention),
    linear("attn.attention.k_proj", Role::key, d, d, kAttention),
    linear("attn.attention.v_proj", Role::value, d, d, kAttention),
    linear("attn.attention.out_proj", Role::attention_output, d, d, kOutput),
    norm("ln_2", Role::mlp_norm),
    linear("mlp.c_fc", Role::mlp_up, I, d, kMlp),
    linear("mlp.c_proj", Role::mlp_down, d, I, kMlp),
    norm("ln_f", Role::final_norm, When::final_norm),
    lm_head(),
};

// OPT: the decoder's names under model.decoder; with narrower word
// embeddings (OPT-350m), project_in and project_out around the layers
// (Linears without biases) and positions as wide as the model.
constexpr Row kOpt[] = {
    embedding("model.decoder.embed_tokens", Role::word_embedding, Size::vocab, Layout::out_in),
    embedding("model.decoder.embed_positions", Role::position_embedding, Size::positions, Layout::rows,
              When::learned_positions, d),
    linear("model.decoder.project_in", Role::embedding_projection, d, Size::embedded, Bias::none,
           When::embedding_projection),
    linear("self_attn.q_proj", Role::query, d, d, kAttention),
    linear("self_attn.k_proj", Role::key, d, d, kAttention),
    linear("self_attn.v_proj", Role::value, d, d, kAttention),
    linear("self_attn.out_proj", Role::attention_output, d, d, kOutput),
    norm("self_attn_layer_norm", Role::attention_norm),
    linear("fc1", Role::mlp_up, I, d, kMlp),
    linear("fc2", Role::mlp_down, d, I, kMlp),
    norm("final_layer_norm", Role::mlp_norm),
    norm("model.decoder.final_layer_norm", Role::final_norm, When::final_norm),
    linear("model.decoder.project_out", Role::output_projection, Size::embedded, d, Bias::none,
           When::embedding_projection),
    lm_head(),
};

// Phi: one input_layernorm per layer (no MLP norm: sharedNorm), dense as
// the attention output, fc1/fc2, an LM head that can have a bias.
constexpr Row kPhi[] = {
    embedding("model.embed_tokens", Role::word_embedding, Size::vocab, Layout::out_in),
    norm("input_layernorm", Role::attention_norm),
    linear("self_attn.q_proj", Role::query, Size::query, d, kAttention),
    linear("self_attn.k_proj", Role::key, Size::key_value, d, kAttention),
    linear("self_attn.v_proj", Role::value, Size::key_value, d, kAttention),
    linear("self_attn.dense", Role::attention_output, d, Size::query, kOutput),
    linear("mlp.fc1", Role::mlp_up, I, d, kMlp),
    linear("mlp.fc2", Role::mlp_down, d, I, kMlp),
    norm("model.final_layernorm", Role::final_norm, When::final_norm),
    lm_head(Bias::lm_head),
};

struct Table {
    const char* layer_prefix;  // layer i's modules are layer_prefix + i + "." + module
    const Row* begin;
    const Row* end;
};

template <std::size_t N>
constexpr Table table(const char* layer_prefix, const Row (&rows)[N]) {
    return {layer_prefix, rows, rows + N};
}

// By Architecture, in its order.
constexpr Table kTables[] = {
    table("h.", kGpt2),          table("encoder.layer.", kBert),      table("model.layers.", kLlama),
    table("gpt_neox.layers.", kGptNeox), table("h.", kGptNeo), table("model.decoder.layers.", kOpt),
    table("model.layers.", kPhi),
};

const Table& table_of(Architecture architecture) { return kTables[static_cast<int>(architecture)]; }

std::size_t size_of(const ModelConfig& c, Size size) {
    switch (size) {
        case Size::none: return 0;
        case Size::model: return c.model_width;
        case Size::three_model: return 3 * c.model_width;
        case Size::mlp: return c.mlp_width;
        case Size::query: return query_width(c);
        case Size::key_value: return key_value_width(c);
        case Size::embedded: return embedded_width(c);
        case Size::vocab: return c.vocab_size;
        case Size::positions: return c.max_positions;
        case Size::types: return c.type_vocab_size;
    }
    return 0;
}

bool asks_for(const ModelConfig& c, When when) {
    switch (when) {
        case When::always: return true;
        case When::learned_positions: return c.position == PositionKind::learned;
        case When::token_types: return c.type_vocab_size > 0;
        case When::embedding_norm: return c.embedding_norm;
        case When::embedding_projection: return embedded_width(c) != c.model_width;
        case When::gated_mlp: return c.gated_mlp;
        case When::final_norm: return c.final_norm;
        case When::lm_head: return c.has_lm_head;
    }
    return false;
}

bool asks_for(const ModelConfig& c, Bias bias) {
    switch (bias) {
        case Bias::none: return false;
        case Bias::always: return true;
        case Bias::layer_norm: return c.norm == NormKind::layer;
        case Bias::attention: return c.attention_bias;
        case Bias::attention_output: return c.attention_output_bias;
        case Bias::mlp: return c.mlp_bias;
        case Bias::lm_head: return c.lm_head_bias;
    }
    return false;
}

// The specs of a row the config asks for: its weight and its bias.
void append(const ModelConfig& c, const Row& row, const std::string& prefix, std::size_t layer,
            std::vector<TensorSpec>& specs) {
    if (!asks_for(c, row.when)) return;
    const std::size_t rows = size_of(c, row.rows), cols = size_of(c, row.cols);
    const std::size_t interleave = row.per_head ? c.head_width : 0;
    const std::string module = prefix + row.module;
    specs.push_back({module + ".weight", cols ? Shape{rows, cols} : Shape{rows}, row.optional, row.role, layer,
                     row.layout, interleave});
    if (asks_for(c, row.bias))
        specs.push_back({module + ".bias", Shape{row.layout == Layout::in_out ? cols : rows}, false,
                         static_cast<Role>(static_cast<int>(row.role) + 1), layer, Layout::vector, interleave});
}

bool per_layer_row(const Row& row) { return is_per_layer(row.role); }

// The encoder-decoder layouts list their tensors in seq2seq_tensors.cpp.
bool is_seq2seq_layout(Architecture architecture) {
    return architecture == Architecture::bart || architecture == Architecture::t5;
}

}  // namespace

std::string layout_error(const ModelConfig& c) {
    if (is_seq2seq_layout(c.architecture)) return seq2seq_layout_error(c);
    const std::string layout = std::string("the ") + architecture_name(c.architecture) + " tensor layout has no ";
    if (encoder_decoder(c)) return layout + "decoder: decoderLayers must be 0";
    if (c.position == PositionKind::sinusoidal || c.position == PositionKind::relative)
        return layout + "sinusoidal or relative positions: position must be learned or rotary";
    if (c.logits_scale > 0.0f) return layout + "scaled LM head: logitsScale must be 0";
    const Table& t = table_of(c.architecture);
    auto names = [&t](auto test) { return std::any_of(t.begin, t.end, test); };
    auto names_when = [&](When when) { return names([when](const Row& row) { return row.when == when; }); };
    auto names_role = [&](Role role) { return names([role](const Row& row) { return row.role == role; }); };
    // What each knob asks the layout to name, in the order they are checked.
    const struct {
        bool asked, named;
        const char* what;
    } knobs[] = {
        {c.has_lm_head, names_role(Role::lm_head), "LM head: hasLmHead must be false"},
        {c.gated_mlp, names_when(When::gated_mlp), "gate projection: gatedMlp must be false"},
        {c.final_norm, names_when(When::final_norm), "final norm: finalNorm must be false"},
        {c.embedding_norm, names_when(When::embedding_norm), "embedding norm: embeddingNorm must be false"},
        {embedded_width(c) != c.model_width, names_when(When::embedding_projection),
         "embedding projection: embeddingWidth must be 0 or modelWidth"},
        {c.type_vocab_size > 0, names_when(When::token_types), "token-type embedding: typeVocabSize must be 0"},
        {c.lm_head_bias, names([](const Row& row) { return row.bias == Bias::lm_head; }),
         "LM head bias: lmHeadBias must be false"},
        {!c.shared_norm, names_role(Role::mlp_norm),
         "MLP norm (one input_layernorm per layer): sharedNorm must be true"},
        {c.position == PositionKind::learned, names_when(When::learned_positions),
         "position embedding: position must be rotary"},
    };
    for (const auto& knob : knobs)
        if (knob.asked && !knob.named)
            return layout + knob.what;
    // The head's own projection (a masked-LM transform, OPT's project_out)
    // writes its rows where the forward pass keeps a row of the model's width.
    if (c.has_lm_head && (names_role(Role::mlm_transform) || names_role(Role::output_projection)) &&
        embedded_width(c) > c.model_width)
        return "the LM head reads rows embeddingWidth wide: embeddingWidth (" + std::to_string(c.embedding_width) +
               ") must be at most modelWidth (" + std::to_string(c.model_width) + ")";
    return {};
}

std::vector<TensorSpec> model_tensors(const ModelConfig& c) {
    std::vector<TensorSpec> specs;
    if (is_seq2seq_layout(c.architecture)) return append_seq2seq_tensors(c, specs), specs;
    const Table& t = table_of(c.architecture);
    const Row* layer_begin = std::find_if(t.begin, t.end, per_layer_row);
    const Row* layer_end = std::find_if_not(layer_begin, t.end, per_layer_row);
    for (const Row* row = t.begin; row != layer_begin; ++row) append(c, *row, "", 0, specs);
    for (std::size_t i = 0; i < c.layers; ++i) {
        const std::string prefix = t.layer_prefix + std::to_string(i) + ".";
        for (const Row* row = layer_begin; row != layer_end; ++row) append(c, *row, prefix, i, specs);
    }
    for (const Row* row = layer_end; row != t.end; ++row) append(c, *row, "", 0, specs);
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

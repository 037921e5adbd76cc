#include "analysis/kept_value_weighted.hpp"

#include "analysis/value_weighted.hpp"
#include "attention/pooled.hpp"
#include "model/layer.hpp"  // multi_head_shape

namespace attnlens::analysis {

std::string kept_value_weighted(const model::ModelConfig& c, const model::ModelWeights& w,
                                const model::ForwardCache& cache, std::size_t layer,
                                const std::uint8_t* heads_chosen, std::size_t pool, float* out) {
    const std::size_t n = cache.ids.size();
    if (n == 0) return "nothing is kept: run the model first";
    if (layer >= c.layers) return "no such layer";
    if (auto error = check_pool_factor(pool, n, n); !error.empty()) return error;
    const std::uint64_t d = c.model_width;
    // One thread for the norms' products, as model.analyze's (layer_analyses.cpp): W_O^h packed into one scratch.
    const ThreadPolicy one_thread{1, false};
    const std::size_t kvw = model::key_value_width(c), side = pooled_side(n, pool);
    FloatBuffer wo, values, product, norms, pack, head;
    if (auto error = allocate_all({{&wo, std::uint64_t(model::query_width(c)) * d},
                                   {&values, std::uint64_t(n) * kvw},
                                   {&product, std::uint64_t(n) * d},
                                   {&norms, n},
                                   {&pack, row_major_scratch(c.head_width, d, one_thread.limit).floats},
                                   {&head, pool > 1 ? std::uint64_t(n) * n : 0}},
                                  "value-weighted attention", n);
        !error.empty())
        return error;
    // W_O, (H*hd) x d: head h's rows are h*hd .. (h+1)*hd - 1.
    unpack_columns(model::packed(w.layers[layer].attention_output), 0, d, wo.data(), d);
    const ProductRun run{one_thread, pack.data(), 0};
    // The kept V (bias included), row-major as the norms read it.
    unpack_values(model::kept_key_values(c, cache, layer), n, values.data());
    for (std::size_t h = 0; h < c.heads; ++h) {
        if (heads_chosen && !heads_chosen[h]) continue;
        float* weights = pool > 1 ? head.data() : out;
        if (auto error = model::kept_head_weights(c, cache, layer, h, weights); !error.empty()) return error;
        head_value_norms(values.data(), kvw, n, model::multi_head_shape(c), wo.data(), h, run, product.data(), norms.data());
        value_weighted(weights, norms.data(), 1, n, n, weights);  // in place: each weight is read before it is written
        if (pool > 1) pool_block_max(weights, n, n, pool, out);
        out += side * side;
    }
    return {};
}

}  // namespace attnlens::analysis

// Keys and values kept packed (attention/packed_cache.hpp): packed a few
// positions at a time (appends that start and end inside a panel, edits
// that re-pack from a position on, a copy into a larger capacity), the
// heads read the bits attention_strided() computes from the row-major K
// and V; unpack_values() gives those rows back.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "attention/packed_cache.hpp"
#include "close_to.hpp"
#include "kernels/kernels.hpp"
#include "reference.hpp"

namespace {

using attnlens::PackedKeyValues;

// Storage for one layer's packed keys and values, NaN where nothing was packed yet.
struct Kept {
    std::vector<float> keys, values;
    PackedKeyValues view;

    Kept(std::size_t positions, std::size_t kv_heads, std::size_t hd) {
        const std::size_t capacity = attnlens::packed_capacity(positions);
        keys.assign(attnlens::packed_keys_floats(capacity, kv_heads, hd), NAN);
        values.assign(attnlens::packed_values_floats(capacity, kv_heads, hd), NAN);
        view = {keys.data(), values.data(), capacity, kv_heads, hd};
    }
    void pack(const std::vector<float>& k, const std::vector<float>& v, std::size_t first, std::size_t count) {
        const std::size_t kvw = view.kv_heads * view.head_width;
        for (std::size_t g = 0; g < view.kv_heads; ++g)
            attnlens::pack_positions(view, g, k.data() + first * kvw, v.data() + first * kvw, kvw, first, count);
    }
};

// Every head's weights and outputs over the first n positions, causal, from
// the packed operands, then from row-major K and V (the reference).
void require_same_attention(const Kept& kept, const std::vector<float>& q, const std::vector<float>& k,
                            const std::vector<float>& v, std::size_t n) {
    const std::size_t hd = kept.view.head_width, kvw = kept.view.kv_heads * hd;
    const attnlens::AttentionShape shape{n, n, hd, hd};
    attnlens::AttentionOptions options;
    options.causal = true;
    attnlens::AttentionWorkspace workspace;
    for (std::size_t g = 0; g < kept.view.kv_heads; ++g) {
        std::vector<float> packed_out(n * hd), packed_weights(n * n), out(n * hd), weights(n * n);
        attnlens::attention_packed(q.data() + g * hd, kvw, attnlens::head_operands(kept.view, g), shape, options,
                                   packed_out.data(), hd, packed_weights.data(), workspace);
        attnlens::attention_strided(q.data() + g * hd, kvw, k.data() + g * hd, kvw, v.data() + g * hd, kvw, shape,
                                    options, out.data(), hd, weights.data());
        CHECK(same_bits(packed_weights, weights));
        CHECK(same_bits(packed_out, out));
        // The output-only (online softmax) path reads the packed values too.
        std::vector<float> online_packed(n * hd), online(n * hd);
        attnlens::attention_packed(q.data() + g * hd, kvw, attnlens::head_operands(kept.view, g), shape, options,
                                   online_packed.data(), hd, nullptr, workspace);
        attnlens::attention_strided(q.data() + g * hd, kvw, k.data() + g * hd, kvw, v.data() + g * hd, kvw, shape,
                                    options, online.data(), hd, nullptr);
        CHECK(same_bits(online_packed, online));
    }
    std::vector<float> unpacked(n * kvw);
    attnlens::unpack_values(kept.view, n, unpacked.data());
    CHECK(same_bits(unpacked, std::vector<float>(v.begin(), v.begin() + std::ptrdiff_t(n * kvw))));
}

std::vector<float> random_floats(std::mt19937& rng, std::size_t count) {
    return reference::to_float(reference::random_matrix(rng, count, -2.0, 2.0));
}

}  // namespace

TEST_CASE("packed_cache: positions packed a few at a time read as attention on the rows", "[attention][packed_cache]") {
    const std::size_t width = attnlens::kernels::kPanelWidth;
    std::mt19937 rng(2411);
    // Head widths below, at and past a panel (the values' last panel narrow).
    for (std::size_t hd : {std::size_t(3), width, width + 5}) {
        const std::size_t kv_heads = 2, kvw = kv_heads * hd, n = 2 * width + 3;
        CAPTURE(hd, width);
        auto q = random_floats(rng, n * kvw), k = random_floats(rng, n * kvw), v = random_floats(rng, n * kvw);
        Kept kept(n, kv_heads, hd);
        // Appends: one inside the first panel, one that crosses into the
        // second, one that ends exactly on a panel boundary, then one at a time.
        const std::size_t ends[] = {width - 2, width + 4, 2 * width};
        std::size_t filled = 0;
        for (std::size_t end : ends) {
            kept.pack(k, v, filled, end - filled);
            filled = end;
            require_same_attention(kept, q, k, v, filled);
        }
        for (; filled < n; ++filled) {
            kept.pack(k, v, filled, 1);
            require_same_attention(kept, q, k, v, filled + 1);
        }
        // An edit inside the last partial panel, then one in the first panel:
        // the positions from there on are packed again, fewer than before.
        for (std::size_t from : {n - 2, std::size_t(1)}) {
            const std::size_t end = from + 2;
            for (std::size_t i = from * kvw; i < end * kvw; ++i) k[i] = -k[i], v[i] = 0.5f * v[i];
            kept.pack(k, v, from, end - from);
            require_same_attention(kept, q, k, v, end);
        }
        // Grown into a larger capacity: the kept positions, then appends.
        Kept larger(3 * width + 1, kv_heads, hd);
        attnlens::copy_positions(kept.view, larger.view, n);
        require_same_attention(larger, q, k, v, n);
        auto more_k = random_floats(rng, width * kvw), more_v = random_floats(rng, width * kvw);
        k.insert(k.end(), more_k.begin(), more_k.end()), v.insert(v.end(), more_v.begin(), more_v.end());
        auto more_q = random_floats(rng, width * kvw);
        q.insert(q.end(), more_q.begin(), more_q.end());
        larger.pack(k, v, n, width);
        require_same_attention(larger, q, k, v, n + width);
    }
}

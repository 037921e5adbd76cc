#include "packed_cache.hpp"

#include <algorithm>

#include "../kernels/kernels.hpp"
#include "packed_matrix.hpp"

namespace attnlens {

namespace {

std::size_t key_block(const PackedKeyValues& kept) { return kernels::packed_size(kept.head_width, kept.capacity); }
std::size_t value_block(const PackedKeyValues& kept) { return kernels::packed_size(kept.capacity, kept.head_width); }

}  // namespace

std::size_t packed_capacity(std::size_t positions) {
    const std::size_t width = kernels::kPanelWidth;
    return (positions + width - 1) / width * width;
}

std::uint64_t packed_keys_floats(std::size_t capacity, std::size_t kv_heads, std::size_t head_width) {
    return std::uint64_t(kv_heads) * kernels::packed_size(head_width, capacity);
}

std::uint64_t packed_values_floats(std::size_t capacity, std::size_t kv_heads, std::size_t head_width) {
    return std::uint64_t(kv_heads) * kernels::packed_size(capacity, head_width);
}

PackedOperands head_operands(const PackedKeyValues& kept, std::size_t g) {
    return {kept.keys + g * key_block(kept), kept.values + g * value_block(kept), kept.capacity};
}

void pack_positions(PackedKeyValues& kept, std::size_t g, const float* k, const float* v, std::size_t ld,
                    std::size_t first, std::size_t count) {
    const std::size_t hd = kept.head_width;
    pack_transposed_rows_into(k + g * hd, ld, first, count, hd, kept.keys + g * key_block(kept));
    pack_rows_into(v + g * hd, ld, first, count, kept.capacity, hd, kept.values + g * value_block(kept));
}

void copy_positions(const PackedKeyValues& from, PackedKeyValues& to, std::size_t positions) {
    // K^T: the panels that hold the positions lead each head's block. V:
    // each panel's first rows.
    const std::size_t width = kernels::kPanelWidth, hd = from.head_width;
    const std::size_t key_floats = kernels::packed_size(hd, positions);
    for (std::size_t g = 0; g < from.kv_heads; ++g) {
        std::copy_n(from.keys + g * key_block(from), key_floats, to.keys + g * key_block(to));
        const float* values = from.values + g * value_block(from);
        float* into = to.values + g * value_block(to);
        for (std::size_t panel = 0; panel < kernels::packed_size(1, hd) / width; ++panel)
            std::copy_n(values + panel * from.capacity * width, positions * width, into + panel * to.capacity * width);
    }
}

void unpack_values(const PackedKeyValues& kept, std::size_t positions, float* out) {
    const std::size_t hd = kept.head_width;
    for (std::size_t g = 0; g < kept.kv_heads; ++g) {
        const PackedMatrix v{kept.values + g * value_block(kept), nullptr, nullptr, nullptr, kept.capacity, hd};
        unpack_columns(v, 0, hd, out + g * hd, kept.kv_heads * hd, positions);
    }
}

}  // namespace attnlens

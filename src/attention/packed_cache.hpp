// A causal model's kept keys and values (src/model/forward.cpp ForwardCache)
// in the panel layout attention's products read (packed_matrix.hpp), so
// that a run over the kept positions packs only its new ones: typing at the
// end of 1024 tokens packs one position's key and value per kv head instead
// of all 1024 (a profile put that repacking at a sixth of such a run's time).
//
// Per kv head g of one layer: K_g^T (hd x capacity) as
// kernels::pack_transposed_panels leaves it, the operand of Q K^T; and V_g
// (capacity x hd) as kernels::pack_panels leaves it, the operand of weights
// V, its panels `capacity` rows long. Positions past the filled ones are
// never read into a result.
#pragma once

#include <cstddef>
#include <cstdint>

#include "attention.hpp"

namespace attnlens {

struct PackedKeyValues {
    float* keys = nullptr;    // kv_heads blocks of packed K^T
    float* values = nullptr;  // kv_heads blocks of packed V
    std::size_t capacity = 0, kv_heads = 0, head_width = 0;
};

// `positions` rounded up to whole panels: the capacity a cache allocates,
// so that its keys' panels hold no padding.
std::size_t packed_capacity(std::size_t positions);

// Floats one layer's keys, and its values, take (each allocated apart):
// kv_heads x capacity x head_width for the keys, the values' head width
// rounded up to whole panels.
std::uint64_t packed_keys_floats(std::size_t capacity, std::size_t kv_heads, std::size_t head_width);
std::uint64_t packed_values_floats(std::size_t capacity, std::size_t kv_heads, std::size_t head_width);

// kv head g's K^T and V, as attention_packed() reads them.
PackedOperands head_operands(const PackedKeyValues& kept, std::size_t g);

// Positions [first, first + count) of kv head g := rows of K and V (count
// rows, `ld` floats apart, head g's hd values at column g * hd).
void pack_positions(PackedKeyValues& kept, std::size_t g, const float* k, const float* v, std::size_t ld,
                    std::size_t first, std::size_t count);

// The first `positions` positions of `from` into `to` (a larger capacity, the same heads).
void copy_positions(const PackedKeyValues& from, PackedKeyValues& to, std::size_t positions);

// V of the first `positions` positions, row-major: positions x (kv_heads x
// hd), kv head g's values at columns g * hd (for analyses that read values).
void unpack_values(const PackedKeyValues& kept, std::size_t positions, float* out);

}  // namespace attnlens

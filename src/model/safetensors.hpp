// The header of a .safetensors file: which tensors the data holds, where.
//
// File layout (huggingface/safetensors): 8 bytes little-endian header length
// N, then N bytes of JSON, then the data. The JSON maps each tensor name to
// { "dtype": "F32", "shape": [3, 48], "data_offsets": [begin, end] } (byte
// offsets into the data), plus an optional "__metadata__" map of strings.
// This parses (with nlohmann/json, in every build) and validates the JSON
// part; JavaScript reads the length and slices the bytes. Pure C++, so the
// parser the module ships is the one fuzzed natively (tests/fuzz/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnlens::model {

struct SafetensorsTensor {
    std::string name;
    std::string dtype;  // one of the safetensors dtypes (safetensors_dtype_size() > 0)
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0, end = 0;  // byte offsets into the data
};

struct SafetensorsHeader {
    std::string error;  // "" when the header is valid; then the rest is filled
    std::vector<SafetensorsTensor> tensors;                         // in the header's order
    std::vector<std::pair<std::string, std::string>> metadata;      // "__metadata__", in order
};

// The format's own limit on the header (safetensors refuses larger ones).
constexpr std::size_t kMaxSafetensorsHeaderBytes = 100'000'000;
// JSON nesting the parser accepts: the format needs 3 (header, entry, shape).
constexpr std::size_t kMaxSafetensorsNesting = 8;
// Dimensions of a shape, and the largest one: 2^53, so that every valid
// size is exact as a JavaScript number.
constexpr std::size_t kMaxSafetensorsRank = 64;
constexpr std::uint64_t kMaxSafetensorsSize = std::uint64_t(1) << 53;

// "" when a header of `size` bytes may be parsed, else why not (empty, or
// over kMaxSafetensorsHeaderBytes). JavaScript asks the module for the limit
// to refuse a file before copying its header.
std::string safetensors_header_size_error(std::uint64_t size);

// Bytes per element of a safetensors dtype (F64 F32 F16 BF16 I64 I32 I16 I8
// U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2), or 0 for any other name.
std::size_t safetensors_dtype_size(const std::string& dtype);

// Parses the JSON header (`size` bytes, not the 8-byte length before it) of
// a file whose data part is `data_bytes` long. Validates: well-formed JSON,
// an object; each entry an object with dtype, shape and data_offsets; a
// known dtype; begin <= end <= data_bytes; end - begin == product(shape) *
// the dtype's size; unique names, and unique keys in an entry and in
// __metadata__; __metadata__ a map of strings; nesting of at most
// kMaxSafetensorsNesting. Errors name the tensor (or key) and the problem,
// with a byte position for malformed JSON.
SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size, std::uint64_t data_bytes);

}  // namespace attnlens::model

// The tensor table of a .safetensors file: which tensors the data holds, where.
//
// File layout (huggingface/safetensors): 8 bytes little-endian header length
// N, then N bytes of JSON, then the data. The JSON maps each tensor name to
// { "dtype": "F32", "shape": [3, 48], "data_offsets": [begin, end] } (byte
// offsets into the data), plus an optional "__metadata__" map of strings.
//
// JavaScript reads the JSON (JSON.parse, strict; web/lib/model/safetensors.js
// checks its structure: objects, strings, arrays of integers, keys once) and
// hands the table here as numbers. The core checks what the data depends on:
// known dtypes, sizes, offsets inside the data and matching the shapes,
// unique names. The native tests and the fuzzer read JSON with nlohmann/json
// (tests/native/safetensors_json.hpp) into the same table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlens::model {

// One entry as the JSON gave it: sizes and offsets are JSON numbers, so a
// negative, fractional or huge one is refused with its value named.
struct SafetensorsEntry {
    std::string name;
    std::string dtype;
    std::vector<double> shape;
    double begin = 0, end = 0;  // byte offsets into the data
};

// An entry that passed: sizes as integers.
struct SafetensorsTensor {
    std::string name;
    std::string dtype;  // one of the safetensors dtypes (safetensors_dtype_size() > 0)
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0, end = 0;
};

// The format's own limit on the header (safetensors refuses larger ones).
constexpr std::size_t kMaxSafetensorsHeaderBytes = 100'000'000;
// JSON nesting a header may have: the format needs 3 (header, entry, shape).
constexpr std::size_t kMaxSafetensorsNesting = 8;
// Dimensions of a shape, and the largest size or offset: 2^53 - 1, so that
// every valid size is exact as a JSON (JavaScript) number.
constexpr std::size_t kMaxSafetensorsRank = 64;
constexpr std::uint64_t kMaxSafetensorsSize = (std::uint64_t(1) << 53) - 1;

// Bytes per element of a safetensors dtype (F64 F32 F16 BF16 I64 I32 I16 I8
// U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2), or 0 for any other name.
std::size_t safetensors_dtype_size(const std::string& dtype);

// "" when a header of `size` bytes may be read, else why not (empty, or
// over kMaxSafetensorsHeaderBytes).
std::string safetensors_header_size_error(std::uint64_t size);

// Checks the table of a file whose data part is `data_bytes` long: unique
// names; per entry a known dtype, at most kMaxSafetensorsRank sizes, every
// size and offset a whole number from 0 to kMaxSafetensorsSize, begin <= end
// <= data_bytes, and end - begin == product(shape) * the dtype's size.
// "" and `tensors` filled, or the first problem, naming the tensor.
std::string check_safetensors_entries(const std::vector<SafetensorsEntry>& entries, std::uint64_t data_bytes,
                                      std::vector<SafetensorsTensor>& tensors);

}  // namespace attnlens::model

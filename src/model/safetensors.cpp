#include "safetensors.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace attnlens::model {

namespace {

std::string in_quotes(const std::string& text) { return "\"" + text.substr(0, 200) + "\""; }

// A JSON number as a message shows it: "24", "-3", "2.5", "1e+23".
std::string number_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string list_text(const std::vector<std::uint64_t>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

// One size or offset; `what` names it. "" and `out` set, or the problem.
std::string whole_size(const char* what, double value, std::uint64_t& out) {
    if (!std::isfinite(value) || value != std::floor(value)) return "expected an integer, found " + number_text(value);
    if (value < 0) return std::string(what) + " " + number_text(value) + " is negative";
    if (value > double(kMaxSafetensorsSize))
        return std::string(what) + " " + number_text(value) + " is too large (at most 2^53 - 1)";
    out = static_cast<std::uint64_t>(value);
    return {};
}

// Elements of a shape times the element size, or false when that overflows
// 64 bits (a shape with a 0 has no bytes, whatever its other sizes).
bool byte_count(const std::vector<std::uint64_t>& shape, std::uint64_t element_size, std::uint64_t& out) {
    out = element_size;
    for (std::uint64_t size : shape)
        if (size == 0) {
            out = 0;
            return true;
        }
    for (std::uint64_t size : shape) {
        if (out > UINT64_MAX / size) return false;
        out *= size;
    }
    return true;
}

// One entry; "" and `tensor` filled, or the problem (without the name).
std::string check_entry(const SafetensorsEntry& entry, std::uint64_t data_bytes, SafetensorsTensor& tensor) {
    tensor.name = entry.name;
    tensor.dtype = entry.dtype;
    const std::size_t element_size = safetensors_dtype_size(entry.dtype);
    if (element_size == 0)
        return "unknown dtype " + in_quotes(entry.dtype) +
               " (safetensors dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2)";
    if (entry.shape.size() > kMaxSafetensorsRank)
        return "shape has more than " + std::to_string(kMaxSafetensorsRank) + " dimensions";
    tensor.shape.resize(entry.shape.size());
    for (std::size_t i = 0; i < entry.shape.size(); ++i)
        if (auto error = whole_size("shape dimension", entry.shape[i], tensor.shape[i]); !error.empty()) return error;
    for (auto [value, target] : {std::pair{entry.begin, &tensor.begin}, std::pair{entry.end, &tensor.end}})
        if (auto error = whole_size("data offset", value, *target); !error.empty()) return error;
    const std::string offsets = list_text({tensor.begin, tensor.end});
    if (tensor.begin > tensor.end) return "data_offsets " + offsets + " end before they begin";
    if (tensor.end > data_bytes)
        return "data_offsets " + offsets + " reach past the end of the data (" + std::to_string(data_bytes) + " bytes)";
    std::uint64_t bytes;
    if (!byte_count(tensor.shape, element_size, bytes))
        return "shape " + list_text(tensor.shape) + " is too large (its byte count overflows 64 bits)";
    if (bytes != tensor.end - tensor.begin)
        return "shape " + list_text(tensor.shape) + " of " + tensor.dtype + " needs " + std::to_string(bytes) +
               " bytes, but data_offsets " + offsets + " hold " + std::to_string(tensor.end - tensor.begin);
    return {};
}

}  // namespace

std::size_t safetensors_dtype_size(const std::string& dtype) {
    static const struct {
        const char* name;
        std::size_t size;
    } dtypes[] = {{"F64", 8}, {"F32", 4},  {"F16", 2}, {"BF16", 2}, {"I64", 8},  {"I32", 4},     {"I16", 2},    {"I8", 1},
                  {"U64", 8}, {"U32", 4}, {"U16", 2}, {"U8", 1},   {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (const auto& known : dtypes)
        if (dtype == known.name) return known.size;
    return 0;
}

std::string safetensors_header_size_error(std::uint64_t size) {
    if (size == 0) return "the safetensors header is empty";
    if (size > kMaxSafetensorsHeaderBytes)
        return "the safetensors header is " + std::to_string(size) + " bytes; at most " +
               std::to_string(kMaxSafetensorsHeaderBytes) + " are allowed";
    return {};
}

std::string check_safetensors_entries(const std::vector<SafetensorsEntry>& entries, std::uint64_t data_bytes,
                                      std::vector<SafetensorsTensor>& tensors) {
    tensors.clear();
    std::set<std::string> names;
    for (const SafetensorsEntry& entry : entries) {
        if (!names.insert(entry.name).second) return "duplicate tensor name " + in_quotes(entry.name);
        SafetensorsTensor tensor;
        if (auto error = check_entry(entry, data_bytes, tensor); !error.empty())
            return "tensor " + in_quotes(entry.name) + ": " + error;
        tensors.push_back(std::move(tensor));
    }
    return {};
}

}  // namespace attnlens::model

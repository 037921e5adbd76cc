#include "safetensors.hpp"

#include <set>
#include <string_view>

#include "json_reader.hpp"

namespace attnlens::model {

namespace {

// Records a problem at the reader's position and returns the message with it.
std::string failed_at(JsonReader& reader, const std::string& message) {
    reader.fail(message);
    return reader.error();
}

std::string quoted(const std::string& text) { return "\"" + text.substr(0, 200) + "\""; }

std::string list_text(const std::vector<std::uint64_t>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

// One non-negative integer of a shape or data_offsets; `what` names it.
bool read_size(JsonReader& reader, const char* what, std::uint64_t& out) {
    JsonInteger value;
    if (reader.peek_kind() != JsonKind::number) return reader.fail(std::string(what) + " must be an integer");
    if (!reader.read_integer(value)) return false;
    if (value.negative && (value.magnitude != 0 || value.too_large))
        return reader.fail(std::string(what) + " " + value.text.substr(0, 40) + " is negative");
    if (value.too_large || value.magnitude > kMaxSafetensorsSize)
        return reader.fail(std::string(what) + " " + value.text.substr(0, 40) + " is too large (at most 2^53)");
    out = value.magnitude;
    return true;
}

bool read_shape(JsonReader& reader, std::vector<std::uint64_t>& shape) {
    if (reader.peek_kind() != JsonKind::array) return reader.fail("shape must be an array of integers");
    if (!reader.begin_array()) return false;
    while (reader.next_item()) {
        if (shape.size() == kMaxSafetensorsRank)
            return reader.fail("shape has more than " + std::to_string(kMaxSafetensorsRank) + " dimensions");
        std::uint64_t size;
        if (!read_size(reader, "shape dimension", size)) return false;
        shape.push_back(size);
    }
    return !reader.failed();
}

bool read_offsets(JsonReader& reader, std::vector<std::uint64_t>& offsets) {
    if (reader.peek_kind() != JsonKind::array) return reader.fail("data_offsets must be an array [begin, end]");
    if (!reader.begin_array()) return false;
    while (reader.next_item()) {
        if (offsets.size() == 2) return reader.fail("data_offsets must hold exactly two integers [begin, end]");
        std::uint64_t offset;
        if (!read_size(reader, "data offset", offset)) return false;
        offsets.push_back(offset);
    }
    if (reader.failed()) return false;
    if (offsets.size() != 2) return reader.fail("data_offsets must hold exactly two integers [begin, end]");
    return true;
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

// The checks that need the whole entry; "" or the problem.
std::string check_entry(const SafetensorsTensor& tensor, std::uint64_t data_bytes) {
    const std::size_t element_size = safetensors_dtype_size(tensor.dtype);
    if (element_size == 0)
        return "unknown dtype " + quoted(tensor.dtype) +
               " (safetensors dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2)";
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

// One tensor's entry, after its name; "" or the problem (without the name).
std::string read_entry(JsonReader& reader, std::uint64_t data_bytes, SafetensorsTensor& tensor) {
    if (reader.peek_kind() != JsonKind::object) {
        return failed_at(reader, "expected an object with dtype, shape and data_offsets");
    }
    bool has_dtype = false, has_shape = false, has_offsets = false;
    std::vector<std::uint64_t> offsets;
    std::string key;
    reader.begin_object();
    while (reader.next_member(key)) {
        bool* seen = key == "dtype" ? &has_dtype : key == "shape" ? &has_shape : key == "data_offsets" ? &has_offsets : nullptr;
        if (!seen) {
            reader.skip_value();  // other keys are allowed and ignored, as safetensors does
            continue;
        }
        if (*seen) return failed_at(reader, "duplicate key " + quoted(key));
        *seen = true;
        if (key == "dtype") {
            if (reader.peek_kind() != JsonKind::string) return failed_at(reader, "dtype must be a string");
            reader.read_string(tensor.dtype);
        } else if (key == "shape") {
            read_shape(reader, tensor.shape);
        } else {
            read_offsets(reader, offsets);
        }
    }
    if (reader.failed()) return reader.error();
    if (!has_dtype) return "the entry has no dtype";
    if (!has_shape) return "the entry has no shape";
    if (!has_offsets) return "the entry has no data_offsets";
    tensor.begin = offsets[0];
    tensor.end = offsets[1];
    return check_entry(tensor, data_bytes);
}

// "__metadata__": { "key": "value", ... }; "" or the problem.
std::string read_metadata(JsonReader& reader, SafetensorsHeader& header) {
    if (reader.peek_kind() != JsonKind::object) return failed_at(reader, "__metadata__ must be an object of strings");
    std::set<std::string> keys;
    std::string key;
    reader.begin_object();
    while (reader.next_member(key)) {
        if (!keys.insert(key).second) return failed_at(reader, "__metadata__ has the key " + quoted(key) + " twice");
        if (reader.peek_kind() != JsonKind::string)
            return failed_at(reader, "__metadata__ value of " + quoted(key) + " must be a string");
        std::string value;
        if (!reader.read_string(value)) break;
        header.metadata.emplace_back(key, std::move(value));
    }
    return reader.error();
}

SafetensorsHeader failure(std::string error) {
    SafetensorsHeader header;
    header.error = std::move(error);
    return header;
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

SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size, std::uint64_t data_bytes) {
    if (size == 0 || bytes == nullptr) return failure("the safetensors header is empty");
    if (size > kMaxSafetensorsHeaderBytes)
        return failure("the safetensors header is " + std::to_string(size) + " bytes; at most " +
                       std::to_string(kMaxSafetensorsHeaderBytes) + " are allowed");
    JsonReader reader(std::string_view(reinterpret_cast<const char*>(bytes), size), kMaxSafetensorsNesting);
    if (reader.peek_kind() != JsonKind::object) {
        reader.fail("expected '{'");
        return failure("the safetensors header is not a JSON object: " + reader.error());
    }
    SafetensorsHeader header;
    std::set<std::string> names;
    bool has_metadata = false;
    std::string name;
    reader.begin_object();
    while (reader.next_member(name)) {
        if (name == "__metadata__") {
            if (has_metadata) return failure("the safetensors header has __metadata__ twice");
            has_metadata = true;
            if (auto error = read_metadata(reader, header); !error.empty()) return failure(error);
            continue;
        }
        if (!names.insert(name).second) return failure("duplicate tensor name " + quoted(name));
        SafetensorsTensor tensor;
        tensor.name = name;
        if (auto error = read_entry(reader, data_bytes, tensor); !error.empty())
            return failure("tensor " + quoted(name) + ": " + error);
        header.tensors.push_back(std::move(tensor));
    }
    if (!reader.finish()) return failure("the safetensors header is not valid JSON: " + reader.error());
    return header;
}

}  // namespace attnlens::model

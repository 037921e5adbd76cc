#include "safetensors.hpp"

#include <cstdio>
#include <set>
#include <string_view>

// nlohmann/json parses the header (SAX: events, no tree, so memory stays
// proportional to what is kept, even for a 100 MB header). It is strict
// RFC 8259 — trailing commas, unescaped control characters, invalid UTF-8,
// unpaired surrogates, leading zeros and text after the value are refused —
// and reports integers, fractions and their source text apart, so the
// format's own rules (below) stay exact. The module has no C++ exceptions:
// the SAX path reports every problem through parse_error() and never throws.
#define JSON_NOEXCEPTION
#include <nlohmann/json.hpp>

namespace attnlens::model {

namespace {

std::string in_quotes(const std::string& text) { return "\"" + text.substr(0, 200) + "\""; }

std::string list_text(const std::vector<std::uint64_t>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
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
        return "unknown dtype " + in_quotes(tensor.dtype) +
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

// One scalar JSON value as the reader sees it.
struct Scalar {
    enum Kind { string, integer, fraction, other } kind = other;
    bool negative = false, too_large = false;  // integers: sign, and magnitude >= 2^64
    std::uint64_t magnitude = 0;
    std::string text;  // a string's value, or a number as written
};

// The SAX handler: the header's structure as a stack of contexts, one per
// open object or array. The first problem stops the parse (an event returns
// false) and is kept in `error`.
class HeaderReader {
public:
    HeaderReader(std::uint64_t data_bytes, SafetensorsHeader& header) : data_bytes_(data_bytes), header_(header) {}

    std::string error;

    bool null() { return scalar(Scalar{}); }
    bool boolean(bool) { return scalar(Scalar{}); }
    bool number_integer(std::int64_t value) {
        return integer(value < 0, value < 0 ? 0 - std::uint64_t(value) : std::uint64_t(value), std::to_string(value));
    }
    bool number_unsigned(std::uint64_t value) {
        return integer(false, value, std::to_string(value));
    }
    // Fractions and exponents, and integers past 64 bits (told apart by their text).
    bool number_float(double, const std::string& text) {
        Scalar number;
        number.text = text;
        number.kind = text.find_first_of(".eE") == std::string::npos ? Scalar::integer : Scalar::fraction;
        number.negative = !text.empty() && text[0] == '-';
        number.too_large = true;
        return scalar(std::move(number));
    }
    bool string(std::string& value) {
        Scalar text;
        text.kind = Scalar::string;
        text.text = std::move(value);
        return scalar(std::move(text));
    }
    bool binary(nlohmann::json::binary_t&) { return scalar(Scalar{}); }  // JSON text has none
    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool key(std::string& key);
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& problem);

private:
    enum class Context { header, entry, metadata, shape, offsets, skipped };

    bool fail(std::string message) {
        if (error.empty()) error = std::move(message);
        return false;
    }
    // A problem inside the current tensor's entry names the tensor.
    bool fail_entry(const std::string& problem) { return fail("tensor " + in_quotes(tensor_.name) + ": " + problem); }
    bool scalar(Scalar value);
    bool integer(bool negative, std::uint64_t magnitude, std::string text) {
        Scalar number;
        number.kind = Scalar::integer;
        number.negative = negative;
        number.magnitude = magnitude;
        number.text = std::move(text);
        return scalar(std::move(number));
    }
    bool open(bool object);
    bool close();
    bool size_value(const Scalar& value, const char* what, std::vector<std::uint64_t>& out);

    std::uint64_t data_bytes_;
    SafetensorsHeader& header_;
    std::vector<Context> stack_;
    std::string key_;  // the member whose value comes next
    SafetensorsTensor tensor_;
    std::vector<std::uint64_t> offsets_;
    bool has_dtype_ = false, has_shape_ = false, has_offsets_ = false, has_metadata_ = false;
    std::set<std::string> names_, metadata_keys_;
};

bool HeaderReader::key(std::string& key) {
    key_ = key;
    switch (stack_.back()) {
        case Context::header:
            if (key == "__metadata__") {
                if (has_metadata_) return fail("the safetensors header has __metadata__ twice");
                has_metadata_ = true;
            } else if (!names_.insert(key).second) {
                return fail("duplicate tensor name " + in_quotes(key));
            }
            return true;
        case Context::entry: {
            bool* seen = key == "dtype" ? &has_dtype_ : key == "shape" ? &has_shape_ : key == "data_offsets" ? &has_offsets_ : nullptr;
            if (!seen) return true;  // other keys are allowed and ignored, as safetensors does
            if (*seen) return fail_entry("duplicate key " + in_quotes(key));
            *seen = true;
            return true;
        }
        case Context::metadata:
            if (!metadata_keys_.insert(key).second) return fail("__metadata__ has the key " + in_quotes(key) + " twice");
            return true;
        default:
            return true;
    }
}

// One integer of a shape or data_offsets; `what` names it.
bool HeaderReader::size_value(const Scalar& value, const char* what, std::vector<std::uint64_t>& out) {
    if (value.kind == Scalar::fraction) return fail_entry("expected an integer, found " + value.text.substr(0, 40));
    if (value.kind != Scalar::integer) return fail_entry(std::string(what) + " must be an integer");
    if (value.negative && (value.magnitude != 0 || value.too_large))
        return fail_entry(std::string(what) + " " + value.text.substr(0, 40) + " is negative");
    if (value.too_large || value.magnitude > kMaxSafetensorsSize)
        return fail_entry(std::string(what) + " " + value.text.substr(0, 40) + " is too large (at most 2^53)");
    out.push_back(value.magnitude);
    return true;
}

// A value that is not an object or array, in the current context.
bool HeaderReader::scalar(Scalar value) {
    if (stack_.empty()) return fail("the safetensors header is not a JSON object");
    switch (stack_.back()) {
        case Context::header:
            if (key_ == "__metadata__") return fail("__metadata__ must be an object of strings");
            tensor_.name = key_;
            return fail_entry("expected an object with dtype, shape and data_offsets");
        case Context::entry:
            if (key_ == "dtype") {
                if (value.kind != Scalar::string) return fail_entry("dtype must be a string");
                tensor_.dtype = std::move(value.text);
            } else if (key_ == "shape") {
                return fail_entry("shape must be an array of integers");
            } else if (key_ == "data_offsets") {
                return fail_entry("data_offsets must be an array [begin, end]");
            }
            return true;
        case Context::metadata:
            if (value.kind != Scalar::string) return fail("__metadata__ value of " + in_quotes(key_) + " must be a string");
            header_.metadata.emplace_back(key_, std::move(value.text));
            return true;
        case Context::shape:
            if (tensor_.shape.size() == kMaxSafetensorsRank)
                return fail_entry("shape has more than " + std::to_string(kMaxSafetensorsRank) + " dimensions");
            return size_value(value, "shape dimension", tensor_.shape);
        case Context::offsets:
            if (offsets_.size() == 2) return fail_entry("data_offsets must hold exactly two integers [begin, end]");
            return size_value(value, "data offset", offsets_);
        case Context::skipped:
            return true;
    }
    return true;
}

bool HeaderReader::open(bool object) {
    if (stack_.size() >= kMaxSafetensorsNesting)
        return fail("the safetensors header has nesting deeper than " + std::to_string(kMaxSafetensorsNesting) + " levels");
    if (stack_.empty()) {
        if (!object) return fail("the safetensors header is not a JSON object");
        stack_.push_back(Context::header);
        return true;
    }
    Context next = Context::skipped;
    switch (stack_.back()) {
        case Context::header:
            if (key_ == "__metadata__") {
                if (!object) return fail("__metadata__ must be an object of strings");
                next = Context::metadata;
                break;
            }
            tensor_ = SafetensorsTensor{};
            tensor_.name = key_;
            if (!object) return fail_entry("expected an object with dtype, shape and data_offsets");
            offsets_.clear();
            has_dtype_ = has_shape_ = has_offsets_ = false;
            next = Context::entry;
            break;
        case Context::entry:
            if (key_ == "dtype") return fail_entry("dtype must be a string");
            if (key_ == "shape") {
                if (object) return fail_entry("shape must be an array of integers");
                next = Context::shape;
            } else if (key_ == "data_offsets") {
                if (object) return fail_entry("data_offsets must be an array [begin, end]");
                next = Context::offsets;
            }
            break;
        case Context::metadata:
            return fail("__metadata__ value of " + in_quotes(key_) + " must be a string");
        case Context::shape:
            return fail_entry("shape dimension must be an integer");
        case Context::offsets:
            return fail_entry("data offset must be an integer");
        case Context::skipped:
            break;
    }
    stack_.push_back(next);
    return true;
}

bool HeaderReader::close() {
    const Context closed = stack_.back();
    stack_.pop_back();
    if (closed == Context::offsets && offsets_.size() != 2)
        return fail_entry("data_offsets must hold exactly two integers [begin, end]");
    if (closed != Context::entry) return true;
    if (!has_dtype_) return fail_entry("the entry has no dtype");
    if (!has_shape_) return fail_entry("the entry has no shape");
    if (!has_offsets_) return fail_entry("the entry has no data_offsets");
    tensor_.begin = offsets_[0];
    tensor_.end = offsets_[1];
    if (auto problem = check_entry(tensor_, data_bytes_); !problem.empty()) return fail_entry(problem);
    header_.tensors.push_back(std::move(tensor_));
    return true;
}

// Malformed JSON: the library's reason, and the byte where it was found.
bool HeaderReader::parse_error(std::size_t position, const std::string& last_token,
                               const nlohmann::detail::exception& problem) {
    // what(): "[json.exception.parse_error.101] parse error at line 1, column 5: <reason>"
    std::string reason = problem.what();
    if (const auto colon = reason.find(": "); reason.find("parse error") != std::string::npos && colon != std::string::npos)
        reason.erase(0, colon + 2);
    else if (const auto bracket = reason.find("] "); bracket != std::string::npos)
        reason.erase(0, bracket + 2);
    // The reason quotes the token read last, which may be a whole long string: keep its end.
    const std::string quoted_token = "'" + last_token + "'";
    if (const auto at = reason.find(quoted_token); at != std::string::npos && last_token.size() > 40)
        reason.replace(at, quoted_token.size(), "'..." + last_token.substr(last_token.size() - 40) + "'");
    // Messages are UTF-8: a quoted byte of malformed text is shown by its value.
    std::string shown;
    for (const char c : reason) {
        if (static_cast<unsigned char>(c) < 0x80) {
            shown += c;
            continue;
        }
        char hex[8];
        std::snprintf(hex, sizeof hex, "<%02X>", static_cast<unsigned char>(c));
        shown += hex;
    }
    // `position` counts the bytes read, the offending one included.
    return fail("the safetensors header is not valid JSON: " + shown + " at byte " +
                std::to_string(position > 0 ? position - 1 : 0));
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

std::string safetensors_header_size_error(std::uint64_t size) {
    if (size == 0) return "the safetensors header is empty";
    if (size > kMaxSafetensorsHeaderBytes)
        return "the safetensors header is " + std::to_string(size) + " bytes; at most " +
               std::to_string(kMaxSafetensorsHeaderBytes) + " are allowed";
    return {};
}

SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::size_t size, std::uint64_t data_bytes) {
    if (auto error = safetensors_header_size_error(bytes ? size : 0); !error.empty()) return failure(error);
    // The header must be an object: say so plainly rather than as a syntax error.
    const std::string_view text(reinterpret_cast<const char*>(bytes), size);
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{')
        return failure("the safetensors header is not a JSON object: expected '{' at byte " +
                       std::to_string(first == std::string_view::npos ? size : first));
    SafetensorsHeader header;
    HeaderReader reader(data_bytes, header);
    if (!nlohmann::json::sax_parse(bytes, bytes + size, &reader)) return failure(reader.error);
    return header;
}

}  // namespace attnlens::model

// A small, strict JSON reader (RFC 8259) for the safetensors header.
//
// It walks the text without building a tree: the caller asks for the
// structure it expects (an object's members, a string, an integer) and skips
// what it does not need, so memory stays proportional to what is kept, even
// for a 100 MB header. Anything malformed fails with a message naming the
// problem and its byte position: trailing commas, unescaped control
// characters, invalid UTF-8, unpaired surrogates in \u escapes, leading
// zeros, nesting deeper than the limit, text after the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens::model {

// A JSON number that is an integer: sign and magnitude, or too large for 64 bits.
struct JsonInteger {
    bool negative = false;
    bool too_large = false;  // magnitude >= 2^64
    std::uint64_t magnitude = 0;
    std::string text;        // as written (for messages)
};

enum class JsonKind { object, array, string, number, literal, end, invalid };

class JsonReader {
public:
    JsonReader(std::string_view text, std::size_t max_depth) : text_(text), max_depth_(max_depth) {}

    bool failed() const { return !error_.empty(); }
    const std::string& error() const { return error_; }  // "<problem> at byte <n>"
    std::size_t position() const { return position_; }

    // The kind of the next value, after whitespace (for the caller's type checks).
    JsonKind peek_kind();

    // Objects: begin_object() reads '{'; then while (next_member(key)) { read
    // or skip the value }. next_member is false at the closing '}' or on an
    // error (check failed()). Arrays likewise with begin_array / next_item.
    bool begin_object();
    bool next_member(std::string& key);
    bool begin_array();
    bool next_item();

    bool read_string(std::string& out);   // decoded to UTF-8
    bool read_integer(JsonInteger& out);  // fails on fractions and exponents
    bool skip_value();                    // any value, fully checked
    bool finish();                        // nothing but whitespace may follow

    // Records `message` at the current position (keeps the first error); false.
    bool fail(const std::string& message);

private:
    void skip_whitespace();
    bool at_end() const { return position_ >= text_.size(); }
    unsigned char peek() const { return static_cast<unsigned char>(text_[position_]); }
    bool expect(char c);
    bool enter();  // one level deeper, if the limit allows
    bool scan_number(bool& is_integer);
    bool read_hex4(std::uint32_t& unit);
    bool read_escape(std::string& out);
    bool copy_utf8_sequence(std::string& out);

    std::string_view text_;
    std::size_t position_ = 0;
    std::size_t max_depth_;
    std::vector<bool> first_;  // per open object/array: no member read yet
    std::string error_;
};

}  // namespace attnlens::model

#include "json_reader.hpp"

#include <cstdio>

namespace attnlens::model {

namespace {

// "'x'" for a printable byte, else "byte 0x0A": what a message shows of a byte.
std::string describe_byte(unsigned char c) {
    char text[24];
    if (c >= 0x20 && c < 0x7f) std::snprintf(text, sizeof text, "'%c'", c);
    else std::snprintf(text, sizeof text, "byte 0x%02X", c);
    return text;
}

void append_utf8(std::uint32_t code_point, std::string& out) {
    if (code_point < 0x80) {
        out += static_cast<char>(code_point);
    } else if (code_point < 0x800) {
        out += static_cast<char>(0xC0 | (code_point >> 6));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else if (code_point < 0x10000) {
        out += static_cast<char>(0xE0 | (code_point >> 12));
        out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code_point >> 18));
        out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    }
}

bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool JsonReader::fail(const std::string& message) {
    if (error_.empty()) error_ = message + " at byte " + std::to_string(position_);
    return false;
}

void JsonReader::skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++position_;
}

bool JsonReader::expect(char c) {
    skip_whitespace();
    if (at_end()) return fail(std::string("unexpected end of the text, expected '") + c + "'");
    if (peek() != static_cast<unsigned char>(c))
        return fail(std::string("expected '") + c + "', found " + describe_byte(peek()));
    ++position_;
    return true;
}

JsonKind JsonReader::peek_kind() {
    skip_whitespace();
    if (failed()) return JsonKind::invalid;
    if (at_end()) return JsonKind::end;
    switch (peek()) {
        case '{': return JsonKind::object;
        case '[': return JsonKind::array;
        case '"': return JsonKind::string;
        case 't': case 'f': case 'n': return JsonKind::literal;
        default: return peek() == '-' || is_digit(peek()) ? JsonKind::number : JsonKind::invalid;
    }
}

bool JsonReader::enter() {
    if (first_.size() >= max_depth_)
        return fail("nesting deeper than " + std::to_string(max_depth_) + " levels");
    first_.push_back(true);
    return true;
}

bool JsonReader::begin_object() {
    if (failed() || !expect('{')) return false;
    return enter();
}

bool JsonReader::begin_array() {
    if (failed() || !expect('[')) return false;
    return enter();
}

bool JsonReader::next_member(std::string& key) {
    if (failed() || first_.empty()) return false;
    skip_whitespace();
    if (!at_end() && peek() == '}') {
        ++position_;
        first_.pop_back();
        return false;
    }
    if (!first_.back()) {
        if (at_end()) return fail("unexpected end of the text inside an object, expected ',' or '}'");
        if (peek() != ',') return fail("expected ',' or '}' after an object member, found " + describe_byte(peek()));
        ++position_;
    }
    first_.back() = false;
    // After a comma, '}' lands here too: "{"a": 1,}" is refused as a missing key.
    if (peek_kind() != JsonKind::string) {
        if (at_end()) return fail("unexpected end of the text, expected an object key");
        return fail("expected a string key in an object, found " + describe_byte(peek()));
    }
    key.clear();
    return read_string(key) && expect(':');
}

bool JsonReader::next_item() {
    if (failed() || first_.empty()) return false;
    skip_whitespace();
    if (!at_end() && peek() == ']') {
        ++position_;
        first_.pop_back();
        return false;
    }
    if (!first_.back()) {
        if (at_end()) return fail("unexpected end of the text inside an array, expected ',' or ']'");
        if (peek() != ',') return fail("expected ',' or ']' after an array item, found " + describe_byte(peek()));
        ++position_;
        skip_whitespace();
        if (!at_end() && peek() == ']') return fail("trailing comma before ']'");
    }
    first_.back() = false;
    if (peek_kind() == JsonKind::end) return fail("unexpected end of the text inside an array");
    return true;
}

bool JsonReader::read_hex4(std::uint32_t& unit) {
    unit = 0;
    for (int i = 0; i < 4; ++i, ++position_) {
        if (at_end()) return fail("unexpected end of the text in a \\u escape");
        const unsigned char c = peek();
        unit <<= 4;
        if (c >= '0' && c <= '9') unit |= c - '0';
        else if (c >= 'a' && c <= 'f') unit |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') unit |= c - 'A' + 10;
        else return fail("expected 4 hex digits after \\u, found " + describe_byte(c));
    }
    return true;
}

// After the backslash.
bool JsonReader::read_escape(std::string& out) {
    if (at_end()) return fail("unexpected end of the text in an escape");
    const unsigned char c = peek();
    ++position_;
    switch (c) {
        case '"': out += '"'; return true;
        case '\\': out += '\\'; return true;
        case '/': out += '/'; return true;
        case 'b': out += '\b'; return true;
        case 'f': out += '\f'; return true;
        case 'n': out += '\n'; return true;
        case 'r': out += '\r'; return true;
        case 't': out += '\t'; return true;
        case 'u': break;
        default: --position_; return fail("invalid escape \\" + std::string(1, static_cast<char>(c)));
    }
    std::uint32_t unit;
    if (!read_hex4(unit)) return false;
    if (unit >= 0xDC00 && unit <= 0xDFFF) return fail("unpaired low surrogate in a \\u escape");
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        // UTF-16 surrogate pair: a high surrogate must be followed by \u and a low one.
        if (text_.substr(position_, 2) != "\\u") return fail("unpaired high surrogate in a \\u escape");
        position_ += 2;
        std::uint32_t low;
        if (!read_hex4(low)) return false;
        if (low < 0xDC00 || low > 0xDFFF) return fail("unpaired high surrogate in a \\u escape");
        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(unit, out);
    return true;
}

// A multi-byte UTF-8 sequence starting at the current byte: well-formed as
// Unicode defines it (no overlong forms, no surrogates, nothing past U+10FFFF).
bool JsonReader::copy_utf8_sequence(std::string& out) {
    const unsigned char lead = peek();
    std::size_t length;
    unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) length = 3, low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    else if (lead >= 0xF0 && lead <= 0xF4) length = 4, low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    else return fail("invalid UTF-8 (" + describe_byte(lead) + ") in a string");
    if (position_ + length > text_.size()) return fail("truncated UTF-8 sequence in a string");
    for (std::size_t i = 1; i < length; ++i) {
        const auto c = static_cast<unsigned char>(text_[position_ + i]);
        const bool ok = i == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
        if (!ok) {
            position_ += i;
            return fail("invalid UTF-8 (" + describe_byte(c) + ") in a string");
        }
    }
    out.append(text_.data() + position_, length);
    position_ += length;
    return true;
}

bool JsonReader::read_string(std::string& out) {
    if (failed()) return false;
    skip_whitespace();
    if (at_end() || peek() != '"') return fail(at_end() ? "unexpected end of the text, expected a string" : "expected a string");
    const std::size_t start = position_++;
    while (!at_end()) {
        const unsigned char c = peek();
        if (c == '"') {
            ++position_;
            return true;
        }
        if (c == '\\') {
            ++position_;
            if (!read_escape(out)) return false;
        } else if (c < 0x20) {
            return fail("control character " + describe_byte(c) + " in a string must be escaped");
        } else if (c >= 0x80) {
            if (!copy_utf8_sequence(out)) return false;
        } else {
            out += static_cast<char>(c);
            ++position_;
        }
    }
    return fail("unterminated string (it starts at byte " + std::to_string(start) + ")");
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool JsonReader::scan_number(bool& is_integer) {
    is_integer = true;
    if (!at_end() && peek() == '-') ++position_;
    if (at_end() || !is_digit(peek())) return fail("expected a digit in a number");
    if (peek() == '0') {
        ++position_;
        if (!at_end() && is_digit(peek())) return fail("leading zero in a number");
    } else {
        while (!at_end() && is_digit(peek())) ++position_;
    }
    if (!at_end() && peek() == '.') {
        is_integer = false;
        ++position_;
        if (at_end() || !is_digit(peek())) return fail("expected a digit after the decimal point");
        while (!at_end() && is_digit(peek())) ++position_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
        is_integer = false;
        ++position_;
        if (!at_end() && (peek() == '+' || peek() == '-')) ++position_;
        if (at_end() || !is_digit(peek())) return fail("expected a digit in the exponent");
        while (!at_end() && is_digit(peek())) ++position_;
    }
    return true;
}

bool JsonReader::read_integer(JsonInteger& out) {
    if (failed()) return false;
    if (peek_kind() != JsonKind::number) return fail("expected an integer");
    const std::size_t start = position_;
    bool is_integer;
    if (!scan_number(is_integer)) return false;
    out = JsonInteger{};
    out.text.assign(text_.data() + start, position_ - start);
    if (!is_integer) {
        position_ = start;
        return fail("expected an integer, found " + out.text.substr(0, 40));
    }
    out.negative = out.text[0] == '-';
    for (std::size_t i = out.negative ? 1 : 0; i < out.text.size(); ++i) {
        const std::uint64_t digit = static_cast<std::uint64_t>(out.text[i] - '0');
        if (out.magnitude > (UINT64_MAX - digit) / 10) out.too_large = true;
        if (!out.too_large) out.magnitude = out.magnitude * 10 + digit;
    }
    return true;
}

bool JsonReader::skip_value() {
    if (failed()) return false;
    std::string ignored;
    switch (peek_kind()) {
        case JsonKind::object:
            if (!begin_object()) return false;
            while (next_member(ignored))
                if (!skip_value()) return false;
            return !failed();
        case JsonKind::array:
            if (!begin_array()) return false;
            while (next_item())
                if (!skip_value()) return false;
            return !failed();
        case JsonKind::string:
            return read_string(ignored);
        case JsonKind::number: {
            bool is_integer;
            return scan_number(is_integer);
        }
        case JsonKind::literal:
            for (const char* word : {"true", "false", "null"})
                if (text_.substr(position_, std::char_traits<char>::length(word)) == word) {
                    position_ += std::char_traits<char>::length(word);
                    return true;
                }
            return fail("invalid literal (expected true, false or null)");
        case JsonKind::end:
            return fail("unexpected end of the text, expected a value");
        default:
            return fail("expected a value, found " + describe_byte(peek()));
    }
}

bool JsonReader::finish() {
    if (failed()) return false;
    skip_whitespace();
    if (!at_end()) return fail("unexpected " + describe_byte(peek()) + " after the end of the JSON value");
    return true;
}

}  // namespace attnlens::model

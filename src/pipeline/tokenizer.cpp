#include "tokenizer.hpp"

namespace attnlens {

namespace {

bool is_word_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

bool is_separator(unsigned char c) { return c <= ' ' || c == 0x7F; }

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
    std::vector<Token> tokens;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (is_separator(c)) {
            ++i;
            continue;
        }
        if (!is_word_byte(c)) {
            tokens.push_back({std::string(1, text[i]), i});
            ++i;
            continue;
        }
        const std::size_t start = i;
        while (i < text.size()) {
            const auto b = static_cast<unsigned char>(text[i]);
            if (is_word_byte(b)) {
                ++i;
            } else if (b == '\'' && i + 1 < text.size() && is_word_byte(static_cast<unsigned char>(text[i + 1]))) {
                i += 2;  // "don't", "it's": the apostrophe stays inside the word
            } else {
                break;
            }
        }
        tokens.push_back({std::string(text.substr(start, i - start)), start});
    }
    return tokens;
}

}  // namespace attnlens

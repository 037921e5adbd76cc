// Splits text into words and punctuation, the way the page shows tokens.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

struct Token {
    std::string text;        // the bytes of the token, UTF-8 as given
    std::size_t offset = 0;  // byte offset of the token in the input
};

// Words are runs of letters, digits, apostrophes between letters, and any
// non-ASCII UTF-8 sequence (so "café" and "日本" stay whole); every other
// printable ASCII character is a token of its own; whitespace and control
// characters separate tokens and are dropped. Invalid UTF-8 is kept as bytes:
// the tokenizer never fails, the caller decides how to display them.
std::vector<Token> tokenize(std::string_view text);

}  // namespace attnlens

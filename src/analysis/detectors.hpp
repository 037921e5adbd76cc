// Head detectors: how much of each head's attention falls on a pattern.
//
// TransformerLens' detect_head with its defaults (error_measure "mul",
// exclude_bos = exclude_current_token = false): for a head's n x n weights A
// and a 0/1 pattern P, score = sum(A o P) / sum(A), every row counted in the
// denominator. Patterns, for query i and key j:
//   previous token   j = i - 1
//   first token      j = 0, i >= 1 (the attention sink; row 0 is not a match)
//   current token    j = i
//   duplicate token  j < i and ids[j] == ids[i]
//   induction        j = k + 1 for some k < i with ids[k] == ids[i]
// A text without repeats has an all-zero duplicate and induction pattern:
// those scores are 0, as TransformerLens gives. A head whose weights sum to
// 0 (every key masked) scores 0 on every pattern.
//
// Layout: attention is [layer][head][query][key], as a model run writes it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlens::analysis {

struct AttentionShape {
    std::size_t layers = 0, heads = 0, tokens = 0;
    std::size_t head_count() const { return layers * heads; }
};

// The order of the score arrays in head_scores' output (period 0).
enum Detector : std::size_t {
    kPreviousToken,
    kFirstToken,
    kCurrentToken,
    kDuplicateToken,
    kInduction,
    kDetectorCount,
};

// period 0: the five detectors, scores[detector * layers * heads + layer *
// heads + head]. period > 0: the sequence repeats itself after `period`
// tokens, and scores[layer * heads + head] is each head's induction score on
// the second copy: the share of the attention of queries i >= period (the
// second copy; their weights alone in the denominator) that goes to key
// i - period + 1, the token after the earlier occurrence of query i's token.
// ids has `tokens` entries.
void head_scores(const float* attention, const AttentionShape& shape, const std::int32_t* ids, std::size_t period,
                 float* scores);

}  // namespace attnlens::analysis

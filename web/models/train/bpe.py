"""A byte-level BPE vocabulary trained from scratch, GPT-2 style.

Text is split by GPT-2's regex, each piece becomes its UTF-8 bytes written with GPT-2's
byte-to-character table (a space is "Ġ"), and merges of the most frequent adjacent pair
are learnt until the vocabulary is full. The result is written as a tokenizer.json in the
same form as GPT-2's, which attnlens (and Hugging Face tokenizers) read.
"""
import heapq
import json
from collections import Counter, defaultdict

import regex

# GPT-2's pre-tokenizer (the ByteLevel pre-tokenizer with use_regex).
GPT2_PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
END_OF_TEXT = '<|endoftext|>'


def bytes_to_unicode():
    """GPT-2's table: printable bytes stand for themselves, the others move to 256 + n."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_CHARS = bytes_to_unicode()


def pieces(text):
    """The pre-tokens of text, each as byte characters ("Ġthe")."""
    return [''.join(BYTE_CHARS[b] for b in p.encode('utf-8')) for p in GPT2_PATTERN.findall(text)]


def train(docs, vocab_size, log=print):
    """Learn vocab_size - 257 merges (256 bytes + merges + <|endoftext|>)."""
    counts = Counter()
    for doc in docs:
        counts.update(pieces(doc))
    words = [list(w) for w in counts]
    freqs = list(counts.values())
    pair_counts = defaultdict(int)
    where = defaultdict(set)  # pair -> indices of words that contain it
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_counts[pair] += freqs[i]
            where[pair].add(i)
    # Max-heap of (count, pair); stale entries are skipped when popped. Ties go to the
    # smallest pair in string order, so the result does not depend on dict order.
    heap = [(-c, p) for p, c in pair_counts.items()]
    heapq.heapify(heap)
    merges = []
    n_merges = vocab_size - 256 - 1
    while len(merges) < n_merges and heap:
        neg, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg or -neg <= 0:
            continue
        merges.append(pair)
        a, b = pair
        merged = a + b
        changed = defaultdict(int)
        for i in list(where[pair]):
            w, f = words[i], freqs[i]
            for p in zip(w, w[1:]):
                changed[p] -= f
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(merged)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for p in zip(out, out[1:]):
                changed[p] += f
                where[p].add(i)
        del where[pair]
        for p, delta in changed.items():
            if delta == 0:
                continue
            pair_counts[p] += delta
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p))
            else:
                pair_counts.pop(p, None)
        pair_counts.pop(pair, None)
        if len(merges) % 500 == 0:
            log(f'bpe: {len(merges)} merges, last {merged!r} ({-neg})')
    return merges


def vocabulary(merges):
    """Ids in GPT-2's order: the 256 byte characters, the merges, then <|endoftext|>."""
    vocab = {c: i for i, c in enumerate(BYTE_CHARS.values())}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab[END_OF_TEXT] = len(vocab)
    return vocab


class Encoder:
    def __init__(self, merges):
        self.vocab = vocabulary(merges)
        self.ranks = {pair: r for r, pair in enumerate(merges)}
        self.cache = {}
        self.inverse = {i: s for s, i in self.vocab.items()}
        self.byte_of = {c: b for b, c in BYTE_CHARS.items()}

    def bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        w = list(word)
        while len(w) > 1:
            ranked = [(self.ranks.get(p, 1 << 30), k) for k, p in enumerate(zip(w, w[1:]))]
            rank, k = min(ranked)
            if rank == 1 << 30:
                break
            a, b = w[k], w[k + 1]
            out, j = [], 0
            while j < len(w):  # merge every occurrence of the pair, left to right
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            w = out
        ids = [self.vocab[s] for s in w]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        return [i for p in pieces(text) for i in self.bpe(p)]

    def decode(self, ids):
        data = bytes(self.byte_of[c] for i in ids for c in self.inverse[i])
        return data.decode('utf-8', errors='replace')


def tokenizer_json(merges):
    """tokenizer.json in the form of GPT-2's on the Hugging Face hub."""
    vocab = vocabulary(merges)
    return {
        'version': '1.0',
        'truncation': None,
        'padding': None,
        'added_tokens': [{'id': vocab[END_OF_TEXT], 'content': END_OF_TEXT, 'single_word': False, 'lstrip': False,
                          'rstrip': False, 'normalized': True, 'special': True}],
        'normalizer': None,
        'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
        'post_processor': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': False, 'use_regex': True},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False,
                  'vocab': vocab, 'merges': [f'{a} {b}' for a, b in merges]},
    }


def write_tokenizer(path, merges):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(tokenizer_json(merges), f, ensure_ascii=False)

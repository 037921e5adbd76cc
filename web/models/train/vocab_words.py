"""The smallest vocabulary whose tokenizer keeps the most frequent words whole.

  /usr/bin/python3 vocab_words.py --data work --words 2000 --max-vocab 8192
  /usr/bin/python3 vocab_words.py --data work --words 2000 --tokenizer ../tiny-english-2/tokenizer.json \
    --write ../tiny-english-2/top-words.txt

A word is a run of letters after a space, as GPT-2's pre-tokenizer cuts it inside a sentence
(" river", case kept); the top words are the most frequent of these pieces, and one counts as
whole when it is one token. BPE
merges are learnt in order, so the tokenizer of vocabulary V is the first V - 257 merges of
a longer run: one training run to --max-vocab, then the smallest V that keeps every one of
the top --words words whole. With --tokenizer it checks that tokenizer's merges instead, and
--write saves the words (most frequent first, one a line) for the model's test.
"""
import argparse
import json
from collections import Counter

import regex

import bpe

WORD = regex.compile(r'(?<= )\p{L}+')  # preceded by a space: GPT-2's " ?\p{L}+" piece with its space


def top_words(docs, count):
    counts = Counter()
    for doc in docs:
        counts.update(WORD.findall(doc))
    return [w for w, _ in counts.most_common(count)]


def whole_from(merges, words):
    """For each word, the vocabulary size from which " word" is one token (None: never)."""
    vocab = bpe.vocabulary(merges)
    encoder = bpe.Encoder(merges)
    out = {}
    for w in words:
        piece = bpe.pieces(' ' + w)
        assert len(piece) == 1
        ids = encoder.bpe(piece[0])
        # One token made by merge r exists from vocabulary 256 + r + 2 on (bytes, merges 0..r, end of text).
        out[w] = vocab[piece[0]] + 2 if len(ids) == 1 and piece[0] in vocab else None
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', required=True)
    parser.add_argument('--words', type=int, default=2000)
    parser.add_argument('--max-vocab', type=int, default=8192)
    parser.add_argument('--tokenizer', help="a trained tokenizer.json: check its merges rather than learning them")
    parser.add_argument('--write', help='write the top words here, one a line')
    args = parser.parse_args()
    docs = [json.loads(line) for line in open(f'{args.data}/train.jsonl', encoding='utf-8')]
    words = top_words(docs, args.words)
    if args.write:
        with open(args.write, 'w', encoding='utf-8') as f:
            f.write('\n'.join(words) + '\n')
    if args.tokenizer:
        merges = [tuple(m.split(' ')) for m in json.load(open(args.tokenizer, encoding='utf-8'))['model']['merges']]
    else:
        merges = bpe.train(docs, args.max_vocab, log=lambda *a: None)
    need = whole_from(merges, words)
    missing = [w for w, v in need.items() if v is None]
    if missing:
        print(json.dumps({'max_vocab': args.max_vocab, 'not_whole': missing[:50], 'count': len(missing)}))
        return
    # Whole at V means whole at every larger V too (a later merge never splits an earlier token of the word).
    smallest = max(need.values())
    last = max(need, key=need.get)
    print(json.dumps({'words': args.words, 'smallest_vocab': smallest, 'last_word': last,
                      'rarest_top_word': words[-1]}))


if __name__ == '__main__':
    main()

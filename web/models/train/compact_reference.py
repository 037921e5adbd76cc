"""Shrinks train.py's reference-logits.json (torch's full logits on a few held-out documents)
into a test fixture small enough to commit: for each document its ids and, per position, the
log of the softmax normaliser (which every logit enters) and the top few tokens with their
logits. tests/wasm/tiny-english-2.test.mjs compares attnlens' forward with it.

  /usr/bin/python3 compact_reference.py work/succ/reference-logits.json ../../../tests/fixtures/x.json --docs 3 --top 5
"""
import argparse
import json
import math


def compact(row, top):
    peak = max(row)
    log_normaliser = peak + math.log(sum(math.exp(v - peak) for v in row))
    best = sorted(range(len(row)), key=lambda i: (-row[i], i))[:top]
    return {'logsumexp': round(log_normaliser, 5), 'top': [[i, row[i]] for i in best]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('reference')
    parser.add_argument('out')
    parser.add_argument('--docs', type=int, default=3)
    parser.add_argument('--top', type=int, default=5)
    args = parser.parse_args()
    out = []
    for doc in json.load(open(args.reference))[:args.docs]:
        vocab = len(doc['logits']) // len(doc['ids'])
        rows = [doc['logits'][k * vocab:(k + 1) * vocab] for k in range(len(doc['ids']))]
        out.append({'text': doc['text'], 'ids': doc['ids'], 'positions': [compact(r, args.top) for r in rows]})
    with open(args.out, 'w', encoding='utf-8') as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == '__main__':
    main()

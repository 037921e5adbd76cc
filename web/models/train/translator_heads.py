"""What tiny-translator's cross-attention heads look at, measured in torch.

Each output field of the ISO date (year digits, month digits, day digits) is named by some of
the source's tokens: the year's four digits; the month's word ("march", "mar" and a following
"."); the day's digits with their suffix ("3", "rd") or its ordinal words ("twenty", "-",
"first"). For every decoder layer and head, a field's share is the mean, over the decoder rows
that predict that field's digits (teacher-forced on the right answer), of the cross-attention
weight that lands on the source tokens naming the field. "uniform" is the share a head that
spread its weight evenly over the source would get. "year_same_digit" is finer: the weight that
output year digit k puts on the source's year digit k itself.

  /usr/bin/python3 translator_heads.py ../tiny-translator   (re-measures a trained folder)
"""
import torch

import bart
import dates

FIELDS = {'year': (1, 2, 3, 4), 'month': (6, 7), 'day': (9, 10)}  # label positions in <s> YYYY-MM-DD </s>
MONTH_WORDS = {m.lower() for m in dates.MONTHS + dates.MONTH_ABBREVIATIONS}
DAY_WORDS = {w for o in dates.ORDINALS for w in o.split('-')} | {'st', 'nd', 'rd', 'th'}


def source_fields(tokens):
    """The field each source token names ('year', 'month', 'day' or None), from its text."""
    words = [t.replace('Ġ', '') for t in tokens]
    fields = [None] * len(words)
    k = 0
    while k < len(words):  # numbers (a digit token, then digits without a space): 4 digits a year, 1 or 2 a day
        if words[k].isdigit():
            end = k + 1
            while end < len(words) and tokens[end].isdigit():
                end += 1
            for j in range(k, end):
                fields[j] = 'year' if end - k == 4 else 'day'
            k = end
        else:
            k += 1
    for j, w in enumerate(words):
        if w in MONTH_WORDS:
            fields[j] = 'month'
            if j + 1 < len(words) and words[j + 1] == '.':
                fields[j + 1] = 'month'
        elif w in DAY_WORDS and fields[j] is None:
            fields[j] = 'day'
        elif w == '-' and 0 < j < len(words) - 1 and words[j - 1] in ('twenty', 'thirty'):
            fields[j] = 'day'
    return fields


@torch.no_grad()
def field_shares(model, tokenizer, pairs):
    """{'heads': [{layer, head, year, month, day, mean}], 'uniform': {...}, 'best': {...}}."""
    from train_translator import batches
    layers = len(model.model.decoder.layers)
    heads = model.model.decoder.layers[0].encoder_attn.heads
    sums = torch.zeros(layers, heads, 3)
    digit_sums = torch.zeros(layers, heads)  # year digit k of the output on year digit k of the source
    uniform = torch.zeros(3)
    for start in range(0, len(pairs), 500):
        part = pairs[start:start + 500]
        source, inputs, _ = batches(tokenizer, part, model.pad)
        _, (_, _, cross) = model(source, inputs, return_attention=True)
        for b, (text, _) in enumerate(part):
            ids = tokenizer.encode(text)
            fields = source_fields([tokenizer.tokens[i] for i in ids])
            for f, (name, rows) in enumerate(FIELDS.items()):
                mask = torch.tensor([x == name for x in fields] + [False] * (source.shape[1] - len(ids)))
                uniform[f] += mask.sum() / len(ids)
                for layer in range(layers):
                    sums[layer, :, f] += cross[layer][b][:, list(rows)][:, :, mask].sum(-1).mean(-1)
            year = [j for j, x in enumerate(fields) if x == 'year']
            for layer in range(layers):
                digit_sums[layer] += cross[layer][b][:, list(FIELDS['year']), year].mean(-1)
    shares, uniform, digits = sums / len(pairs), uniform / len(pairs), digit_sums / len(pairs)
    rows = [{'layer': layer, 'head': head, **{name: round(shares[layer, head, f].item(), 3)
                                              for f, name in enumerate(FIELDS)},
             'mean': round(shares[layer, head].mean().item(), 3), 'year_same_digit': round(digits[layer, head].item(), 3)}
            for layer in range(layers) for head in range(heads)]
    best = {name: max(rows, key=lambda r: r[name]) for name in FIELDS}
    return {'heads': rows, 'uniform': {name: round(uniform[f].item(), 3) for f, name in enumerate(FIELDS)},
            'best_mean': max(rows, key=lambda r: r['mean']),
            'best': {name: {'layer': r['layer'], 'head': r['head'], 'share': r[name]} for name, r in best.items()}}


@torch.no_grad()
def references(model, tokenizer, pairs):
    """For a few held-out sources: the greedy output, and on its decoder inputs (</s> + the
    generated tokens but the last) the logits of the tokens an ISO date uses (<s>, </s>,
    digits, "-") and each row's logsumexp over the whole vocabulary, plus every attention:
    encoder [layer][head][n][n], decoder [layer][head][m][m], cross [layer][head][m][n]."""
    watched = [0, 2] + [tokenizer.vocab[c] for c in '0123456789-']
    out = []
    for text, target in pairs:
        source = torch.tensor([tokenizer.encode(text)])
        generated = bart.greedy(model, source, 12)[0].tolist()
        inputs = torch.tensor([[2] + generated[:-1]])
        logits, (encoder, decoder, cross) = model(source, inputs, return_attention=True)

        def rounded(weights):
            return [[[[round(x, 6) for x in row] for row in head] for head in layer[0].tolist()] for layer in weights]
        out.append({'text': text, 'target': target, 'sourceIds': source[0].tolist(), 'generatedIds': generated,
                    'output': tokenizer.decode(generated), 'targetIds': inputs[0].tolist(), 'watchedIds': watched,
                    'logits': [[round(x, 5) for x in row] for row in logits[0][:, watched].tolist()],
                    'logsumexp': [round(x, 5) for x in logits[0].logsumexp(-1).tolist()],
                    'encoderAttention': rounded(encoder), 'decoderAttention': rounded(decoder),
                    'crossAttention': rounded(cross)})
    return out


def main():
    import json
    import sys

    from train import read_safetensors
    folder = sys.argv[1]
    config = json.load(open(f'{folder}/config.json'))
    merges = [tuple(m.split(' ')) for m in json.load(open(f'{folder}/tokenizer.json'))['model']['merges']]
    tokenizer = dates.Tokenizer(merges)
    model = bart.Bart(dict(config, init_std=0.02))
    weights = read_safetensors(f'{folder}/model.safetensors')
    model.load_state_dict({n: weights[n] for n in model.state_dict()})
    model.eval()
    print(json.dumps(field_shares(model, tokenizer, dates.examples(2, 2000)), indent=1))


if __name__ == '__main__':
    main()

"""Train a candidate for the induction-head test fixture: a two-layer GPT-2 on random tokens
whose spans recur (issue 25; no run has produced one yet, see README.md).

  /usr/bin/python3 train_induction.py --out work/ind-f --steps 2000 --set vocab_size=64 ...

Each training sequence is built left to right from a seeded random.Random: runs of random
tokens and, with copy_probability, copies of a span of what came before (or, with repeat_all,
everything so far again, so the sequence repeats its first run). With skip_bigram, that share of
the random tokens follow x_i = 7 x_(i-2) + 3 (mod vocabulary), which a model can only predict
with a head that looks one token back (until step skip_until, if set). Nothing about heads is
planted: a model that predicts the copies well has to find the earlier occurrence of the current
token and read what followed it. The model is train.py's GPT-2 (same initialisation, positions
started from sinusoids) at a smaller size, exported with train.py's writer under GPT-2's names.

Measured here, as attnlens measures it (src/analysis/detectors.hpp): on a random sequence of
`probe_length` tokens repeated twice, a head's induction score is its mean weight, over the queries
of the second copy, on the token after the earlier occurrence; a head's previous-token score
is sum over i >= 1 of A[i, i-1] divided by the number of rows.
"""
import argparse
import json
import math
import os
import random
import time

os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
import torch  # noqa: E402 (after the thread settings)
import torch.nn.functional as F  # noqa: E402

import recipe  # noqa: E402

from train import GPT2, attention_maps, hf_config, hf_tensors, read_safetensors, from_hf_tensors, write_safetensors  # noqa: E402,E501

HYPER = dict(vocab_size=256, n_positions=128, n_embd=64, n_layer=2, n_head=4, layer_norm_epsilon=1e-5,
             position_init='sinusoidal', batch_size=32, lr=1e-3, min_lr=1e-4, warmup=100, weight_decay=0.1,
             grad_clip=1.0, seed=4321, threads=1, copy_probability=0.5, shortest=3, longest=20, probe_length=50,
             skip_bigram=0.0, skip_until=0, repeat_all=0)


def sequence(rng, h):
    """n_positions tokens: random runs and copies of earlier spans, each 3 to 20 tokens long."""
    out = []
    while len(out) < h['n_positions']:
        size = rng.randint(h['shortest'], h['longest'])
        if h['repeat_all'] and len(out) >= h['shortest']:  # the whole sequence so far, again
            out.extend(out)
        elif len(out) > h['shortest'] and rng.random() < h['copy_probability']:
            start = rng.randrange(0, len(out) - h['shortest'])
            out.extend(out[start:start + size])
        else:
            for _ in range(size):
                skip = h['skip_bigram'] > 0 and len(out) >= 2 and rng.random() < h['skip_bigram']
                out.append((7 * out[-2] + 3) % h['vocab_size'] if skip else rng.randrange(h['vocab_size']))
    return out[:h['n_positions']]


def repeated(rng, length, vocab):
    once = [rng.randrange(vocab) for _ in range(length)]
    return once + once


@torch.no_grad()
def head_scores(model, h, sequences=32, seed=99):
    """Per head (layer-major): mean induction score on `sequences` random sequences of
    probe_length tokens repeated twice, and mean previous-token score on fresh training-like
    sequences, both averaged over sequences."""
    rng, length = random.Random(seed), h['probe_length']
    x = torch.tensor([repeated(rng, length, h['vocab_size']) for _ in range(sequences)])
    rows = torch.arange(length, 2 * length)
    induction = [[w[:, head, rows, rows - length + 1].mean().item() for head in range(h['n_head'])]
                 for w in attention_maps(model, x)]
    y = torch.tensor([sequence(rng, h) for _ in range(sequences)])
    n = y.shape[1]
    previous = [[(w[:, head].diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / n).mean().item() for head in range(h['n_head'])]
                for w in attention_maps(model, y)]
    return {'induction': [[round(v, 4) for v in layer] for layer in induction],
            'previous_token': [[round(v, 4) for v in layer] for layer in previous]}


@torch.no_grad()
def copy_loss(model, h, rng, count=64):
    """Loss on the second half of repeated random sequences (perfect induction: near 0) and on
    the first half (nothing to predict: ln vocab)."""
    length = h['n_positions'] // 2
    x = torch.tensor([repeated(rng, length, h['vocab_size']) for _ in range(count)])
    loss = F.cross_entropy(model(x[:, :-1]).transpose(1, 2), x[:, 1:], reduction='none')
    return round(loss[:, length:].mean().item(), 4), round(loss[:, :length - 1].mean().item(), 4)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    parser.add_argument('--steps', type=int, default=3000)
    parser.add_argument('--set', action='append', default=[], help='name=value: override a HYPER entry')
    args = parser.parse_args()
    h = recipe.hyper(HYPER, args.set)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(h['threads'])
    torch.manual_seed(h['seed'])
    rng = random.Random(h['seed'])
    started = time.time()
    model = GPT2(h)
    optimizer, schedule = recipe.optimizer(model, h, args.steps, (0.9, 0.95), no_decay=lambda n: n.startswith('wpe'))
    history, running = [], []
    for step in range(1, args.steps + 1):
        if step == h['skip_until']:  # a curriculum: the skip-bigram rule only for the first steps
            h['skip_bigram'] = 0.0
        x = torch.tensor([sequence(rng, h) for _ in range(h['batch_size'])])
        loss = F.cross_entropy(model(x[:, :-1]).transpose(1, 2), x[:, 1:])
        running.append(recipe.step(loss, model, optimizer, schedule, h['grad_clip']))
        if step % 250 == 0 or step == args.steps:
            scores = head_scores(model, h)
            row = {'step': step, 'loss': round(sum(running) / len(running), 4), 'seconds': round(time.time() - started, 1),
                   'best_induction': max(max(layer) for layer in scores['induction']), **scores}
            running = []
            history.append(row)
            print(json.dumps(row), flush=True)

    write_safetensors(f'{args.out}/model.safetensors', hf_tensors(model))
    json.dump(hf_config(h), open(f'{args.out}/config.json', 'w'), indent=2)
    shipped = GPT2(h)  # measure the exported F16 weights, which the test loads
    from_hf_tensors(shipped, read_safetensors(f'{args.out}/model.safetensors'))
    scores = head_scores(shipped, h)
    flat = [(v, layer, head) for layer, row in enumerate(scores['induction']) for head, v in enumerate(row)]
    best = max(flat)
    partner = max((v, head) for head, v in enumerate(scores['previous_token'][0]))
    second_copy, first_copy = copy_loss(shipped, h, random.Random(7))
    summary = {'hyper': h, 'steps': args.steps, 'seconds': round(time.time() - started, 1), 'torch': torch.__version__,
               'threads': torch.get_num_threads(), 'final_train_loss': history[-1]['loss'],
               'scores': scores, 'induction_head': {'layer': best[1], 'head': best[2], 'score': best[0]},
               'previous_token_head': {'layer': 0, 'head': partner[1], 'score': partner[0]},
               'repeat_loss': {'first_copy': first_copy, 'second_copy': second_copy, 'ln_vocab': round(math.log(h['vocab_size']), 4)}}
    json.dump({'summary': summary, 'log': history}, open(f'{args.out}/training-log.json', 'w'), indent=1)
    print(json.dumps(summary), flush=True)


if __name__ == '__main__':
    main()

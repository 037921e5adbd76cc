"""Train the induction-head test fixture (issue 25) and its candidates: a two-layer, attention-only
GPT-2 on uniformly random tokens in which spans recur, exported in the GPT-2 layout. The fixture,
tests/fixtures/tiny-induction, is run 35 of README.md ("The induction-head fixture"):

  /usr/bin/python3 train_induction.py --out work/r35 --steps 2000 --set bigram=0.3 --set untied=1 --set n_head=2 ...

The setting of Olsson et al. (2022), "In-context learning and induction heads": no MLPs, a few
hundred tokens of vocabulary (64 made spurious repeats everywhere, see README.md), positions
learned (started from sinusoids), a constant learning rate after warm-up, loss on every
position. Each training sequence is n_positions random tokens in which a span of `shortest` to
`longest` tokens is copied to a later place (both places random), so only the copy can be
predicted, and only by finding the earlier occurrence of the current token and reading what
followed it; its period and place change from sequence to sequence, so no fixed offset does it.
Knobs (--set): `copies` spans per sequence; `prefix=1` opens each sequence with the span and its
copy; `fill=1` repeats one span to the end instead; `skip_bigram`, that share of tokens
x_i = 7 x_(i-2) + 3 (mod vocabulary), which only a head looking one token back predicts (until
step `skip_until`, if set); `bigram`, that share of the others x_i = 5 x_(i-1) + 1, which the token
itself predicts: it keeps the token embedding large beside layer 0's output, so layer 1 can
match the query's own token (the classic induction head) rather than shifted copies (the j + 2
variant of the runs without it); `untied=1` an LM head of its own; `embed_std` the token
embeddings' initial std.

The GPT-2 layout (what attnlens loads) has an MLP in every block: here its tensors are zero and
frozen (an MLP of zeros adds exactly 0 to the residual stream). That is the architecture, not a
planted answer: every attention weight is learned. The model is train.py's GPT-2 (same
initialisation and writer, Hugging Face names).

Measured here, as attnlens measures it (src/analysis/detectors.hpp): on a random sequence of
`probe_length` tokens repeated twice, a head's induction score is its mean weight, over the
queries of the second copy, on key i - probe_length + 1 (the token after the earlier occurrence
of query i's token); its previous-token score, on random tokens, is the sum over i >= 1 of
A[i, i-1] divided by the number of rows.
"""
import argparse
import json
import math
import os
import time

os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
import torch  # noqa: E402 (after the thread settings)
import torch.nn.functional as F  # noqa: E402

import recipe  # noqa: E402

from train import GPT2, attention_maps, hf_config, hf_tensors, read_safetensors, from_hf_tensors, write_safetensors  # noqa: E402,E501

HYPER = dict(vocab_size=512, n_positions=128, n_embd=64, n_layer=2, n_head=4, layer_norm_epsilon=1e-5,
             position_init='sinusoidal', batch_size=32, lr=1e-3, min_lr=1e-3, warmup=100, weight_decay=0.01,
             grad_clip=1.0, seed=4321, threads=1, shortest=8, longest=60, copies=1, prefix=0, skip_bigram=0.0, skip_until=0, probe_length=50, attention_only=1, fill=0, untied=0, embed_std=0.0, bigram=0.0)


def batch(gen, h, count):
    """count sequences of n_positions random tokens, each with `copies` spans copied further on."""
    n = h['n_positions']
    x = torch.randint(h['vocab_size'], (count, n), generator=gen)
    for t in range(2, n):  # with skip_bigram, that share of tokens is 7 x_(t-2) + 3 (mod vocabulary)
        rule = torch.rand(count, generator=gen) < h['skip_bigram']
        x[:, t] = torch.where(rule, (7 * x[:, t - 2] + 3) % h['vocab_size'], x[:, t])
        if h['bigram']:  # and of the rest, that share 5 x_(t-1) + 1, predicted from the current token
            rule = ~rule & (torch.rand(count, generator=gen) < h['bigram'])
            x[:, t] = torch.where(rule, (5 * x[:, t - 1] + 1) % h['vocab_size'], x[:, t])
    pick = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))  # noqa: E731
    if h['fill']:  # each sequence one span of shortest..longest tokens repeated to the end
        for row in x:
            size = pick(h['shortest'], min(h['longest'], n // 2))
            row[size:] = row[:size].repeat(n // size + 1)[:n - size]
        return x
    for row in [row for row in x for _ in range(h['copies'])]:
        size = pick(h['shortest'], min(h['longest'], n // 2))
        source = 0 if h['prefix'] else pick(0, n - 2 * size)  # prefix: the sequence opens with a span and its copy
        target = source + size if h['prefix'] else pick(source + size, n - size)
        row[target:target + size] = row[source:source + size].clone()
    return x


def attention_only(model):
    """Every MLP tensor zero and frozen, so each MLP adds exactly 0; training skips computing it."""
    for name, p in model.named_parameters():
        if '.c_fc.' in name or ('.c_proj.' in name and '.attn.' not in name):
            with torch.no_grad():
                p.zero_()
            p.requires_grad_(False)
    for block in model.h:
        block.forward = lambda x, block=block: x + block.attn(block.ln_1(x))


def untie(model):
    """An LM head of its own (lm_head.weight, tie_word_embeddings false), started from the embeddings."""
    model.lm_head = torch.nn.Parameter(model.wte.weight.detach().clone())


def export(model, h, folder):
    """The GPT-2 layout in F16 (train.py's writer), lm_head.weight under its own name when untied."""
    tensors = hf_tensors(model)
    if 'transformer.lm_head' in tensors:
        tensors['lm_head.weight'] = tensors.pop('transformer.lm_head')
    write_safetensors(f'{folder}/model.safetensors', tensors)
    json.dump({**hf_config(h), 'tie_word_embeddings': not h['untied']}, open(f'{folder}/config.json', 'w'), indent=2)


def load(h, folder):
    """The exported weights back into a torch model (to measure what the test loads)."""
    model = GPT2(h)
    if h['untied']:
        untie(model)
    tensors = read_safetensors(f'{folder}/model.safetensors')
    if 'lm_head.weight' in tensors:
        tensors['transformer.lm_head'] = tensors.pop('lm_head.weight')
    from_hf_tensors(model, tensors)
    return model


@torch.no_grad()
def head_scores(model, h, sequences=32, seed=99):
    """Per head (layer-major), each the mean over `sequences` sequences: the induction score on
    random sequences of probe_length tokens repeated twice, and the previous-token score on
    random sequences of n_positions tokens."""
    gen, length = torch.Generator().manual_seed(seed), h['probe_length']
    once = torch.randint(h['vocab_size'], (sequences, length), generator=gen)
    rows = torch.arange(length, 2 * length)
    induction = [[w[:, head, rows, rows - length + 1].mean().item() for head in range(h['n_head'])]
                 for w in attention_maps(model, torch.cat([once, once], 1))]
    y = torch.randint(h['vocab_size'], (sequences, h['n_positions']), generator=gen)
    previous = [[(w[:, head].diagonal(offset=-1, dim1=-2, dim2=-1).sum(-1) / y.shape[1]).mean().item()
                 for head in range(h['n_head'])] for w in attention_maps(model, y)]
    return {'induction': [[round(v, 4) for v in layer] for layer in induction],
            'previous_token': [[round(v, 4) for v in layer] for layer in previous]}


@torch.no_grad()
def offsets(model, h, sequences=32, seed=99):
    """Per head, where its attention goes on the induction probes: the mean weight of the second
    copy's queries i on keys j - 1 ... j + 3 around the earlier occurrence j = i - probe_length
    (j + 1 is the induction pattern), and on i, i - 1 ... i - 3 (itself and previous tokens)."""
    gen, length = torch.Generator().manual_seed(seed), h['probe_length']
    once = torch.randint(h['vocab_size'], (sequences, length), generator=gen)
    rows = torch.arange(length + 3, 2 * length)  # queries whose keys j - 1 and i - 3 exist
    return [[{**{f'j{d:+d}': round(w[:, head, rows, rows - length + d].mean().item(), 3) for d in range(-1, 4)},
              **{f'i-{d}': round(w[:, head, rows, rows - d].mean().item(), 3) for d in range(0, 4)}}
             for head in range(h['n_head'])] for w in attention_maps(model, torch.cat([once, once], 1))]


@torch.no_grad()
def copy_loss(model, h, count=64, seed=7):
    """Loss on the second copy of probe-like sequences (perfect induction: near 0) and on the
    first (nothing to predict: ln vocab)."""
    length = h['probe_length']
    once = torch.randint(h['vocab_size'], (count, length), generator=torch.Generator().manual_seed(seed))
    x = torch.cat([once, once], 1)
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
    gen = torch.Generator().manual_seed(h['seed'])
    started = time.time()
    model = GPT2(h)
    if h['untied']:
        untie(model)
    if h['embed_std']:  # larger token embeddings (README.md, run 34)
        with torch.no_grad():
            model.wte.weight.normal_(0.0, h['embed_std'])
    if h['attention_only']:
        attention_only(model)
    optimizer, schedule = recipe.optimizer(model, h, args.steps, (0.9, 0.95), no_decay=lambda n: n.startswith('wpe'))
    history, running = [], []
    for step in range(1, args.steps + 1):
        if step == h['skip_until']:  # a curriculum: the skip-bigram only for the first steps
            h['skip_bigram'] = 0.0
        x = batch(gen, h, h['batch_size'])
        loss = F.cross_entropy(model(x[:, :-1]).transpose(1, 2), x[:, 1:])
        running.append(recipe.step(loss, model, optimizer, schedule, h['grad_clip']))
        if step % 250 == 0 or step == args.steps:
            scores = head_scores(model, h)
            row = {'step': step, 'loss': round(sum(running) / len(running), 4), 'seconds': round(time.time() - started, 1),
                   'second_copy_loss': copy_loss(model, h)[0],
                   'best_induction': max(max(layer) for layer in scores['induction']), **scores}
            running = []
            history.append(row)
            print(json.dumps(row), flush=True)

    export(model, h, args.out)
    shipped = load(h, args.out)  # measure the exported F16 weights, which the test loads
    scores = head_scores(shipped, h)
    best = max((v, layer, head) for layer, row in enumerate(scores['induction']) for head, v in enumerate(row))
    partner = max((v, head) for head, v in enumerate(scores['previous_token'][0]))
    second_copy, first_copy = copy_loss(shipped, h)
    summary = {'hyper': h, 'steps': args.steps, 'seconds': round(time.time() - started, 1), 'torch': torch.__version__,
               'threads': torch.get_num_threads(), 'final_train_loss': history[-1]['loss'],
               'scores': scores, 'offsets': offsets(shipped, h), 'induction_head': {'layer': best[1], 'head': best[2], 'score': best[0]},
               'previous_token_head': {'layer': 0, 'head': partner[1], 'score': partner[0]},
               'repeat_loss': {'first_copy': first_copy, 'second_copy': second_copy, 'ln_vocab': round(math.log(h['vocab_size']), 4)}}
    json.dump({'summary': summary, 'log': history}, open(f'{args.out}/training-log.json', 'w'), indent=1)
    print(json.dumps(summary), flush=True)


if __name__ == '__main__':
    main()

"""Train tiny-translator: a BART that turns human-written dates into ISO dates.

  /usr/bin/python3 train_translator.py --out ../tiny-translator --report work/translator-report --steps 3000

Steps: draw the held-out dates (seed 2) and the training dates (seed 1, none of whose sources
is held out) with dates.py; make the tokenizer's merges from the training sources; train the
BART of bart.py with teacher forcing (seeded, CPU, one thread); export config.json,
generation_config.json, model.safetensors (F16, hub names) and tokenizer.json; then, on the
exported F16 weights, measure greedy exact-match accuracy on the held-out dates and what each
cross-attention head looks at (heads.py), and write the reference numbers for attnlens.
"""
import argparse
import json
import os
import random
import time

os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
import torch  # noqa: E402 (after the thread settings)
import torch.nn.functional as F  # noqa: E402

import bart  # noqa: E402
import dates  # noqa: E402
import recipe  # noqa: E402
import translator_heads  # noqa: E402
from train import read_safetensors, write_safetensors  # noqa: E402

HYPER = dict(d_model=96, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
             encoder_ffn_dim=384, decoder_ffn_dim=384, max_position_embeddings=64, activation_function='gelu',
             scale_embedding=False, init_std=0.02, pad_token_id=1,
             train_examples=200_000, heldout_examples=2000, batch_size=64, lr=2e-3, min_lr=1e-4, warmup=100,
             weight_decay=0.01, grad_clip=1.0, seed=1234, threads=1)
TARGET_LENGTH = 12  # <s> + "YYYY-MM-DD" + </s>


def batches(tokenizer, pairs, pad):
    """(source [b, n] padded with pad, decoder inputs [b, 12] = </s> + labels[:-1], labels [b, 12])."""
    sources = [tokenizer.encode(s) for s, _ in pairs]
    width = max(map(len, sources))
    source = torch.tensor([s + [pad] * (width - len(s)) for s in sources])
    labels = torch.tensor([tokenizer.encode(t) for _, t in pairs])
    return source, torch.cat([torch.full((len(pairs), 1), 2), labels[:, :-1]], dim=1), labels


@torch.no_grad()
def evaluate(model, tokenizer, pairs, pad, chunk=500):
    """Teacher-forced loss and greedy exact-match accuracy; the greedy outputs."""
    loss, correct, outputs = 0.0, 0, []
    for start in range(0, len(pairs), chunk):
        part = pairs[start:start + chunk]
        source, inputs, labels = batches(tokenizer, part, pad)
        loss += F.cross_entropy(model(source, inputs).flatten(0, 1), labels.flatten(), reduction='sum').item()
        for (_, target), ids in zip(part, bart.greedy(model, source, TARGET_LENGTH)):
            text = tokenizer.decode(ids.tolist())
            outputs.append(text)
            correct += text == target
    return loss / (len(pairs) * TARGET_LENGTH), correct / len(pairs), outputs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--out', required=True)
    parser.add_argument('--report', required=True)
    parser.add_argument('--steps', type=int, default=3000)
    parser.add_argument('--set', action='append', default=[], help='name=value: override a HYPER entry')
    args = parser.parse_args()
    h = recipe.hyper(HYPER, args.set)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.report, exist_ok=True)
    torch.set_num_threads(h['threads'])
    torch.manual_seed(h['seed'])
    started = time.time()
    logfile = open(f'{args.report}/train.log', 'a')

    def log(text):
        print(text, flush=True)
        logfile.write(text + '\n')
        logfile.flush()

    heldout = dates.examples(2, h['heldout_examples'])
    train = dates.examples(1, h['train_examples'], exclude=frozenset(s for s, _ in heldout))
    tokenizer = dates.Tokenizer(dates.word_merges([s for s, _ in train]))
    h['vocab_size'] = len(tokenizer.vocab)
    log(f'vocabulary {h["vocab_size"]}, {len(train)} training and {len(heldout)} held-out dates '
        f'({time.time() - started:.1f} s)')

    model = bart.Bart(h)
    optimizer, schedule = recipe.optimizer(model, h, args.steps, (0.9, 0.98), no_decay=lambda n: 'embed_positions' in n)
    order, cursor, history, running = list(range(len(train))), 0, [], []
    rng = random.Random(h['seed'])
    rng.shuffle(order)
    check = heldout[:500]
    for step in range(1, args.steps + 1):
        if cursor + h['batch_size'] > len(order):
            rng.shuffle(order)
            cursor = 0
        source, inputs, labels = batches(tokenizer, [train[i] for i in order[cursor:cursor + h['batch_size']]],
                                         h['pad_token_id'])
        cursor += h['batch_size']
        loss = F.cross_entropy(model(source, inputs).flatten(0, 1), labels.flatten())
        running.append(recipe.step(loss, model, optimizer, schedule, h['grad_clip']))
        if step % 50 == 0 or step == args.steps:
            row = {'step': step, 'loss': round(sum(running) / len(running), 4), 'seconds': round(time.time() - started, 1)}
            running = []
            if step % 500 == 0 or step == args.steps:
                model.eval()
                row['heldout_loss'], row['heldout_exact'], _ = evaluate(model, tokenizer, check, h['pad_token_id'])
                model.train()
            history.append(row)
            log(json.dumps(row))
    train_seconds = time.time() - started

    # Export, then measure on the exported F16 weights (what attnlens will read).
    write_safetensors(f'{args.out}/model.safetensors', bart.hub_tensors(model))
    json.dump(bart.hub_config(h), open(f'{args.out}/config.json', 'w'), indent=2)
    json.dump(bart.generation_config(TARGET_LENGTH + 1), open(f'{args.out}/generation_config.json', 'w'), indent=2)
    json.dump(tokenizer.json(), open(f'{args.out}/tokenizer.json', 'w', encoding='utf-8'), ensure_ascii=False)
    shipped = bart.Bart(h)
    weights = read_safetensors(f'{args.out}/model.safetensors')
    shipped.load_state_dict({n: weights[n] for n in shipped.state_dict()})
    shipped.eval()
    heldout_loss, exact, outputs = evaluate(shipped, tokenizer, heldout, h['pad_token_id'])
    with open(f'{args.out}/heldout-sample.txt', 'w', encoding='utf-8') as f:
        f.write('# held-out date (never in training)\tISO date\tthe model\'s greedy output\n')
        for (source, target), output in list(zip(heldout, outputs))[:60]:
            f.write(f'{source}\t{target}\t{output}\n')
    heads = translator_heads.field_shares(shipped, tokenizer, heldout)
    json.dump(translator_heads.references(shipped, tokenizer, heldout[:4]),
              open(f'{args.report}/reference-attention.json', 'w'))
    summary = {'hyper': h, 'steps': args.steps, 'train_seconds': round(train_seconds, 1),
               'heldout_loss': round(heldout_loss, 5), 'heldout_exact_match': exact,
               'heldout_count': len(heldout), 'errors': [[s, t, o] for (s, t), o in zip(heldout, outputs) if o != t][:20],
               'cross_attention_fields': heads, 'torch': torch.__version__, 'threads': torch.get_num_threads(),
               'total_seconds': round(time.time() - started, 1)}
    json.dump({'summary': summary, 'log': history}, open(f'{args.report}/training-log.json', 'w'), indent=1)
    log(json.dumps(summary))


if __name__ == '__main__':
    main()

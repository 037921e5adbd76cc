"""Train the tiny English GPT-2 and export it as a Hugging Face folder.

  /usr/bin/python3 train.py --data work --out ../tiny-english --steps 6000

Steps: learn a byte-level BPE vocabulary on the training documents (bpe.py); encode the
documents into one stream, each document after an <|endoftext|>; train a GPT-2 in plain
torch on random 128-token windows (seeded, CPU, 2 threads); log the loss; export
config.json, model.safetensors (F16, Hugging Face GPT-2 names, Conv1D [in, out] weights)
and tokenizer.json; write the loss curve, the held-out loss and the wall time.
"""
import argparse
import json
import math
import os
import random
import struct
import time

# Two threads that sleep when idle: on a shared 2-core machine, OpenMP's default spin-waiting
# (and OpenBLAS's own threads beside it) made a step 4-7x slower than this setting.
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
import torch  # noqa: E402 (after the thread settings)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import bpe  # noqa: E402

HYPER = dict(vocab_size=1024, n_positions=128, n_embd=128, n_layer=4, n_head=4, layer_norm_epsilon=1e-5,
             batch_size=32, lr=2e-3, min_lr=2e-4, warmup=100, weight_decay=0.1, betas=(0.9, 0.95), grad_clip=1.0,
             seed=1234, threads=2, position_init='sinusoidal', order='shuffled', restate=0.0, restate_back=3,
             position_std=0.02, window=0)
# window: the training windows' length in tokens (0: n_positions)
# order: 'shuffled' documents (tiny-english), or 'grouped' (its successor): every WordNet
# sense of a lemma together, as a dictionary lists them, and the fortunes in their files'
# order, these groups shuffled. Nothing is added or copied; only the order changes, so a
# window holds the spans that naturally recur between neighbouring entries.
# restate: that share of the documents is followed by a restatement, a second copy of itself or
# of one of the restate_back - 1 documents before it (chosen at random), as a text may quote
# what it said a few paragraphs earlier: the copy sits a varying distance back, so only matching its tokens finds it.


# ---------------------------------------------------------------- the model
class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)   # x -> [q | k | v]
        self.c_proj = nn.Linear(d, d)

    def forward(self, x, return_weights=False):
        b, n, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (t.view(b, n, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        causal = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
        weights = scores.masked_fill(~causal, float('-inf')).softmax(dim=-1)
        out = self.c_proj((weights @ v).transpose(1, 2).reshape(b, n, d))
        return (out, weights) if return_weights else out


class Block(nn.Module):
    def __init__(self, d, heads, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate='tanh'))  # gelu_new


def sinusoids(positions, d):
    pos = torch.arange(positions, dtype=torch.float32)[:, None]
    rate = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)
    table = torch.zeros(positions, d)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * rate), torch.cos(pos * rate)
    return table


class GPT2(nn.Module):
    def __init__(self, h):
        super().__init__()
        d = h['n_embd']
        self.wte = nn.Embedding(h['vocab_size'], d)
        self.wpe = nn.Embedding(h['n_positions'], d)
        self.h = nn.ModuleList(Block(d, h['n_head'], h['layer_norm_epsilon']) for _ in range(h['n_layer']))
        self.ln_f = nn.LayerNorm(d, eps=h['layer_norm_epsilon'])
        # GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer).
        for name, p in self.named_parameters():
            if name.endswith('weight') and p.dim() == 2:
                std = 0.02 / math.sqrt(2 * h['n_layer']) if name.endswith('c_proj.weight') else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith('bias'):
                nn.init.zeros_(p)
        if h.get('position_init') == 'sinusoidal':
            # Still learned, but started from the sinusoids of "Attention Is All You Need"
            # (scaled to std position_std, by default the token embeddings' 0.02). A fixed offset such as
            # "the previous token" is then one linear map of the query's position code, so
            # previous-token heads form early; from N(0, 0.02) the 1300-step run had none.
            with torch.no_grad():
                self.wpe.weight.copy_(sinusoids(h['n_positions'], d) * (h.get('position_std', 0.02) / math.sqrt(0.5)))

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.h:
            x = block(x)
        # The LM head is tied to wte, unless the model was given its own (train_induction.py's untie).
        return self.ln_f(x) @ getattr(self, 'lm_head', self.wte.weight).T


# ---------------------------------------------------------------- export
def hf_tensors(model):
    """The state dict under Hugging Face GPT2LMHeadModel names; Conv1D stores [in, out]."""
    out = {}
    for name, p in model.state_dict().items():
        p = p.detach().float()
        hf = name.replace('.c_fc.', '.mlp.c_fc.')
        if '.attn.' not in name:
            hf = hf.replace('.c_proj.', '.mlp.c_proj.')
        if p.dim() == 2 and ('c_attn' in name or 'c_proj' in name or 'c_fc' in name):
            p = p.T.contiguous()
        out['transformer.' + hf] = p
    return out


def from_hf_tensors(model, tensors):
    """The inverse of hf_tensors (used to run torch on the exported F16 weights)."""
    state = {}
    for name in model.state_dict():
        hf = name.replace('.c_fc.', '.mlp.c_fc.')
        if '.attn.' not in name:
            hf = hf.replace('.c_proj.', '.mlp.c_proj.')
        p = tensors['transformer.' + hf].float()
        state[name] = p.T.contiguous() if p.dim() == 2 and any(s in name for s in ('c_attn', 'c_proj', 'c_fc')) else p
    model.load_state_dict(state)


def write_safetensors(path, tensors):
    """safetensors: u64 little-endian header length, a JSON header (padded with spaces to
    a multiple of 8), then the tensors' bytes back to back, here all F16 little-endian."""
    header, blobs, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for name, t in tensors.items():
        data = t.to(torch.float16).contiguous().numpy().astype('<f2').tobytes()
        header[name] = {'dtype': 'F16', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_safetensors(path):
    import numpy as np
    raw = open(path, 'rb').read()
    (size,) = struct.unpack('<Q', raw[:8])
    header = json.loads(raw[8:8 + size])
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == '__metadata__':
            continue
        s, e = info['data_offsets']
        assert info['dtype'] == 'F16'
        out[name] = torch.from_numpy(np.frombuffer(raw[base + s:base + e], dtype='<f2').astype('float32')
                                     .reshape(info['shape']))
    return out


def hf_config(h):
    return {
        'architectures': ['GPT2LMHeadModel'], 'model_type': 'gpt2',
        'vocab_size': h['vocab_size'], 'n_positions': h['n_positions'], 'n_ctx': h['n_positions'],
        'n_embd': h['n_embd'], 'n_layer': h['n_layer'], 'n_head': h['n_head'], 'n_inner': None,
        'activation_function': 'gelu_new', 'layer_norm_epsilon': h['layer_norm_epsilon'],
        'resid_pdrop': 0.0, 'embd_pdrop': 0.0, 'attn_pdrop': 0.0, 'initializer_range': 0.02,
        'tie_word_embeddings': True, 'scale_attn_weights': True,
        'bos_token_id': h['vocab_size'] - 1, 'eos_token_id': h['vocab_size'] - 1, 'torch_dtype': 'float16',
    }


# ---------------------------------------------------------------- data
def read_docs(path):
    with open(path, encoding='utf-8') as f:
        return [json.loads(line) for line in f]


def document_order(docs, order, seed):
    """The order in which the training documents are concatenated (see HYPER's order)."""
    import re
    if order == 'shuffled':
        out = list(range(len(docs)))
        random.Random(seed).shuffle(out)
        return out
    assert order == 'grouped', order
    entry = re.compile(r'^([^:,\n]+)[^:\n]*: ')  # a WordNet document opens "lemma, lemma: gloss"
    groups, by_lemma, fortunes = [], {}, None
    for i, doc in enumerate(docs):
        m = entry.match(doc)
        if m and '\n' not in doc:
            lemma = m.group(1).lower()
            if lemma not in by_lemma:
                by_lemma[lemma] = []
                groups.append(by_lemma[lemma])
            by_lemma[lemma].append(i)
            fortunes = None
        else:
            if fortunes is None or len(fortunes) == 16:  # runs of 16 consecutive fortunes of one file
                fortunes = []
                groups.append(fortunes)
            fortunes.append(i)
    random.Random(seed).shuffle(groups)
    return [i for g in groups for i in g]


def restated(order, share, back, seed):
    """order with, after that share of its documents, a copy of one of the `back` documents
    before (itself included); a copy is never copied again."""
    rng, out = random.Random(seed + 1), []
    for k, i in enumerate(order):
        out.append(i)
        if rng.random() < share:
            out.append(order[k - rng.randrange(min(back, k + 1))])
    return out


def stream(encoder, docs, eot):
    ids = []
    for doc in docs:
        ids.append(eot)
        ids.extend(encoder.encode(doc))
    return torch.tensor(ids, dtype=torch.long)


@torch.no_grad()
def heldout_loss(model, data, ctx, limit=None):
    """Mean next-token loss over consecutive ctx-token windows of the held-out stream."""
    n = (len(data) - 1) // ctx
    if limit:
        n = min(n, limit)
    total, count = 0.0, 0
    for start in range(0, n, 32):
        rows = range(start, min(n, start + 32))
        x = torch.stack([data[r * ctx:(r + 1) * ctx] for r in rows])
        y = torch.stack([data[r * ctx + 1:(r + 1) * ctx + 1] for r in rows])
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), reduction='sum')
        total += loss.item()
        count += y.numel()
    return total / count


@torch.no_grad()
def attention_maps(model, x):
    """Every layer's attention weights [batch, heads, n, n] for the token ids x [batch, n]."""
    h = model.wte(x) + model.wpe(torch.arange(x.shape[1]))
    maps = []
    for block in model.h:
        out, weights = block.attn(block.ln_1(h), return_weights=True)
        maps.append(weights)
        h = h + out
        h = h + block.c_proj(F.gelu(block.c_fc(block.ln_2(h)), approximate='tanh'))
    return maps


@torch.no_grad()
def previous_token_scores(model, data, ctx, windows=16):
    """Per layer and head, the mean attention from token i to token i-1 over the first
    held-out windows: a cheap look at whether a previous-token head has formed yet."""
    x = torch.stack([data[r * ctx:(r + 1) * ctx] for r in range(windows)])
    return [[round(weights[:, head].diagonal(offset=-1, dim1=-2, dim2=-1).mean().item(), 3)
             for head in range(weights.shape[1])] for weights in attention_maps(model, x)]


@torch.no_grad()
def induction_scores(model, vocab_size, length=30, sequences=8, seed=0):
    """Per layer and head, the induction score as head-scores.mjs measures it with attnlens:
    on <|endoftext|> + R + R (R random merged tokens), the mean attention from each token of
    the second copy to the token after its earlier copy. (Different random R than the guide's,
    so the numbers agree with it up to sampling.)"""
    gen = torch.Generator().manual_seed(seed)
    r = torch.randint(256, vocab_size - 1, (sequences, length), generator=gen)
    x = torch.cat([torch.full((sequences, 1), vocab_size - 1), r, r], dim=1)
    queries = torch.arange(length + 1, 2 * length + 1)
    return [[round(weights[:, head, queries, queries - length + 1].mean().item(), 3)
             for head in range(weights.shape[1])] for weights in attention_maps(model, x)]


def plot(log, path, heldout_points, h, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot([r['step'] for r in log], [r['loss'] for r in log], label='train (mean of 25 steps)', lw=1)
    ax.plot([s for s, _ in heldout_points], [v for _, v in heldout_points], 'o-', label='held-out', ms=3)
    ax.axhline(math.log(h['vocab_size']), color='gray', ls=':', label=f'ln V = {math.log(h["vocab_size"]):.2f}')
    ax.set_xlabel(f'step ({h["batch_size"]} x {h["n_positions"]} tokens)')
    ax.set_ylabel('cross-entropy (nats / token)')
    ax.set_title(title)
    ax.set_ylim(0, math.log(h['vocab_size']) + 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def heldout_sample(encoder, docs, max_chars, max_tokens):
    """Held-out documents short enough for one window, spread over the held-out set: half
    the characters from WordNet entries ("lemma: gloss"), half from fortunes."""
    import re
    entry = re.compile(r'^[^:\n]+: [^\n]*$')
    picked = []
    for want_entry in (True, False):
        size = 0
        for doc in docs[::3]:
            if bool(entry.match(doc)) != want_entry or '\n%\n' in doc or doc.strip() != doc:
                continue
            if size + len(doc) > max_chars // 2 or len(encoder.encode(doc)) > max_tokens:
                continue
            picked.append(doc)
            size += len(doc) + 3
    return picked


def write_sample(folder, sample):
    """Documents separated by a line holding only "%", as in the fortune files."""
    with open(f'{folder}/heldout-sample.txt', 'w', encoding='utf-8') as f:
        f.write('\n%\n'.join(sample) + '\n')


# ---------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', required=True, help='folder with train.jsonl and heldout.jsonl (prepare_data.py)')
    parser.add_argument('--out', required=True, help='the Hugging Face folder to write')
    parser.add_argument('--steps', type=int, required=True)
    parser.add_argument('--report', default=None, help='where to write the loss curve and training report')
    parser.add_argument('--sample-only', action='store_true', help='only (re)write <out>/heldout-sample.txt')
    parser.add_argument('--resume', action='store_true', help='go on from <report>/checkpoint.pt (written every 100 steps)')
    parser.add_argument('--export-only', action='store_true',
                        help='only export <report>/checkpoint.pt as <out> (to measure a run while it goes on)')
    parser.add_argument('--init', default=None, help='start from the weights of this exported folder (same shape)')
    parser.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                        help='override a hyperparameter for an experiment, e.g. --set batch_size=16 (recorded in the report)')
    args = parser.parse_args()
    h = dict(HYPER)
    for item in args.set:
        name, _, value = item.partition('=')
        if name not in h:
            parser.error(f'--set {item}: no hyperparameter {name!r}')
        h[name] = type(h[name])(value)
    report = args.report or args.out
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(report, exist_ok=True)
    torch.set_num_threads(h['threads'])
    torch.manual_seed(h['seed'])
    random.seed(h['seed'])
    started = time.time()
    log = lambda *a: print(f'[{time.time() - started:7.1f}s]', *a, flush=True)

    train_docs, held_docs = read_docs(f'{args.data}/train.jsonl'), read_docs(f'{args.data}/heldout.jsonl')
    # The merges depend only on the training documents and the size: kept beside the data, so a
    # --resume or a --sample-only run does not learn them again (minutes on a busy machine).
    cached = f'{args.data}/merges-{h["vocab_size"]}.json'
    if os.path.exists(cached):
        merges = [tuple(pair) for pair in json.load(open(cached, encoding='utf-8'))]
    else:
        merges = bpe.train(train_docs, h['vocab_size'], log=log)
        json.dump(merges, open(cached, 'w', encoding='utf-8'), ensure_ascii=False)
    bpe.write_tokenizer(f'{args.out}/tokenizer.json', merges)
    encoder = bpe.Encoder(merges)
    eot = encoder.vocab[bpe.END_OF_TEXT]
    assert eot == h['vocab_size'] - 1
    log(f'tokenizer: {len(encoder.vocab)} tokens')
    if args.sample_only:
        write_sample(args.out, heldout_sample(encoder, held_docs, max_chars=6000, max_tokens=h['n_positions']))
        return
    if args.export_only:
        model = GPT2(h)
        model.load_state_dict(torch.load(f'{report}/checkpoint.pt')['model'])
        write_safetensors(f'{args.out}/model.safetensors', hf_tensors(model))
        json.dump(hf_config(h), open(f'{args.out}/config.json', 'w'), indent=2)
        write_sample(args.out, heldout_sample(encoder, held_docs, max_chars=6000, max_tokens=h['n_positions']))
        return
    order = restated(document_order(train_docs, h['order'], h['seed']), h['restate'], h['restate_back'], h['seed'])
    train_data = stream(encoder, [train_docs[i] for i in order], eot)
    held_data = stream(encoder, held_docs, eot)
    log(f'data: {len(train_data)} train tokens, {len(held_data)} held-out tokens, '
        f'{sum(map(len, train_docs)) / len(train_data):.2f} chars/token')
    tokenize_seconds = time.time() - started

    model = GPT2(h)
    if args.init:
        from_hf_tensors(model, read_safetensors(f'{args.init}/model.safetensors'))
        log(f'weights from {args.init}')
    n_params = sum(p.numel() for p in model.parameters())
    log(f'model: {n_params} parameters')
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and 'wpe' not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.dim() == 2 and 'wpe' not in n)]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': h['weight_decay']},
                             {'params': no_decay, 'weight_decay': 0.0}], lr=h['lr'], betas=h['betas'])
    gen = torch.Generator().manual_seed(h['seed'])
    ctx, bs = h['window'] or h['n_positions'], h['batch_size']
    history, held_points, window = [], [], []
    train_started, first_step, checkpoint = time.time(), 1, f'{report}/checkpoint.pt'
    if args.resume and os.path.exists(checkpoint):
        saved = torch.load(checkpoint)
        model.load_state_dict(saved['model'])
        opt.load_state_dict(saved['opt'])
        gen.set_state(saved['gen'])
        history, held_points, first_step = saved['history'], saved['held_points'], saved['step'] + 1
        train_started -= saved['seconds']
        log(f'resumed after step {saved["step"]}')
    for step in range(first_step, args.steps + 1):
        lr = h['lr'] * step / h['warmup'] if step <= h['warmup'] else \
            h['min_lr'] + 0.5 * (h['lr'] - h['min_lr']) * (1 + math.cos(math.pi * (step - h['warmup']) / max(1, args.steps - h['warmup'])))
        for g in opt.param_groups:
            g['lr'] = lr
        starts = torch.randint(0, len(train_data) - ctx - 1, (bs,), generator=gen)
        x = torch.stack([train_data[s:s + ctx] for s in starts])
        y = torch.stack([train_data[s + 1:s + ctx + 1] for s in starts])
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), h['grad_clip'])
        opt.step()
        window.append(loss.item())
        if step % 25 == 0 or step == args.steps:
            row = {'step': step, 'loss': sum(window) / len(window), 'lr': lr, 'seconds': time.time() - train_started}
            window = []
            if step % 100 == 0 or step == args.steps:
                row['heldout'] = heldout_loss(model, held_data, ctx, limit=128)
                row['previous_token'] = previous_token_scores(model, held_data, ctx)
                row['induction'] = induction_scores(model, h['vocab_size'])
                held_points.append((step, row['heldout']))
            history.append(row)
            log(json.dumps(row))
            if step % 100 == 0:  # a checkpoint to --resume from if the run is stopped
                torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'gen': gen.get_state(), 'step': step,
                            'history': history, 'held_points': held_points, 'seconds': time.time() - train_started},
                           checkpoint)
    train_seconds = time.time() - train_started

    # Export, then run torch on the exported (F16-rounded) weights for the checks.
    tensors = hf_tensors(model)
    write_safetensors(f'{args.out}/model.safetensors', tensors)
    json.dump(hf_config(h), open(f'{args.out}/config.json', 'w'), indent=2)
    from_hf_tensors(model, read_safetensors(f'{args.out}/model.safetensors'))
    final_heldout = heldout_loss(model, held_data, h['n_positions'])
    sample = heldout_sample(encoder, held_docs, max_chars=6000, max_tokens=h['n_positions'])
    write_sample(args.out, sample)
    # Reference logits for check_export.mjs: a few sample documents through torch.
    checks = []
    with torch.no_grad():
        for doc in sample[:6]:
            ids = encoder.encode(doc)
            logits = model(torch.tensor([ids]))[0]
            checks.append({'text': doc, 'ids': ids, 'logits': [round(v, 5) for v in logits.flatten().tolist()]})
    json.dump(checks, open(f'{report}/reference-logits.json', 'w'))
    plot(history, f'{report}/loss-curve.png', held_points, h,
         f'{os.path.basename(os.path.normpath(args.out))}: GPT-2, {h["n_layer"]} layers x {h["n_head"]} heads, d {h["n_embd"]}')
    summary = {
        'hyperparameters': h, 'steps': args.steps, 'parameters': n_params,
        'train_tokens': len(train_data), 'heldout_tokens': len(held_data),
        'tokens_seen': args.steps * bs * ctx, 'epochs': args.steps * bs * ctx / len(train_data),
        'final_train_loss': history[-1]['loss'], 'heldout_loss_f16': final_heldout, 'ln_vocab': math.log(h['vocab_size']),
        'tokenizer_and_data_seconds': round(tokenize_seconds, 1), 'train_seconds': round(train_seconds, 1),
        'total_seconds': round(time.time() - started, 1), 'torch': torch.__version__, 'threads': torch.get_num_threads(),
    }
    json.dump({'summary': summary, 'log': history}, open(f'{report}/training-log.json', 'w'), indent=1)
    log(json.dumps(summary))


if __name__ == '__main__':
    main()

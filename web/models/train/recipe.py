"""What train_translator.py and train_induction.py share: HYPER overrides from the command
line, AdamW with weight decay on the matrices only, linear warm-up and cosine decay, and one
optimisation step with gradient clipping."""
import math

import torch


def hyper(defaults, overrides):
    """defaults updated by "name=value" strings, each value of its default's type."""
    h = dict(defaults)
    for item in overrides:
        name, value = item.split('=', 1)
        h[name] = type(h[name])(value)
    return h


def optimizer(model, h, steps, betas, no_decay=lambda name: False):
    """AdamW (weight decay h['weight_decay'] on matrices unless no_decay(name)) and its schedule:
    h['warmup'] linear warm-up steps, then cosine from h['lr'] to h['min_lr'] at `steps`."""
    decayed = [p for n, p in model.named_parameters() if p.dim() == 2 and not no_decay(n)]
    rest = [p for n, p in model.named_parameters() if not (p.dim() == 2 and not no_decay(n))]
    adamw = torch.optim.AdamW([{'params': decayed, 'weight_decay': h['weight_decay']},
                               {'params': rest, 'weight_decay': 0.0}], lr=h['lr'], betas=betas)
    schedule = torch.optim.lr_scheduler.LambdaLR(adamw, lambda s: min(1.0, (s + 1) / h['warmup']) * max(
        h['min_lr'] / h['lr'], 0.5 * (1 + math.cos(math.pi * s / max(1, steps)))))
    return adamw, schedule


def step(loss, model, adamw, schedule, clip):
    """One update from loss (gradients clipped to norm clip); returns the loss as a number."""
    adamw.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    adamw.step()
    schedule.step()
    return loss.item()

"""BART (transformers' model_type "bart") in plain torch, with the hub's module names.

The math of transformers' modeling_bart.py for BartForConditionalGeneration without dropout:
token embeddings times embed_scale (1: scale_embedding false) plus learned positions looked
up at position + 2 (BartLearnedPositionalEmbedding's offset), then layernorm_embedding; post-norm
layers (x = LayerNorm(x + sublayer(x))): the encoder's self-attention and feed-forward, the
decoder's causal self-attention, cross-attention over the encoder's output (encoder_attn) and
feed-forward; q scaled by head_dim^-0.5, biases on q, k, v and out projections; the LM head is
the shared embedding (tied) plus final_logits_bias. No final layer norm (that is mBART's).
Module names equal the hub's, so state_dict() keys are the checkpoint's tensor names.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

POSITION_OFFSET = 2
ACTIVATIONS = {'gelu': F.gelu, 'relu': F.relu}


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, memory, mask):
        """x [b, m, d] queries, memory [b, n, d] keys and values, mask broadcastable to
        [b, heads, m, n] (True = may attend). Returns the output and the weights."""
        b, m, d = x.shape
        n, hd = memory.shape[1], d // self.heads
        q = (self.q_proj(x) * hd ** -0.5).view(b, m, self.heads, hd).transpose(1, 2)
        k = self.k_proj(memory).view(b, n, self.heads, hd).transpose(1, 2)
        v = self.v_proj(memory).view(b, n, self.heads, hd).transpose(1, 2)
        weights = (q @ k.transpose(-2, -1)).masked_fill(~mask, float('-inf')).softmax(dim=-1)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(b, m, d)), weights


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['d_model']
        self.self_attn = Attention(d, c['encoder_attention_heads'])
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, c['encoder_ffn_dim']), nn.Linear(c['encoder_ffn_dim'], d)
        self.final_layer_norm = nn.LayerNorm(d)
        self.act = ACTIVATIONS[c['activation_function']]

    def forward(self, x, mask):
        h, weights = self.self_attn(x, x, mask)
        x = self.self_attn_layer_norm(x + h)
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x)))), weights


class DecoderLayer(EncoderLayer):
    def __init__(self, c):
        super().__init__(dict(c, encoder_attention_heads=c['decoder_attention_heads'], encoder_ffn_dim=c['decoder_ffn_dim']))
        self.encoder_attn = Attention(c['d_model'], c['decoder_attention_heads'])
        self.encoder_attn_layer_norm = nn.LayerNorm(c['d_model'])

    def forward(self, x, memory, self_mask, cross_mask):
        h, self_weights = self.self_attn(x, x, self_mask)
        x = self.self_attn_layer_norm(x + h)
        h, cross_weights = self.encoder_attn(x, memory, cross_mask)
        x = self.encoder_attn_layer_norm(x + h)
        return self.final_layer_norm(x + self.fc2(self.act(self.fc1(x)))), self_weights, cross_weights


class Stack(nn.Module):
    """BartEncoder / BartDecoder: embed_tokens (the shared table), embed_positions, layernorm_embedding, layers."""

    def __init__(self, c, shared, layer, count):
        super().__init__()
        self.embed_tokens = shared
        self.embed_positions = nn.Embedding(c['max_position_embeddings'] + POSITION_OFFSET, c['d_model'])
        self.layernorm_embedding = nn.LayerNorm(c['d_model'])
        self.layers = nn.ModuleList(layer(c) for _ in range(count))
        self.embed_scale = math.sqrt(c['d_model']) if c['scale_embedding'] else 1.0

    def embed(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device) + POSITION_OFFSET
        return self.layernorm_embedding(self.embed_tokens(ids) * self.embed_scale + self.embed_positions(positions))


class Inner(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.shared = nn.Embedding(c['vocab_size'], c['d_model'])
        self.encoder = Stack(c, self.shared, EncoderLayer, c['encoder_layers'])
        self.decoder = Stack(c, self.shared, DecoderLayer, c['decoder_layers'])


class Bart(nn.Module):
    """BartForConditionalGeneration: model.{shared, encoder, decoder}, lm_head, final_logits_bias."""

    def __init__(self, c):
        super().__init__()
        self.pad = c['pad_token_id']
        self.model = Inner(c)
        self.lm_head = nn.Linear(c['d_model'], c['vocab_size'], bias=False)
        self.lm_head.weight = self.model.shared.weight
        self.register_buffer('final_logits_bias', torch.zeros(1, c['vocab_size']))
        for name, p in self.named_parameters():  # BartPretrainedModel._init_weights: N(0, init_std), zero biases
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, c['init_std'])
            elif name.endswith('bias'):
                nn.init.zeros_(p)

    def encode(self, source):
        mask = (source != self.pad)[:, None, None, :]
        x, weights = self.model.encoder.embed(source), []
        for layer in self.model.encoder.layers:
            x, w = layer(x, mask)
            weights.append(w)
        return x, mask, weights

    def forward(self, source, target, return_attention=False):
        """Logits [b, m, vocab] for decoder inputs target given source; with return_attention
        also (encoder, decoder, cross) weights, one [b, heads, rows, columns] per layer."""
        memory, cross_mask, encoder_weights = self.encode(source)
        m = target.shape[1]
        causal = torch.ones(m, m, dtype=torch.bool, device=target.device).tril()[None, None]
        x, decoder_weights, cross_weights = self.model.decoder.embed(target), [], []
        for layer in self.model.decoder.layers:
            x, self_w, cross_w = layer(x, memory, causal, cross_mask)
            decoder_weights.append(self_w)
            cross_weights.append(cross_w)
        logits = self.lm_head(x) + self.final_logits_bias
        return (logits, (encoder_weights, decoder_weights, cross_weights)) if return_attention else logits


def hub_tensors(model):
    """Every tensor under its hub name, the tied table under each of its four names
    (model.shared, both stacks' embed_tokens and lm_head), as BART checkpoints list them."""
    tensors = {name: t.detach().float() for name, t in model.state_dict().items()}
    for name in ('model.encoder.embed_tokens.weight', 'model.decoder.embed_tokens.weight', 'lm_head.weight'):
        tensors[name] = tensors['model.shared.weight']
    return dict(sorted(tensors.items()))


def hub_config(c):
    """config.json as a BART checkpoint's, with dropout 0 (the model was trained without it)."""
    return {
        'architectures': ['BartForConditionalGeneration'], 'model_type': 'bart', 'is_encoder_decoder': True,
        'vocab_size': c['vocab_size'], 'd_model': c['d_model'], 'max_position_embeddings': c['max_position_embeddings'],
        'encoder_layers': c['encoder_layers'], 'encoder_attention_heads': c['encoder_attention_heads'],
        'encoder_ffn_dim': c['encoder_ffn_dim'], 'decoder_layers': c['decoder_layers'],
        'decoder_attention_heads': c['decoder_attention_heads'], 'decoder_ffn_dim': c['decoder_ffn_dim'],
        'num_hidden_layers': c['encoder_layers'], 'activation_function': c['activation_function'],
        'scale_embedding': c['scale_embedding'], 'add_bias_logits': False, 'add_final_layer_norm': False,
        'normalize_before': False, 'normalize_embedding': True, 'static_position_embeddings': False,
        'tie_word_embeddings': True, 'init_std': c['init_std'], 'dropout': 0.0, 'attention_dropout': 0.0,
        'activation_dropout': 0.0, 'classifier_dropout': 0.0, 'encoder_layerdrop': 0.0, 'decoder_layerdrop': 0.0,
        'bos_token_id': 0, 'pad_token_id': 1, 'eos_token_id': 2, 'decoder_start_token_id': 2,
        'forced_bos_token_id': 0, 'forced_eos_token_id': 2, 'use_cache': True, 'torch_dtype': 'float16',
        'transformers_version': '4.46.0',
    }


def generation_config(max_length):
    """generation_config.json: greedy decoding from </s>, <s> forced first, </s> at max_length."""
    return {'bos_token_id': 0, 'pad_token_id': 1, 'eos_token_id': 2, 'decoder_start_token_id': 2,
            'forced_bos_token_id': 0, 'forced_eos_token_id': 2, 'num_beams': 1, 'do_sample': False,
            'max_length': max_length, 'transformers_version': '4.46.0'}


@torch.no_grad()
def greedy(model, source, steps):
    """transformers' greedy generate for BART: decoder starts with </s> (decoder_start_token_id),
    <s> is forced at the first step, then argmax until </s> or steps tokens. Returns the
    generated ids (after the start id) per row."""
    b = source.shape[0]
    target = torch.full((b, 1), 2, dtype=torch.long)
    for step in range(steps):
        logits = model(source, target)[:, -1]
        next_id = torch.zeros(b, dtype=torch.long) if step == 0 else logits.argmax(-1)
        target = torch.cat([target, next_id[:, None]], dim=1)
        if step > 0 and bool((target == 2)[:, 1:].any(dim=1).all()):
            break
    return target[:, 1:]

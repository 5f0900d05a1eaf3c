"""A small PyTorch model for the recorder's tests: a one-layer decoder whose custom ops, registered
with torch.library under the namespace ``kvtest`` (CPU kernels, and meta kernels so it runs at real
model sizes without memory), stand for examples/minivllm's ops. Arguments carry the names of
minivllm's launcher parameters."""
from __future__ import annotations

import json
from pathlib import Path

import torch

LIB = torch.library.Library("kvtest", "DEF")
BLOCK_SIZE = 16

SCHEMAS = {
    "rms_norm": "rms_norm(Tensor(a!) out, Tensor input, Tensor weight, float epsilon) -> ()",
    "fused_add_rms_norm": "fused_add_rms_norm(Tensor(a!) input, Tensor(b!) residual, Tensor weight, float epsilon) -> ()",
    "silu_and_mul": "silu_and_mul(Tensor(a!) out, Tensor input) -> ()",
    "gelu_and_mul": "gelu_and_mul(Tensor(a!) out, Tensor input) -> ()",
    "rotary_embedding": "rotary_embedding(Tensor positions, Tensor(a!) query, Tensor(b!) key, int head_size, "
                        "Tensor cos_sin_cache) -> ()",
    "reshape_and_cache_flash": "reshape_and_cache_flash(Tensor key, Tensor value, Tensor(a!) key_cache, "
                               "Tensor(b!) value_cache, Tensor slot_mapping) -> ()",
    "static_scaled_int8_quant": "static_scaled_int8_quant(Tensor(a!) out, Tensor input, Tensor scale) -> ()",
    "dynamic_per_token_int8_quant": "dynamic_per_token_int8_quant(Tensor(a!) out, Tensor(b!) scales, Tensor input) -> ()",
}


def _rms(x, w, eps):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype) * w


def rms_norm(out, input, weight, epsilon):
    out.copy_(_rms(input, weight, epsilon))


def fused_add_rms_norm(input, residual, weight, epsilon):
    residual.add_(input)
    input.copy_(_rms(residual, weight, epsilon))


def silu_and_mul(out, input):
    d = input.shape[-1] // 2
    out.copy_(torch.nn.functional.silu(input[..., :d]) * input[..., d:])


def gelu_and_mul(out, input):
    d = input.shape[-1] // 2
    out.copy_(torch.nn.functional.gelu(input[..., :d]) * input[..., d:])


def rotary_embedding(positions, query, key, head_size, cos_sin_cache):
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)
    for t in (query, key):
        x = t.view(t.shape[0], -1, head_size)
        x1, x2 = x.chunk(2, dim=-1)
        x.copy_(torch.cat((x1 * cos[:, None] - x2 * sin[:, None], x2 * cos[:, None] + x1 * sin[:, None]), -1))


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping):
    keep = slot_mapping >= 0
    slots = slot_mapping[keep]
    key_cache.view(-1, *key_cache.shape[2:])[slots] = key[keep]
    value_cache.view(-1, *value_cache.shape[2:])[slots] = value[keep]


def static_scaled_int8_quant(out, input, scale):
    out.copy_((input / scale).round().clamp(-128, 127).to(torch.int8))


def dynamic_per_token_int8_quant(out, scales, input):
    scales.copy_(input.abs().amax(-1, keepdim=True).float() / 127)
    out.copy_((input / scales).round().clamp(-128, 127).to(torch.int8))


for _name, _schema in SCHEMAS.items():
    LIB.define(_schema)
    LIB.impl(_name, globals()[_name], "CPU")
    LIB.impl(_name, lambda *args, **kwargs: None, "Meta")
ops = torch.ops.kvtest


class TinyDecoder:
    """One decoder layer with the config's sizes: norm, rotary attention into a paged KV cache, a
    gated MLP (SiLU and GELU branches), int8 quantisation of the output."""

    def __init__(self, config: dict, device: str = "meta", dtype=None):
        from bot.manifest.configs import model_fields
        self.f, config_dtype = model_fields(config)
        dtype = dtype or getattr(torch, config_dtype or "bfloat16")
        self.config = config
        self.device, self.dtype = device, dtype
        f = self.f
        self.hidden, self.inter = f["hidden_size"], f["intermediate_size"]
        self.heads, self.kv_heads, self.head_dim = f["num_attention_heads"], f["num_key_value_heads"], f["head_dim"]
        self.rotary = "max_position_embeddings" in config and config.get("position_embedding_type") != "alibi"
        self.eps = f.get("rms_norm_eps", 1e-6)
        w = lambda *s: torch.ones(*s, device=device, dtype=dtype)
        self.norm_w = w(self.hidden)
        if self.rotary:
            self.cos_sin = w(f["max_position_embeddings"], self.head_dim)

    def forward(self, batch: int, seq_len: int, num_blocks: int) -> torch.Tensor:
        t = batch * seq_len
        dev, dt = self.device, self.dtype
        x = torch.ones(t, self.hidden, device=dev, dtype=dt)
        h = torch.empty_like(x)
        ops.rms_norm(h, x, self.norm_w, self.eps)
        q = torch.empty(t, self.heads * self.head_dim, device=dev, dtype=dt)
        k = torch.empty(t, self.kv_heads * self.head_dim, device=dev, dtype=dt)
        v = torch.empty(t, self.kv_heads * self.head_dim, device=dev, dtype=dt)
        if self.rotary:
            positions = torch.arange(seq_len, device=dev).repeat(batch)
            ops.rotary_embedding(positions, q, k, self.head_dim, self.cos_sin)
        cache = lambda: torch.zeros(num_blocks, BLOCK_SIZE, self.kv_heads, self.head_dim, device=dev, dtype=dt)
        key_cache, value_cache = cache(), cache()
        slots = torch.arange(t, device=dev) % (num_blocks * BLOCK_SIZE)
        ops.reshape_and_cache_flash(k.view(t, self.kv_heads, self.head_dim), v.view(t, self.kv_heads, self.head_dim),
                                    key_cache, value_cache, slots)
        ops.fused_add_rms_norm(h, x, self.norm_w, self.eps)
        gate_up = torch.ones(t, 2 * self.inter, device=dev, dtype=dt)
        act = torch.empty(t, self.inter, device=dev, dtype=dt)
        ops.silu_and_mul(act, gate_up)
        ops.gelu_and_mul(act, gate_up)
        q8 = torch.empty(t, self.hidden, device=dev, dtype=torch.int8)
        ops.static_scaled_int8_quant(q8, h, torch.ones(1, device=dev, dtype=torch.float32))
        scales = torch.empty(t, 1, device=dev, dtype=torch.float32)
        ops.dynamic_per_token_int8_quant(q8, scales, h)
        return h


def load(config_path: Path, **kw) -> TinyDecoder:
    return TinyDecoder(json.loads(Path(config_path).read_text()), **kw)

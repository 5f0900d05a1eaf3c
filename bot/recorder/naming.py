"""Naming recorded numbers after the model's config: 4096 is ``hidden_size``, 28672 is
``2 * intermediate_size``, 1024 is ``num_key_value_heads * head_dim``. Every name that fits is a
candidate, most likely first, the number itself last; recordings of several models keep the names
that fit all of them."""
from __future__ import annotations

import itertools

PREFERRED = ("hidden_size", "intermediate_size", "head_dim", "num_attention_heads", "num_key_value_heads",
             "max_position_embeddings", "num_experts", "num_experts_per_tok", "vocab_size", "kv_lora_rank",
             "qk_rope_head_dim", "moe_intermediate_size", "num_hidden_layers")
DOUBLED = ("intermediate_size", "hidden_size", "moe_intermediate_size")  # gate and up projections side by side
HEADS = ("num_attention_heads", "num_key_value_heads")  # heads times head_dim: a flattened q/k/v row
NUM_TOKENS = ("batch", "seq_len")


def int_candidates(value: int, fields: dict) -> list[str]:
    if abs(value) <= 1 or not fields:
        return [str(value)]
    ints = {k: v for k, v in fields.items() if isinstance(v, int) and not isinstance(v, bool) and "." not in k}
    order = [k for k in PREFERRED if k in ints] + sorted(k for k in ints if k not in PREFERRED)
    out = [k for k in order if ints[k] == value]
    out += [f"2 * {k}" for k in DOUBLED if ints.get(k) and 2 * ints[k] == value]
    out += [f"{h} * head_dim" for h in HEADS if ints.get(h) and ints.get("head_dim") and ints[h] * ints["head_dim"] == value]
    out.append(str(value))
    return list(dict.fromkeys(out))


def float_candidates(value: float, fields: dict) -> list[str]:
    out = [k for k, v in sorted(fields.items()) if isinstance(v, float) and v == value and "." not in k]
    return out + [repr(value)]


def monomial_text(term: tuple) -> str:
    if tuple(sorted(term)) == tuple(sorted(NUM_TOKENS)):
        return "num_tokens"
    return " * ".join(term)


def expression_candidates(terms: dict, fields: dict, limit: int = 24) -> list[str]:
    """Candidates for sum(coefficient * monomial): each coefficient named after the config."""
    parts = []
    for term, coeff in sorted(terms.items(), key=lambda tc: (-len(tc[0]), tc[0])):
        sign = "-" if coeff < 0 else "+"
        mag = abs(coeff)
        if not term:
            names = int_candidates(mag, fields)
            parts.append([(sign, n) for n in names])
            continue
        mono = monomial_text(term)
        if mag == 1:
            parts.append([(sign, mono)])
        else:
            parts.append([(sign, f"{mono} * {n}" if not n.isdigit() else f"{n} * {mono}")
                          for n in int_candidates(mag, fields)])
    if not parts:
        return ["0"]
    out = []
    for combo in itertools.islice(itertools.product(*parts), limit):
        text = ""
        for sign, t in combo:
            if not text:
                text = t if sign == "+" else f"-{t}"
            else:
                text += f" {sign} {_paren(t) if sign == '-' else t}"
        out.append(text)
    return out


def _paren(t: str) -> str:
    return f"({t})" if " + " in t or " - " in t else t

"""Model fields from Hugging Face config.json files: aliases, multimodal text configs, derived
fields, dtype."""
from __future__ import annotations

import json
from pathlib import Path

# Alias -> canonical field name (older and non-Llama architectures).
ALIASES = {
    "n_embd": "hidden_size", "d_model": "hidden_size", "dim": "hidden_size",
    "n_head": "num_attention_heads", "n_heads": "num_attention_heads", "num_heads": "num_attention_heads",
    "n_layer": "num_hidden_layers", "n_layers": "num_hidden_layers", "num_layers": "num_hidden_layers",
    "n_inner": "intermediate_size", "ffn_dim": "intermediate_size", "ffn_hidden_size": "intermediate_size",
    "multi_query_group_num": "num_key_value_heads", "n_kv_heads": "num_key_value_heads",
    "num_kv_heads": "num_key_value_heads", "n_routed_experts": "num_experts", "num_local_experts": "num_experts",
    "layer_norm_epsilon": "rms_norm_eps", "layer_norm_eps": "rms_norm_eps", "norm_eps": "rms_norm_eps",
    "norm_epsilon": "rms_norm_eps",
}
DTYPES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
          "float": "float32", "fp16": "float16", "bf16": "bfloat16"}


class ConfigError(ValueError):
    pass


def read_config(path: Path) -> tuple[dict, str | None]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"model config {path} does not exist") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"model config {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"model config {path} is not a JSON object")
    return model_fields(data)


def model_fields(data: dict) -> tuple[dict, str | None]:
    """Numeric fields of a config (top level, then ``text_config`` for what the top lacks), with
    aliases resolved and derived fields added. Also the dtype from torch_dtype, if given."""
    fields: dict = {}
    _collect(data, fields, "")
    text = data.get("text_config") or data.get("llm_config") or data.get("language_config")
    if isinstance(text, dict):
        sub: dict = {}
        _collect(text, sub, "")
        for k, v in sub.items():
            fields.setdefault(k, v)
            fields[f"text_config.{k}"] = v
    q = data.get("quantization_config")
    if isinstance(q, dict):
        for k, v in q.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                fields[f"quantization_config.{k}"] = v
    for alias, name in ALIASES.items():
        if alias in fields and name not in fields:
            fields[name] = fields[alias]
    heads = fields.get("num_attention_heads")
    if heads and "num_key_value_heads" not in fields:
        fields["num_key_value_heads"] = heads
    if heads and "head_dim" not in fields and "hidden_size" in fields and fields["hidden_size"] % heads == 0:
        fields["head_dim"] = fields["hidden_size"] // heads
    dtype = data.get("torch_dtype") or data.get("dtype")
    if dtype is None and isinstance(text, dict):
        dtype = text.get("torch_dtype")
    return fields, DTYPES.get(str(dtype).replace("torch.", "")) if dtype else None


def config_attrs(data: dict) -> dict:
    """Every scalar (and list of scalars) of a config by dotted name, strings and booleans included:
    what model conditions (``quantization_config.quant_method == 'fp8'``) read beside the fields."""
    out: dict = {}

    def walk(d: dict, prefix: str) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, f"{prefix}{k}.")
            elif isinstance(v, (str, int, float, bool)) or (isinstance(v, list) and all(
                    isinstance(x, (str, int, float, bool)) for x in v)):
                out[prefix + k] = v
    walk(data, "")
    text = data.get("text_config") or data.get("llm_config") or data.get("language_config")
    if isinstance(text, dict):
        for k, v in config_attrs(text).items():
            out.setdefault(k, v)
    return out


def read_config_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"model config {path} does not exist") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"model config {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"model config {path} is not a JSON object")
    return data


def _collect(data: dict, out: dict, prefix: str) -> None:
    for k, v in data.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        out[prefix + k] = v

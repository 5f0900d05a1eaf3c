"""Manifest loading: what a user sees for each mistake, config reading, instance expansion."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from analyzers import binding as B
from bot.manifest import ManifestError, expand, load
from bot.manifest.configs import model_fields

CONFIGS = Path(__file__).parent / "fixtures" / "models"


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "kernelvet.yaml"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


GOOD = f"""
version: 0
models:
  - config: {CONFIGS / 'MistralForCausalLM.json'}
    name: mistral
  - name: tiny
    fields: {{hidden_size: 64}}
    dtype: float16
ops:
  - name: rms_norm
    file: csrc/norm.cu
    args:
      out: {{shape: [num_tokens, hidden_size]}}
      weight: {{shape: [hidden_size]}}
      epsilon: {{value: 1e-6}}
"""


def errors_of(tmp_path: Path, text: str, expand_too: bool = False) -> list[str]:
    with pytest.raises(ManifestError) as exc:
        lm = load(write(tmp_path, text))
        if expand_too:
            expand(lm)
    return exc.value.errors


def test_valid_manifest_expands_to_one_instance_per_model(tmp_path):
    planned = expand(load(write(tmp_path, GOOD)))
    assert [(p.models, p.instance.dtype) for p in planned] == [(["mistral"], "bfloat16"), (["tiny"], "float16")]
    inst = planned[0].instance
    assert inst.arg("out").shape == (B.Name("num_tokens"), B.Num(4096))
    assert inst.model_fields == (("hidden_size", 4096),)
    # Only the dims the op uses are kept (num_tokens needs batch and seq_len).
    assert [d.name for d in inst.dims] == ["batch", "seq_len"]


def test_identical_instances_are_verified_once_for_every_model(tmp_path):
    text = GOOD.replace("fields: {hidden_size: 64}\n    dtype: float16", "fields: {hidden_size: 4096}\n    dtype: bfloat16")
    planned = expand(load(write(tmp_path, text)))
    assert len(planned) == 1
    assert planned[0].models == ["mistral", "tiny"]


@pytest.mark.parametrize("snippet, line, words", [
    ("version: 0\nmodels: []\n", 1, "'ops' is required"),
    (GOOD.replace("    file: csrc/norm.cu", "    file: csrc/norm.cu\n    lancher: rms"), 11, "unknown key 'lancher'"),
    (GOOD.replace("shape: [hidden_size]", "shape: hidden_size"), 13, "valid list"),
    (GOOD.replace("dtype: float16", "dtype: float12"), 7, "unknown dtype 'float12'"),
    ("version: 0\nmodels: [{name: m, fields: {a: 1}}]\nuser_dims: {batch: {min: 5, max: 1}}\nops: []\n", 3, "above max"),
    ("version: 2\nmodels: []\nops: []\n", 1, "version"),
    (GOOD.replace("  - name: tiny\n    fields: {hidden_size: 64}", "  - fields: {hidden_size: 64}"), 5, "needs a 'name'"),
])
def test_schema_errors_name_line_and_problem(tmp_path, snippet, line, words):
    errs = errors_of(tmp_path, snippet)
    assert any(f"kernelvet.yaml:{line}:" in e and words in e for e in errs), errs
    assert len(errs) == 1, errs  # one mistake, one message


def test_invalid_yaml_names_its_line(tmp_path):
    errs = errors_of(tmp_path, "version: 0\nmodels: [\n  - oops\nops: []\n")
    assert len(errs) == 1 and "kernelvet.yaml:" in errs[0] and "not valid YAML" in errs[0]


def test_missing_config_file(tmp_path):
    errs = errors_of(tmp_path, GOOD.replace(str(CONFIGS / "MistralForCausalLM.json"), "nowhere/config.json"))
    assert any("kernelvet.yaml:3:" in e and "does not exist" in e for e in errs), errs


@pytest.mark.parametrize("replace, expect_line, words", [
    (("shape: [hidden_size]", "shape: [hidden_sise]"), 13, "'hidden_sise' is not a user dim, a derived dim or a field of model"),
    (("shape: [hidden_size]", "shape: [hidden_size +]"), 13, "cannot parse expression"),
    (("shape: [hidden_size]", "shape: [__import__('os')]"), 13, "unsupported syntax"),
    (("epsilon: {value: 1e-6}", "epsilon: {value: 1e-6}\n    models: [mistral, llama]"), 15, "no model named 'llama'"),
])
def test_expansion_errors_name_line_and_problem(tmp_path, replace, expect_line, words):
    errs = errors_of(tmp_path, GOOD.replace(*replace), expand_too=True)
    assert any(f"kernelvet.yaml:{expect_line}:" in e and words in e for e in errs), errs


def test_a_field_one_model_lacks_is_an_error_for_that_model(tmp_path):
    text = GOOD.replace("shape: [hidden_size]}", "shape: [num_experts]}")
    errs = errors_of(tmp_path, text, expand_too=True)
    assert any("field of model 'mistral'" in e for e in errs) and any("field of model 'tiny'" in e for e in errs)


def test_config_aliases_text_config_and_derived_fields():
    gpt2 = {"n_embd": 768, "n_head": 12, "n_layer": 12, "n_inner": None, "torch_dtype": "float32"}
    fields, dtype = model_fields(gpt2)
    assert fields["hidden_size"] == 768 and fields["num_attention_heads"] == 12
    assert fields["num_key_value_heads"] == 12 and fields["head_dim"] == 64 and dtype == "float32"
    llava = {"text_config": {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                             "torch_dtype": "float16"}, "vision_config": {"hidden_size": 1024}}
    fields, dtype = model_fields(llava)
    assert fields["hidden_size"] == 4096 and fields["text_config.hidden_size"] == 4096
    assert fields["head_dim"] == 128 and dtype == "float16"
    mixtral = json.loads((CONFIGS.parent.parent.parent / "examples" / "minivllm" / "models" / "MistralForCausalLM.json")
                         .read_text())
    fields, _ = model_fields(mixtral)
    assert fields["num_key_value_heads"] == 8


@pytest.mark.parametrize("text, names", [
    ("batch * seq_len", {"batch", "seq_len"}),
    ("ceil_div(hidden_size, 8) * 8", {"hidden_size"}),
    ("text_config.hidden_size // 2", {"text_config.hidden_size"}),
    ("min(a, b) + max(c, 4)", {"a", "b", "c"}),
])
def test_binding_expressions(text, names):
    assert B.names(B.parse_expr(text)) == names


def test_substitution_folds_model_fields():
    e = B.substitute(B.parse_expr("num_tokens * (hidden_size // 8)"), {"hidden_size": 4096})
    assert e == B.BinOp("*", B.Name("num_tokens"), B.Num(512))

"""Recording a framework's own models: stand-in ops defined from schemas, numbers a framework
chooses per input size, blocks of a padded length, and the manifest ``kernelvet record
--framework`` writes from the models' runs (the framework itself lives in a recording
environment; here its per-model results are given)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
import yaml

from bot.commands import record_framework
from bot.recorder import Recorder
from bot.recorder import standins
from bot.recorder.intercept import Call, OpRecorder, ScalarRec, TensorRec

ROOT = Path(__file__).resolve().parent.parent
MIXTRAL = ROOT / "manifests" / "models" / "MixtralForCausalLM.json"
SCHEMAS = {
    "kvstand::norm_into": "norm_into(Tensor! result, Tensor input, Tensor weight, float epsilon) -> ()",
    "kvstand::supports_tiles": "supports_tiles(int capability) -> bool",
    "kvstand::fresh_output": "fresh_output(Tensor input) -> Tensor",
}


@pytest.fixture(scope="module")
def stand_ins():
    return standins.install(SCHEMAS, {"supports_tiles": True})


def test_stand_ins_are_defined_from_the_schema_when_python_looks_them_up(stand_ins):
    x = torch.empty(3, 8, device="meta")
    with OpRecorder(["kvstand"]) as rec:
        torch.ops.kvstand.norm_into(torch.empty_like(x), x, torch.empty(8, device="meta"), 1e-6)
    [call] = rec.calls
    assert call.op == "kvstand::norm_into"
    assert [n for n, _ in call.args] == ["result", "input", "weight", "epsilon"]
    assert call.args[0][1].shape == (3, 8) and call.args[3][1] == ScalarRec(1e-6)
    # A capability query answers what the adapter states; a CPU tensor call does nothing too.
    assert torch.ops.kvstand.supports_tiles(90) is True
    torch.ops.kvstand.norm_into(torch.zeros(2, 2), torch.ones(2, 2), torch.ones(2), 1e-6)
    assert {"kvstand::norm_into", "kvstand::supports_tiles"} <= set(stand_ins.defined)


def test_a_stand_in_never_invents_a_result_shape(stand_ins):
    # Without the framework's fake implementation, an op that returns a tensor cannot answer.
    with pytest.raises(NotImplementedError):
        torch.ops.kvstand.fresh_output(torch.empty(4, device="meta"))


def test_stand_ins_stay_out_of_other_namespaces_and_unknown_names(stand_ins):
    assert not hasattr(torch.ops.kvstand, "not_registered")
    lib = torch.library.Library("kvstand_python", "FRAGMENT")
    lib.define("norm_into(Tensor x) -> Tensor")  # a Python-defined op of the same name: not replaced
    assert "kvstand_python::norm_into" not in stand_ins.defined


def _align_call(tokens: int, topk: int, experts: int, block: int) -> Call:
    padded = tokens * topk + experts * (block - 1)
    return Call("kvstand::align_blocks", [
        ("topk_ids", TensorRec((tokens, topk), (topk, 1), True, "int32")),
        ("num_experts", ScalarRec(experts)),
        ("block_size", ScalarRec(block)),
        ("sorted_ids", TensorRec((padded,), (1,), True, "int32")),
        ("block_experts", TensorRec((-(-padded // block),), (1,), True, "int32")),
    ])


def test_a_number_chosen_per_size_becomes_a_user_dim_and_blocks_are_ceil_divisions():
    rec = Recorder(["kvstand"])
    recording = rec.start("mixtral", MIXTRAL)
    for batch in (1, 2, 3):
        for seq_len in (5, 8, 13):
            tokens = batch * seq_len
            block = 16 if tokens <= 16 else 32  # a tile the framework picks by token count
            rec.add_run(recording, {"batch": batch, "seq_len": seq_len}, [_align_call(tokens, 2, 8, block)])
    text = rec.manifest()
    doc = yaml.safe_load(text)
    assert doc["user_dims"] == {"block_size": {"values": [16, 32]}}
    [op] = doc["ops"]
    args = op["args"]
    assert args["block_size"] == "block_size"
    assert args["sorted_ids"]["shape"][0].replace(" ", "").startswith("num_tokens*num_experts_per_tok+block_size*")
    assert args["block_experts"]["shape"][0].startswith("ceil_div(num_tokens * num_experts_per_tok + block_size")
    assert "chosen per input size" in text and not rec.warnings


def test_a_number_with_many_values_and_no_fit_still_leaves_the_op_out():
    rec = Recorder(["kvstand"])
    recording = rec.start("mixtral", MIXTRAL)
    for tokens in range(1, 11):
        call = Call("kvstand::odd", [("n", ScalarRec(tokens * tokens + 7))])
        rec.add_run(recording, {"batch": 1, "seq_len": tokens}, [call])
    assert "op:" not in rec.manifest()
    assert any("fit no sum" in w for w in rec.warnings)


def test_record_framework_writes_the_models_it_recorded_and_names_the_ones_it_could_not(tmp_path, monkeypatch):
    runs = [({"batch": b, "seq_len": s}, [_align_call(b * s, 2, 8, 16)]) for b in (1, 2, 3) for s in (5, 8)]
    results = {"MixtralForCausalLM": {"runs": runs, "error": None, "dtype": "bfloat16",
                                      "notes": ["attention ops are not recorded"]},
               "Broken": {"runs": [], "error": "ValueError: no such architecture", "notes": []}}
    monkeypatch.setattr(record_framework, "registered_schemas", lambda root: {"kvstand::align_blocks": "x() -> ()"})
    monkeypatch.setattr(record_framework, "record_one", lambda fw, config, schemas, points, timeout, quantize=None:
                        results[config.stem])
    broken = tmp_path / "Broken.json"
    broken.write_text("{}")

    class Args:
        config = [str(MIXTRAL), str(broken)]
        configs = None
        model: list = []
        root = "."
        jobs = 2
        timeout = 10.0
        framework = "vllm"
        base = None
        keep_recording = None
        output = str(tmp_path / "recorded.yaml")
    code = record_framework.run_framework(Args, {"batch": [1, 2, 3], "seq_len": [5, 8]}, {}, {})
    text = (tmp_path / "recorded.yaml").read_text()
    assert code == 0
    assert "# 1 of 2 models recorded." in text
    assert "# Not recorded: Broken: ValueError: no such architecture" in text
    assert "# Note (1 models): attention ops are not recorded" in text
    doc = yaml.safe_load(text)
    assert [m["name"] for m in doc["models"]] == ["MixtralForCausalLM"] and doc["models"][0]["dtype"] == "bfloat16"
    assert [o["op"] for o in doc["ops"]] == ["align_blocks"]


def test_record_framework_refuses_a_program_and_missing_configs(tmp_path):
    import subprocess
    import sys
    run = lambda *a: subprocess.run([sys.executable, "-m", "bot.cli", "record", *a], cwd=ROOT,  # noqa: E731
                                    capture_output=True, text=True)
    r = run("--framework", "vllm", "-o", str(tmp_path / "x.yaml"), "--", "python", "x.py")
    assert r.returncode == 2 and "give no program" in r.stderr
    r = run("--framework", "vllm", "-o", str(tmp_path / "x.yaml"))
    assert r.returncode == 2 and "--config FILE or --configs DIR" in r.stderr
    r = run("--framework", "vllm", "--config", str(tmp_path / "none.json"), "-o", str(tmp_path / "x.yaml"))
    assert r.returncode == 2 and "no such config" in r.stderr and "Traceback" not in r.stderr


def _join_repo(tmp_path) -> Path:
    """A base manifest and a recording of three models, one of them the base's under another path."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "recorded-configs").mkdir()
    mixtral = MIXTRAL.read_text()
    (repo / "models" / "MixtralForCausalLM.json").write_text(mixtral)
    (repo / "recorded-configs" / "MixtralForCausalLM.json").write_text(mixtral)  # the same model elsewhere
    (repo / "recorded-configs" / "Qwen2MoeForCausalLM.json").write_text(
        (ROOT / "manifests" / "models" / "Qwen2MoeForCausalLM.json").read_text())
    (repo / "recorded-configs" / "Small.json").write_text(
        '{"architectures": ["MistralForCausalLM"], "hidden_size": 64, "intermediate_size": 128, '
        '"num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 100, '
        '"max_position_embeddings": 256, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16"}')
    (repo / "base.yaml").write_text("""version: 1
defines: {ENABLE_FP8: "1"}
models:
  - {config: models/MixtralForCausalLM.json, name: mixtral-8x7b}
user_dims:
  block_size: {values: [16, 32]}          # KV-cache block: not the recording's MoE tile
ops:
  - op: align_blocks
    args:
      topk_ids: {shape: [num_tokens, num_experts_per_tok], dtype: int32, values: [0, num_experts - 1]}
  - op: tile_rows
    models: has tile_count  # no model has it: the base binds tile_rows for none
    args:
      rows: {shape: [1], dtype: int32, values: [0, num_experts - 1]}
""")
    (repo / "recorded.yaml").write_text("""version: 1
models:
  - {config: recorded-configs/MixtralForCausalLM.json, name: MixtralForCausalLM, dtype: bfloat16}
  - {config: recorded-configs/Small.json, name: Small, dtype: bfloat16}
  - {config: recorded-configs/Qwen2MoeForCausalLM.json, name: Qwen2Moe, dtype: bfloat16}
user_dims:
  block_size: {values: [16, 64]}
ops:
  - op: align_blocks
    models: [MixtralForCausalLM, Qwen2Moe]
    args:
      topk_ids: {shape: [num_tokens, 2], dtype: int32}
  - op: tile_rows
    args:
      rows: {shape: ["ceil_div(num_tokens, block_size)"], dtype: int32}
""")
    return repo


def test_a_recording_joins_a_hand_written_base_which_wins_where_it_binds(tmp_path):
    from bot.manifest import load
    from bot.manifest.join import join
    repo = _join_repo(tmp_path)
    join(repo / "base.yaml", repo / "recorded.yaml", repo / "joined.yaml", header=["joined"])
    doc = yaml.safe_load((repo / "joined.yaml").read_text())
    assert doc["defines"] == {"ENABLE_FP8": "1"}
    assert [(m["name"], m["config"]) for m in doc["models"]] == [
        ("mixtral-8x7b", "models/MixtralForCausalLM.json"), ("Small", "recorded-configs/Small.json"),
        ("Qwen2Moe", "recorded-configs/Qwen2MoeForCausalLM.json")]
    [hand, hand_tile, recorded_align, tile] = doc["ops"]
    assert hand_tile["models"] == []
    assert hand["args"]["topk_ids"]["values"] == [0, "num_experts - 1"] and hand["models"] == ["mixtral-8x7b"]
    assert recorded_align["models"] == ["Qwen2Moe"]  # Mixtral is the base's: its binding wins
    # What the base states about the contents holds for the recorded binding too, where the names
    # it uses are every model's (Small has no experts: tile_rows takes nothing).
    assert recorded_align["args"]["topk_ids"] == {"shape": ["num_tokens", 2], "dtype": "int32",
                                                  "values": [0, "num_experts - 1"]}
    assert "values" not in tile["args"]["rows"]
    assert tile["models"] == ["mixtral-8x7b", "Small", "Qwen2Moe"]
    assert tile["args"]["rows"]["shape"] == ["ceil_div(num_tokens, tile_rows_block_size)"]
    assert doc["user_dims"]["block_size"] == {"values": [16, 32]}
    assert doc["user_dims"]["tile_rows_block_size"] == {"values": [16, 64]}
    loaded = load(repo / "joined.yaml")  # a valid manifest, every model's config read
    assert [m.name for m in loaded.models] == ["mixtral-8x7b", "Small", "Qwen2Moe"]


def test_an_op_first_called_at_a_larger_size_is_left_out_not_misaligned():
    rec = Recorder(["kvstand"])
    recording = rec.start("mixtral", MIXTRAL)
    for tokens in (5, 8, 13, 40):
        calls = [Call("kvstand::always", [("n", ScalarRec(tokens))])]
        if tokens > 10:  # a path the framework takes from this many tokens on
            calls.append(Call("kvstand::large_only", [("n", ScalarRec(tokens))]))
        rec.add_run(recording, {"batch": 1, "seq_len": tokens}, calls)
    doc = yaml.safe_load(rec.manifest())
    assert [o["op"] for o in doc["ops"]] == ["always"]
    assert any("large_only" in w and "called [0, 1] times" in w for w in rec.warnings)


def test_a_model_that_fails_is_reported_in_one_line_with_the_framework_line_and_no_temporary_path():
    from bot.recorder.frameworks import vllm as adapter
    adapter.MODEL_DIRS.append("/tmp/kernelvet-model-abc123")
    try:
        try:
            raise ValueError("1 validation error for ModelConfig\n  Value error, Can't load image processor for "
                             "'/tmp/kernelvet-model-abc123'. If you were trying ...\n more")
        except ValueError as exc:
            why = adapter._why(exc)
    finally:
        adapter.MODEL_DIRS.pop()
    assert why == "ValueError: Value error, Can't load image processor for the model. If you were trying ..."


def test_manifest_join_runs_again_from_a_kept_recording_and_refuses_a_bad_base(tmp_path):
    import subprocess
    import sys
    repo = _join_repo(tmp_path)
    (repo / "recorded.yaml").write_text("# Recorded with the vllm framework's own model classes\n"
                                        + (repo / "recorded.yaml").read_text())
    run = lambda *a: subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "join", *a], cwd=repo,  # noqa: E731
                                    capture_output=True, text=True)
    r = run("base.yaml", "recorded.yaml", "-o", "joined.yaml")
    assert r.returncode == 0, r.stderr
    text = (repo / "joined.yaml").read_text()
    assert text.startswith("# Generated: kernelvet manifest join base.yaml recorded.yaml\n"
                           "# Recorded with the vllm framework's own model classes\n")
    assert [o["op"] for o in yaml.safe_load(text)["ops"]] == ["align_blocks", "tile_rows", "align_blocks", "tile_rows"]
    (repo / "bad.yaml").write_text("version: 1\nmodels: []\nops:\n  - op: x\n    args: {a: {shape: [1], colour: red}}\n")
    r = run("bad.yaml", "recorded.yaml", "-o", "joined.yaml")
    assert r.returncode == 2 and "bad.yaml:5" in r.stderr and "Traceback" not in r.stderr
    r = run("base.yaml", "missing.yaml", "-o", "joined.yaml")
    assert r.returncode == 2 and "missing.yaml: no such manifest" in r.stderr


def test_quantized_variants_are_checkpoint_configs_named_after_their_preset(tmp_path, monkeypatch):
    import json
    asked = {}

    def record_one(fw, config, schemas, points, timeout, quantize=None):
        asked[config.name if quantize is None else f"{config.parent.name}/{config.name}"] = quantize
        runs = [({"batch": b, "seq_len": s}, [_align_call(b * s, 2, 8, 16)]) for b in (1, 2, 3) for s in (5, 8)]
        return {"runs": runs, "error": None, "dtype": "bfloat16", "notes": []}

    monkeypatch.setattr(record_framework, "registered_schemas", lambda root: {"kvstand::align_blocks": "x() -> ()"})
    monkeypatch.setattr(record_framework, "record_one", record_one)

    class Args:
        config = [str(MIXTRAL)]
        configs = None
        model: list = []
        root = "."
        jobs = 1
        timeout = 10.0
        framework = "vllm"
        base = None
        keep_recording = None
        quantize = "none,gptq-marlin"
        variants = None
        output = str(tmp_path / "recorded.yaml")
    assert record_framework.run_framework(Args, {"batch": [1, 2, 3], "seq_len": [5, 8]}, {}, {}) == 0
    # The variant is the config with the checkpoint's quantization_config, beside the manifest
    # that points at it; the model as it is is recorded too.
    variant = tmp_path / "models" / "quantized" / "gptq-marlin" / MIXTRAL.name
    config = json.loads(variant.read_text())
    assert config["quantization_config"]["quant_method"] == "gptq" and config["hidden_size"] == 4096
    assert asked == {MIXTRAL.name: None, f"gptq-marlin/{MIXTRAL.name}": "gptq-marlin"}
    doc = yaml.safe_load((tmp_path / "recorded.yaml").read_text())
    assert {m["name"]: m["config"] for m in doc["models"]} == {
        "MixtralForCausalLM": str(Path(os.path.relpath(MIXTRAL, tmp_path))),
        "MixtralForCausalLM@gptq-marlin": "models/quantized/gptq-marlin/MixtralForCausalLM.json"}
    # An unknown preset is refused before anything runs.
    Args.quantize = "awq"
    asked.clear()
    assert record_framework.run_framework(Args, {"batch": [1, 2, 3], "seq_len": [5, 8]}, {}, {}) == 2
    assert not asked

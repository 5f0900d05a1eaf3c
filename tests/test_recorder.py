"""The recorder: fitting recorded numbers, naming them after configs, and the done-criterion: the
recorded manifest of tests/recorder_model.py, scanned over examples/minivllm, reports the same
findings as the hand-written examples/minivllm/kernelvet.yaml for the same ops and models."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.recorder import Recorder
from bot.recorder.fit import fit
from bot.recorder.naming import expression_candidates, int_candidates

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"
MODELS = {"LLaMAForCausalLM": "llama-13b", "MistralForCausalLM": "mistral-7b", "Qwen2ForCausalLM": "qwen2-0.5b",
          "Gemma2ForCausalLM": "gemma2-9b", "JAISLMHeadModel": "jais-13b", "Phi3ForCausalLM": "phi3-mini"}
INDEX_RANGES = {"positions": [0, "max_position_embeddings - 1"],
                "slot_mapping": [-1, "num_blocks * 16 - 1", "distinct"]}  # one cache slot per token
GRID = [{"batch": b, "seq_len": s} for b in (1, 2, 3) for s in (5, 8)]


@pytest.mark.parametrize("values, expect", [
    ([4096 * p["batch"] * p["seq_len"] for p in GRID], {("batch", "seq_len"): 4096}),
    ([896 for _ in GRID], {(): 896}),
    ([p["seq_len"] - 1 for p in GRID], {("seq_len",): 1, (): -1}),
    ([p["batch"] * 2 + 3 for p in GRID], {("batch",): 2, (): 3}),
])
def test_fit_finds_the_fewest_integer_terms(values, expect):
    assert fit(GRID, values, ["batch", "seq_len"]) == expect


def test_fit_refuses_what_no_sum_of_dims_explains():
    # Three values of seq_len: a square is told apart from a line (two values fit any function).
    grid = [{"batch": b, "seq_len": s} for b in (1, 2) for s in (5, 8, 13)]
    assert fit(grid, [p["seq_len"] ** 2 for p in grid], ["batch", "seq_len"]) is None


def test_numbers_are_named_after_the_config():
    fields = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
              "head_dim": 128}
    assert int_candidates(4096, fields)[0] == "hidden_size"
    assert "num_attention_heads * head_dim" in int_candidates(4096, fields)
    assert int_candidates(28672, fields)[0] == "2 * intermediate_size"
    assert int_candidates(1, fields) == ["1"]
    assert expression_candidates({("batch", "seq_len"): 1024}, fields)[0] == "num_tokens * num_key_value_heads * head_dim"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    sys.path.insert(0, str(Path(__file__).parent))
    import recorder_model
    rec = Recorder(namespaces=["kvtest"], execute=False)
    t0 = time.perf_counter()
    for cfg, name in MODELS.items():
        model = recorder_model.load(EXAMPLE / "models" / f"{cfg}.json")
        rec.run(model.forward, sizes={"batch": [1, 2, 3], "seq_len": [5, 8], "num_blocks": [4, 7]}, model=name,
                config=EXAMPLE / "models" / f"{cfg}.json")
    out = tmp_path_factory.mktemp("rec") / "recorded.yaml"
    text = rec.manifest(out, values=INDEX_RANGES, ranges={"num_blocks": (1, 131072)})
    return out, text, time.perf_counter() - t0, rec


def findings(manifest: Path, cache: Path) -> dict:
    # The session's cache: an instance the recorded manifest describes exactly as the hand-written
    # one does has the same key (IR, instance), and is verified once.
    r = subprocess.run([sys.executable, "-m", "bot.cli", "scan", str(EXAMPLE), "--manifest", str(manifest),
                        "--format", "json", "--cache-dir", str(cache)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    assert report["summary"]["inconclusive"] == 0
    return {(f["location"]["file"], f["location"]["line"], f["check"]): sorted(f["models"]) for f in report["findings"]}


def test_recorded_bindings_reproduce_the_hand_written_findings(recorded, shared_cache):
    path, text, seconds, rec = recorded
    assert not rec.warnings
    assert "[num_tokens, 2 * intermediate_size]" in text  # gate and up, side by side
    assert "key_cache: [num_blocks, 16, num_key_value_heads, head_dim]" in text
    assert "epsilon: rms_norm_eps" in text
    hand = findings(EXAMPLE / "kernelvet.yaml", shared_cache)
    assert len(hand) == 6  # five planted bugs, and JAIS's misaligned vector read in gelu_and_mul
    assert findings(path, shared_cache) == hand


def test_recorded_manifest_is_valid_and_covers_every_model(recorded):
    path, text, _, _ = recorded
    r = subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "show", str(path), "--root", str(EXAMPLE),
                        "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)["instances"]
    rotary = {m for i in shown if i["op"] == "rotary_embedding" for m in i["models"]}
    assert rotary == {"mistral-7b", "qwen2-0.5b", "gemma2-9b", "phi3-mini"}  # LLaMA's config has no positions, JAIS uses ALiBi
    assert {m for i in shown for m in i["models"]} == set(MODELS.values())


def test_cpu_run_observes_index_values_and_flags_them():
    sys.path.insert(0, str(Path(__file__).parent))
    import recorder_model
    tiny = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "torch_dtype": "float32"}
    model = recorder_model.TinyDecoder(tiny, device="cpu")
    rec = Recorder(namespaces=["kvtest"])
    rec.run(model.forward, sizes={"batch": [1, 2], "seq_len": [3, 5], "num_blocks": [8, 9]}, model="tiny",
            fields={k: v for k, v in tiny.items() if k != "torch_dtype"})
    text = rec.manifest(None, ranges={"num_blocks": (1, 64)})
    assert "positions: {shape: [num_tokens], dtype: int64, values: [0, seq_len - 1]}" in text
    assert "# check: positions: value range observed" in text
    # One cache slot per token in every run: distinct (a scatter through it cannot race); positions
    # repeat across the sequences of a batch, so they are not.
    assert "slot_mapping: {shape: [num_tokens], dtype: int64, values: [0, num_tokens - 1], distinct: true}" in text
    assert "# check: slot_mapping: no two elements at or above 0 were equal in any run" in text


def test_declared_value_ranges_may_state_distinct():
    from bot.commands.record import _value_range
    assert _value_range("-1:num_slots - 1") == ["-1", "num_slots - 1"]
    assert _value_range("-1:num_slots - 1:distinct") == ["-1", "num_slots - 1", "distinct"]
    for bad in ("5", "0:", "0:7:sorted"):
        with pytest.raises(ValueError):
            _value_range(bad)


def test_record_command_runs_the_program_at_every_size(tmp_path):
    out = tmp_path / "rec.yaml"
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "bot.cli", "record", "--size", "batch=1,2", "--size", "seq_len=3,5",
                        "--config", str(EXAMPLE / "models" / "Qwen2ForCausalLM.json"), "--model", "qwen2-0.5b",
                        "--namespace", "kvtest", "--no-execute", "--values", "positions=0:max_position_embeddings-1",
                        "-o", str(out), "--",
                        sys.executable, str(ROOT / "tests" / "record_script.py")], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "4 runs" in r.stdout and "8 op bindings" in r.stdout, r.stdout
    text = out.read_text()
    assert "values: [0, max_position_embeddings-1]" in text
    r = subprocess.run([sys.executable, "-m", "bot.cli", "manifest", "check", str(out), "--root", str(EXAMPLE)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    print(f"record command: {time.perf_counter() - t0:.1f} s")

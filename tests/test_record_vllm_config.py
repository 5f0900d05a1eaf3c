"""The vLLM adapter's handling of what a recording environment lacks: config classes that only a
hub repository's code defined, configs without a model type, quantization methods vLLM dropped,
torchvision without its compiled extension, autocast on the meta device and pooling models
without logits. Transformers and vLLM are not installed here: the few names the adapter reads
from them are given by small stand-ins that behave as they do."""
from __future__ import annotations

import contextlib
import sys
import types
from types import SimpleNamespace

import pytest
import torch

from bot.recorder.frameworks import vllm as adapter
from bot.recorder.intercept import OpRecorder


class PretrainedConfig:
    """Transformers 5's base config, as far as the adapter depends on it: extra keyword arguments
    are kept as fields only at the end of ``__post_init__``, after the RoPE parameters are
    standardized (which reads ``max_position_embeddings``); ``attribute_map`` aliases names."""

    model_type = ""
    attribute_map: dict = {}

    def __init__(self, **kwargs):
        self.__post_init__(**kwargs)

    def __post_init__(self, **kwargs):
        kwargs.pop("torch_dtype", None)
        if kwargs.pop("rope_scaling", None) is not None:
            self.rope_parameters = {"original_max_position_embeddings": self.max_position_embeddings}
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __getattr__(self, key):
        alias = type(self).attribute_map.get(key)
        if alias is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{key}'")
        return getattr(self, alias)


class T5Config(PretrainedConfig):
    model_type = "t5"
    attribute_map = {"num_hidden_layers": "num_layers", "hidden_size": "d_model"}


class GPT2Config(PretrainedConfig):
    model_type = "gpt2"
    attribute_map = {"num_hidden_layers": "n_layer", "max_position_embeddings": "n_positions", "num_attention_heads": "n_head"}


class FalconLikeConfig(PretrainedConfig):
    attribute_map = {"num_key_value_heads": "num_attention_heads", "num_hidden_layers": "num_layers"}


class Qwen2Config(PretrainedConfig):
    model_type = "qwen2"


class Idefics2VisionConfig(PretrainedConfig):
    model_type = "idefics2_vision"


class Idefics2Config(PretrainedConfig):
    model_type = "idefics2"
    sub_configs = {"vision_config": Idefics2VisionConfig}


@pytest.fixture
def transformers_and_vllm(monkeypatch):
    """Stand-ins for the modules the adapter imports: Transformers' config mapping, model mapping
    and AutoConfig, vLLM's config registry and quantization methods."""
    mapping = {"t5": T5Config, "gpt2": GPT2Config, "falconlike": FalconLikeConfig, "qwen2": Qwen2Config,
               "idefics2": Idefics2Config}
    registered: dict = {}

    def register(model_type, cls):
        registered[model_type] = cls
        mapping[model_type] = cls

    modules = {
        "transformers": SimpleNamespace(PretrainedConfig=PretrainedConfig,
                                        AutoConfig=SimpleNamespace(register=register)),
        "transformers.models": SimpleNamespace(),
        "transformers.models.auto.configuration_auto": SimpleNamespace(CONFIG_MAPPING=mapping),
        "transformers.models.auto.modeling_auto": types.ModuleType("modeling_auto"),
        "vllm": SimpleNamespace(__version__="0.33.0"),
        "vllm.transformers_utils": SimpleNamespace(),
        "vllm.transformers_utils.config": SimpleNamespace(_CONFIG_REGISTRY={"deepseek_vl_v2": object}),
        "vllm.model_executor": SimpleNamespace(),
        "vllm.model_executor.layers": SimpleNamespace(),
        "vllm.model_executor.layers.quantization": SimpleNamespace(QUANTIZATION_METHODS=["awq", "fp8", "gptq"]),
    }
    modules["transformers.models.auto.modeling_auto"].MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = {
        "qwen2": "Qwen2ForCausalLM", "gpt2": "GPT2LMHeadModel"}
    modules["transformers.models.auto"] = SimpleNamespace(modeling_auto=modules["transformers.models.auto.modeling_auto"])
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(adapter, "NOTES_OF_MODEL", [])
    return registered


def test_a_hub_only_config_gets_the_aliases_transformers_knows_and_its_fields_before_rope(transformers_and_vllm):
    # Exaone's hub class aliases num_hidden_layers to num_layers; DeciLM's keeps
    # max_position_embeddings, which Transformers reads while it standardizes rope_scaling.
    config = {"model_type": "exaone", "architectures": ["ExaoneForCausalLM"], "num_layers": 32,
              "num_attention_heads": 32, "hidden_size": 4096, "max_position_embeddings": 4096,
              "rope_scaling": {"type": "linear", "factor": 2.0}, "rope_theta": 5e5,
              "auto_map": {"AutoConfig": "configuration_exaone.ExaoneConfig"}}
    adapter._known_config_type(config)
    cls = transformers_and_vllm["exaone"]
    assert "auto_map" not in config and not adapter.NOTES_OF_MODEL
    made = cls(**config)
    assert made.num_hidden_layers == 32  # T5's alias, the name vLLM's model code reads
    assert made.rope_parameters == {"original_max_position_embeddings": 4096}
    assert made.tie_word_embeddings is True  # Transformers 4's default, which the config omits
    # A standard name is never the target of an alias: this config's num_key_value_heads is unknown,
    # not its number of attention heads.
    with pytest.raises(AttributeError):
        made.num_key_value_heads
    assert cls.attribute_map == {"num_hidden_layers": "num_layers"}
    assert cls(**{**config, "tie_word_embeddings": False}).tie_word_embeddings is False
    # A model type Transformers or vLLM knows keeps its own class.
    adapter._known_config_type({"model_type": "gpt2"})
    adapter._known_config_type({"model_type": "deepseek_vl_v2"})
    assert set(transformers_and_vllm) == {"exaone"}


def test_sub_configs_become_the_classes_of_their_architecture_or_model_type(transformers_and_vllm):
    # InternVL-style configs keep the language model in llm_config (NVLM-D: a model_type of llama
    # with a Qwen2 architecture) and MiniCPM-V its vision tower as a dict of a composite model type.
    config = {"model_type": "nvlm_d", "llm_config": {"architectures": ["Qwen2ForCausalLM"], "model_type": "llama",
                                                    "num_attention_heads": 28},
              "vision_config": {"model_type": "idefics2", "hidden_size": 1152},
              "audio_config": {"model_type": "hub_only_audio", "d_model": 1280, "num_layers": 32},
              "quantization_config": {"quant_method": "awq", "bits": 4}}
    adapter._known_config_type(config)
    made = transformers_and_vllm["nvlm_d"](**config)
    assert type(made.llm_config) is Qwen2Config and made.llm_config.num_attention_heads == 28
    assert type(made.vision_config) is Idefics2VisionConfig and made.vision_config.hidden_size == 1152
    assert made.audio_config.model_type == "hub_only_audio" and made.audio_config.hidden_size == 1280
    assert made.audio_config.num_hidden_layers == 32
    assert made.quantization_config == {"quant_method": "awq", "bits": 4}  # vLLM reads it as a dict


def test_a_config_without_model_type_is_named_after_its_hub_config_class(transformers_and_vllm):
    assert adapter.hub_model_type({"AutoConfig": "configuration_minicpm.MiniCPMConfig"}, ["MiniCPMForCausalLM"]) \
        == "minicpm"
    assert adapter.hub_model_type({"AutoConfig": "org/repo--configuration_grok1.Grok1Config"}, []) == "grok1"
    assert adapter.hub_model_type(None, ["Qwen2ForCausalLM"]) == "qwen2"  # Transformers' own architecture
    assert adapter.hub_model_type(None, ["NoSuchModel"]) is None
    config = {"architectures": ["MiniCPMForCausalLM"], "num_hidden_layers": 40, "hidden_size": 2304,
              "auto_map": {"AutoConfig": "configuration_minicpm.MiniCPMConfig"}}
    adapter._known_config_type(config)
    assert config["model_type"] == "minicpm" and "auto_map" not in config
    assert "minicpm" in transformers_and_vllm
    assert adapter.NOTES_OF_MODEL == ["config without model_type: recorded as model_type 'minicpm' "
                                      "(named after its hub config class)"]
    unnamed = {"architectures": ["NoSuchModel"]}
    adapter._known_config_type(unnamed)
    assert "model_type" not in unnamed and len(adapter.NOTES_OF_MODEL) == 1


def test_a_quantization_method_vllm_dropped_is_recorded_unquantized_and_said_for_that_model(
        transformers_and_vllm, monkeypatch):
    bnb = {"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True}, "hidden_size": 8}
    assert adapter.unknown_quantization(bnb) == "bitsandbytes" and bnb == {"hidden_size": 8}
    awq = {"quantization_config": {"quant_method": "awq", "bits": 4}}
    assert adapter.unknown_quantization(awq) is None and awq["quantization_config"]["bits"] == 4
    assert adapter.unknown_quantization({"hidden_size": 8}) is None

    # The note reaches the result, named after the model (the header groups notes by their text).
    def build(config_path, dtype, recorder, quantization=None):
        adapter.NOTES_OF_MODEL.append("recorded unquantized: its quantization method 'bitsandbytes' is not one "
                                      "vLLM 0.33.0 has")
        raise ValueError("stopped here")
    monkeypatch.setattr(adapter, "prepare", lambda schemas, capability: SimpleNamespace(
        namespaces={"_C"}, defined=[], refused={}))
    monkeypatch.setattr(adapter, "build", build)
    result = adapter.record({"schemas": {}, "config": "/x/models/CohereForCausalLM.json", "points": []})
    assert result["error"] == "ValueError: stopped here"
    assert ("CohereForCausalLM: recorded unquantized: its quantization method 'bitsandbytes' is not one vLLM "
            "0.33.0 has") in result["notes"]


def test_torchvision_without_its_compiled_extension_imports(tmp_path, monkeypatch):
    # The build PyPI has links its extension against a CUDA build of torch: here it cannot load,
    # and torchvision's Python registers fake implementations of nms and qnms regardless.
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "_C.so").write_bytes(b"not a shared library")
    (package / "__init__.py").write_text(
        "import torch\n"
        "for op in ('nms', 'qnms'):\n"
        "    torch.library.register_fake(f'torchvision::{op}')(lambda dets, scores, iou_threshold: dets)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    try:
        assert adapter._torchvision_front_end_only() is True
        import torchvision  # noqa: F401 - it imports
        schema = str(torch.ops.torchvision.nms.default._schema)
        assert schema == "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"
        assert adapter._torchvision_front_end_only() is False  # imported already: nothing to do
    finally:
        sys.modules.pop("torchvision", None)


def test_no_torchvision_defines_nothing(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)] + [p for p in sys.path if "site-packages" not in p])
    assert adapter._torchvision_front_end_only() is False


def test_autocast_is_off_on_the_meta_device(monkeypatch):
    monkeypatch.setattr(torch, "is_autocast_enabled", torch.is_autocast_enabled)
    monkeypatch.setattr(torch.amp, "autocast", torch.amp.autocast)
    with pytest.raises(RuntimeError):  # what Nemotron's layer norm met
        torch.is_autocast_enabled("meta")
    adapter._no_autocast_on_meta()
    assert torch.is_autocast_enabled("meta") is False
    with torch.amp.autocast("meta", enabled=False):
        y = torch.nn.functional.layer_norm(torch.empty(3, 8, device="meta"), (8,))
    assert y.shape == (3, 8)
    # Other devices are asked as before.
    assert torch.is_autocast_enabled("cpu") is False
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        assert torch.is_autocast_enabled("cpu") is True
    assert torch.is_autocast_enabled("cpu") is False


class _Model:
    def __init__(self):
        self.logits = 0

    def __call__(self, input_ids, positions, intermediate_tensors, inputs_embeds):
        return torch.empty(input_ids.shape[0], 16, device="meta")

    def compute_logits(self, hidden):
        self.logits += 1
        raise RuntimeError("StageMissingLayer(stage_name='output') should not be called")


@pytest.mark.parametrize("runner_type", ["generate", "pooling"])
def test_a_pooling_model_runs_its_forward_pass_without_logits(runner_type, monkeypatch):
    forward_context = SimpleNamespace(set_forward_context=lambda *a, **k: contextlib.nullcontext())
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(forward_context=forward_context))
    monkeypatch.setitem(sys.modules, "vllm.forward_context", forward_context)
    config = SimpleNamespace(model_config=SimpleNamespace(runner_type=runner_type, uses_mrope=False))
    model = _Model()
    if runner_type == "pooling":  # a reward or classification model: vLLM left its LM head out
        adapter.forward(config, model, 6, OpRecorder([]))
        assert model.logits == 0
    else:
        with pytest.raises(RuntimeError, match="StageMissingLayer"):
            adapter.forward(config, model, 6, OpRecorder([]))
        assert model.logits == 1

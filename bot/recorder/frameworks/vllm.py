"""The vLLM adapter: build one model of a Hugging Face config with vLLM's own classes on the meta
device and record the custom-op calls of its forward pass at each token count.

How vLLM is made to run without its compiled extension and without a GPU:
- vLLM's compiled modules (``vllm._C``, ``vllm._moe_C``, ...) import as empty modules, so the ops
  Python calls are the stand-ins defined from the repository's schemas;
- the platform is CUDA with a stated compute capability (an H100's by default), so every choice
  vLLM makes by platform (which kernel, which dtype) is the one it makes on that GPU;
- the ops vLLM defines in Python (``torch.ops.vllm.*``: the MoE layer, attention, collectives) run
  their real implementation on meta tensors, under the recorder again (a dispatch mode does not see
  the calls made inside an op it intercepted), so the custom ops inside them are recorded; where the
  real one cannot run without a GPU, its fake implementation gives the output shapes and the
  adapter notes which op fell back and why;
- Triton kernels (not the repository's CUDA ops) are launched as no-ops: their outputs on the meta
  device have shapes and no values either way;
- the kernel-priority and distributed set-up a vLLM worker does before loading a model is done here
  the same way (one rank, gloo);
- the forward pass runs without attention metadata, as vLLM's own profiling run does: attention
  layers return before their backend runs, so the KV-cache and attention ops are not recorded (the
  adapter says so in its notes).

Run as ``python -m bot.recorder.frameworks.vllm REQUEST.json`` (what ``kernelvet record --framework
vllm`` starts, one process per model); the request names the schemas, the config, the points and
the output file.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import pickle
import socket
import sys
import tempfile
import traceback
import types

NOTES = ("attention layers run without metadata (as in vLLM's profiling run): KV-cache and attention ops "
         "are not recorded",)
# What the stand-ins of vLLM's capability queries answer: a CUDA build for an sm_90 GPU.
ANSWERS = {
    "cutlass_scaled_mm_supports_fp8": True,
    "cutlass_scaled_mm_supports_block_fp8": True,
    "cutlass_group_gemm_supported": True,
    "cutlass_scaled_mm_supports_fp4": False,
    "moe_permute_unpermute_supported": True,
}
# ... and for an sm_80 one (an A100): no FP8 tensor cores, no grouped CUTLASS GEMM.
ANSWERS_SM80 = dict(ANSWERS, cutlass_scaled_mm_supports_fp8=False, cutlass_scaled_mm_supports_block_fp8=False,
                    cutlass_group_gemm_supported=False)

# Quantized checkpoints of a model (kernelvet record --quantize): its config.json with the
# quantization_config that its quantized repositories on the Hub carry (GPTQ, 4 bits, groups of 128,
# as most are), the method vLLM is told to use (None: the one it picks) and the GPU's compute
# capability, which decides the kernel: Machete on an H100, Marlin on an A100. Not here, because
# their weight processing reads the weights' values, which the meta device has none of: AWQ (it
# unpacks the weights with numpy to repack them), FP8 (it compares scales with .item()) and the MoE
# layers of GPTQ checkpoints (numpy again); vLLM 0.33 runs GPTQ's own kernels only where neither
# Marlin nor Machete can (before sm_75).
_GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
QUANTIZED = {
    "gptq-marlin": (_GPTQ, None, (8, 0)),
    "gptq-machete": (_GPTQ, None, (9, 0)),
}


def quantized_config(config: dict, preset: str) -> dict:
    """``config`` as a checkpoint quantized by ``preset`` (QUANTIZED) would have it."""
    return dict(config, quantization_config=dict(QUANTIZED[preset][0]))


class _CompiledModulesAsEmpty(importlib.abc.MetaPathFinder):
    """vLLM's compiled extension modules import as empty modules: their ops come from stand-ins."""

    def find_spec(self, name, path, target=None):
        if not name.startswith("vllm."):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.origin and spec.origin.endswith(".so"):
                    return importlib.machinery.ModuleSpec(name, _EmptyModule())
                return None
        return None


class _EmptyModule(importlib.abc.Loader):
    def create_module(self, spec):
        return types.ModuleType(spec.name)

    def exec_module(self, module):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare(schemas: dict, capability: tuple = (9, 0)):
    """Stand-ins, the platform and the worker's set-up before any model is built."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    sys.meta_path.insert(0, _CompiledModulesAsEmpty())
    from bot.recorder import standins
    ops = standins.install(schemas, ANSWERS if capability >= (9, 0) else ANSWERS_SM80)
    _triton_launches_do_nothing()  # before vLLM asks whether Triton is there
    _torchvision_front_end_only()  # before an image processor imports torchvision
    import vllm.platforms as platforms
    from vllm.platforms.cuda import CudaPlatformBase
    from vllm.platforms.interface import DeviceCapability

    class RecordingCudaPlatform(CudaPlatformBase):
        dispatch_key = "Meta"  # vLLM's Python ops run on the meta tensors of the recording

        @classmethod
        def get_device_capability(cls, device_id: int = 0):
            return DeviceCapability(*capability)

        @classmethod
        def get_device_name(cls, device_id: int = 0) -> str:
            return "recording"

        @classmethod
        def get_device_total_memory(cls, device_id: int = 0) -> int:
            return 80 << 30

        @classmethod
        def get_device_uuid(cls, device_id: int = 0) -> str:
            return "recording"

        @classmethod
        def is_fully_connected(cls, physical_device_ids) -> bool:
            return True

        @classmethod
        def num_compute_units(cls, device_id: int = 0) -> int:
            return 132 if capability >= (9, 0) else 108  # an H100 SXM's SMs, an A100's

        @classmethod
        def is_integrated_gpu(cls, device_id: int = 0) -> bool:
            return False

    platforms._current_platform = RecordingCudaPlatform()
    import torch
    if not torch.accelerator.is_available():
        torch.accelerator.empty_cache = lambda: None  # nothing is cached on the meta device
    _python_ops_run_on_meta()
    _no_autocast_on_meta()
    import vllm.utils.torch_utils as torch_utils
    torch_utils.aux_stream = lambda: None  # no second CUDA stream: the shared experts run in order
    import vllm.model_executor.models.registry as registry
    # vLLM inspects some model classes in a fresh interpreter, to keep CUDA out of its own; that
    # interpreter would lack the stand-ins, and this process is the model's own already.
    registry._run_in_subprocess = lambda fn: fn()
    return ops


FALLBACKS: dict = {}  # vllm::op -> why its real implementation could not run (first reason)
NOTES_OF_MODEL: list = []  # what the recording changed of the model's config, for the header
MODEL_DIRS: list = []  # the temporary model folder, named as "the model" in messages
RECORDING: list = []  # the recorder of the forward pass in progress


@contextlib.contextmanager
def _recording(recorder):
    """``recorder`` records, and vLLM's Python ops enter it again for the calls they make inside."""
    RECORDING.append(recorder)
    try:
        with recorder:
            yield
    finally:
        RECORDING.pop()


def _triton_launches_do_nothing() -> None:
    try:
        import triton.runtime.autotuner as autotuner
        import triton.runtime.jit as jit
    except ImportError:
        return  # vLLM's placeholder stands in; a model needing Triton falls back to the fake
    from triton.backends import backends
    nvidia = backends.get("nvidia")
    if nvidia is not None and nvidia.driver is not None:
        nvidia.driver.is_active = staticmethod(lambda: True)  # so vLLM takes Triton as present
    jit.JITFunction.run = lambda self, *args, **kwargs: None
    autotuner.Autotuner.run = lambda self, *args, **kwargs: None
    autotuner.Heuristics.run = lambda self, *args, **kwargs: None


# The ops torchvision's Python front end registers fake implementations for unconditionally, with
# the schemas its compiled extension defines them with.
TORCHVISION_OPS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_TORCHVISION_LIB: list = []  # the library that defines them, kept alive


def _torchvision_front_end_only() -> bool:
    """torchvision imports without its compiled extension: the image processors vLLM's multimodal
    models load import its transforms, which are Python. A build whose extension cannot load here
    (the one PyPI has is linked against a CUDA build of torch) still imports once the ops its
    Python registers fake implementations for are defined; no image op runs in a recording.
    True when it defined them."""
    import importlib.util
    if "torchvision" in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec("torchvision")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin:
        return False
    import torch
    folder = os.path.dirname(spec.origin)
    for name in sorted(os.listdir(folder)):
        if name.startswith("_C.") and name.endswith((".so", ".pyd")):
            try:
                torch.ops.load_library(os.path.join(folder, name))
                return False  # the extension loads: it defines the ops itself
            except (OSError, ImportError, RuntimeError):
                break
    lib = torch.library.Library("torchvision", "FRAGMENT")
    for name, schema in TORCHVISION_OPS.items():
        if not _op_exists(f"torchvision::{name}"):
            lib.define(schema)
    _TORCHVISION_LIB.append(lib)
    return True


def _op_exists(qualname: str) -> bool:
    import torch
    try:
        torch._C._dispatch_find_schema_or_throw(qualname, "")
        return True
    except RuntimeError:
        return False


def _no_autocast_on_meta() -> None:
    """Autocast is off on the meta device, as it is on the GPU in vLLM's runs: torch knows no
    autocast for "meta" and raises where model code asks (Nemotron's layer norm asks the device of
    its input whether autocast is on, then turns it off around its kernel)."""
    import torch
    if getattr(torch.is_autocast_enabled, "recording", False):
        return
    is_enabled = torch.is_autocast_enabled

    def is_autocast_enabled(*args, **kwargs):
        device = args[0] if args else kwargs.get("device_type")
        return False if device == "meta" else is_enabled(*args, **kwargs)

    class autocast(torch.amp.autocast):  # noqa: N801 - the name model code uses
        def __init__(self, device_type, *args, **kwargs):
            self.on_meta = device_type == "meta"
            if not self.on_meta:
                super().__init__(device_type, *args, **kwargs)

        def __enter__(self):
            return None if self.on_meta else super().__enter__()

        def __exit__(self, *exc):
            return None if self.on_meta else super().__exit__(*exc)

    is_autocast_enabled.recording = True
    torch.is_autocast_enabled = is_autocast_enabled
    torch.amp.autocast = autocast


def _python_ops_run_on_meta() -> None:
    """vLLM's Python-defined ops registered for Meta with their real implementation, falling back
    to their fake implementation where the real one fails."""
    import vllm.utils.torch_utils as torch_utils

    register = torch_utils.direct_register_custom_op

    def register_for_meta(op_name, op_func, mutates_args=None, fake_impl=None, target_lib=None,
                          dispatch_key=None, tags=()):
        def real(*args, **kwargs):
            if RECORDING:
                with RECORDING[-1]:
                    return op_func(*args, **kwargs)
            return op_func(*args, **kwargs)

        impl = real
        if fake_impl is not None:
            def impl(*args, **kwargs):
                try:
                    return real(*args, **kwargs)
                except Exception as exc:  # noqa: BLE001 - a GPU-only step: the fake gives the shapes
                    FALLBACKS.setdefault(op_name, _why(exc))
                    return fake_impl(*args, **kwargs)

        impl.__signature__ = inspect.signature(op_func, eval_str=True)  # infer_schema reads it
        return register(op_name, impl, mutates_args, None, target_lib, "Meta", tags)

    torch_utils.direct_register_custom_op = register_for_meta


def build(config_path: str, dtype: str | None, recorder, quantization: str | None = None):
    """vLLM's config and model for one Hugging Face config.json, on the meta device, and its weights
    prepared as the loader prepares them (repacking included: ``recorder`` sees those calls).
    ``quantization``: the method vLLM is told to use for a quantized checkpoint (None: its choice)."""
    import torch
    import vllm
    import vllm.ir
    from vllm.config import CompilationConfig, LoadConfig, ModelConfig, VllmConfig, set_current_vllm_config
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.distributed.parallel_state import model_parallel_is_initialized
    from vllm.model_executor.model_loader.utils import initialize_model, process_weights_after_loading

    model_dir = tempfile.mkdtemp(prefix="kernelvet-model-")
    MODEL_DIRS.append(model_dir)
    config = json.loads(open(config_path).read())
    _known_config_type(config)
    dropped = unknown_quantization(config)
    if dropped:
        NOTES_OF_MODEL.append(f"recorded unquantized: its quantization method '{dropped}' is not one vLLM "
                              f"{vllm.__version__} has")
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(config, f)
    model_config = ModelConfig(model=model_dir, skip_tokenizer_init=True, enforce_eager=True,
                               dtype=dtype or "auto", trust_remote_code=False, quantization=quantization)
    vllm_config = VllmConfig(model_config=model_config, compilation_config=CompilationConfig(custom_ops=["all"]),
                             load_config=LoadConfig(load_format="dummy"))
    vllm_config.device_config.device = torch.device("meta")  # where vLLM places what it creates itself
    context = set_current_vllm_config(vllm_config)
    context.__enter__()
    if not model_parallel_is_initialized():
        init_distributed_environment(world_size=1, rank=0, local_rank=0, backend="gloo",
                                     distributed_init_method=f"tcp://127.0.0.1:{_free_port()}")
        initialize_model_parallel(1, 1)
    from vllm.v1.worker.workspace import init_workspace_manager
    init_workspace_manager(torch.device("meta"))
    # vLLM's ops that launch on their own stream (Marlin's GEMM) ask for one: with no CUDA, the
    # placeholder its CPU platform uses, so their real code runs (and the custom ops inside are
    # recorded) instead of their fake implementation.
    import vllm.utils.torch_utils as torch_utils
    torch_utils._current_stream_tls.value = torch_utils._StreamPlaceholder()
    vllm_config.kernel_config.ir_op_priority.set_default()
    vllm.ir.set_default_torch_wrap(vllm_config.compilation_config.ir_enable_torch_wrap)
    from vllm.utils.torch_utils import set_default_torch_dtype
    with set_default_torch_dtype(model_config.dtype):  # as vLLM's model loader builds it
        with torch.device("meta"):
            model = initialize_model(vllm_config)
        with _recording(recorder):
            process_weights_after_loading(model, model_config, torch.device("meta"))
    return vllm_config, model


def _known_config_type(config: dict) -> None:
    """A model type neither Transformers nor vLLM defines a config class for (one that lived in
    the hub repository's own code) gets a plain one (``recorded_config_class``). A config without a
    model type is given the one its hub config class is named after. ``config`` is changed in place:
    ``auto_map`` names the hub repository's own Python classes, which a recording without the hub
    lacks (vLLM's registry implements these architectures itself), and is dropped."""
    auto_map = config.pop("auto_map", None)
    if not isinstance(config.get("model_type"), str):
        model_type = hub_model_type(auto_map, config.get("architectures"))
        if model_type is None:
            return
        config["model_type"] = model_type
        NOTES_OF_MODEL.append(f"config without model_type: recorded as model_type '{model_type}' "
                              f"(named after its hub config class)")
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    from vllm.transformers_utils.config import _CONFIG_REGISTRY
    model_type = config["model_type"]
    if model_type in CONFIG_MAPPING or model_type in _CONFIG_REGISTRY:
        return
    AutoConfig.register(model_type, recorded_config_class(model_type, config))


def unknown_quantization(config: dict) -> str | None:
    """The quantization method of a config, if this vLLM has none of its name (one it dropped):
    the config's ``quantization_config`` is then removed, and the model is recorded unquantized."""
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
    quant = config.get("quantization_config")
    method = quant.get("quant_method") if isinstance(quant, dict) else None
    if not isinstance(method, str) or method in QUANTIZATION_METHODS:
        return None
    del config["quantization_config"]
    return method


def hub_model_type(auto_map, architectures) -> str | None:
    """The model type of a config that states none: the module of its hub config class
    (``configuration_minicpm.MiniCPMConfig``: ``minicpm``), else the one Transformers gives its
    architecture."""
    name = auto_map.get("AutoConfig") if isinstance(auto_map, dict) else None
    if isinstance(name, str) and "." in name:
        module = name.rpartition("--")[2].rpartition(".")[0].rpartition(".")[2]
        if module.startswith("configuration_") and len(module) > len("configuration_"):
            return module[len("configuration_"):]
    for arch in architectures or []:
        known = architecture_model_type(arch)
        if known:
            return known
    return None


def architecture_model_type(arch: str) -> str | None:
    """The model type Transformers implements an architecture (a model class name) for."""
    from transformers.models.auto import modeling_auto
    for mapping in vars(modeling_auto).values():
        if isinstance(mapping, dict) and mapping and all(isinstance(k, str) for k in mapping):
            for model_type, names in mapping.items():
                if arch == names or (isinstance(names, (tuple, list)) and arch in names):
                    return model_type
    return None


# Keyword arguments PretrainedConfig.__post_init__ consumes itself (it does not keep them as fields).
_CONSUMED = {"torch_dtype", "rope_scaling", "rope_theta", "partial_rotary_factor", "name_or_path",
             "output_attentions", "attn_implementation", "experts_implementation", "per_layer_config",
             "_commit_hash", "num_labels"}
# Sub-config fields vLLM reads as dicts.
_DICT_FIELDS = {"quantization_config", "rope_scaling", "rope_parameters", "compression_config"}


def recorded_config_class(model_type: str, config: dict):
    """A config class for a model type only a hub repository's code defined: exactly the config's
    fields, no defaults, with what the hub class gives every model of its kind:
    - the standard names Transformers' own config classes alias to the names this config uses
      (``num_hidden_layers`` for ``num_layers``: their ``attribute_map``), where the config lacks
      the standard name;
    - every field set before Transformers standardizes the RoPE parameters (which reads
      ``max_position_embeddings``);
    - ``tie_word_embeddings`` true where the config does not say;
    - sub-configs (``llm_config``, ``vision_config``: a dict with ``_config`` in its name) as config
      objects, of the class Transformers has for their architecture or model type."""
    from transformers import PretrainedConfig

    def __post_init__(self, **kwargs):
        for key, value in list(kwargs.items()):
            if isinstance(value, dict) and key.endswith("_config") and key not in _DICT_FIELDS:
                kwargs[key] = sub_config(key, value)
        for key, value in kwargs.items():
            if key not in _CONSUMED:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(self, key, value)
        PretrainedConfig.__post_init__(self, **kwargs)

    name = "Recorded" + "".join(part.title() for part in model_type.replace("-", "_").split("_")) + "Config"
    # Transformers 4 gave every config tie_word_embeddings=True, so configs written then omit it
    # where it holds; Transformers 5 leaves it to each model's class.
    return type(name, (PretrainedConfig,), {"model_type": model_type, "attribute_map": config_aliases(config),
                                            "__post_init__": __post_init__, "tie_word_embeddings": True})


def sub_config(key: str, data: dict):
    """A sub-config dict as the config object its hub class made of it: the class Transformers has
    for its architecture (an ``llm_config`` of ``Qwen2ForCausalLM``: ``Qwen2Config``) or model type
    (the vision part of a composite class where the key names one), else a recorded class."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    data = dict(data)
    model_type = None
    for arch in data.get("architectures") or []:
        model_type = architecture_model_type(arch)
        if model_type:
            break
    model_type = model_type or data.get("model_type")
    if isinstance(model_type, str) and model_type in CONFIG_MAPPING:
        cls = CONFIG_MAPPING[model_type]
        parts = getattr(cls, "sub_configs", None) or {}
        if key in parts and isinstance(parts[key], type):
            cls = parts[key]
        data.pop("model_type", None)
        return cls(**data)
    data.pop("auto_map", None)
    cls = recorded_config_class(model_type if isinstance(model_type, str) else key, data)
    data.pop("model_type", None)
    return cls(**data)


def config_aliases(config: dict) -> dict:
    """``attribute_map`` for a recorded config: standard name -> this config's name, from the
    aliases Transformers' config classes declare, for the standard names the config lacks. Where
    classes alias one standard name to several names the config has, the most common wins. A name
    that is itself a standard one is never a target (``num_key_value_heads`` is not
    ``num_attention_heads`` in general)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    counts: dict = {}
    for model_type in list(CONFIG_MAPPING.keys()):
        try:
            cls = CONFIG_MAPPING[model_type]
        except Exception:  # noqa: BLE001 - a class that needs a missing package
            continue
        for standard, own in (getattr(cls, "attribute_map", None) or {}).items():
            counts.setdefault(standard, {}).setdefault(own, 0)
            counts[standard][own] += 1
    aliases = {}
    for standard, owns in sorted(counts.items()):
        if standard in config:
            continue
        present = [o for o in owns if o in config and o not in counts]
        if present:
            aliases[standard] = max(sorted(present), key=owns.get)
    return aliases


def forward(vllm_config, model, num_tokens: int, recorder) -> None:
    """One forward pass over ``num_tokens`` tokens and the logits, as vLLM's model runner calls them
    (a pooling model: the forward pass)."""
    import torch
    from vllm.forward_context import set_forward_context

    ids = torch.zeros(num_tokens, dtype=torch.long, device="meta")
    if vllm_config.model_config.uses_mrope:
        positions = torch.zeros(3, num_tokens, dtype=torch.long, device="meta")
    else:
        positions = torch.zeros(num_tokens, dtype=torch.long, device="meta")
    with set_forward_context(None, vllm_config, num_tokens=num_tokens), _recording(recorder):
        hidden = model(input_ids=ids, positions=positions, intermediate_tensors=None, inputs_embeds=None)
        if isinstance(hidden, tuple):
            hidden = hidden[0]
        # A pooling model (reward, classification) has no logits: vLLM's runner pools its hidden
        # states with metadata a profiling run does not build, and its LM head is left out.
        pooling = vllm_config.model_config.runner_type == "pooling"
        if not pooling and hasattr(model, "compute_logits") and isinstance(hidden, torch.Tensor):
            model.compute_logits(hidden)


def record(request: dict) -> dict:
    """The request's model at each of its points: ``{"runs": [(point, calls)], "error", "dtype",
    "defined", "refused", "notes"}``; runs done before an error are kept."""
    from bot.recorder.intercept import OpRecorder

    result = {"runs": [], "error": None, "dtype": None, "defined": [], "refused": {}, "notes": list(NOTES)}
    ops = None
    try:
        preset = request.get("quantize")
        _, method, capability = QUANTIZED[preset] if preset else (None, None, (9, 0))
        ops = prepare(request["schemas"], capability)
        # Calls made while the weights are prepared do not depend on the input: every run has them.
        loading = OpRecorder(sorted(ops.namespaces), execute=True)
        vllm_config, model = build(request["config"], request.get("dtype"), loading, method)
        result["dtype"] = str(vllm_config.model_config.dtype).replace("torch.", "")
        for point in request["points"]:
            num_tokens = 1
            for v in point.values():
                num_tokens *= v
            recorder = OpRecorder(sorted(ops.namespaces), execute=True)
            forward(vllm_config, model, num_tokens, recorder)
            result["runs"].append((point, loading.calls + recorder.calls))
    except BaseException as exc:  # noqa: BLE001 - the model's failure is reported, the others go on
        result["error"] = _why(exc)
    if ops is not None:
        result["defined"], result["refused"] = ops.defined, ops.refused
    result["notes"] += [f"vllm::{op} ran its fake implementation: {why}" for op, why in sorted(FALLBACKS.items())]
    model = os.path.splitext(os.path.basename(request["config"]))[0]  # as the manifest names it
    result["notes"] += [f"{model}: {note}" for note in NOTES_OF_MODEL]
    return result


def _why(exc: BaseException) -> str:
    """One line: the exception and the innermost frame of vLLM's code that raised it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/vllm/" in f.filename]
    where = ""
    if frames:
        f = frames[-1]
        where = f" (at {f.filename[f.filename.rindex('/vllm/') + 1:]}:{f.lineno})"
    lines = [x.strip() for x in str(exc).strip().splitlines() if x.strip()]
    if len(lines) > 1 and "validation error" in lines[0]:
        lines = lines[1:]  # pydantic's header; the reason is below
    text = lines[0] if lines else ""
    for folder in MODEL_DIRS:
        text = text.replace(f"'{folder}'", "the model").replace(folder, "the model")
    return f"{type(exc).__name__}: {text[:300]}{where}"


def main(argv: list[str]) -> int:
    request = json.loads(open(argv[0]).read())
    result = record(request)
    with open(request["out"], "wb") as f:
        pickle.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""kernelvet repro and kernelvet confirm without a GPU: the reproducers of the example's findings
parse, allocate exactly the witness's shapes and fit the memory bound (or say they do not); confirm
reads compute-sanitizer's reports (a fake sanitizer stands in) into the JSON report, the SARIF log
and the review comment."""
from __future__ import annotations

import ast
import json
import os
import runpy
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bot.repro.sanitizer import parse

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "minivllm"
FIXTURES = ROOT / "tests" / "fixtures"


def kernelvet(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          env=env)


@pytest.fixture(scope="module")
def example_repros(tmp_path_factory, shared_cache):
    """The example's JSON report and SARIF log, and a reproducer per finding with a 16 GiB bound."""
    tmp = tmp_path_factory.mktemp("repro")
    report, sarif, out = tmp / "kernelvet.json", tmp / "kernelvet.sarif", tmp / "repro"
    r = kernelvet("scan", str(EXAMPLE), "--json", str(report), "--sarif", str(sarif), "--cache-dir", str(shared_cache))
    assert r.returncode == 1, r.stderr
    r = kernelvet("repro", "--all", "--report", str(report), "--root", str(EXAMPLE), "--out", str(out),
                  "--memory-gib", "16")
    assert r.returncode == 0, r.stderr
    return report, sarif, out


def _constants(script: Path) -> dict:
    return runpy.run_path(str(script), run_name="kernelvet_repro_test")


def _by_fingerprint(out: Path) -> dict:
    index = json.loads((out / "index.json").read_text())
    return {e["fingerprint"]: out / e["dir"] for e in index["reproducers"]}


def test_every_finding_gets_a_reproducer_with_the_witness_shapes(example_repros):
    report_path, _, out = example_repros
    report = json.loads(report_path.read_text())
    dirs = _by_fingerprint(out)
    assert set(dirs) == {f["fingerprint"] for f in report["findings"]}
    seen = set()
    for f in report["findings"]:
        script = dirs[f["fingerprint"]] / "repro.py"
        ast.parse(script.read_text())  # it is Python
        g = _constants(script)
        w, call = f["witness"], g["CALL"]
        shapes = {a["name"]: a["shape"] for a in call["args"] if a["kind"] == "tensor"}
        op = f["ops"][0]
        assert g["KIND"] == "torch-op" and g["LAUNCHER"] == op
        n = w["num_tokens"]
        if op in ("gelu_and_mul", "silu_and_mul"):
            d = w["model.intermediate_size"]
            assert shapes == {"out": [n, d], "input": [n, 2 * d]}
        elif op == "fused_add_rms_norm":
            h = w["model.hidden_size"]
            assert shapes == {"input": [n, h], "residual": [n, h], "weight": [h]}
            eps = next(a for a in call["args"] if a["name"] == "epsilon")
            assert eps["value"] == w["model.rms_norm_eps"] and eps["float"]
        elif op in ("dynamic_per_token_int8_quant", "static_scaled_int8_quant"):
            h = w["model.hidden_size"]
            assert shapes["out"] == [n, h] and shapes["input"] == [n, h]
            assert next(a for a in call["args"] if a["name"] == "out")["dtype"] == "int8"
        else:
            raise AssertionError(f"unexpected op {op}")
        seen.add(op)
        assert g["SOURCES"][0] == f["call"]["file"] and (EXAMPLE / g["SOURCES"][0]).is_file()
        assert (script.parent / g["ROOT"]).resolve() == EXAMPLE.resolve()
    assert {"gelu_and_mul", "fused_add_rms_norm", "dynamic_per_token_int8_quant"} <= seen


def test_allocations_fit_the_bound_or_the_reproducer_says_it_cannot_run(example_repros):
    report_path, _, out = example_repros
    report = json.loads(report_path.read_text())
    dirs = _by_fingerprint(out)
    bound = 16 << 30
    runnable = too_large = 0
    for f in report["findings"]:
        desc = json.loads((dirs[f["fingerprint"]] / "repro.json").read_text())
        shapes = [a for a in f["call"]["args"] if a["kind"] == "tensor"]
        size = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1}
        expected = sum(size[a["dtype"]] * __import__("math").prod(a["shape"]) for a in shapes)
        assert desc["device_bytes"] == expected
        if expected <= bound:
            assert desc["runnable"], desc
            runnable += 1
        else:
            too_large += 1
            assert not desc["runnable"] and "more than the bound of 16.0 GiB" in desc["not_runnable"]
            # Run, it says so instead of building anything (no GPU, no torch extension needed).
            r = subprocess.run([sys.executable, str(dirs[f["fingerprint"]] / "repro.py")], capture_output=True,
                               text=True)
            assert r.returncode == 3 and "not runnable:" in r.stdout and "GiB of GPU memory" in r.stdout
        assert desc["use_sanitizer"] == (expected <= 1 << 30)
    assert runnable >= 2 and too_large >= 2  # the vector tail and the token guard; the 32-bit row offsets


def test_a_static_only_check_says_why_a_sanitizer_can_stay_silent(example_repros):
    report_path, _, out = example_repros
    report = json.loads(report_path.read_text())
    for f in report["findings"]:
        desc = json.loads((_by_fingerprint(out)[f["fingerprint"]] / "repro.json").read_text())
        if f["check"] == "narrowing":
            assert "stay inside the allocation" in desc["static_only"]
        elif f["check"] == "oob":
            assert desc["static_only"] is None


def _fake(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


MEMCHECK_ERROR = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at 0x1f0 in /repo/csrc/activation_kernels.cu:57:void act_and_mul_kernel<float>(float*, const float*, int)
=========     by thread (682,0,0) in block (0,0,0)
=========     Address 0x7f3a2c000d54 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3a2c000000 of size 54612 bytes
=========
========= ERROR SUMMARY: 1 error
"""
MEMCHECK_CLEAN = "========= COMPUTE-SANITIZER\nran without a CUDA error\n========= ERROR SUMMARY: 0 errors\n"


def test_confirm_records_the_sanitizer_outcome_in_the_report_sarif_and_review(example_repros, tmp_path):
    report_path, sarif_path, out = example_repros
    report, sarif = tmp_path / "k.json", tmp_path / "k.sarif"
    report.write_text(report_path.read_text())
    sarif.write_text(sarif_path.read_text())
    python = _fake(tmp_path / "python", "exit 0\n")  # the build step: nothing to build here
    (tmp_path / "error.txt").write_text(MEMCHECK_ERROR)
    (tmp_path / "clean.txt").write_text(MEMCHECK_CLEAN)
    # The fake sanitizer reports the vector tail's read (activation_kernels.cu) and nothing elsewhere.
    sanitizer = _fake(tmp_path / "compute-sanitizer",
                      'for a; do last="$a"; done\n'  # the reproducer is the last argument
                      f'case "$*" in *"--padding 1048576"*) ;; *) echo "memcheck runs without padding"; exit 9;; esac\n'
                      f'if grep -q activation_kernels "$last"; then cat {tmp_path}/error.txt; '
                      f'exit 1; fi\ncat {tmp_path}/clean.txt\n')
    r = kernelvet("confirm", "--repro", str(out), "--report", str(report), "--sarif", str(sarif),
                  "--sanitizer", sanitizer, "--python", python)
    assert r.returncode == 0, r.stderr
    data = json.loads(report.read_text())
    status = {(f["location"]["file"].rsplit("/", 1)[-1], f["location"]["line"], f["check"]): f["confirmation"]
              for f in data["findings"]}
    oob = status[("activation_kernels.cu", 57, "oob")]
    assert oob["status"] == "confirmed" and oob["tool"] == "memcheck"
    assert "Invalid __global__ read of size 4 bytes" in oob["detail"] and "activation_kernels.cu:57" in oob["detail"]
    token = status[("quant_kernels.cu", 37, "oob")]
    assert token["status"] == "not-reproduced" and "clean under memcheck" in token["detail"]
    rows = [v for (f, _, c), v in status.items() if f == "layernorm_kernels.cu"]
    assert rows and all(v["status"] == "not-runnable" and "16.0 GiB" in v["detail"] for v in rows)
    # The misaligned vector load's witness fails at the next line first: confirmed, and it says where.
    misaligned = status[("activation_kernels.cu", 56, "misaligned")]
    assert misaligned["status"] == "confirmed" and "does not name the finding's line" in misaligned["detail"]
    assert "does not name" not in oob["detail"]
    assert "2 confirmed, 2 not reproduced, 2 not runnable, of 6" in r.stdout
    # SARIF: a property and a tag on each result.
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    tags = {res["partialFingerprints"]["kernelvetFinding/v1"]: res["properties"] for res in results}
    confirmed = [p for p in tags.values() if p["confirmation"]["status"] == "confirmed"]
    assert confirmed and all("confirmed" in p["tags"] for p in confirmed)
    assert all(p["confirmation"]["status"] in p["tags"] for p in tags.values())
    # The review comment carries the badge, the sanitizer's words as code.
    from bot.github.render import comment_body
    f = next(f for f in data["findings"] if f["confirmation"]["status"] == "confirmed")
    body = comment_body(f, f["location"]["line"])
    assert "**confirmed** by compute-sanitizer memcheck" in body and "`1 error(s); first: Invalid" in body
    g = next(f for f in data["findings"] if f["confirmation"]["status"] == "not-runnable")
    assert "not runnable" in comment_body(g, g["location"]["line"])


def test_confirm_without_a_sanitizer_says_not_runnable(example_repros, tmp_path):
    _, _, out = example_repros
    python = _fake(tmp_path / "python", "exit 0\n")
    r = kernelvet("confirm", "--repro", str(out), "--sanitizer", str(tmp_path / "absent-sanitizer"),
                  "--python", python)
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "confirmations.json").read_text())
    for fp, d in _by_fingerprint(out).items():
        desc, c = json.loads((d / "repro.json").read_text()), results[fp]
        if desc["runnable"] and desc["use_sanitizer"]:
            assert c["status"] == "not-runnable" and "is not installed here" in c["detail"], c
        elif desc["runnable"]:  # too large for a sanitizer: the run alone judges (here, a clean exit)
            assert c["status"] == "not-reproduced" and c["tool"] == "none", c


def test_a_failing_build_is_not_runnable_with_its_error(example_repros, tmp_path):
    _, _, out = example_repros
    python = _fake(tmp_path / "python", 'echo "error: identifier \\"half2\\" is undefined" >&2; exit 2\n')
    r = kernelvet("confirm", "--repro", str(out), "--python", python, "--sanitizer", "true")
    assert r.returncode == 0, r.stderr
    results = json.loads((out / "confirmations.json").read_text())
    built = [c for c in results.values() if "16.0 GiB" not in c["detail"]]
    assert built and all(c["status"] == "not-runnable" and "the build failed" in c["detail"]
                         and "half2" in c["detail"] for c in built)


PTXAS_LOG = """[1/3] /usr/local/cuda/bin/nvcc ... -D__CUDA_NO_HALF_CONVERSIONS__ -c op_module.cu -o op_module.cuda.o
csrc/quantization/fp4/nvfp4_utils.cuh(238): error: no suitable conversion function from "__half" to "float" exists
2 errors detected in the compilation of "op_module.cu".
ninja: build stopped: subcommand failed.

(built again with the half-precision operators)
[1/3] /usr/local/cuda/bin/nvcc ... -gencode=arch=compute_90a,code=sm_90a -c op_module.cu -o op_module.cuda.o
ptxas /tmp/op_module.ptx, line 477; error   : Instruction 'cvt with .e2m1x2' not supported on .target 'sm_90a'
ptxas /tmp/op_module.ptx, line 478; error   : Instruction 'cvt with .e2m1x2' not supported on .target 'sm_90a'
ptxas fatal   : Ptx assembly aborted due to errors
[2/3] /opt/gcc/bin/g++ -MMD -MF op_binding.o.d -fPIC -std=c++17 -O1 -c op_binding.cpp -o op_binding.o
ninja: build stopped: subcommand failed.
Traceback (most recent call last):
subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 255.
"""


def test_a_failing_build_names_the_compiler_error_of_its_last_attempt(tmp_path):
    """Built twice (without, then with the half-precision operators), the reproducer fails the
    second time in ptxas: the kernel's PTX needs a newer GPU than the card's. The confirmation says
    that, not the build tool's last lines or the first attempt's error."""
    from bot.repro.confirm import confirm_one

    d = tmp_path / "r"
    d.mkdir()
    (d / "repro.json").write_text(json.dumps({"tool": "memcheck", "use_sanitizer": True, "runnable": True,
                                              "hangs": False, "runtime_copy": False}))
    (tmp_path / "log.txt").write_text(PTXAS_LOG)
    python = _fake(tmp_path / "python", f"cat {tmp_path}/log.txt >&2; exit 2\n")
    c = confirm_one(d, python, "true", 60)
    assert c.status == "not-runnable"
    assert c.detail.startswith("the build failed: ptxas: Instruction 'cvt with .e2m1x2' not supported on .target "
                               "'sm_90a' (2 errors)"), c.detail
    assert "ninja" not in c.detail and "__half" not in c.detail


def test_a_bare_kernel_reproducer_launches_the_witness_shape(tmp_path):
    """A bare kernel's reproducer is a CUDA harness: its buffers at the bound sizes, its launch at the
    witness's grid and block."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan
    from bot.repro.scripts import write

    report = to_dict(run_fixture(load_fixture(FIXTURES / "bare" / "bin_counts_shared_too_small.cu"), tmp_path))
    (f,) = report["findings"]
    r = plan(f)
    assert r.kind == "kernel" and r.not_runnable is None and r.tool == "memcheck"
    write(r, f, tmp_path / "repro", FIXTURES)
    g = _constants(tmp_path / "repro" / "repro.py")
    source = g["harness_source"]()
    launch = next(ln for ln in source.splitlines() if "<<<" in ln)
    block = next(a["value"] for a in f["call"]["args"] if a["name"] == "__kv_block_x")
    assert launch.strip().startswith("bin_counts<<<dim3(1LL, 1LL, 1LL), dim3(%dLL, 1LL, 1LL)" % block), launch
    assert source.count("cudaMalloc") == sum(1 for a in f["call"]["args"] if a["kind"] == "buffer")


def test_sanitizer_reports_are_read_per_tool():
    m = parse(MEMCHECK_ERROR)
    assert m.errors == 1 and m.at == ("/repo/csrc/activation_kernels.cu", 57) and m.first.startswith("Invalid")
    assert parse(MEMCHECK_CLEAN).errors == 0 and not parse(MEMCHECK_CLEAN).found
    race = parse("========= Error: Race reported between Write access at 0x2a0 in /r/k.cu:24:reduce(float*)\n"
                 "=========     and Read access at 0x310 in /r/k.cu:27:reduce(float*) [248 hazards]\n"
                 "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    assert race.errors == 1 and race.at == ("/r/k.cu", 24) and "Write access" in race.first
    warn = parse("========= Warning: Race reported between Write access at 0x2a0 in /r/k.cu:24:k()\n"
                 "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n")
    assert warn.errors == 0 and warn.warnings == 1 and warn.first.startswith("warning: race") and warn.at == ("/r/k.cu", 24)
    waw = parse("========= Error: (Warp Level Programming) Potential WAW hazard detected at __shared__ 0xa20 in block "
                "(0,0,0) :\n=========     Write Thread (98,0,0) at void k<128>(__half *)+0x490 in /r/slices.cu:28\n"
                "=========     Write Thread (97,0,0) at void k<128>(__half *)+0x4c0 in /r/slices.cu:28\n"
                "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    assert waw.errors == 1 and waw.at == ("/r/slices.cu", 28) and "Potential WAW hazard" in waw.first, waw
    sync = parse("========= Barrier error detected. Divergent thread(s) in block\n"
                 "=========     at 0x170 in /r/b.cu:20:head_norm(float*)\n"
                 "=========     by thread (64,0,0) in block (0,0,0)\n========= ERROR SUMMARY: 1 error\n")
    assert sync.errors == 1 and sync.at == ("/r/b.cu", 20)
    assert parse("Segmentation fault").errors is None  # no summary: the tool did not finish


def _sanitizer_printing(tmp_path, report: str):
    """A confirm_one over a fake compute-sanitizer that prints ``report``: called with a
    reproducer's name and the fields its repro.json has beyond the common ones."""
    from bot.repro.confirm import confirm_one

    python = _fake(tmp_path / "python", "exit 0\n")
    (tmp_path / "report.txt").write_text(report)
    sanitizer = _fake(tmp_path / "compute-sanitizer", f"cat {tmp_path}/report.txt\n")

    def run(name: str, fields: dict):
        d = tmp_path / name
        d.mkdir()
        (d / "repro.py").write_text("")
        (d / "repro.json").write_text(json.dumps({
            "use_sanitizer": True, "runnable": True, "where": "csrc/k.cu:30", "also": [], "hangs": False,
            "static_only": None, **fields}))
        return confirm_one(d, python, sanitizer, 60)
    return run


def test_a_racecheck_warning_at_either_access_of_a_race_confirms_it(tmp_path):
    """racecheck names a race's hazard at one of its two accesses, with a warning when it cannot
    tell the values apart: a warning at the finding's other access (the race's first write)
    confirms it too; a warning at neither access does not."""
    sanitized = _sanitizer_printing(
        tmp_path, "========= Warning: Race reported between Write access at 0x2a0 in /r/k.cu:24:reduce(float*)\n"
        "=========     and Read access at 0x310 in /r/k.cu:40:reduce(float*) [8 hazards]\n"
        "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n")
    outcome = {name: sanitized(name, {"tool": "racecheck", "also": also, "kind": "torch-op"})
               for name, also in (("other_access", ["csrc/k.cu:24"]), ("neither", ["csrc/k.cu:25"]))}
    assert outcome["other_access"].status == "confirmed" and "warning" in outcome["other_access"].detail
    assert outcome["neither"].status == "not-reproduced", outcome["neither"]


def test_a_cuda_api_error_does_not_confirm_an_access_finding(tmp_path):
    """memcheck's error that a launch got an invalid stream handle is the harness's mistake, not the
    out-of-bounds read the finding claims; for a launch-config finding an API error is the evidence."""
    sanitized = _sanitizer_printing(
        tmp_path, "========= Program hit cudaErrorInvalidResourceHandle (error 400) due to \"invalid resource "
        "handle\" on CUDA API call to cudaLaunchKernel.\n========= ERROR SUMMARY: 2 errors\n")
    outcome = {check: sanitized(check, {"tool": "memcheck", "kind": "host", "check": check, "runtime_copy": False})
               for check in ("oob", "launch-config")}
    assert outcome["oob"].status == "not-reproduced" and "API error" in outcome["oob"].detail
    assert outcome["launch-config"].status == "confirmed"


def test_a_stable_abi_op_is_bound_through_tensor_handles_and_retried_with_half_operators(
        example_repros, tmp_path, monkeypatch):
    """An op written against PyTorch's stable ABI (vLLM 0.33's) cannot share a translation unit
    with torch/extension.h: the reproducer calls it through tensor handles from a second one, builds
    its own with the stable ABI's macros and the binding without them, and a build that fails with
    torch's half-operator guards is tried once without them (and first so the next time)."""
    import types
    _, _, out = example_repros
    script = next(d / "repro.py" for d in _by_fingerprint(out).values()
                  if _constants(d / "repro.py")["KIND"] == "torch-op")
    g = _constants(script)["build_torch_op"].__globals__
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ops.cu").write_text("void scale_rows(torch::stable::Tensor& out, const torch::stable::Tensor& x, "
                                 "double eps, std::optional<torch::stable::Tensor> bias);\n")
    monkeypatch.setenv("KERNELVET_REPO_ROOT", str(repo))
    monkeypatch.setenv("KERNELVET_REPRO_BUILD_DIR", str(tmp_path / "build"))
    monkeypatch.setitem(g, "SOURCES", ["ops.cu"])
    monkeypatch.setitem(g, "LAUNCHER", "scale_rows")
    monkeypatch.setitem(g, "DEFINES", {"ENABLE_FP8": "1", "TORCH_TARGET_VERSION": "0x020B000000000000ULL"})
    monkeypatch.setitem(g, "CALL", {"args": [{"name": "out", "kind": "tensor"}, {"name": "x", "kind": "tensor"},
                                             {"name": "eps", "kind": "scalar", "value": 1e-6, "float": True},
                                             {"name": "bias", "kind": "absent"}], "loads": {}})
    loads = []

    def load(name, sources, extra_cflags, extra_cuda_cflags, build_directory, verbose):
        loads.append((sources, extra_cflags, extra_cuda_cflags))
        if "-U__CUDA_NO_HALF_OPERATORS__" not in extra_cuda_cflags:
            raise RuntimeError("error: no operator \"+=\" matches these operands")
        return "module"
    extension = types.ModuleType("torch.utils.cpp_extension")
    extension.load = load
    utils = types.ModuleType("torch.utils")
    utils.cpp_extension = extension
    torch = types.ModuleType("torch")
    torch.utils = utils
    for name, module in (("torch", torch), ("torch.utils", utils), ("torch.utils.cpp_extension", extension)):
        monkeypatch.setitem(sys.modules, name, module)
    assert g["build_torch_op"]() == "module" and len(loads) == 2
    sources, cflags, cuda_flags = loads[1]
    op_source, binding = (Path(s).read_text() for s in sources[:2])
    assert "#define USE_CUDA" in op_source and '#include "' + str(repo / "ops.cu") in op_source
    assert "void kernelvet_call(AtenTensorHandle h0, AtenTensorHandle h1, double s2)" in op_source
    assert "scale_rows(t0, t1, s2, std::nullopt);" in op_source
    assert "#include <torch/extension.h>" in binding and "new_tensor_handle(at::Tensor(a0))" in binding
    assert not any("TORCH_TARGET_VERSION" in f for f in cflags)  # torch/extension.h refuses it
    assert any("TORCH_TARGET_VERSION" in f for f in cuda_flags)
    # The next build starts with the flags that worked: one build, not two.
    loads.clear()
    assert g["build_torch_op"]() == "module" and len(loads) == 1


def test_the_recorded_call_passes_every_launcher_parameter_in_order(tmp_path):
    """A parameter the binding leaves out (a later version's new flag) is in the call, where the
    launcher has it: a reproducer calls the op with as many arguments as it takes."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    report = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "unbound_mode_argument.cu"), tmp_path))
    (f,) = report["findings"]
    args = f["call"]["args"]
    assert [a["name"] for a in args] == ["out", "x", "mode", "eps"]
    assert args[2]["kind"] == "scalar" and not args[2]["float"] and args[3]["float"]


def test_a_witness_is_chosen_to_fit_the_memory_bound_and_says_so(tmp_path):
    """The fewest tokens that wrap the rotation's row offset come with 80 GiB of tensors: under the
    default 72 GiB bound the witness is the smallest input that fits (more tokens, a smaller dim),
    and the reproducer can run it. Reproduced for a 20 GiB card, that witness does not fit, so
    `kernelvet repro --memory-gib 20` verifies the op again under 20 GiB and writes the reproducer
    of a failing input that fits (two activations of 2^31 floats and a small rotation), saying so;
    for an 8 GiB card no failing input fits (the two activations alone hold 2^31 floats each): the
    engine says so, and the reproducer is not runnable. With --no-refit the scan's witness stays."""
    sys.path.insert(0, str(ROOT / "tests"))
    import yaml
    from fixture_runner import load_fixture, manifest_for, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan

    fx = load_fixture(FIXTURES / "overflow" / "rotation_row_offset_needs_memory.cu")
    (f,) = to_dict(run_fixture(fx, tmp_path))["findings"]
    w = f["witness"]
    r = plan(f)
    assert "The smallest failing sizes need 80.0 GiB of GPU memory" in f["message"], f["message"]
    # Wraps (token * dim past 2^31), fits (two activations and the rotation), and more tokens
    # than the smallest overall input (16,385 at dim 131,072).
    assert (w["num_tokens"] - 1) * w["dim"] >= 1 << 31 and w["num_tokens"] > 16385
    assert 4 * (2 * w["num_tokens"] * w["dim"] + w["dim"] ** 2) == r.device_bytes <= 72 << 30
    assert r.not_runnable is None and r.device_bytes > 20 << 30  # more than the smaller card has

    report, manifest = tmp_path / "report.json", tmp_path / "kernelvet.yaml"
    report.write_text(json.dumps({"findings": [f]}))
    manifest.write_text(yaml.safe_dump(manifest_for(fx), sort_keys=False))

    def repro(gib: str, *extra):
        out = tmp_path / f"out{gib}{''.join(extra)}"
        done = kernelvet("repro", "--all", "--report", str(report), "--root", str(FIXTURES), "--manifest",
                         str(manifest), "--out", str(out), "--memory-gib", gib, *extra)
        assert done.returncode == 0, done.stderr
        (d,) = [p for p in out.iterdir() if p.is_dir()]
        return done.stdout, json.loads((d / "repro.json").read_text()), (d / "repro.py").read_text()

    said, desc, script = repro("20")
    assert "witness minimised again under 20.0 GiB" in said, said
    assert desc["runnable"] and desc["device_bytes"] <= 20 << 30, desc
    assert any("minimised again" in n for n in desc["notes"]) and "minimised again" in script
    said, desc, _ = repro("8")
    assert "no failing input of this finding fits" in said, said
    assert not desc["runnable"] and "more than the bound of 8.0 GiB" in desc["not_runnable"]
    said, desc, _ = repro("20", "--no-refit")
    assert "minimised again" not in said and not desc["runnable"] and desc["device_bytes"] == r.device_bytes


def test_loaded_values_are_put_at_the_elements_the_kernel_reads(tmp_path):
    """The padded copy fails only when a sequence's end and start differ by more than max_len: two
    loaded values of cu_seqlens at two elements. The call places each at its element (a tensor
    filled with one value would give an empty sequence), and the reproducer has nothing to warn."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan

    fx = load_fixture(FIXTURES / "oob" / "pad_sequences_longer_than_max_len.cu")
    fx.header["dtypes"] = ["float16"]
    (f,) = to_dict(run_fixture(fx, tmp_path))["findings"]
    w, call = f["witness"], f["call"]
    cells = dict(map(tuple, call["elements"]["cu_seqlens"]))
    seq = w["blockIdx.y"]
    assert cells[seq + 1] - cells[seq] > w["max_len"], (cells, w)
    assert sorted(cells.values()) == sorted(call["loads"]["cu_seqlens"])
    assert not [n for n in plan(f).notes if "different values" in n]
    write_dir = tmp_path / "repro"
    from bot.repro.scripts import write
    write(plan(f), f, write_dir, FIXTURES)
    g = _constants(write_dir / "repro.py")
    assert g["CALL"]["elements"] == call["elements"] and "set_elements" in g


def test_a_hang_finding_is_confirmed_by_a_run_that_does_not_return(tmp_path):
    """A sync-mask finding whose lane waits at a barrier is a hang: its reproducer is given a short
    limit, and a run that does not return within it confirms the finding; any other finding's run
    past its limit stays not runnable."""
    from analyzers.findings import HANG_WORDS
    from bot.repro.confirm import confirm_one
    from bot.repro.plan import plan

    finding = {"check": "sync-mask", "location": {"file": "k.cu", "line": 3}, "hangs": True,
               "message": f"... and waits there while this primitive waits for it: {HANG_WORDS} (...)"}
    assert plan(finding).hangs and not plan(dict(finding, hangs=False)).hangs
    python = _fake(tmp_path / "python", "exit 0\n")  # the build step: nothing to build here
    sanitizer = _fake(tmp_path / "compute-sanitizer", "sleep 30\n")
    for hangs, status in ((True, "confirmed"), (False, "not-runnable")):
        d = tmp_path / f"r{hangs}"
        d.mkdir()
        (d / "repro.py").write_text("")
        (d / "repro.json").write_text(json.dumps({
            "check": "sync-mask", "where": "k.cu:3", "tool": "synccheck", "use_sanitizer": True, "runnable": True,
            "not_runnable": None, "kind": "torch-op", "static_only": None, "hangs": hangs}))
        c = confirm_one(d, python, sanitizer, timeout=4 if not hangs else 60, hang_seconds=2)
        assert c.status == status, c
        assert ("did not return in 2 s: the kernel hung" in c.detail) == hangs, c


def test_a_verified_op_records_a_control_call_at_small_sizes_its_binding_allows(tmp_path):
    """A correct twin's control run (bench/repro_fixtures.py --controls) needs a call: with
    Options.control_call the engine records one at sizes near 5 that meet the binding's
    constraints (here dim % 64 == 0 and dim >= 64: the smallest is 64, not 5), every argument
    in the launcher's order, and writes a reproducer of it like a finding's."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from analyzers import binding as B
    from bot.repro.scripts import reproduce

    fx = load_fixture(FIXTURES / "threads" / "block_sum_tree.cu")
    report = run_fixture(fx, tmp_path, control_call=True)
    (ir,) = report.instances
    call = ir.result.control_call
    assert ir.result.verdict == "verified" and call is not None
    shapes = {a["name"]: a["shape"] for a in call["args"]}
    assert shapes == {"out": [25], "input": [25, 4096]}, shapes  # 5 sequences of 5 tokens
    assert run_fixture(fx, tmp_path).instances[0].result.control_call is None  # only when asked

    dims = (B.UserDim("batch", 1, 8), B.UserDim("dim", 64, 4096))
    inst = B.Instance("op", "f.cu", (), dims, (("rows", B.parse_expr("batch * 2")),),
                      (B.parse_expr("dim % 64 == 0"), B.parse_expr("rows > 12")), "float32")
    assert B.sample_sizes(inst) == {"batch": 7, "dim": 64, "rows": 14}  # the nearest to 5 that meets both
    impossible = B.Instance("op", "f.cu", (), dims, (), (B.parse_expr("batch > 8"),), "float32")
    assert B.sample_sizes(impossible) is None

    finding = {"check": "control", "location": {"file": fx.name, "line": call["line"]}, "call": call,
               "fingerprint": "control0123456789", "message": ""}
    r, entry = reproduce(finding, tmp_path / "out", "c", FIXTURES, tool="synccheck")
    assert r.tool == "synccheck" and r.not_runnable is None and entry["runnable"]
    assert json.loads((tmp_path / "out" / "c" / "repro.json").read_text())["tool"] == "synccheck"


def test_a_finding_in_an_op_that_makes_pointers_from_integers_is_not_runnable(tmp_path):
    """The all-reduce's write past `out` is a real finding, but its op reads peers' buffers through
    pointers made from integers (addresses another process handed over): the call records where,
    and the reproducer says it cannot make that memory instead of running into a null pointer."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan

    fx = load_fixture(FIXTURES / "host" / "peer_pointers_output_one_past.cu")
    (f,) = to_dict(run_fixture(fx, tmp_path))["findings"]
    assert f["call"]["foreign_pointers"] and "reinterpret_cast<const float*>" in f["call"]["foreign_pointers"][0]
    r = plan(f)
    assert r.not_runnable and "pointers from integers" in r.not_runnable
    g = to_dict(run_fixture(load_fixture(FIXTURES / "optional" / "group_quant_scales_sized_for_default.cu"),
                            tmp_path))["findings"][0]
    assert "foreign_pointers" not in g["call"] and plan(g).not_runnable is None


def test_a_stream_argument_of_a_host_launcher_is_the_default_stream(tmp_path):
    """`cudaStream_t stream` is a handle, not memory: the harness passes the default stream (before,
    64 MiB of managed memory, and every launch failed with an invalid resource handle, which the
    confirmation took for the finding's error)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan
    from bot.repro.scripts import write

    (f,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "permutation_table_one_past.cu"), tmp_path))["findings"]
    assert [(a["name"], a["kind"]) for a in f["call"]["args"]] == [("out", "buffer"), ("which", "scalar"),
                                                                   ("stream", "stream")]
    r = plan(f)
    write(r, f, tmp_path / "pick", FIXTURES)
    source = _constants(tmp_path / "pick" / "repro.py")["host_harness_source"]()
    assert "KvP::arg<2> a2{};" in source and source.count("cudaMallocManaged(") == 1


def test_a_host_launcher_taking_a_struct_by_value_is_called_from_a_harness_that_fills_it(tmp_path):
    """The smoothing's read before the buffer is real, and its op takes its buffers inside a struct:
    the reproducer is a CUDA harness that makes the struct as the launcher's own parameter type, sets
    every number the witness names (minimised as sizes: one row of one column) and points each
    pointer member to managed memory, saying that nobody states its size. The graph launcher also
    takes a raw output pointer, which gets such memory too. A struct the report does not describe,
    or one beside tensors (a torch extension cannot pass it), is not runnable, and says why."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import UNSTATED_BUFFER_BYTES, plan
    from bot.repro.scripts import write

    (f,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "params_struct_left_neighbour.cu"),
                               tmp_path))["findings"]
    assert f["call"]["structs"] == ["p"] and f["witness"]["p.rows"] == 1 and f["witness"]["p.cols"] == 1
    (p,) = f["call"]["args"]
    assert p["kind"] == "struct" and [(m["path"], m["kind"]) for m in p["members"]] == [
        ("p.in", "pointer"), ("p.out", "pointer"), ("p.rows", "scalar"), ("p.cols", "scalar")]
    r = plan(f)
    assert r.kind == "host" and r.not_runnable is None and r.device_bytes == 2 * UNSTATED_BUFFER_BYTES
    assert any("p.in, p.out: memory of a size nobody states" in n for n in r.notes)
    write(r, f, tmp_path / "smooth", FIXTURES)
    source = _constants(tmp_path / "smooth" / "repro.py")["host_harness_source"]()
    assert "using KvP = KvParams<decltype(&smooth_rows)>;" in source and "KvP::arg<0> a0{};" in source
    assert "KV_SET(kv_obj(a0)->rows, 1LL);" in source and "KV_SET(kv_obj(a0)->cols, 1LL);" in source
    assert source.count("cudaMallocManaged(") == 2 and "KV_SET(kv_obj(a0)->in, p0_0);" in source
    assert source.rstrip().endswith("}") and "  smooth_rows(a0);" in source

    (g,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "graph_struct_device_copy_one_past.cu"),
                               tmp_path))["findings"]
    r = plan(g)
    assert r.kind == "host" and r.not_runnable is None and r.device_bytes == 3 * UNSTATED_BUFFER_BYTES
    write(r, g, tmp_path / "graph", FIXTURES)
    source = _constants(tmp_path / "graph" / "repro.py")["host_harness_source"]()
    nodes = g["witness"]["g.nodes"]
    assert f"KV_SET(kv_obj(a0)->nodes, {nodes}LL);" in source and "KvP::arg<1> a1 = (KvP::arg<1>)p1;" in source
    assert "  degrees_gpu(a0, a1);" in source

    # A pointer to a struct inside it: nothing in the witness says what that object holds.
    linked = dict(p, members=p["members"] + [{"path": "p.next", "kind": "other", "type": "Node *"}])
    r = plan(dict(f, call=dict(f["call"], args=[linked])))
    assert r.not_runnable and "member p.next (Node *) a harness cannot make" in r.not_runnable
    beside = [p, {"name": "x", "kind": "tensor", "shape": [4], "strides": None, "dtype": "float32",
                  "device": "cuda"}]
    r = plan(dict(f, call=dict(f["call"], args=beside)))
    assert r.kind == "torch-op" and "beside tensors" in r.not_runnable

    # A graph node the binding describes member by member (`fields`), reached through a pointer:
    # the harness makes the node and its source, sets their shapes at the witness's token count,
    # gives each `data` the bytes the binding states, and leaves the context's stream the default.
    (n,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "ggml_tensor_bound_next_column.cu"),
                               tmp_path))["findings"]
    ctx, dst = n["call"]["args"]
    assert n["call"]["structs"] == ["ctx", "dst"] and dst["kind"] == "bound-struct" and dst["pointer"]
    assert [m["kind"] for m in ctx["members"]] == ["scalar", "stream"]
    members = {m["path"]: m for m in dst["members"]}
    tokens = n["witness"]["num_tokens"]
    assert members["dst.ne.1"]["value"] == tokens and members["dst.src.0"]["kind"] == "object"
    assert members["dst.src.0.data"] == {"path": "dst.src.0.data", "kind": "buffer", "bytes": 4096 * tokens * 4,
                                         "elem_size": 4}
    r = plan(n)
    assert r.kind == "host" and r.not_runnable is None and r.device_bytes == 2 * 4096 * tokens * 4
    write(r, n, tmp_path / "ggml", FIXTURES)
    source = _constants(tmp_path / "ggml" / "repro.py")["host_harness_source"]()
    assert "  KvP::arg<1> a1{};" in source and "  kv_obj(kv_obj(a1)->src[0]);" in source
    assert f"  KV_SET(kv_obj(kv_obj(a1)->src[0])->ne[1], {tokens}LL);" in source
    assert "  KV_SET(kv_obj(kv_obj(a1)->src[0])->data, p1_" in source and "  ggml_cuda_op_smooth_cols(a0, a1);" in source


def test_a_finding_resting_on_an_uninitialized_local_says_so_and_why_a_sanitizer_can_miss_it(tmp_path):
    """The gather reads its register table on a path that never filled it: the finding names the
    table and the value it took, and its reproducer gives the uninitialized read as the reason a
    clean run proves nothing. The twins are not so labelled: the table cleared with memset reads as
    zeros (verified), and filled with 0xff bytes as -1 (a bug of its own, no uninitialized read); a
    word written through a __half2 reference holds bits the engine does not follow, not garbage."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan

    def findings(name):
        return to_dict(run_fixture(load_fixture(FIXTURES / "memory" / name), tmp_path))["findings"]

    (f,) = findings("column_gather_written_on_one_path_read_always.cu")
    assert "`col_idx` (here " in f["message"] and "uninitialized" in f["message"]
    assert isinstance(f["witness"]["col_idx (uninitialized)"], int)
    assert "uninitialized value is whatever the register" in plan(f).describe()["static_only"]
    (g,) = findings("column_gather_filled_with_minus_one.cu")
    assert "uninitialized" not in g["message"] and plan(g).describe()["static_only"] is None
    assert "before the start" in g["message"]
    assert findings("column_gather_cleared_with_memset.cu") == []
    # Written, as the bits of a __half2 sum: any value, but not an uninitialized one.
    (h,) = to_dict(run_fixture(load_fixture(FIXTURES / "lang" / "packed_pair_add_over_word.cu"), tmp_path))["findings"]
    assert h["check"] == "oob" and "uninitialized" not in h["message"]


def test_a_runtime_copy_runs_without_padding_and_a_string_argument_is_the_literal_chosen(tmp_path):
    """A copy one block past the cache is a CUDA runtime copy: memcheck runs its reproducer without
    padding (which would stretch the allocation past the range the runtime checks), and its message
    says why a run can be silent (a range that starts past the end lands in a neighbour). The
    half-width cache's op takes its dtype as a string: the reproducer passes the literal the witness
    chose ("auto"), not None."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from bot.reporters.jsonfmt import to_dict
    from bot.repro.confirm import confirm_one
    from bot.repro.plan import plan
    from bot.repro.scripts import write

    (f,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "copy_pairs_one_past_cache.cu"), tmp_path))["findings"]
    r = plan(f)
    assert r.runtime_copy and "checks a copy's range only against the allocation it starts in" in r.static_only
    write(r, f, tmp_path / "copy", FIXTURES)
    python = _fake(tmp_path / "python", "exit 0\n")
    (tmp_path / "clean.txt").write_text(MEMCHECK_CLEAN)
    sanitizer = _fake(tmp_path / "compute-sanitizer", f'case "$*" in *--padding*) exit 9;; esac\ncat {tmp_path}/clean.txt\n')
    c = confirm_one(tmp_path / "copy", python, sanitizer, 60)
    assert c.status == "not-reproduced" and "lies there" in c.detail, c

    (g,) = to_dict(run_fixture(load_fixture(FIXTURES / "lang" / "kv_dtype_string_choice_half_cache.cu"),
                               tmp_path))["findings"]
    assert g["witness"]["the string `kv_cache_dtype`"] == '"auto"'
    assert g["call"]["args"][-1] == {"name": "kv_cache_dtype", "kind": "string", "text": "auto"}
    assert not plan(g).runtime_copy and plan(g).static_only is None


def test_why_a_sanitizer_can_be_silent_and_a_hang_are_fields_of_the_finding_not_its_words(tmp_path):
    """The engine says, as fields of a finding, why compute-sanitizer can stay silent on it, whether
    it sits at a CUDA runtime copy and whether the bug is a hang; the JSON report and the cache carry
    them, and a reproducer follows them whatever the message says (a reporter or a baseline may
    shorten it)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_runner import load_fixture, run_fixture

    from analyzers.findings import HANG_WORDS, STATIC_ONLY, STATIC_ONLY_RUNTIME_COPY
    from bot.reporters.jsonfmt import to_dict
    from bot.repro.plan import plan
    from bot.serialize import finding_in, finding_out

    for d in ("g", "c"):
        (tmp_path / d).mkdir()
    report = run_fixture(load_fixture(FIXTURES / "threads" / "grid_sync_in_block_zero_branch.cu"), tmp_path / "g")
    (hang,) = to_dict(report)["findings"]
    assert hang["hangs"] and HANG_WORDS in hang["message"]
    assert hang["static_only"] == STATIC_ONLY["barrier-divergence"] and not hang["runtime_copy"]
    (f,) = [f for ir in report.instances for f in ir.result.findings]
    assert finding_in(finding_out(f)) == f  # what the cache and merged shards keep
    r = plan(dict(hang, message=""))
    assert r.hangs and r.static_only == STATIC_ONLY["barrier-divergence"]

    (copy,) = to_dict(run_fixture(load_fixture(FIXTURES / "host" / "copy_pairs_one_past_cache.cu"),
                                  tmp_path / "c"))["findings"]
    assert copy["runtime_copy"] and copy["static_only"] == STATIC_ONLY_RUNTIME_COPY and not copy["hangs"]
    r = plan(dict(copy, message="shortened", location=dict(copy["location"], text="")))
    assert r.runtime_copy and r.static_only == STATIC_ONLY_RUNTIME_COPY and not r.hangs

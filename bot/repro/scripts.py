"""The reproducer's files: ``repro.py``, a self-contained script (it needs Python, and PyTorch for a
torch op; kernelvet is not needed on the GPU machine), and ``repro.json`` describing it for
``kernelvet confirm``. The script builds what it runs from the repository's own sources, with
-lineinfo so a sanitizer names source lines."""
from __future__ import annotations

import json
import os
from pathlib import Path

from analyzers.binding import KERNEL_OP

from .plan import DEFAULT_MEMORY_GIB, UNSTATED_BUFFER_BYTES, Repro, plan

EXIT_RAN, EXIT_CUDA_ERROR, EXIT_BUILD, EXIT_CANNOT_RUN, EXIT_OP_ERROR = 0, 1, 2, 3, 4

# The runtime every reproducer carries; the constants above it are the finding's.
_RUNTIME = r'''
import argparse
import json
import os
import subprocess
import sys

os.environ.setdefault("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")  # an overrun past a tensor's end is seen
HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_RAN, EXIT_CUDA_ERROR, EXIT_BUILD, EXIT_CANNOT_RUN, EXIT_OP_ERROR = 0, 1, 2, 3, 4

def root():
    return os.environ.get("KERNELVET_REPO_ROOT") or os.path.normpath(os.path.join(HERE, ROOT))


def flags():
    out = ["-I" + os.path.join(root(), d) for d in INCLUDE_DIRS]
    out += ["-I" + os.path.join(root(), d) for d in ("", "csrc", "include", "src")]
    out += ["-D%s=%s" % kv if kv[1] != "" else "-D" + kv[0] for kv in sorted(DEFINES.items())]
    return out


def build_dir():
    # $KERNELVET_REPRO_BUILD_DIR keeps builds outside the reproducers (a copy of them that is
    # replaced keeps its builds).
    base = os.environ.get("KERNELVET_REPRO_BUILD_DIR")
    d = os.path.join(base, FINGERPRINT) if base else os.path.join(HERE, "build")
    os.makedirs(d, exist_ok=True)
    return d


def write_main_source(text, name, before=""):
    path = os.path.join(build_dir(), name)
    with open(path, "w") as f:
        f.write(before + '#include "%s"\n' % os.path.join(root(), SOURCES[0]).replace("\\", "/") + text)
    return path


def uses_stable_abi():
    """Whether the op is written against PyTorch's stable ABI (torch::stable::Tensor): it cannot
    share a translation unit with torch/extension.h, so a second one binds it for Python."""
    with open(os.path.join(root(), SOURCES[0])) as f:
        return "torch::stable::" in f.read()


# The macros a stable-ABI source is built with beside the manifest's (vLLM's build sets them for
# its stable-ABI library): the CUDA parts of the C shim, and the oldest PyTorch it targets.
STABLE_DEFINES = {"USE_CUDA": "", "TORCH_TARGET_VERSION": "0x020B000000000000ULL"}


# torch's cpp_extension hides the half-precision operators (-D__CUDA_NO_HALF_OPERATORS__ ...);
# a repository's own build may not (vLLM's drops them from CUDA 12 on): a build that fails with
# them is tried once more without.
HALF_OPERATORS = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                  "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__"]


# Asked in the op's own translation unit, of the runtime it launched with: a launch that fails its
# configuration leaves an error only cudaGetLastError returns (it is not sticky).
LAST_ERROR = ("std::string kernelvet_last_error() { cudaError_t e = cudaGetLastError();\n"
              "  return e == cudaSuccess ? std::string() : std::string(cudaGetErrorString(e)); }\n")


def load_extension(sources, cflags, cuda_flags):
    from torch.utils import cpp_extension
    return cpp_extension.load(
        name="kernelvet_repro_" + FINGERPRINT[:12], sources=sources + [os.path.join(root(), s) for s in SOURCES[1:]],
        extra_cflags=["-O1"] + cflags, extra_cuda_cflags=["-O1", "-lineinfo"] + cuda_flags,
        build_directory=build_dir(), verbose=False)


def build_stable_torch_op(extra):
    """The op's file and a caller taking tensor handles, in one translation unit built as the
    stable ABI wants; the Python binding, which converts at::Tensor to handles, in another."""
    params, glue_params, glue_args, call_args, decls = [], [], [], [], []
    for i, a in enumerate(CALL["args"]):
        if a["kind"] == "tensor":
            params.append("AtenTensorHandle h%d" % i)
            decls.append("  torch::stable::Tensor t%d(h%d);" % (i, i))
            call_args.append("t%d" % i)
            glue_params.append("at::Tensor a%d" % i)
            glue_args.append("torch::aot_inductor::new_tensor_handle(at::Tensor(a%d))" % i)
        elif a["kind"] == "scalar":
            ty = "double" if a.get("float") else "int64_t"
            params.append("%s s%d" % (ty, i))
            call_args.append("s%d" % i)
            glue_params.append("%s a%d" % (ty, i))
            glue_args.append("a%d" % i)
        elif a["kind"] == "absent":
            call_args.append("std::nullopt")
            glue_params.append("py::object a%d" % i)
        else:
            raise SystemExit("a stable-ABI op with a %s argument: not supported by this reproducer" % a["kind"])
    header = "".join("#ifndef %s\n#define %s %s\n#endif\n" % (k, k, v) for k, v in STABLE_DEFINES.items())
    op_source = write_main_source(
        "\nvoid kernelvet_call(%s) {\n%s\n  %s(%s);\n}\n" % (", ".join(params), "\n".join(decls), LAUNCHER,
                                                            ", ".join(call_args)) + LAST_ERROR,
        "op_module.cu", header)
    glue = os.path.join(build_dir(), "op_binding.cpp")
    with open(glue, "w") as f:
        f.write("#include <torch/extension.h>\n#include <torch/csrc/inductor/aoti_torch/utils.h>\n"
                "void kernelvet_call(%s);\nstd::string kernelvet_last_error();\n"
                "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                "  m.def(\"op\", [](%s) { kernelvet_call(%s); });\n"
                "  m.def(\"last_error\", &kernelvet_last_error); }\n"
                % (", ".join(params), ", ".join(glue_params), ", ".join(glue_args)))
    binding_flags = [x for x in flags() if not x.startswith(("-DTORCH_TARGET_VERSION", "-DTORCH_STABLE_ONLY"))]
    return load_extension([op_source, glue], binding_flags, flags() + extra)


def build_torch_op():
    build = build_stable_torch_op if uses_stable_abi() else build_plain_torch_op
    # The flags that built it last time come first: trying the others would rebuild it twice.
    marker = os.path.join(build_dir(), "half-operators")
    order = [HALF_OPERATORS, []] if os.path.exists(marker) else [[], HALF_OPERATORS]
    try:
        return build(order[0])
    except RuntimeError as exc:
        sys.stderr.write(str(exc)[-3000:] + "\n(built again %s the half-precision operators)\n"
                         % ("with" if order[1] else "without"))
    module = build(order[1])
    if order[1]:
        open(marker, "w").close()
    elif os.path.exists(marker):
        os.remove(marker)
    return module


def build_plain_torch_op(extra):
    module = write_main_source(
        "\n#include <torch/extension.h>\n" + LAST_ERROR
        + "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"op\", &%s);\n"
          "  m.def(\"last_error\", &kernelvet_last_error); }\n" % LAUNCHER, "op_module.cu")
    return load_extension([module], flags(), flags() + extra)


def nvcc_build(source):
    exe = os.path.join(build_dir(), "harness")
    arch = "-arch=" + ARCH if ARCH != "native" else "-arch=native"
    cmd = ["nvcc", "-O1", "-lineinfo", "-std=c++17", arch, source, "-o", exe] + flags()
    cmd += [os.path.join(root(), s) for s in SOURCES[1:]]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(EXIT_BUILD)
    return exe


def c_value(a):
    v = a.get("value")
    if v is None:
        v = 1.0 if a.get("float") else 0
    return repr(float(v)) if a.get("float") else "%dLL" % int(v)


def fill_value(a):
    """What a tensor is filled with: a value the witness loads from it at an element it does not
    name (those are set one by one), else one it loads, else the low end of its binding's range."""
    values = CALL["loads"].get(a["name"])
    placed = {value for _, value in CALL.get("elements", {}).get(a["name"], [])}
    if values:
        return next((v for v in values if v not in placed), values[0])
    if a.get("values") and a["values"][0] is not None:
        return a["values"][0]
    return None


def buffer_lines(target, name, n, k, managed=False, values=None):
    """Allocate ``n`` bytes into ``void* target`` and fill them as the witness loads them: its value
    (``k``-byte elements) everywhere, the values it names at their elements. Managed memory is
    memory both the host and the GPU can read (a host launcher's arrays: it may copy them up
    itself, or hand them to its kernels)."""
    n = max(n, 1)
    alloc = "cudaMallocManaged" if managed else "cudaMalloc"
    lines = ["  if (%s(&%s, %d) != cudaSuccess) { puts(\"cannot allocate %s\"); return %d; }"
             % (alloc, target, n, name, EXIT_CANNOT_RUN)]
    v = fill_value({"name": name, "values": values})
    if v is not None and k in (1, 2, 4, 8):
        lines.append("  { std::vector<unsigned char> h(%d); long long v = %dLL; for (size_t o = 0; "
                     "o + %d <= h.size(); o += %d) std::memcpy(&h[o], &v, %d); cudaMemcpy(%s, h.data(), "
                     "h.size(), cudaMemcpyHostToDevice); }" % (n, int(v), k, k, k, target))
    else:
        lines.append("  cudaMemset(%s, 0, %d);" % (target, n))
    for index, value in CALL.get("elements", {}).get(name, []):
        if k in (1, 2, 4, 8) and (index + 1) * k <= n:  # little-endian: the low k bytes
            lines.append("  { long long v = %dLL; cudaMemcpy((char*)%s + %d, &v, %d, cudaMemcpyHostToDevice); }"
                         % (int(value), target, index * k, k))
    if managed:
        lines.append("  cudaDeviceSynchronize();")
    return lines


HARNESS_HEAD = ["#include <cstdio>", "#include <cstring>", "#include <string>", "#include <tuple>",
                "#include <type_traits>", "#include <vector>"]
HARNESS_TAIL = ["  cudaError_t e = cudaGetLastError();",
                "  if (e == cudaSuccess) e = cudaDeviceSynchronize();",
                "  if (e != cudaSuccess) { printf(\"CUDA error: %s\\n\", cudaGetErrorString(e)); return 1; }",
                "  puts(\"ran without a CUDA error\");", "  return 0;", "}"]


def harness_source():
    """A bare kernel's launch with the witness's buffers, scalars and launch shape."""
    lines = HARNESS_HEAD + [
        "struct KvAnyPtr { void* p; template <class T> operator T*() const { return static_cast<T*>(p); } };",
        "int main() {"]
    args, launch = [], {}
    for i, a in enumerate(CALL["args"]):
        if a["name"].startswith("__kv_"):
            launch[a["name"]] = c_value(a)
        elif a["kind"] == "buffer":
            n = a["bytes"] if a.get("bytes") is not None else UNSTATED_BUFFER_BYTES
            lines.append("  void* p%d = nullptr;" % i)
            lines += buffer_lines("p%d" % i, a["name"], n, a.get("elem_size") or 1, values=a.get("values"))
            args.append("KvAnyPtr{p%d}" % i)
        elif a["kind"] == "absent":
            args.append("KvAnyPtr{nullptr}")
        else:
            args.append(c_value(a))
    g = ", ".join(launch.get("__kv_grid_" + c, "1") for c in "xyz")
    b = ", ".join(launch.get("__kv_block_" + c, "1") for c in "xyz")
    lines.append("  %s<<<dim3(%s), dim3(%s), %s>>>(%s);" % (KERNEL, g, b, launch.get("__kv_shared_bytes", "0"),
                                                         ", ".join(args)))
    return "\n" + "\n".join(lines + HARNESS_TAIL) + "\n"


def object_lvalue(var, root, path):
    """``dst.src.0.ne.1`` of the argument ``dst`` held in ``var`` (a struct or a pointer to one):
    ``kv_obj(kv_obj(var)->src[0])->ne[1]``, each object made (``new``) where a pointer is still
    null."""
    out = var
    for part in path[len(root) + 1:].split("."):
        out = "%s[%s]" % (out, part) if part.isdigit() else "kv_obj(%s)->%s" % (out, part)
    return out


def host_harness_source():
    """A host launcher's call (raw pointers, structs taken by value or bound member by member,
    scalars): each argument made as the launcher's own parameter type, pointers to managed memory,
    every number the witness's."""
    lines = HARNESS_HEAD + [
        "template <class F> struct KvParams;",
        "template <class R, class... A> struct KvParams<R (*)(A...)> { template <int I> using arg = "
        "typename std::decay<typename std::tuple_element<I, std::tuple<A...>>::type>::type; };",
        "using KvP = KvParams<decltype(&%s)>;" % LAUNCHER,
        # The object a pointer points to, made on first use; a struct held by value is itself.
        "template <class T> typename std::remove_const<T>::type* kv_obj(T*& p) { using U = typename "
        "std::remove_const<T>::type; if (!p) p = new U{}; return const_cast<U*>(p); }",
        "template <class T> T* kv_obj(T& v) { return &v; }",
        "#define KV_SET(x, v) (x) = (typename std::remove_reference<decltype(x)>::type)(v)",
        "int main() {"]
    args = []
    for i, a in enumerate(CALL["args"]):
        var, ty = "a%d" % i, "KvP::arg<%d>" % i
        args.append(var)
        if a["kind"] == "buffer":
            n = a["bytes"] if a.get("bytes") is not None else UNSTATED_BUFFER_BYTES
            lines.append("  void* p%d = nullptr;" % i)
            lines += buffer_lines("p%d" % i, a["name"], n, a.get("elem_size") or 1, managed=True,
                                  values=a.get("values"))
            lines.append("  %s %s = (%s)p%d;" % (ty, var, ty, i))
        elif a["kind"] in ("struct", "bound-struct"):
            # By value or through a pointer: kv_obj reaches the object either way.
            lines.append("  %s %s{};" % (ty, var))
            for j, m in enumerate(a["members"]):
                target = object_lvalue(var, a["name"], m["path"])
                if m["kind"] == "object":
                    lines.append("  kv_obj(%s);" % target)
                elif m["kind"] == "null":
                    lines.append("  %s = nullptr;" % target)
                elif m["kind"] in ("buffer", "pointer"):
                    n = m["bytes"] if m["kind"] == "buffer" else UNSTATED_BUFFER_BYTES
                    lines.append("  void* p%d_%d = nullptr;" % (i, j))
                    lines += buffer_lines("p%d_%d" % (i, j), m["path"], n, m["elem_size"] or 1, managed=True,
                                          values=m.get("values"))
                    lines.append("  KV_SET(%s, p%d_%d);" % (target, i, j))
                elif m["kind"] == "scalar" and m.get("value") is not None:
                    lines.append("  KV_SET(%s, %s);" % (target, c_value(m)))
        elif a["kind"] == "scalar":
            lines.append("  %s %s = (%s)%s;" % (ty, var, ty, c_value(a)))
        elif a["kind"] == "string":
            lines.append("  %s %s = %s;" % (ty, var, json.dumps(a["text"])))
        else:
            lines.append("  %s %s{};" % (ty, var))
    lines.append("  %s(%s);" % (LAUNCHER, ", ".join(args)))
    return "\n" + "\n".join(lines + HARNESS_TAIL) + "\n"


def make_tensor(torch, a):
    dtype = getattr(torch, a["dtype"])
    device = "cpu" if a.get("device") == "cpu" else "cuda"
    shape = a["shape"]
    if a.get("strides"):
        t = torch.empty_strided(shape, a["strides"], dtype=dtype, device=device)
    else:
        t = torch.empty(shape, dtype=dtype, device=device)
    v = fill_value(a)
    if v is not None:
        t.fill_(v)
    elif a.get("values") and None not in a["values"]:
        lo, hi = int(a["values"][0]), int(a["values"][1])
        if a.get("distinct") and hi - max(lo, 0) + 1 >= t.numel():
            # No value twice (a slot mapping), as the binding states.
            perm = torch.randperm(hi - max(lo, 0) + 1, device=device)[:t.numel()] + max(lo, 0)
            t.copy_(perm.reshape(shape).to(dtype))
        else:
            t.copy_(torch.randint(lo, hi + 1, shape, dtype=torch.int64, device=device).to(dtype))
        if a.get("nondecreasing") and t.dim() == 1:
            t.copy_(torch.sort(t).values)
    elif dtype.is_floating_point and dtype.itemsize > 1:
        t.normal_()
    elif VARIED_DATA and not dtype.is_floating_point:
        # racecheck reports a hazard only where the values differ (two threads writing the same
        # zero are no hazard to it): data nobody indexes with varies.
        t.copy_(torch.randint(0, 4, shape, dtype=torch.int64, device=device).to(dtype))
    else:
        t.zero_()
    set_elements(torch, t, CALL.get("elements", {}).get(a["name"], []))
    if a.get("nondecreasing") and t.dim() == 1 and not dtype.is_floating_point:
        t.copy_(torch.cummax(t, 0).values)  # the binding's contract holds past the witness's elements
    return t


def set_elements(torch, t, cells):
    """The witness's loaded values at the elements the kernel reads them from (offsets from the
    start of the tensor's memory, in elements)."""
    if not cells:
        return
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = t.as_strided((n,), (1,), t.storage_offset())
    for index, value in cells:
        if 0 <= index < n - t.storage_offset():
            flat[index] = value


def call_torch_op(module):
    import torch
    args = []
    for a in CALL["args"]:
        if a["kind"] == "tensor":
            args.append(make_tensor(torch, a))
        elif a["kind"] == "scalar":
            v = a.get("value")
            args.append((float(v) if v is not None else 1e-6) if a.get("float") else int(v))
        elif a["kind"] == "string":
            args.append(a["text"])
        else:
            args.append(None)
    module.op(*args)
    launch = module.last_error()
    torch.cuda.synchronize()
    if launch:
        raise RuntimeError("CUDA error: " + launch + " (a kernel launch of the op failed)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-only", action="store_true", help="build what the reproducer runs, and stop")
    args = ap.parse_args()
    if NOT_RUNNABLE and not args.build_only:
        print("not runnable: " + NOT_RUNNABLE)
        return EXIT_CANNOT_RUN
    if KIND == "torch-op":
        module = build_torch_op()
        if args.build_only:
            return EXIT_RAN
        try:
            call_torch_op(module)
        except RuntimeError as exc:  # a CUDA fault surfaces here, and so does a check of the op
            text = str(exc).strip().splitlines() or ["?"]
            if "CUDA error" in str(exc) or "CUDA kernel errors" in str(exc):
                print("CUDA error: " + next((ln for ln in text if "error" in ln.lower()), text[0]))
                return EXIT_CUDA_ERROR
            print("the op raised an error, not a CUDA fault: " + text[0][:300])
            return EXIT_OP_ERROR
    else:
        source = {"kernel": harness_source, "host": host_harness_source}.get(KIND, lambda: "")()
        exe = nvcc_build(write_main_source(source, "harness.cu"))
        if args.build_only:
            return EXIT_RAN
        done = subprocess.run([exe] + ARGV, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        sys.stdout.write(done.stdout[-4000:])
        if done.returncode != 0:
            if done.returncode < 0:
                print("program fault: signal %d" % -done.returncode)
            elif "CUDA error" not in done.stdout:
                print("the program exited with status %d" % done.returncode)
            return EXIT_CUDA_ERROR
    print("ran without a CUDA error (under compute-sanitizer, its report says whether an access was invalid)")
    return EXIT_RAN


if __name__ == "__main__":
    sys.exit(main())
'''


def _docstring(r: Repro, finding: dict) -> str:
    w = ", ".join(f"{k}={v}" for k, v in list(finding.get("witness", {}).items())[:16])
    tool = "python repro.py" if not r.use_sanitizer else f"compute-sanitizer --tool {r.tool} --target-processes all python repro.py"
    lines = [f"kernelvet reproducer: {r.check} at {r.where} (op {', '.join(finding.get('ops', []))})",
             "", f"models: {', '.join(finding.get('models', []))}; dtypes: {', '.join(finding.get('dtypes', []))}",
             f"witness: {w}", "", "    python repro.py --build-only   # build only",
             f"    {tool}", "", "Exit status: 0 ran with no CUDA error, 1 a CUDA error, 2 the build failed, "
             "3 it cannot run (the reason is printed), 4 the op raised an error that is not a CUDA fault.",
             "The repository is found at ROOT (relative to this file) or $KERNELVET_REPO_ROOT."]
    if r.not_runnable:
        lines.append(f"Not runnable: {r.not_runnable}.")
    for note in r.notes:
        lines.append(f"Note: {note}.")
    return "\n".join(x.replace('"""', "'''").replace("\\", "/") for x in lines)


def render(r: Repro, finding: dict, root_rel: str) -> str:
    """The text of ``repro.py`` for ``r``: constants, then the shared runtime."""
    call = r.call or {"args": [], "loads": {}, "op": "", "launcher": "", "unknown": []}
    kernel = call["op"][len(KERNEL_OP):].strip() if call["op"].startswith(KERNEL_OP) else ""
    consts = {
        "FINGERPRINT": r.fingerprint or "finding", "KIND": r.kind, "ROOT": root_rel, "SOURCES": r.sources,
        "INCLUDE_DIRS": r.include_dirs, "DEFINES": r.defines, "ARCH": r.arch if r.arch != "sm_80" else "native",
        "LAUNCHER": call.get("launcher", ""), "KERNEL": kernel, "CALL": call, "NOT_RUNNABLE": r.not_runnable,
        "UNSTATED_BUFFER_BYTES": UNSTATED_BUFFER_BYTES, "DEVICE_BYTES": r.device_bytes, "ARGV": r.argv,
        "VARIED_DATA": r.tool == "racecheck",
    }
    head = "#!/usr/bin/env python3\n" + '"""' + _docstring(r, finding) + '\n"""\n'
    body = "\n".join(f"{k} = {v!r}" for k, v in consts.items())
    return head + body + "\n" + _RUNTIME


def write(r: Repro, finding: dict, out_dir: Path, root: Path) -> Path:
    """Write the reproducer of ``finding`` into ``out_dir`` (repro.py and repro.json)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    root_rel = os.path.relpath(root, out_dir)
    (out_dir / "repro.py").write_text(render(r, finding, root_rel))
    (out_dir / "repro.json").write_text(json.dumps(r.describe(), indent=2) + "\n")
    return out_dir / "repro.py"


def reproduce(finding: dict, out: Path, name: str, root: Path, spec=None,
              memory_gib: float | None = None, notes: tuple = (), tool: str | None = None) -> tuple[Repro, dict]:
    """Plan and write one finding's reproducer into ``out/name`` (``notes``: said in its
    description besides the plan's own; ``tool``: as plan's); returns it and its row of ``index.json`` (what
    ``kernelvet confirm`` runs)."""
    # The bound the scan chose witnesses under (the manifest's witness_memory_gib) unless told.
    default = getattr(getattr(spec, "options", None), "witness_memory_gib", DEFAULT_MEMORY_GIB)
    r = plan(finding, spec, memory_gib or default, tool)
    r.notes.extend(notes)
    write(r, finding, out / name, root)
    return r, {"dir": name, "fingerprint": r.fingerprint, "where": r.where, "check": r.check, "kind": r.kind,
               "runnable": r.not_runnable is None}

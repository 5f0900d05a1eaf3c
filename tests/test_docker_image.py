"""The Docker image installs a working kernelvet: the Dockerfile's steps replayed without Docker.

CI has no Docker daemon, so this test replays the Dockerfile: it builds the context as
.dockerignore filters it, then runs the ARG, COPY and RUN steps in order, as written, in a fresh
virtual environment (its `pip`, `python` and `kernelvet` first on PATH), with ${SRC} in a
temporary directory. Only the system-packages step (apt-get, as root) is not replayed. Then it
runs the installed `kernelvet` from another directory, outside any source tree, on a small
repository. A stale build/lib, a stub package left in site-packages, a missing package-data file
or an import that only works inside the sources fails here as it would in the image.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def dockerfile_steps(text: str) -> list[tuple[str, str]]:
    """(instruction, arguments) in order; comments dropped, continuation lines joined."""
    steps, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if current and line.lstrip().startswith("#"):
            continue  # a comment inside a continued instruction
        if line.rstrip().endswith("\\"):
            current += line.rstrip()[:-1] + " "
            continue
        current += line
        word, _, rest = current.strip().partition(" ")
        steps.append((word.upper(), rest.strip()))
        current = ""
    return steps


def _pattern_regex(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out, i = out + ".*", i + 2
            if pattern.startswith("/", i):
                out, i = out + "/?", i + 1  # '**/x' also matches 'x' at the top
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def dockerignore_excludes(patterns: list[str], rel: str) -> bool:
    """Docker's rule: the last pattern that matches the path or one of its parent directories
    decides; a '!' pattern includes again."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        pat = raw[1:] if negate else raw
        pat = pat.strip().strip("/")
        if pat and any(_pattern_regex(pat).match(p) for p in prefixes):
            excluded = not negate
    return excluded


def build_context(dest: Path) -> list[str]:
    patterns = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    # Ignored leftovers too (build/, *.egg-info, .venv): .dockerignore, not .gitignore, must keep them out.
    leftovers = [str(p.relative_to(ROOT)) for d in ("build", ".venv") if (ROOT / d).exists()
                 for p in [ROOT / d]] + [str(p.relative_to(ROOT)) for p in ROOT.glob("*.egg-info")]
    copied = []
    for rel in tracked + leftovers:
        if dockerignore_excludes(patterns, rel):
            continue
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
            copied.append(rel)
    return copied


def _expand(word: str, env: dict) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), word)


def replay_copy(args: str, context: Path, env: dict) -> None:
    words = [_expand(w, env) for w in shlex.split(args)]
    *sources, target = words
    for s in sources:
        src = context / s
        assert src.exists(), f"COPY {s}: not in the build context (.dockerignore?)"
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        elif target.endswith("/"):
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, Path(target) / src.name)
        else:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def test_dockerignore_keeps_build_leftovers_out():
    patterns = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
                if ln.strip() and not ln.lstrip().startswith("#")]
    for rel in ("build/lib/analyzers/__init__.py", ".venv/bin/python", "kernelvet.egg-info/PKG-INFO",
                "analyzers/engine/__pycache__/x.pyc", "tests/test_cli.py", ".git/HEAD", ".kernelvet-cache/v1/x.json"):
        assert dockerignore_excludes(patterns, rel), rel
    for rel in ("analyzers/__init__.py", "analyzers/frontend/shims/std/array", "bot/cli.py",
                "pyproject.toml", "README.md", "requirements.lock"):
        assert not dockerignore_excludes(patterns, rel), rel


def test_dockerfile_pins_and_follows_githubs_guidance():
    steps = dockerfile_steps((ROOT / "Dockerfile").read_text())
    [base] = [a for i, a in steps if i == "FROM"]
    assert re.search(r"@sha256:[0-9a-f]{64}$", base), f"base image not pinned by digest: {base}"
    words = {i for i, _ in steps}
    assert "USER" not in words and "WORKDIR" not in words  # Docker actions run as root, workdir set by GitHub
    runs = " ".join(a for i, a in steps if i == "RUN")
    assert "--require-hashes -r ${SRC}/requirements.lock" in runs


def test_the_lock_satisfies_the_declared_dependencies():
    from packaging.requirements import Requirement
    import tomllib
    locked = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", (ROOT / "requirements.lock").read_text(), re.M))
    locked = {k.lower().replace("_", "-"): v for k, v in locked.items()}
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for dep in deps:
        req = Requirement(dep)
        name = req.name.lower().replace("_", "-")
        assert name in locked, f"{name} is not in requirements.lock"
        assert req.specifier.contains(locked[name], prereleases=True), f"{name}=={locked[name]} does not satisfy {dep}"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the image's Python is 3.11")
def test_the_dockerfile_steps_install_a_kernelvet_that_runs_outside_the_sources(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    copied = build_context(context)
    assert "analyzers/__init__.py" in copied and not any(c.startswith(("build/", ".venv/", "tests/")) for c in copied)

    env_dir = tmp_path / "image-python"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    build_env = dict(env)

    steps = dockerfile_steps((ROOT / "Dockerfile").read_text())
    system_steps = [a for i, a in steps if i == "RUN" and a.startswith("apt-get")]
    assert len(system_steps) == 1 and "pip" not in system_steps[0] and "python" not in system_steps[0]
    entrypoint = cmd = None
    for instr, args in steps:
        if instr == "ARG":
            name, _, _default = args.partition("=")
            build_env[name] = str(tmp_path / "src") if name == "SRC" else _default
        elif instr == "COPY":
            replay_copy(args, context, build_env)
        elif instr == "RUN":
            if args in system_steps:
                continue
            r = subprocess.run(["sh", "-c", args], env=build_env, cwd=tmp_path, capture_output=True, text=True)
            assert r.returncode == 0, f"RUN {args[:80]}...\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        elif instr == "ENTRYPOINT":
            entrypoint = json.loads(args)
        elif instr == "CMD":
            cmd = json.loads(args)
    assert entrypoint == ["kernelvet"] and cmd == ["scan", "."]
    assert not (tmp_path / "src").exists(), "the sources should be removed once installed"

    # The image's entry point, run in a repository far from any kernelvet source.
    repo = tmp_path / "workspace"
    (repo / "csrc").mkdir(parents=True)
    (repo / "csrc" / "fill.cu").write_text(
        "__global__ void fill(float* out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i <= n) out[i] = 1.0f;\n"
        "}\n"
        "int main() {\n"
        "  float* d; const int n = 1000;\n"
        "  cudaMalloc(&d, n * sizeof(float));\n"
        "  fill<<<(n + 127) / 128, 128>>>(d, n);\n"
        "  return 0;\n"
        "}\n")
    r = subprocess.run([*entrypoint, *cmd], env=env, cwd=repo, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "csrc/fill.cu:3:" in r.stdout and "oob" in r.stdout, r.stdout
    r = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import analyzers, bot; print(analyzers.__file__)"],
                       env=env, cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0 and "site-packages" in r.stdout, r.stdout + r.stderr

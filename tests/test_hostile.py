"""Hostile pull-request content (docs/security.md): what a repository's files can make kernelvet read,
write, serve from its cache or print. Each test is a way in that once worked."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gitrepo import commit_all, git, kernelvet

MARKER = "kv_outside_marker_7f3a"
PROGRAM = """{prelude}
__global__ void fill(float* out, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}}
int main() {{
  float* d; const int n = 1000;
  cudaMalloc(&d, n * sizeof(float));
  fill<<<(LAUNCH + 127) / 128, 128>>>(d, LAUNCH);
  return 0;
}}
"""


@pytest.fixture
def outside(tmp_path):
    """A header outside the repository: a launch size past the buffer, and a marker."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.h").write_text(f"// {MARKER}\n#define LAUNCH 4000\nint {MARKER} = 1;\n")
    return d / "secret.h"


SPELLINGS = {
    "computed": '#define H "{p}"\n#include H',
    "digraph": '%:include "{p}"',
    "import": '#import "{p}"',
    "include_next": '#include_next "{p}"',
    "comment": '#/**/include "{p}"',
    "continued": '#inc\\\nlude "{p}"',
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_no_spelling_of_include_reads_a_file_outside_the_repository(tmp_path, outside, spelling):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "prog.cu").write_text(PROGRAM.format(prelude=SPELLINGS[spelling].format(p=outside)))
    outputs = []
    for fmt in ("text", "json", "sarif"):
        r = kernelvet("scan", ".", "--format", fmt, "--no-cache", cwd=repo)
        outputs.append(r.stdout + r.stderr)
        assert r.returncode in (3, 5), (spelling, r.stdout, r.stderr)  # LAUNCH is unknown: never a finding from it
        assert "Traceback" not in r.stderr
    text = "\n".join(outputs)
    assert MARKER not in text and "4000" not in text, spelling


def test_has_include_cannot_probe_outside_the_repository(tmp_path, outside):
    repo = tmp_path / "repo"
    repo.mkdir()
    prelude = f'#if __has_include("{outside}")\n#define LAUNCH 4000\n#else\n#define LAUNCH 1000\n#endif'
    (repo / "prog.cu").write_text(PROGRAM.format(prelude=prelude))
    r = kernelvet("scan", ".", "--no-cache", cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr  # the file does not exist for the parser: LAUNCH is 1000


def test_a_header_symlinked_out_of_the_repository_is_not_read(tmp_path, outside):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sizes.h").symlink_to(outside)
    (repo / "prog.cu").write_text(PROGRAM.format(prelude='#define H "sizes.h"\n#include H'))
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo)
    assert MARKER not in r.stdout + r.stderr and "4000" not in r.stdout + r.stderr
    assert r.returncode == 5 and "resolves outside the repository" in r.stdout


def test_a_computed_include_of_a_changed_header_is_not_served_from_the_cache(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sizes.h").write_text("#define LAUNCH 1000\n")
    (repo / "prog.cu").write_text(PROGRAM.format(prelude='#define SIZES "sizes.h"\n#include SIZES'))
    (repo / "kernelvet.yaml").write_text("version: 0\nmodels: [{name: m, fields: {hidden_size: 1}}]\nops:\n"
                                         "  - {name: main, file: prog.cu, args: {}}\n")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    r = kernelvet("scan", ".", *cache, cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr
    (repo / "sizes.h").write_text("#define LAUNCH 1001\n")
    r = kernelvet("scan", ".", *cache, cwd=repo)
    assert r.returncode == 1 and "prog.cu:5:" in r.stdout, r.stdout + r.stderr
    # The diff-aware run selects the op through the header it includes by a macro.
    git(repo, "checkout", "-qb", "topic")
    commit_all(repo, "grow the launch")
    r = kernelvet("diff", "main", *cache, "--explain-impact", cwd=repo)
    assert r.returncode == 1 and "sizes.h changed (included by prog.cu)" in r.stderr, r.stderr

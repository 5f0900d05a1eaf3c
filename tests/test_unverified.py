"""Nothing unverified counts as success (README, "Exit codes"): files no instance reached, compiler
errors in touched files, a scan with no instance, manifests naming what does not exist, bad input
values, dropped includes."""
from __future__ import annotations

import json

from bot.commands.pr import apply_fail_on, exit_code
from gitrepo import commit_all, edit, example_repo, git, kernelvet

BARE = "__global__ void scale(float* x, float a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] *= a;\n}\n"
PROGRAM = ("#include \"missing_helpers.h\"\n#include \"/etc/hostname\"\n"
           "__global__ void fill(float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i < n) out[i] = 1.0f;\n}\n"
           "int main() {\n  float* d; const int n = 1000;\n  cudaMalloc(&d, n * sizeof(float));\n"
           "  fill<<<(n + 127) / 128, 128>>>(d, n);\n  return 0;\n}\n")


def test_a_scan_of_bare_kernels_binary_and_text_files_is_not_verified(tmp_path):
    (tmp_path / "bare.cu").write_text(BARE)
    (tmp_path / "blob.cu").write_bytes(b"\x7fELF\x00\x01" * 50)
    (tmp_path / "notes.txt").write_text("hello\n")
    r = kernelvet("scan", ".", "--format", "json", cwd=tmp_path)
    assert r.returncode == 5, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["summary"]["exit_code"] == 5 and report["summary"]["unverified"] == 2
    why = {u["file"]: u for u in report["unverified"]}
    assert why["bare.cu"]["line"] == 1 and "kernels scale (line 1) have no launcher" in why["bare.cu"]["why"]
    assert "binary file" in why["blob.cu"]["why"]
    assert "kernelvet: not verified: bare.cu:1: kernels scale" in r.stderr
    r = kernelvet("scan", "notes.txt", cwd=tmp_path)
    assert r.returncode == 5 and "not verified: notes.txt: not a CUDA or C++ source" in r.stderr
    assert "0 instances: 0 bug, 0 verified, 0 inconclusive; 0 findings; 1 file not verified" in r.stdout


def test_a_verified_program_beside_a_bare_kernel_still_names_the_bare_kernel(tmp_path):
    (tmp_path / "bare.cu").write_text(BARE)
    (tmp_path / "prog.cu").write_text(PROGRAM)
    r = kernelvet("scan", ".", cwd=tmp_path)
    assert r.returncode == 5, r.stdout + r.stderr
    assert "1 instance: 0 bug, 1 verified" in r.stdout
    # Dropped includes: once each, with the includer's line; the outside path's content is never read.
    assert "note: prog.cu:1: #include missing_helpers.h dropped: not found" in r.stdout
    assert "note: prog.cu:2: #include /etc/hostname dropped: outside the repository" in r.stdout
    assert r.stdout.count("missing_helpers.h dropped") == 1
    r = kernelvet("scan", "prog.cu", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_program_whose_main_is_in_a_header_is_verified_through_the_source_that_includes_it(tmp_path):
    (tmp_path / "prog.cuh").write_text(PROGRAM.replace("i < n", "i <= n"))
    (tmp_path / "prog.cu").write_text('#include "prog.cuh"\n')
    (tmp_path / "other.cu").write_text('#include "prog.cuh"\n' + BARE)
    r = kernelvet("scan", ".", "--format", "json", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert [(i["op"], i["file"], i["verdict"]) for i in report["instances"]] == [("main", "prog.cuh", "bug")]
    # prog.cu is main's translation unit; other.cu also defines a kernel nothing launches.
    assert [u["file"] for u in report["unverified"]] == ["other.cu"], report["unverified"]
    assert r.returncode == 1 and report["summary"]["unverified"] == 1, r.stdout + r.stderr  # the bug comes first


def test_a_compiler_error_in_a_changed_file_is_not_verified_not_inconclusive(tmp_path):
    repo = example_repo(tmp_path / "repo")
    git(repo, "checkout", "-qb", "topic")
    edit(repo, "csrc/quant_kernels.cu", "const int num_elems = input.numel();",
         "const int64_t num_elems = input.numel();\n  undeclared_helper(num_elems);")
    commit_all(repo, "wip")
    r = kernelvet("diff", "main", "--format", "json", "--cache-dir", str(tmp_path / "c"), cwd=repo)
    report = json.loads(r.stdout)
    assert r.returncode == 5, r.stderr
    [u] = report["unverified"]
    assert u["file"] == "csrc/quant_kernels.cu" and u["why"].startswith("does not compile: use of undeclared identifier")
    assert exit_code(report, "bug") == 5 and exit_code(report, "never") == 0
    # A comment-only change to the same file: nothing to verify again, a clean pass.
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-qb", "comment")
    edit(repo, "csrc/quant_kernels.cu", "const int num_elems = input.numel();",
         "const int num_elems = input.numel();  // elements")
    commit_all(repo, "comment")
    r = kernelvet("diff", "main", "--cache-dir", str(tmp_path / "c"), cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr


def test_fail_on_semantics():
    # 0 clean, 1 findings, 2 usage, 3 inconclusive, 4 internal, 5 not verified, 6 contract findings
    table = {"never": [0, 0, 2, 0, 4, 0, 0], "bug": [0, 1, 2, 0, 4, 5, 0], "contract": [0, 1, 2, 0, 4, 5, 6],
             "inconclusive": [0, 1, 2, 3, 4, 5, 6]}
    for fail_on, want in table.items():
        assert [apply_fail_on(code, fail_on) for code in range(7)] == want, fail_on


def test_bad_action_inputs_are_rejected_by_name(tmp_path):
    for flag, value, message in (("--fail-on", "nevr", "input fail-on: 'nevr' is not one of bug, contract, inconclusive, never"),
                                 ("--max-comments", "lots", "input max-comments: 'lots' is not a whole number"),
                                 ("--time-budget", "-1", "input time-budget: '-1' is not a positive number"),
                                 ("--shard", "2of4", "input shard: '2of4' is not I/N"),
                                 ("--explain-impact", "yes", "input explain-impact: 'yes' is not true or false")):
        r = kernelvet("action", "--mode=scan", f"{flag}={value}", cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, (flag, r.stderr)


def test_a_manifest_naming_a_missing_file_or_launcher_is_a_usage_error(tmp_path):
    repo = example_repo(tmp_path / "repo")
    edit(repo, "kernelvet.yaml", "file: csrc/activation_kernels.cu", "file: csrc/activaton_kernels.cu", 2)
    edit(repo, "kernelvet.yaml", "  - name: fused_add_rms_norm", "  - name: fused_add_rms_nrm")
    for cmd in (["manifest", "check"], ["scan", "."]):
        r = kernelvet(*cmd, cwd=repo)
        assert r.returncode == 2, (cmd, r.stdout, r.stderr)
        assert ("kernelvet.yaml:39:5: ops[1] (fused_add_rms_nrm): no function named 'fused_add_rms_nrm' in "
                "csrc/layernorm_kernels.cu or the headers it includes (did you mean 'fused_add_rms_norm'") in r.stderr
        assert ("kernelvet.yaml:48:5: ops[2] (silu_and_mul): no file 'csrc/activaton_kernels.cu' in the repository "
                "(did you mean 'csrc/activation_kernels.cu'") in r.stderr
        assert "op-error" not in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_a_manifest_that_is_not_utf8_or_a_directory_is_a_usage_error(tmp_path):
    (tmp_path / "k.yaml").write_bytes(b"version: 0\nmodels: []\nops: []\n# caf\xe9\n")
    (tmp_path / "k.cu").write_text(BARE)
    r = kernelvet("scan", ".", "--manifest", "k.yaml", cwd=tmp_path)
    assert r.returncode == 2 and "k.yaml:4:6: not UTF-8 (byte 0xe9)" in r.stderr, r.stderr
    (tmp_path / "dir.yaml").mkdir()
    r = kernelvet("manifest", "check", "dir.yaml", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr


TILED_PROGRAM = ('#include "tile_config.h"\n#include "common.h"\n#include <cuda.h>\n'
                 "__global__ void fill(float* out, int n) {\n  int i = blockIdx.x * ROWS_PER_TILE + threadIdx.x;\n"
                 "  if (i < n) out[i] = 1.0f;\n}\n"
                 "int main() {\n  float* d; const int n = 1000;\n  cudaMalloc(&d, n * sizeof(float));\n"
                 "  fill<<<(n + ROWS_PER_TILE - 1) / ROWS_PER_TILE, ROWS_PER_TILE>>>(d, n);\n  return 0;\n}\n")


def test_a_quoted_header_no_include_directory_holds_is_found_by_its_name_and_said_so(tmp_path):
    """A repository laid out as llama.cpp is (sources in lib/src/backend/, public headers in
    lib/include/, which only the build's -I names): a quoted include found nowhere else is the one repository
    file of that name, and a note says which. A name two files carry stays dropped, and an
    angle-bracket include is a library's, never the repository's file of the same name."""
    (tmp_path / "lib" / "include").mkdir(parents=True)
    (tmp_path / "lib" / "include" / "tile_config.h").write_text("#pragma once\n#define ROWS_PER_TILE 128\n")
    for d in ("a", "b"):
        (tmp_path / "third_party" / d).mkdir(parents=True)
        (tmp_path / "third_party" / d / "common.h").write_text("#pragma once\n")
    backend = tmp_path / "lib" / "src" / "backend"
    (backend / "vendors").mkdir(parents=True)
    # The repository's own wrapper named like the CUDA driver header: <cuda.h> stays the library's.
    (backend / "vendors" / "cuda.h").write_text("#error not the CUDA header\n")
    (backend / "prog.cu").write_text(TILED_PROGRAM)
    r = kernelvet("scan", ".", "--format", "json", cwd=tmp_path)
    report = json.loads(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [(i["op"], i["verdict"]) for i in report["instances"]] == [("main", "verified")]
    notes = report["include_notes"]
    assert ("lib/src/backend/prog.cu:1: #include tile_config.h found by its name at lib/include/tile_config.h: no include "
            "directory given holds it (the manifest's include_dirs say where the build looks)") in notes, notes
    assert any(n.startswith("lib/src/backend/prog.cu:2: #include common.h dropped: not found") for n in notes), notes
    assert not any("cuda.h" in n for n in notes), notes
    sarif = json.loads(kernelvet("scan", ".", "--format", "sarif", cwd=tmp_path).stdout)
    kinds = sorted(n["descriptor"]["id"] for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
                   if "include" in n["descriptor"]["id"])
    assert kinds == ["include-dropped", "include-found-by-name"], kinds

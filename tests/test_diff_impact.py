"""Changes (unidiff, git, the API's file list) and their impact: include graph, IR hashes, manifest
instances. No instance is verified here: these tests are about what would be."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzers.api import Workspace
from bot.diff import from_git, from_pr_files, parse_patch
from bot.impact import BaseTree, analyse
from bot.irhash import op_hash
from bot.manifest import load
from gitrepo import commit_all, edit, example_repo, git

LAYERNORM, QUANT = "csrc/layernorm_kernels.cu", "csrc/quant_kernels.cu"

DIFF = """\
diff --git a/k.cu b/k.cu
index 1111111..2222222 100644
--- a/k.cu
+++ b/k.cu
@@ -10,6 +10,7 @@ void f() {
 a
 b
-c
+c2
+c3
 d
 e
 f
diff --git a/old.h b/new.h
similarity index 90%
rename from old.h
rename to new.h
--- a/old.h
+++ b/new.h
@@ -1,2 +1,2 @@
-x
+y
 z
diff --git a/gone.cuh b/gone.cuh
deleted file mode 100644
--- a/gone.cuh
+++ /dev/null
@@ -1,1 +0,0 @@
-q
"""


def test_unified_diff_gives_files_and_commentable_lines():
    cs = parse_patch(DIFF)
    k = cs.get("k.cu")
    assert k.status == "modified" and k.hunks == [(10, 16)] and k.added == {12, 13}
    assert k.commentable(10) and k.commentable(16) and not k.commentable(9) and not k.commentable(17)
    assert cs.get("new.h").status == "renamed" and cs.get("new.h").old_path == "old.h"
    assert cs.get("gone.cuh").status == "removed" and cs.get("gone.cuh").hunks == []
    assert cs.paths() == {"k.cu", "new.h", "old.h", "gone.cuh"}


def test_pull_request_files_with_and_without_patch():
    cs = from_pr_files([
        {"filename": "a.cu", "status": "modified", "patch": "@@ -1,2 +1,3 @@\n x\n+y\n z"},
        {"filename": "big.cu", "status": "modified", "patch": None},  # too large for GitHub to show
        {"filename": "b.cuh", "status": "renamed", "previous_filename": "a.cuh", "patch": "@@ -3 +3 @@\n-p\n+q"},
        {"filename": "new.h", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+m\n+n"},
    ])
    assert cs.get("a.cu").hunks == [(1, 3)] and cs.get("a.cu").added == {2}
    assert not cs.get("big.cu").patch_known and not cs.get("big.cu").commentable(1)
    assert cs.get("b.cuh").old_path == "a.cuh" and cs.get("b.cuh").commentable(3)
    assert cs.get("new.h").status == "added" and cs.get("new.h").commentable(2)
    assert "a.cuh" in cs.paths()


@pytest.fixture
def repo(tmp_path):
    return example_repo(tmp_path / "repo")


def impact(repo: Path, base: str = "main", use_base: bool = True):
    manifest = load(repo / "kernelvet.yaml")
    ws = Workspace(repo, manifest.spec.include_dirs, manifest.spec.defines, manifest.spec.arch)
    changes = from_git(repo, base)
    tree = BaseTree(repo, git(repo, "rev-parse", base)) if use_base else None
    try:
        return analyse(repo, manifest, changes, ws, tree)
    finally:
        if tree:
            tree.close()


def decisions(imp) -> dict:
    return {o.name: o.decision for o in imp.ops}


def test_editing_one_kernel_does_not_verify_the_other_kernel_of_its_file(repo):
    git(repo, "checkout", "-qb", "feature")
    edit(repo, LAYERNORM, "const int id = blockIdx.x * vec_hidden_size + idx;",
         "const int64_t id = static_cast<int64_t>(blockIdx.x) * vec_hidden_size + idx;")
    commit_all(repo, "fix")
    imp = impact(repo)
    d = decisions(imp)
    assert d["fused_add_rms_norm"] == "verify" and d["rms_norm"] == "unchanged"
    assert {p.op_name for p in imp.planned} == {"fused_add_rms_norm"} and len(imp.planned) == 6
    assert d["silu_and_mul"] == "unaffected"
    text = imp.explain()
    assert "rms_norm (csrc/layernorm_kernels.cu): unchanged — same IR as the base" in text
    assert "because csrc/layernorm_kernels.cu changed" in text


def test_comment_only_edit_verifies_nothing(repo):
    edit(repo, QUANT, "void static_scaled_int8_quant(", "// Quantises with a static scale.\n\n"
                                                       "void static_scaled_int8_quant(")
    edit(repo, LAYERNORM, "#include", "// layer norms\n#include")
    imp = impact(repo, "HEAD")
    assert imp.planned == []
    assert decisions(imp)["static_scaled_int8_quant"] == "unchanged"


def test_a_changed_header_reaches_every_op_including_it_and_the_ir_decides(repo):
    header = repo / "csrc" / "vec_types.cuh"
    header.write_text(header.read_text() + "\n// a comment\n")
    imp = impact(repo, "HEAD")
    including = {o.name for o in imp.ops if any("vec_types.cuh changed" in r for r in o.reasons)}
    assert {"rms_norm", "fused_add_rms_norm", "silu_and_mul", "gelu_and_mul"} <= including
    assert imp.planned == []  # a comment: no IR changed
    assert any("(included by csrc/layernorm_kernels.cu)" in r for o in imp.ops for r in o.reasons)


def test_without_a_base_the_affected_ops_go_to_the_cache(repo):
    edit(repo, QUANT, "void static_scaled_int8_quant(", "// c\nvoid static_scaled_int8_quant(")
    imp = impact(repo, "HEAD", use_base=False)
    assert {p.op_name for p in imp.planned} == {"static_scaled_int8_quant", "dynamic_per_token_int8_quant"}


def test_a_manifest_change_verifies_exactly_the_instances_it_changes(repo):
    # A model with the sizes of an existing one adds no instance; a binding change of one op
    # changes only that op's instances.
    m = (repo / "kernelvet.yaml").read_text()
    m = m.replace("  - config: models/Phi3ForCausalLM.json\n    name: phi3-mini\n",
                  "  - config: models/Phi3ForCausalLM.json\n    name: phi3-mini\n"
                  "  - config: models/Phi3ForCausalLM.json\n    name: phi3-mini-copy\n")
    m = m.replace("      scale: {shape: [1], dtype: float32}", "      scale: {shape: [1, 1], dtype: float32}")
    (repo / "kernelvet.yaml").write_text(m)
    imp = impact(repo, "HEAD")
    assert {p.op_name for p in imp.planned} == {"static_scaled_int8_quant"}
    assert len(imp.planned) == 6
    # A model config edit: only the instances that read the changed field.
    git(repo, "checkout", "--", "kernelvet.yaml")
    cfg = repo / "models" / "JAISLMHeadModel.json"
    data = json.loads(cfg.read_text())
    data["n_inner"] = data.get("n_inner", 13653) + 8
    cfg.write_text(json.dumps(data))
    imp = impact(repo, "HEAD")
    assert {p.op_name for p in imp.planned} == {"silu_and_mul", "gelu_and_mul"}
    assert all(p.models == ["jais-13b"] for p in imp.planned)


def test_ir_hash_does_not_depend_on_lowering_order(repo):
    a = Workspace(repo)
    first = op_hash(a.op(LAYERNORM, "fused_add_rms_norm"))
    b = Workspace(repo)
    b.op(LAYERNORM, "rms_norm")  # lowered first: shifts the variable ids of what follows
    assert op_hash(b.op(LAYERNORM, "fused_add_rms_norm")) == first

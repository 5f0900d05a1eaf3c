"""Property-based tests of manifest loading (hypothesis, seeded): no manifest makes kernelvet fail
with an internal error, and none makes a known bug 'verified' (docs/security.md)."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from analyzers.binding import ExprError
from bot.manifest import ManifestError, expand, load
from bot.manifest.targets import check_targets
from bot.scan import scan
from gitrepo import EXAMPLE

# Ways to write a size that must be refused: each would let the engine compute with a value no
# caller can pass (a zero divisor, a wrapped constant, a boolean, a negative size).
HOSTILE = ["{x} // 0", "ceil_div({x}, 0)", "{x} // (batch - batch)", "{x} / 0.0", "round_up({x}, 0)",
           "{x} % (seq_len - seq_len)", "2 ** 64 ** 64", "1e308 ** 2", "-{x}", "{x} - 2 ** 62 - 2 ** 62",
           "9223372036854775808", "10 ** 40", "ceil_div({x})", "min()", "(" * 400 + "{x}" + ")" * 400,
           " + ".join(["1"] * 400), "not " * 600 + "{x}", "{x} // (batch - 1)", True, False, -1, 2 ** 70, 1e300]
SIZE_ONLY = ["-{x}", "{x} - 2 ** 62 - 2 ** 62", -1]
# Ways to write the same size: accepted, they must leave every bug where it was.
SAME = ["{x}", "{x} * 1", "{x} // 1", "{x} + 0", "ceil_div({x}, 1)", "round_up({x}, 1)", "min({x}, 2 ** 62)",
        "max({x}, 1)", "({x})", "{x} + (batch - batch)", "1 * {x} * 1"]


def _manifest(tmp: Path, rewrite) -> Path:
    doc = yaml.safe_load((EXAMPLE / "kernelvet.yaml").read_text())
    doc["models"] = [m for m in doc["models"] if m["name"] == "llama-13b"]
    doc["ops"] = [o for o in doc["ops"] if o["name"] == "static_scaled_int8_quant"]
    for m in doc["models"]:
        m["config"] = str(EXAMPLE / m["config"])
    rewrite(doc)
    p = tmp / "kernelvet.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


def _fill(template, x: str):
    return template.format(x=x) if isinstance(template, str) else template


def _loads(path: Path):
    """The planned instances, or None when the manifest is refused with a clear error."""
    try:
        lm = load(path)
        planned = expand(lm, root=EXAMPLE)
        if check_targets(lm, planned, EXAMPLE):
            return None
        return lm, planned
    except ManifestError as exc:
        assert exc.errors and all(isinstance(e, str) and e for e in exc.errors)
        return None


def _rewrite(where: str, value):
    def go(doc):
        if where == "derived":
            doc["derived"]["num_tokens"] = _fill(value, "batch * seq_len")
        elif where == "constraint":
            doc["constraints"] = [f"{_fill(value, 'batch * seq_len') if isinstance(value, str) else value} <= 9000000"]
        elif where == "shape":
            doc["ops"][0]["args"]["input"]["shape"][1] = _fill(value, "hidden_size")
        elif where == "dim":
            doc["user_dims"]["seq_len"]["max"] = value if not isinstance(value, str) else _fill(value, "2000000")
    return go


PLACES = st.sampled_from(["derived", "constraint", "shape", "dim"])


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=PLACES, template=st.sampled_from(HOSTILE))
def test_hostile_sizes_are_refused_at_load(tmp_path_factory, where, template):
    tmp = tmp_path_factory.mktemp("m")
    got = _loads(_manifest(tmp, _rewrite(where, template)))
    if where == "constraint" and template in SIZE_ONLY:
        return  # a negative value is no size, but a fine term of a condition
    assert got is None, f"accepted: {where} = {template!r}"


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_manifests_never_crash(tmp_path_factory, data):
    """Random edits anywhere in the document: a clear error or a manifest, never an exception."""
    tmp = tmp_path_factory.mktemp("m")
    leaf = st.one_of(st.integers(-2 ** 80, 2 ** 80), st.floats(allow_nan=True), st.booleans(), st.none(),
                     st.text(max_size=30), st.sampled_from([t for t in HOSTILE if isinstance(t, str)]))
    junk = st.recursive(leaf, lambda kids: st.one_of(st.lists(kids, max_size=3),
                                                     st.dictionaries(st.text(max_size=8), kids, max_size=3)),
                        max_leaves=8)

    def rewrite(doc):
        paths = []

        def walk(node, path):
            paths.append(path)
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, path + (k,))
            elif isinstance(node, list):
                for i, v in enumerate(node):
                    walk(v, path + (i,))
        walk(doc, ())
        path = data.draw(st.sampled_from(paths[1:]))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = data.draw(junk)

    _loads(_manifest(tmp, rewrite))


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(where=PLACES.filter(lambda w: w != "dim"), template=st.sampled_from(SAME + HOSTILE))
def test_no_accepted_manifest_makes_the_known_bug_verified(tmp_path_factory, where, template):
    """static_scaled_int8_quant has a 32-bit narrowing (`int num_elems = input.numel()`) and a
    missing token guard: however its sizes are written, if the manifest is accepted, the instance
    is a bug (or inconclusive, binding-infeasible), never verified."""
    tmp = tmp_path_factory.mktemp("m")
    repo = tmp / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".kernelvet-cache", "kernelvet.yaml"))
    got = _loads(_manifest(repo, _rewrite(where, template)))
    if got is None:
        assert template not in SAME, f"refused: {where} = {template!r}"
        return
    lm, planned = got
    report = scan(repo, lm, planned=planned, jobs=1)
    verdicts = {ir.result.verdict for ir in report.instances}
    assert verdicts and "verified" not in verdicts, (where, template, verdicts)

"""SARIF 2.1.0: valid against the OASIS schema (as shipped by the sarif-kit package), within
GitHub's limits, with what code scanning reads: rules with help, levels, repository-relative URIs,
line-independent fingerprints, the witness as a code flow, the run's category."""
from __future__ import annotations

import json
import shutil

import pytest

from gitrepo import EXAMPLE, kernelvet

validation_errors = pytest.importorskip("sarif_kit.validate").validation_errors  # its wheel needs Python 3.11


@pytest.fixture(scope="module")
def example_sarif(tmp_path_factory, shared_cache):
    repo = tmp_path_factory.mktemp("sarif") / "ex"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".kernelvet-cache"))
    r = kernelvet("scan", str(repo), "--cache-dir", str(shared_cache), "--format", "sarif", cwd=repo)
    assert r.returncode == 1, r.stderr
    return repo, json.loads(r.stdout)


def test_valid_against_the_sarif_schema(example_sarif):
    _, sarif = example_sarif
    assert validation_errors(sarif) == []
    assert sarif["version"] == "2.1.0"


def test_rules_and_results_are_what_code_scanning_reads(example_sarif):
    repo, sarif = example_sarif
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "kernelvet" and run["automationDetails"]["id"] == "kernelvet/scan/"
    for rule in rules:
        assert rule["help"]["markdown"] and "kernelvet: ignore[" in rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] == "error"
        assert 0 < float(rule["properties"]["security-severity"]) <= 10
        assert len(rule["properties"]["tags"]) <= 20
    results = run["results"]
    assert {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results} == {
        ("narrowing", 70), ("narrowing", 88), ("misaligned", 56), ("oob", 57), ("oob", 37), ("narrowing", 55)}
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"] and r["level"] == "error"
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "file:", "<")) and (repo / uri).is_file()
        assert r["partialFingerprints"]["primaryLocationLineHash"]
        flow = r["codeFlows"][0]["threadFlows"][0]["locations"]
        assert flow and all(not loc["location"]["physicalLocation"]["artifactLocation"]["uri"].startswith("<")
                            for loc in flow)
        assert "num_tokens" in flow[-1]["state"] or "batch" in flow[-1]["state"]  # the witness
        assert r["codeFlows"][0]["message"]["text"].startswith("witness: ")
    fingerprints = [r["partialFingerprints"]["primaryLocationLineHash"] for r in results]
    assert len(set(fingerprints)) == len(fingerprints)  # lines 70 and 88 share their text, not their id
    numel = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 55)
    assert numel["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == \
        "  const int64_t num_elems = input.numel();"
    oob37 = next(r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 37)
    assert {loc["physicalLocation"]["region"]["startLine"] for loc in oob37["relatedLocations"]} >= {45, 48}


def test_fingerprints_survive_lines_moving(example_sarif, shared_cache, tmp_path):
    repo, sarif = example_sarif
    moved = tmp_path / "moved"
    shutil.copytree(repo, moved)
    for f in (moved / "csrc").glob("*.cu"):
        f.write_text("// Copyright header\n// added above everything\n" + f.read_text())
    r = kernelvet("scan", str(moved), "--cache-dir", str(shared_cache), "--format", "sarif", cwd=moved)
    after = json.loads(r.stdout)["runs"][0]["results"]
    before = sarif["runs"][0]["results"]
    key = lambda r: r["partialFingerprints"]["primaryLocationLineHash"]  # noqa: E731
    assert sorted(map(key, after)) == sorted(map(key, before))
    lines = {key(r): r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after}
    assert all(lines[key(r)] == r["locations"][0]["physicalLocation"]["region"]["startLine"] + 2 for r in before)

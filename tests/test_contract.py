"""Contract findings (zero-config, README "Contract findings"): listed apart from bugs in every
output, exit code 6, failing only under fail-on contract, never commented inline."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.commands.pr import exit_code
from bot.github import render
from bot.github.review import place

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "contract"


def kernelvet(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True, text=True, cwd=cwd or ROOT)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    """One zero-config scan of a repository with a contract finding (the sampling op whose `probs`
    rows the launcher never checks) and a bug (`top_k` at 0 where the op gives 0 a meaning)."""
    repo = tmp_path_factory.mktemp("contract")
    shutil.copy(FIXTURES / "sampling_rows_of_output.cu", repo / "sampling.cu")
    out = repo / "out"
    r = kernelvet("scan", str(repo / "sampling.cu"), "--root", str(repo), "--no-cache", "--json", str(out / "r.json"),
                  "--sarif", str(out / "r.sarif"))
    return r, json.loads((out / "r.json").read_text()), json.loads((out / "r.sarif").read_text())


def test_contract_only_scan_exits_6_and_lists_the_finding_apart(scanned):
    r, report, _ = scanned
    assert r.returncode == 6, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "contract findings (1)" in r.stdout
    assert "contract: it needs `probs` smaller than the op's accesses assume in probs.size(0)" in r.stdout
    s = report["summary"]
    assert (s["findings"], s["contract_findings"], s["contract"], s["bug"]) == (1, 1, 1, 0)
    [f] = report["findings"]
    assert f["contract"].startswith("it needs `probs`") and f["zero_config"]
    [inst] = report["instances"]
    assert inst["verdict"] == "contract"


def test_fail_on_decides_whether_a_contract_finding_fails(scanned):
    _, report, _ = scanned
    assert exit_code(report, "bug") == 0
    assert exit_code(report, "contract") == 6
    assert exit_code(report, "inconclusive") == 6
    assert exit_code(report, "never") == 0


def test_sarif_gives_a_contract_finding_level_note(scanned):
    _, _, sarif = scanned
    [result] = sarif["runs"][0]["results"]
    assert result["level"] == "note"
    assert result["properties"]["contract"].startswith("it needs `probs`")
    assert "Contract finding: it needs" in result["message"]["text"]


def test_review_lists_contract_findings_in_the_body_not_inline(scanned):
    _, report, _ = scanned

    class Changes:  # every line of every file is commentable
        def get(self, path):
            return self

        def commentable(self, line):
            return True

    wanted, elsewhere = place(report["findings"], Changes())
    assert wanted == [] and elsewhere == []
    body = render.summary(report)
    assert "**No findings** · 1 contract finding" in body
    assert "#### 1 contract finding (zero-config)" in body and "🟨 contract" in body


def test_a_bug_in_another_instance_outranks_the_contract_finding(tmp_path):
    # The same access found as a contract finding in zero-config and as a bug for a binding whose
    # output is longer than probs: the merged finding is the bug, and the run fails on it.
    from analyzers.findings import Finding
    from analyzers.kir.nodes import Span
    from bot.scan import _preferred
    span = Span("k.cu", 3, 1, 3, 9, "probs[i]")
    contract = Finding("oob", "m", span, "op", "k", {"n": 1}, contract="it needs ...")
    bug = Finding("oob", "m", span, "op", "k", {"n": 9})
    assert _preferred(bug, contract) and not _preferred(contract, bug)

"""Hostile pull-request content (docs/security.md): what a repository's files can make kernelvet read,
write, serve from its cache or print. Each test is a way in that once worked."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitrepo import commit_all, git, kernelvet
from analyzers.frontend.parse import sweep_dead_overlays

MARKER = "kv_outside_marker_7f3a"
INSTANCES, BUGS, FINDINGS = 12, 12, 2  # the example's two quantisation ops (quant_repo)
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
    (d / "secret.h").write_text(f"// {MARKER}\n#define LAUNCH 7777\nint {MARKER} = 1;\n")
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
    # One run writes all three reports: text on stdout, JSON and SARIF to files.
    r = kernelvet("scan", ".", "--format", "text", "--json", "out.json", "--sarif", "out.sarif", "--no-cache", cwd=repo)
    assert r.returncode in (3, 5), (spelling, r.stdout, r.stderr)  # LAUNCH is unknown: never a finding from it
    assert "Traceback" not in r.stderr
    reports = [(repo / "out.json").read_text(), (repo / "out.sarif").read_text()]
    assert all(reports), "every report was written"
    text = "\n".join([r.stdout, r.stderr, *reports])
    assert MARKER not in text and "7777" not in text, spelling


def test_has_include_cannot_probe_outside_the_repository(tmp_path, outside):
    repo = tmp_path / "repo"
    repo.mkdir()
    prelude = f'#if __has_include("{outside}")\n#define LAUNCH 7777\n#else\n#define LAUNCH 1000\n#endif'
    (repo / "prog.cu").write_text(PROGRAM.format(prelude=prelude))
    r = kernelvet("scan", ".", "--no-cache", cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr  # the file does not exist for the parser: LAUNCH is 1000


def test_a_header_symlinked_out_of_the_repository_is_not_read(tmp_path, outside):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sizes.h").symlink_to(outside)
    (repo / "prog.cu").write_text(PROGRAM.format(prelude='#define H "sizes.h"\n#include H'))
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo)
    assert MARKER not in r.stdout + r.stderr and "7777" not in r.stdout + r.stderr
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


def _tiny_program_repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "prog.cu").write_text(PROGRAM.format(prelude="#define LAUNCH 1001"))
    return repo


def test_a_source_symlinked_out_of_the_repository_is_not_read(tmp_path, outside):
    repo = _tiny_program_repo(tmp_path)
    secret = outside.parent / "k.cu"
    secret.write_text(f"// {MARKER}\n" + PROGRAM.format(prelude="#define LAUNCH 7777"))
    (repo / "linked.cu").symlink_to(secret)
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo)
    out = r.stdout + r.stderr
    assert MARKER not in out and "7777" not in out and str(outside.parent) not in out
    report = json.loads(r.stdout)
    assert {u["file"]: u["why"] for u in report["unverified"]}["linked.cu"].startswith("resolves outside the repository")
    assert r.returncode == 1  # prog.cu's own bug is still found


def test_manifest_paths_cannot_leave_the_repository(tmp_path, outside):
    repo = _tiny_program_repo(tmp_path)
    (outside.parent / "cfg.json").write_text('{"hidden_size": 4096, "' + MARKER + '": 1}')
    git(repo, "init", "-q", "-b", "main")
    for ops, models, expect in (
            ("  - {name: main, file: ../outside/k.cu, args: {}}", "[{name: m, fields: {hidden_size: 1}}]",
             "file '../outside/k.cu' is outside the repository"),
            (f"  - {{name: main, file: {outside}, args: {{}}}}", "[{name: m, fields: {hidden_size: 1}}]",
             "file an absolute path is outside the repository"),
            ("  - {name: main, file: prog.cu, args: {}}", f"[{{config: {outside.parent / 'cfg.json'}}}]",
             "config 'cfg.json' is outside the repository"),
            ("  - {name: main, file: prog.cu, args: {}}", "[{config: ../outside/cfg.json}]",
             "config 'cfg.json' is outside the repository")):
        (repo / "kernelvet.yaml").write_text(f"version: 0\nmodels: {models}\nops:\n{ops}\n")
        for cmd in (["manifest", "check"], ["scan", "."]):
            r = kernelvet(*cmd, cwd=repo)
            assert r.returncode == 2 and expect in r.stderr, (cmd, r.stderr)
            assert MARKER not in r.stdout + r.stderr and str(outside) not in r.stdout + r.stderr


def test_outputs_and_the_cache_never_follow_a_symlink_out_of_the_repository(tmp_path, outside):
    repo = _tiny_program_repo(tmp_path)
    target = outside.parent / "victim.sarif"
    target.write_text("untouched\n")
    (repo / "kernelvet.sarif").symlink_to(target)
    cache_target = outside.parent / "cache"
    cache_target.mkdir()
    (repo / ".kernelvet-cache").symlink_to(cache_target)
    r = kernelvet("scan", ".", "--sarif", "kernelvet.sarif", cwd=repo)
    assert r.returncode == 2 and "kernelvet.sarif: a symlink that leads outside the repository; not written" in r.stderr
    assert target.read_text() == "untouched\n"
    assert "is a symlink that leads outside the repository: not used" in r.stderr
    assert list(cache_target.iterdir()) == []


def quant_repo(path: Path) -> Path:
    """The example repository with only its two quantisation ops (12 instances, 6 of them bugs):
    the cache and crash tests need buggy instances, not the whole example's time."""
    from gitrepo import example_repo
    import yaml
    repo = example_repo(path)
    doc = yaml.safe_load((repo / "kernelvet.yaml").read_text())
    doc["ops"] = [o for o in doc["ops"] if o["name"] in ("static_scaled_int8_quant", "dynamic_per_token_int8_quant")]
    (repo / "kernelvet.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    commit_all(repo, "only the quantisation ops")
    return repo


def _forge(entry_path: Path, entry: dict) -> None:
    entry_path.write_text(json.dumps(entry))


def test_forged_cache_entries_never_make_a_bug_verified(tmp_path):
    """A pull request commits cache entries for the example's buggy instances; they are keyed by
    public inputs, so their keys are right. None is served: the directory is committed; and entries
    of the wrong shape or naming places outside the repository are misses, not crashes."""
    repo = quant_repo(tmp_path / "repo")
    cache = repo / ".kernelvet-cache"
    r = kernelvet("scan", ".", "--cache-dir", str(cache), "--format", "json", cwd=repo)
    assert r.returncode == 1
    entries = sorted((cache / "v1").glob("*/*.json"))
    assert entries
    bug_entries = [p for p in entries if json.loads(p.read_text())["result"]["verdict"] == "bug"]
    originals = {p: p.read_text() for p in bug_entries}
    for p in bug_entries:
        e = json.loads(p.read_text())
        e["result"].update(verdict="verified", findings=[])
        _forge(p, e)
    (cache / ".gitignore").unlink()
    git(repo, "add", "-f", ".kernelvet-cache")
    commit_all(repo, "a warm cache, kindly provided")
    r = kernelvet("scan", ".", "--cache-dir", str(cache), cwd=repo)
    assert r.returncode == 1 and "holds files committed to the repository: not used" in r.stderr, r.stderr

    # Untracked, hostile shapes: each is a miss (the instance is verified again), never exit 4.
    git(repo, "rm", "-rq", "--cached", ".kernelvet-cache")
    (cache / ".gitignore").write_text("*\n")
    commit_all(repo, "untrack")
    shapes = [json.loads(originals[p]) for p in bug_entries]
    shapes[0]["result"]["verdict"] = 5
    shapes[1]["result"]["findings"] = "none"
    if len(shapes) > 2:
        shapes[2]["result"]["findings"][0:0] = []
        shapes[2]["result"]["verdict"] = "verified"  # contradicts its findings
    if len(shapes) > 3:
        f = dict(shapes[3]["result"]["findings"][0] if shapes[3]["result"]["findings"] else {})
        shapes[3]["result"]["verdict"] = "bug"
        shapes[3]["result"]["findings"] = [dict(f, location=["/etc/hostname", 1, 1, 1, 2, "x"])] if f else []
    if len(shapes) > 4 and shapes[4]["result"]["findings"]:
        loc = shapes[4]["result"]["findings"][0]["location"]
        shapes[4]["result"]["findings"][0]["location"] = [loc[0], 1_000_000, 1, 1_000_000, 2, loc[5]]
    for p, e in zip(bug_entries, shapes[:5]):
        _forge(p, e)
    for p in bug_entries[5:]:
        p.write_text(originals[p])
    r = kernelvet("scan", ".", "--cache-dir", str(cache), "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert "internal error" not in r.stderr and "/etc/hostname" not in r.stdout
    assert report["summary"]["bug"] == BUGS and report["summary"]["findings"] == FINDINGS


def test_with_a_cache_key_only_authenticated_entries_are_served(tmp_path):
    repo = quant_repo(tmp_path / "repo")
    cache = tmp_path / "cache"
    env = {"KERNELVET_CACHE_KEY": "s3cret-from-the-ci"}
    r = kernelvet("scan", ".", "--cache-dir", str(cache), cwd=repo, env=env)
    assert r.returncode == 1
    entries = sorted((cache / "v1").glob("*/*.json"))
    assert entries and all(json.loads(p.read_text()).get("mac") for p in entries)
    r = kernelvet("scan", ".", "--cache-dir", str(cache), "--format", "json", cwd=repo, env=env)
    assert json.loads(r.stdout)["summary"]["cached"] == INSTANCES  # authentic entries are served
    for p in entries:  # well-formed forgeries: verdict verified, the MAC left as it was or removed
        e = json.loads(p.read_text())
        if e["result"]["verdict"] == "bug":
            e["result"].update(verdict="verified", findings=[])
            if len(e["key"]) % 2:
                del e["mac"]
            _forge(p, e)
    for fp in (cache / "v1" / "fp").glob("*/*"):  # fingerprints without their MAC line
        fp.write_text("".join(ln for ln in fp.read_text().splitlines(keepends=True) if not ln.startswith("mac ")))
    r = kernelvet("scan", ".", "--cache-dir", str(cache), "--format", "json", cwd=repo, env=env)
    report = json.loads(r.stdout)
    assert r.returncode == 1 and report["summary"]["bug"] == BUGS and report["summary"]["findings"] == FINDINGS
    assert "s3cret" not in r.stdout + r.stderr


def test_a_file_name_cannot_forge_a_workflow_command(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    evil = "x\n::error file=a.cu,line=1::FORGED\r::warning::FORGED.cu"
    (repo / evil).write_text(PROGRAM.format(prelude="#define LAUNCH 1001"))
    r = kernelvet("scan", ".", "--no-cache", cwd=repo, env={"GITHUB_ACTIONS": "true"})
    assert r.returncode == 1, r.stderr
    # kernelvet's own annotation of the finding is there, the name escaped inside its property.
    [own] = [ln for ln in r.stdout.splitlines() if ln.startswith("::error file=")]
    assert own.startswith("::error file=x%0A%3A%3Aerror file=a.cu%2Cline=1%3A%3AFORGED%0D%3A%3Awarning%3A%3AFORGED.cu,")
    # No other line of either stream starts a command, wherever the name's newline and CR fall.
    for stream in (r.stdout, r.stderr):
        for line in stream.replace("\r", "\n").splitlines():
            assert line == own or not line.lstrip().startswith("::"), line


def test_a_kernel_that_crashes_libclang_beside_good_ones(tmp_path):
    """A 30,000-term sum makes libclang die with SIGSEGV. It is parsed in a process of its own: the
    file is named as not verified, and the good file beside it keeps its bug."""
    repo = tmp_path / "repo"
    repo.mkdir()
    terms = " + ".join(f"x[{i % 7}]" for i in range(30000))
    (repo / "deep_sum.cu").write_text(
        f"__global__ void k(float* x, float* y) {{ y[threadIdx.x] = {terms}; }}\n"
        "int main() { float *x, *y; cudaMalloc(&x, 28); cudaMalloc(&y, 4096); k<<<1, 32>>>(x, y); return 0; }\n")
    (repo / "good.cu").write_text(PROGRAM.format(prelude="#define LAUNCH 1001"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo, env={"TMPDIR": str(tmp)})
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    [u] = report["unverified"]
    assert u["file"] == "deep_sum.cu" and "killed by SIGSEGV" in u["why"]
    assert report["summary"]["findings"] == 1 and "Traceback" not in r.stderr
    # The killed parse could not remove its include overlay; the next parse anywhere does.
    left = list(tmp.glob("kernelvet-vfs-*"))
    assert sweep_dead_overlays(tmp) == len(left) and not list(tmp.iterdir())


def test_overlays_of_processes_that_ended_are_swept_and_live_ones_kept(tmp_path):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = tmp_path / f"kernelvet-vfs-{int(ended.stdout)}-abc.yaml"
    live = tmp_path / f"kernelvet-vfs-{os.getpid()}-def.yaml"
    other = tmp_path / "kernelvet-vfs-notapid.yaml"
    for f in (dead, live, other):
        f.write_text("{}")
    assert sweep_dead_overlays(tmp_path) == 1
    assert not dead.exists() and live.exists() and other.exists()


def test_a_worker_that_dies_costs_no_other_instance_its_verdict(tmp_path):
    """A worker killed in the middle of an instance breaks the process pool; the instances it took
    with it run again, and the one that kills its worker twice is inconclusive on its own."""
    repo = quant_repo(tmp_path / "repo")
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo,
                  env={"KERNELVET_FAULT_INJECT": "static_scaled_int8_quant"})
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    by_op: dict = {}
    for i in report["instances"]:
        by_op.setdefault(i["op"], set()).add(i["verdict"])
    assert by_op["static_scaled_int8_quant"] == {"inconclusive"}
    crashed = [x for i in report["instances"] if i["op"] == "static_scaled_int8_quant" for x in i["inconclusive"]]
    assert crashed and all(x["reason"] == "native-crash" and "SIGSEGV" in x["detail"] for x in crashed)
    # Every other instance keeps the verdict of a run without the crash.
    clean = json.loads(kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo).stdout)

    def verdicts(rep):
        return sorted((i["op"], i["dtype"], tuple(i["models"]), i["verdict"]) for i in rep["instances"]
                      if i["op"] != "static_scaled_int8_quant")
    assert verdicts(report) and verdicts(report) == verdicts(clean)
    assert {f["location"]["line"] for f in report["findings"]} == {37}  # dynamic_per_token's own bug


def test_a_macro_that_expands_without_end_is_stopped_by_the_memory_cap(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    macros = ["#define A0 x + "] + [f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 25)]
    (repo / "blowup.cu").write_text("\n".join(macros) + "\n__global__ void k(float* y, float x) { y[threadIdx.x] = A24 0; }\n"
                                    "int main() { float* y; cudaMalloc(&y, 4096); k<<<1, 32>>>(y, 1.0f); return 0; }\n")
    (repo / "good.cu").write_text(PROGRAM.format(prelude="#define LAUNCH 1001"))
    # 0.6 GiB: the parse reaches the cap in a third of the time 1 GiB takes, and the other file's
    # solver still has room (at 0.3 GiB z3 ran out of memory on it now and then).
    r = kernelvet("scan", ".", "--no-cache", "--format", "json", cwd=repo, env={"KERNELVET_WORKER_MEMORY_GB": "0.6"})
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    [u] = report["unverified"]
    assert u["file"] == "blowup.cu" and "libclang could not parse the file" in u["why"]
    assert str(repo) not in r.stdout and "crash detected" not in r.stderr


@pytest.mark.parametrize("name,content,message", [
    ("nul", b"version: 0\x00\nmodels: []\n", "not valid YAML"),
    ("utf16", "version: 0\nmodels: []\nops: []\n".encode("utf-16"), "not UTF-8 (byte 0xff)"),
    ("deep_lists", ("version: 0\nmodels: []\nops: []\nderived: " + "[" * 1000 + "]" * 1000).encode(), "nested more than"),
    ("deep_maps", ("version: 1\nmodels: []\nops: []\nderived: {a: " + "{b: " * 1000 + "1" + "}" * 1001).encode(),
     "nested more than"),
    ("dup_ops", b"version: 0\nmodels: [{name: m, fields: {h: 1}}]\nops: []\nops: []\n", "'ops' is given twice"),
])
def test_unreadable_manifests_are_usage_errors(tmp_path, name, content, message):
    (tmp_path / "k.yaml").write_bytes(content)
    r = kernelvet("manifest", "check", "k.yaml", cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr and "internal error" not in r.stderr, r.stderr


def test_a_solver_query_never_outlives_the_instance_budget(monkeypatch):
    """Each z3 query's rlimit is cut to the work units left of the instance's budget, and its
    wall-clock timeout to the CPU safety net (a query in progress once overran a 2 s budget almost
    tenfold)."""
    from analyzers.engine import solver as solver_module
    seen: dict = {}

    class Recorder:
        def set(self, key, value):
            seen[key] = value

    class Tactic:
        def __init__(self, name, ctx=None):
            pass

        def solver(self):
            return Recorder()

    class Meter:
        def __init__(self, units, seconds):
            self.units, self.seconds = units, seconds

        def remaining_units(self):
            return self.units

        def safety_seconds_left(self):
            return self.seconds

    monkeypatch.setattr(solver_module.z3, "Tactic", Tactic)
    solver_module.Solver(10_000, 500_000, meter=Meter(20_000, 0.3))._new()
    assert seen["timeout"] == 350 and seen["rlimit"] == 20_000
    solver_module.Solver(10_000, 500_000, meter=Meter(-5, -5.0))._new()
    # past the budget: the query gives up at once, the next tick times out
    assert seen["timeout"] == 50 and seen["rlimit"] == 1_000
    solver_module.Solver(10_000, 500_000)._new()
    assert seen["timeout"] == 60_000 and seen["rlimit"] == 500_000


def test_work_the_broken_pool_refuses_runs_in_the_next_pool(monkeypatch):
    """A probe that returns while another worker has just died hands its instances to a pool that
    refuses new work; they run in the next pool, and the scan goes on (it used to end in
    BrokenProcessPool)."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    from bot import scan

    pools: list = []

    class OneDeathPool:
        """The first pool answers the probe, then refuses every task; the next ones run them."""

        def __init__(self, *args, **kwargs):
            self.first = not pools
            self.submitted = 0
            pools.append(self)

        def submit(self, fn, arg):
            self.submitted += 1
            if self.first and self.submitted > 1:
                raise BrokenProcessPool("a child process terminated abruptly")
            fut: Future = Future()
            fut.set_result(fn(arg))
            return fut

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    monkeypatch.setattr(scan, "ProcessPoolExecutor", OneDeathPool)
    monkeypatch.setattr(scan, "_probe_in_worker", lambda batch: [None for _ in batch])
    monkeypatch.setattr(scan, "_verify_in_worker", lambda p: (f"verified {p}", False))
    done: dict = {}
    scan._run_pool([("probe", [0, 1])], 2, (), ["a", "b"], done.__setitem__, 60.0)
    assert done == {0: ("verified a", False), 1: ("verified b", False)}
    assert len(pools) == 2  # the refused tasks were not counted as lost: no isolated rerun

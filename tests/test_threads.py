"""The thread facility's parts that fixtures do not pin down on their own: barriers counted per loop
iteration (block, warp and grid barriers), the model a divergence is reported for, both threads in a witness, and the reporters'
rules for the new checks."""
from __future__ import annotations

from pathlib import Path

from analyzers.engine.threads import barrier_count
from analyzers.kir import nodes as N
from analyzers.kir import types as T
from fixture_runner import FIXTURES, load_fixture, run_fixture


def _call(name: str, func: str | None = None) -> N.ExprStmt:
    return N.ExprStmt(N.Call(name, func, (), T.VOID))


def _cond() -> N.Expr:
    return N.IntLit(1, T.INT32)


SYNC, WARP, WORK = _call("__syncthreads"), _call("__syncwarp"), _call("compute")
GRID_SYNC = _call("cooperative_groups::grid_group::sync")


def test_barriers_on_every_path_are_counted():
    assert barrier_count(N.Block((WORK, SYNC, WORK, SYNC)), {}) == (2, 2, 0)
    assert barrier_count(N.Block((SYNC, WARP)), {}) == (1, 2, 0)  # a block barrier orders the warp too
    # The same number on both sides of a branch: still one count per pass.
    assert barrier_count(N.Block((N.If(_cond(), SYNC, SYNC),)), {}) == (1, 1, 0)
    assert barrier_count(N.Block((N.If(_cond(), WORK, None), SYNC)), {}) == (1, 1, 0)
    # A grid barrier is a block barrier too, and counts as the grid's.
    assert barrier_count(N.Block((GRID_SYNC, WORK, SYNC, GRID_SYNC)), {}) == (3, 3, 2)
    # A cub block collective synchronises inside.
    assert barrier_count(N.Block((_call("cub::BlockReduce<float, 256>::Sum"),)), {}) == (1, 1, 0)


def test_barriers_that_depend_on_the_path_have_no_count():
    assert barrier_count(N.Block((N.If(_cond(), SYNC, None),)), {}) is None
    assert barrier_count(N.Block((N.For(None, _cond(), None, N.Block((SYNC,))),)), {}) is None
    # An early exit skips the barrier after it on some paths.
    assert barrier_count(N.Block((N.If(_cond(), N.Return(None), None), SYNC)), {}) is None
    # A loop without barriers inside is one pass for this count, whatever its trip count.
    assert barrier_count(N.Block((N.For(None, _cond(), None, N.Block((WORK,))), SYNC)), {}) == (1, 1, 0)


def test_barriers_inside_called_functions_are_counted():
    helper = N.Function("k_helper", "block_sum", "block_sum", (), T.VOID, N.Block((WORK, SYNC, WORK, SYNC)),
                        "device")
    early = N.Function("k_early", "guarded", "guarded", (), T.VOID,
                       N.Block((N.If(_cond(), N.Return(None), None), SYNC)), "device")
    functions = {"k_helper": helper, "k_early": early}
    assert barrier_count(N.Block((_call("block_sum", "k_helper"),)), functions) == (2, 2, 0)
    assert barrier_count(N.Block((_call("guarded", "k_early"),)), functions) is None


def _findings(name: str, tmp_path: Path):
    fx = load_fixture(FIXTURES / "threads" / name)
    report = run_fixture(fx, tmp_path)
    return report, [f for ir in report.instances for f in ir.result.findings]


def test_a_divergence_only_one_model_has_is_reported_for_that_model(tmp_path):
    """head_dim 128 fills the block; head_dim 64 leaves half of it outside the branch."""
    report, findings = _findings("barrier_in_model_dependent_branch.cu", tmp_path)
    verdicts = {tuple(ir.planned.models): ir.result.verdict for ir in report.instances}
    assert verdicts == {("wide_heads",): "verified", ("narrow_heads",): "bug"}
    [f] = findings
    assert f.check == "barrier-divergence" and f.models == ["narrow_heads"]
    assert f.witness["model.head_dim"] == 64
    t1, t2 = f.witness["threadIdx.x"], f.witness["threadIdx.x (second thread)"]
    assert (t1 < 64) != (t2 < 64), "one thread inside the branch, one outside"
    assert "d < head_dim" in f.message and "static-only" in f.message


def test_a_race_names_both_accesses_and_both_threads(tmp_path):
    _, findings = _findings("tiled_gemv_one_barrier.cu", tmp_path)
    [f] = findings
    assert f.check == "race"
    assert f.location.text == "s_x[j]" and f.access.text.startswith("s_x[threadIdx.x] = ")
    assert f.related == [f.access]
    assert {"threadIdx.x", "threadIdx.x (second thread)"} <= set(f.witness)
    assert f.witness["threadIdx.x"] != f.witness["threadIdx.x (second thread)"]
    assert "__syncthreads()" in f.fix.description and f.fix.replacement is None


def test_a_race_between_lanes_of_one_warp_says_lockstep_is_not_guaranteed(tmp_path):
    _, findings = _findings("warp_tail_no_syncwarp.cu", tmp_path)
    assert findings and all("both threads are in one warp" in f.message and "__syncwarp()" in f.message
                            for f in findings)
    _, findings = _findings("tiled_gemv_one_barrier.cu", tmp_path)  # threads of two warps
    assert findings and not any("one warp" in f.message for f in findings)


def test_an_atomic_counter_witness_says_how_many_threads_added_before(tmp_path):
    _, findings = _findings("capacity_scatter_counter_unguarded.cu", tmp_path)
    [f] = findings
    [(name, value)] = [(k, v) for k, v in f.witness.items() if k.startswith("threads that added to `counter`")]
    counter = [v for k, v in f.witness.items() if k.startswith("counter[...]")]
    assert counter == [0], "the binding starts the counter at 0"
    assert value >= f.witness["capacity"], "a slot past the buffer's `capacity` rows"


def test_sarif_has_a_rule_for_every_thread_check():
    from bot.reporters.sarif import RULES

    for check in ("race", "barrier-divergence", "sync-mask"):
        name, severity, cwes, what, how = RULES[check]
        assert name and what and how and cwes


def test_no_finding_stands_on_a_havocked_value():
    """Whatever check reports it, a finding whose witness needs a value a loop summary made up is
    inconclusive (imprecise-loop), not a bug."""
    import z3

    from analyzers.engine.context import Context
    from analyzers.findings import Finding

    ctx = Context("op")
    v = z3.BitVec("havoc!1", 32)
    ctx.symbol("acc after iterations of loop at k.cu:12", v, "havoc")
    span = N.Span("k.cu", 14, 5, 14, 20, "out[acc] = x")
    witness = {"num_tokens": 3, "acc after iterations of loop at k.cu:12": -7}
    ctx.report(Finding("oob", "write past the end", span, "op", "k", witness))
    assert not ctx.findings
    [inc] = ctx.inconclusive
    assert inc.reason == "imprecise-loop" and "acc after iterations" in inc.detail and inc.span == span
    ctx.report(Finding("oob", "write past the end", span, "op", "k", {"num_tokens": 3}))
    assert len(ctx.findings) == 1


def test_a_branch_whose_sides_pass_equal_barriers_is_said_to_work_on_sm70(tmp_path):
    """The MoE alignment idiom (fill threads pass as many bare barriers as the others and leave) is
    still reported, with a note that each side passes the same count; one barrier fewer is not."""
    messages = {}
    for name in ("fill_warps_pass_equal_barriers", "fill_warps_pass_fewer_barriers"):
        fx = load_fixture(FIXTURES / "threads" / f"{name}.cu")
        (tmp_path / name).mkdir()
        [f] = run_fixture(fx, tmp_path / name).findings
        messages[name] = f.finding.message
    assert "Both sides of the branch pass 3 barriers" in messages["fill_warps_pass_equal_barriers"]
    assert "sm_70 and later" in messages["fill_warps_pass_equal_barriers"]
    assert "Both sides" not in messages["fill_warps_pass_fewer_barriers"]
    assert "static-only" in messages["fill_warps_pass_fewer_barriers"]


def test_a_warp_mask_finding_says_which_way_the_lane_went(tmp_path):
    """Exited lanes are allowed in a mask (PTX); what is reported says why: a lane on its way to a
    barrier hangs the warp, a lane at another primitive is undefined, a shuffle that reads a lane
    that returned gets an undefined value."""
    from analyzers.findings import HANG_WORDS
    _, [hang] = _findings("warp_ballot_in_bounds_branch_then_barrier.cu", tmp_path)
    assert HANG_WORDS in hang.message and "has not exited" in hang.message
    assert {"threadIdx.x", "threadIdx.x (second thread)"} <= set(hang.witness)
    _, both = _findings("warp_shuffles_on_both_sides.cu", tmp_path)
    assert len(both) == 2 and all(HANG_WORDS not in f.message and "runs on without reaching it" in f.message
                                  for f in both)
    _, [read] = _findings("warp_sum_reads_exited_lanes.cu", tmp_path)
    assert "the lane it reads" in read.message and "left the kernel" in read.message
    assert HANG_WORDS not in read.message
    # The lane read is the shuffle's source: 16 lanes down from the first thread.
    assert read.witness["threadIdx.x (second thread)"] == read.witness["threadIdx.x"] + 16


def test_a_race_left_to_values_still_says_it_needs_two_equal_slots(tmp_path):
    """Whether two blocks store different bytes rests on a float conversion the engine does not
    compute; the message still names the index tensor whose repeated values the race needs."""
    report, _ = _findings("slot_scatter_fp8_repeated_slots.cu", tmp_path)
    [ir] = report.instances
    [inc] = ir.result.inconclusive
    assert inc.reason == "needs-values" and "floating-point value" in inc.detail
    assert "two elements of `slot_mapping` to hold the same value" in inc.detail
    assert "`distinct: true`" in inc.detail


def test_a_race_reached_through_a_collectives_output_needs_values(tmp_path):
    """With global races on, `starts[ids[k]] = pos` under cub's discontinuity flags (`diffs[k] != 0`:
    a segment's first element) is a pair two threads reach only if the collective's output lets
    both store one id, which its real output never does: the race rests on values the engine does
    not compute and is needs-values, not a finding (it was a false race). The unguarded twin's
    out-of-bounds write, which needs no such value, is still reported."""
    fx = load_fixture(FIXTURES / "threads" / "cub_adjacent_difference_segment_starts.cu")
    report = run_fixture(fx, tmp_path, global_races=True)
    assert not report.findings, [m.finding.message for m in report.findings]
    details = [i.detail for ir in report.instances for i in ir.result.inconclusive if i.reason == "needs-values"]
    assert any("reached through a branch on the result of a block or warp collective" in d for d in details), details
    twin = run_fixture(load_fixture(FIXTURES / "threads" / "cub_adjacent_difference_segment_starts_unguarded.cu"),
                       tmp_path, global_races=True)
    assert {m.check for m in twin.findings} == {"oob"}


def test_segments_of_a_nondecreasing_indptr_do_not_race_across_blocks(tmp_path):
    """With global races on, each block copies its segment [indptr[b], indptr[b + 1]) of a ragged
    batch: two blocks' stores meet only if their segments overlap, which a nondecreasing indptr
    (as the binding states) rules out, since indptr[b + 1] <= indptr[b'] for b < b'. It was a false
    race ("needs two elements of indptr to hold the same value")."""
    from fixture_runner import compare

    fx = load_fixture(FIXTURES / "relations" / "indptr_gather_nondecreasing.cu")
    report = run_fixture(fx, tmp_path, global_races=True)
    assert not [m for m in report.findings if m.check == "race"], [m.finding.message for m in report.findings]
    assert not compare(fx, report)

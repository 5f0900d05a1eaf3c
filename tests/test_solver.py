"""The solver's relaxed first query: a question asked without the path's products of two symbolic
terms. Unsat there decides; a relaxed model is an answer only when it satisfies what was dropped.
Work is compared in z3's resource units, which are the same on every machine."""
import pytest
import z3

from analyzers.engine import work
from analyzers.engine.solver import Solver, SolverUnknown, forget_answers
from analyzers.engine.terms import constants as z3_constants


def _grid_stride_exit():
    """A grid-stride loop's exit facts as the engine builds them (the grid capped at 8 blocks per
    SM, `v = start + k * stride` in 128 bits, `v >= numel * 128`), the question whether the lane
    a `__shfl_xor_sync(v, 4)` reads lies past a 256-thread block."""
    n, sms, v = z3.BitVec("numel", 64), z3.BitVec("sms", 64), z3.BitVec("v", 64)
    k = z3.BitVec("k", 40)
    tid, bid = z3.BitVec("tid", 32), z3.BitVec("bid", 32)
    wanted = z3.UDiv(n * 128 + 255, 256)
    blocks = z3.If(wanted < sms * 8, wanted, sms * 8)
    stride = z3.SignExt(64, blocks) * 256
    start = z3.SignExt(64, z3.ZeroExt(32, bid) * 256 + z3.ZeroExt(32, tid))
    path = [z3.ULT(tid, 256), z3.ULE(n, 1 << 31), n > 0, z3.ULE(sms, 1 << 10), sms > 0,
            z3.ULT(z3.ZeroExt(32, bid), blocks),
            z3.SignExt(64, v) == start + z3.ZeroExt(88, k) * stride,
            z3.Not(v < n * 128),
            z3.Or(k == 0, z3.Extract(63, 0, start + (z3.ZeroExt(88, k) - 1) * stride) < n * 128)]
    lane = z3.URem(tid, 32)
    source = lane ^ 4
    return path, z3.And(source != lane, z3.UGE(tid - lane + source, 256))


def _units(solver, constraints):
    """The answer (a model, None for unsat, or "unknown") and the z3 resource units it took."""
    before = work.z3_units()
    try:
        answer = solver.model(constraints)
    except SolverUnknown:
        answer = "unknown"
    return answer, work.z3_units() - before


def test_a_lane_question_is_proved_without_the_loop_products_it_does_not_need():
    path, question = _grid_stride_exit()
    answer, relaxed_units = _units(Solver(rlimit=3_000_000), path + [question])
    assert answer is None
    full = Solver(rlimit=3_000_000)
    full._relaxed = lambda constraints: None  # the same query, asked whole
    answer, full_units = _units(full, path + [question])
    # Asked whole, the query is proved or runs out of its work limit, depending on what the z3
    # context of the process met before it (the full suite's worker, or this file alone): both
    # cost at least twenty times the relaxed proof.
    assert answer is None or answer == "unknown"
    assert relaxed_units * 20 < full_units


def test_a_question_that_needs_a_dropped_product_is_still_decided_by_it():
    n, k = z3.BitVecs("n k", 32)
    facts = [z3.ULT(n, 1000), z3.ULT(k, 1000), k * n == 12]  # only the product rules k = 0 out
    s = Solver()
    assert s.model(facts + [k == 0]) is None
    assert s.model(facts + [k == 3]) is not None


def test_a_relaxed_model_that_breaks_a_dropped_product_is_not_the_answer():
    n, k = z3.BitVecs("n k", 32)
    facts = [z3.ULT(n, 1000), z3.ULT(k, 1000), k * n == 12]
    m = Solver().model(facts + [k > 1])
    assert m is not None
    assert z3.is_true(m.eval(k * n == 12, model_completion=True))


def test_a_query_costs_the_same_whatever_the_process_built_before_it():
    """The SAT search follows the numbering of a query's terms; in the process's shared z3 context
    that numbering depends on every term built before (other instances, other tests), and so did a
    query's work and, near the limit, its answer. Asked in a context of its own, it does not."""
    path, question = _grid_stride_exit()
    _, alone = _units(Solver(rlimit=3_000_000), path + [question])
    # Unrelated terms, built and solved first, shift the shared context's numbering.
    noise = [z3.BitVec(f"noise{i}", 64) for i in range(300)]
    _units(Solver(), [z3.UGT(noise[i] * noise[i + 1], noise[i + 2]) for i in range(0, 297, 3)])
    again_path, again_question = _grid_stride_exit()
    forget_answers()  # asked afresh, not answered from memory
    again = Solver(rlimit=3_000_000)
    _, after = _units(again, again_path + [again_question])
    assert again.stats.queries > 0 and again.stats.cached == 0
    assert alone == after


def test_a_remembered_answer_costs_the_work_of_asking_again():
    """A query asked again (another dtype's path, a replay, another instance) is answered from
    memory, charged the units it cost, so a budget runs out where it would have: the same verdict
    whichever instances ran before in the process. A query under another limit is asked afresh."""
    forget_answers()
    path, question = _grid_stride_exit()
    first = Solver(rlimit=3_000_000)
    answer, units = _units(first, path + [question])
    assert first.stats.queries > 0 and units > 0
    second = Solver(rlimit=3_000_000)
    again, again_units = _units(second, path + [question])
    assert (again is None) == (answer is None) and again_units == units
    assert second.stats.queries == 0 and second.stats.cached > 0
    other = Solver(rlimit=2_000_000)
    _units(other, path + [question])
    assert other.stats.queries > 0


def test_a_query_alike_up_to_names_is_answered_from_memory_with_its_own_names():
    """Each dtype fork of a kernel names its loop counters and loads afresh: the same race or
    bounds question comes back under other names. Within one run (one solver) a decided answer
    holds for it, charged the same work, its witness in its own constants; a query that differs
    in more than names is asked, and so is the same question in another run (a verdict never
    depends on the instances run before)."""
    forget_answers()

    def question(prefix: str, bound: int):
        i, n = z3.BitVec(f"{prefix}i", 32), z3.BitVec(f"{prefix}n", 32)
        return [z3.ULT(i, n), z3.ULE(n, 4096), z3.UGE(i * 4 + 3, bound)]

    run = Solver()
    answer, units = _units(run, question("half.", 4096))
    asked = run.stats.queries
    assert asked > 0 and answer is not None
    again, again_units = _units(run, question("bf16.", 4096))
    assert run.stats.queries == asked and again_units == units
    i, n = z3.BitVec("bf16.i", 32), z3.BitVec("bf16.n", 32)
    assert z3.is_true(again.eval(z3.And(*question("bf16.", 4096)), model_completion=True))
    assert again.eval(i).as_long() == answer.eval(z3.BitVec("half.i", 32)).as_long()
    unsat, _ = _units(run, question("f32.", 1 << 20))  # another bound: another query
    assert run.stats.queries > asked and unsat is None
    other_run = Solver()  # the very terms the first run answered by renaming: asked here
    _units(other_run, question("bf16.", 4096))
    assert other_run.stats.queries > 0


def test_an_undecided_query_is_asked_again_under_other_names():
    """Names steer z3's search: a query that ran out of its limit may be decided under other
    names, so only decided answers are shared up to names."""
    forget_answers()
    path, question = _grid_stride_exit()
    run = Solver(rlimit=2_000, attempts=1)
    first, _ = _units(run, path + [question])
    assert first == "unknown"
    asked = run.stats.queries
    renamed = {str(c): z3.Const(f"bf16.{c}", c.sort()) for c in z3_constants(z3.And(*path, question))}
    subst = list(renamed.items())
    again = [z3.substitute(c, *[(z3.Const(k, v.sort()), v) for k, v in subst]) for c in path + [question]]
    _units(run, again)
    assert run.stats.queries > asked


def test_a_question_a_kept_model_satisfies_is_answered_without_asking_and_proofs_still_are():
    """The integer tier keeps the models of the questions it found satisfiable: a branch's other
    side, or a later question of the same path, that one of them satisfies is not a proof, which is
    the answer asking would give, without asking. A proof is always asked for."""
    from analyzers.engine.lia import Lia

    lia = Lia()
    n = lia.var("n", 1, 4096)
    i = lia.var("i", 0, None)
    assert not lia.unsat([], i < n, i >= 0)
    asked = lia.queries
    assert not lia.unsat([], i < n, i < 4096)  # the first model has i < n <= 4096
    assert lia.queries == asked and lia.witnessed == 1
    assert lia.unsat([], i < n, i >= 4096)  # i < n <= 4096: a proof, asked for
    assert lia.queries == asked + 1
    assert not lia.unsat([], i < n, i == 4000)  # no kept model has i == 4000: asked, and satisfiable
    assert lia.queries == asked + 2 and lia.witnessed == 1


def test_constraints_independent_of_the_question_are_asked_apart_and_still_hold_in_the_witness():
    """A question about a lane, on a path that also holds an unrelated tensor's shape products: the
    question is decided on the constraints it shares variables with, the rest on their own, and the
    witness satisfies both; an unsatisfiable rest still makes the whole unsatisfiable."""
    forget_answers()
    tid = z3.BitVec("tid", 32)
    ne = [z3.ZeroExt(49, z3.BitVec(f"ne{i}", 15)) for i in range(4)]
    shape = [z3.UGE(x, 1) for x in ne] + [z3.ULE(ne[0] * ne[1] * ne[2] * ne[3], 1 << 35)]
    question = z3.UGE(tid, 1000)
    solver = Solver()
    core, rest = solver._split([z3.ULT(tid, 1024)] + shape + [question])
    assert [str(c) for c in core] == [str(z3.ULT(tid, 1024)), str(question)] and len(rest) == len(shape)
    assert [len(group) for group in solver._groups(rest)] == [len(shape)]  # the product ties the dims
    other = z3.ZeroExt(49, z3.BitVec("other", 15))
    _, rest = solver._split([z3.ULT(tid, 1024)] + shape + [z3.UGE(other, 2), question])
    assert [len(group) for group in solver._groups(rest)] == [len(shape), 1]  # another tensor's facts
    model = solver.model([z3.ULT(tid, 1024)] + shape + [question])
    assert model is not None
    assert all(z3.is_true(model.eval(c, model_completion=True)) for c in [z3.ULT(tid, 1024), question] + shape)
    assert solver.model([z3.ULT(tid, 1024)] + shape + [z3.UGE(tid, 1024)]) is None  # the question's own part
    assert solver.model(shape + [ne[0] * ne[1] == 0, question]) is None  # the rest's part
    assert not solver.feasible(shape + [ne[0] * ne[1] == 0, question])
    assert solver.model(shape + [z3.ULE(other, 1), z3.UGE(other, 2), question]) is None  # one group of two
    assert not solver.feasible(shape + [z3.ULE(other, 1), z3.UGE(other, 2), question])


def test_a_replays_fixed_inputs_reach_the_integer_tier_one_fact_each():
    """A replay fixes its inputs: each pin is a fact of its own (one conjunction would tie every
    input into one group for the solver) with its integer twin, read as the twin's bounds admit
    (a 16-bit size of 40,000 is 40,000; a 32-bit int of all ones is -1), so the integers prove
    what the pins decide instead of asking as hard as the first run."""
    from analyzers.engine import replay
    from analyzers.engine.lia import Lia

    lia = Lia()
    n, x = lia.var("n", 1, 60_000), lia.var("x", -(1 << 31), (1 << 31) - 1)
    pins = replay.pin_terms((("n", 16, 40_000), ("x", 32, (1 << 32) - 1), ("unknown", 8, 3)))
    facts = replay.pinned_inputs(pins, lia)
    assert len(facts) == 3
    assert lia.unsat(facts, n != 40_000) and lia.unsat(facts, x != -1)
    assert not lia.unsat(facts, n == 40_000)
    assert lia.pinned("unknown", 8, 3) is None  # no integer twin: the bit-vector fact alone
    lia.var("free", None, None)
    assert lia.pinned("free", 8, 200) is None  # 200 or -56: the bounds do not say which
    assert str(lia.pinned("free", 8, 100)) == "free == 100"


def test_a_rest_the_solver_gives_up_on_is_asked_again_group_by_group(monkeypatch):
    """The rest of a query (the facts independent of the question) is asked as one, mostly from
    memory; where the solver gives up on it (here: any query of more than three constraints), each
    group that shares no variable with the others is asked on its own, and a model of each is the
    witness. An unsatisfiable group still makes the whole unsatisfiable."""
    forget_answers()
    solver = Solver()
    real = Solver._check

    def limited(self, constraints, attempts=None, rlimit=None):
        if len(constraints) > 3:
            self._last_unknown = "its work limit was reached"
            return z3.unknown, None
        return real(self, constraints, attempts, rlimit)

    monkeypatch.setattr(Solver, "_check", limited)
    tid, a, b = z3.BitVec("tid", 32), z3.BitVec("a", 16), z3.BitVec("b", 16)
    rest = [z3.UGE(a, 3), z3.ULE(a, 9), z3.UGE(b, 100), z3.ULE(b, 200)]
    question = z3.UGE(tid, 1000)
    model = solver.model(rest + [question])
    assert model is not None
    assert all(z3.is_true(model.eval(c, model_completion=True)) for c in rest + [question])
    assert solver.feasible(rest + [question], strict=True)
    assert solver.model(rest + [z3.ULE(b, 50), question]) is None
    assert not solver.feasible(rest + [z3.ULE(b, 50), question], strict=True)
    tied = [z3.UGE(a, 3), z3.ULE(a, 9), z3.UGE(b, 100), z3.ULE(b + a, 200)]  # one group: unknown stays
    with pytest.raises(SolverUnknown):
        solver.model(tied + [question])

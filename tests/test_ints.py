"""Integer operations that keep products whole: the forms the solver would otherwise bit-blast as
dividers (numel / num_tokens, cols * sizeof(half) / 16, a product started from 1)."""
import z3

from analyzers.engine import ints
from analyzers.engine.values import const_int, fresh_int
from analyzers.kir import types as T
from analyzers.kir.nodes import NO_SPAN


def _mul(a, b, ty=T.INT64):
    return ints.arith("*", a, b, ty, NO_SPAN)


def _div(a, b, ty=T.INT64):
    return ints.arith("/", a, b, ty, NO_SPAN)


def _has(v, *kinds) -> bool:
    stack = [v.bv]
    while stack:
        t = stack.pop()
        if any(z3.is_app_of(t, k) for k in kinds):
            return True
        stack.extend(t.children())
    return False


def test_a_product_started_from_one_is_its_factor():
    tokens = fresh_int("num_tokens", T.INT64, 1, 1 << 21)
    one = const_int(1, T.INT64)
    assert _mul(one, tokens) is tokens and _mul(tokens, one) is tokens
    assert ints.arith("+", tokens, const_int(0, T.INT64), T.INT64, NO_SPAN) is tokens
    assert _div(tokens, one) is tokens


def test_numel_over_rows_is_the_row_width():
    tokens = fresh_int("num_tokens", T.INT64, 1, 1 << 21)
    numel = _mul(tokens, const_int(5120, T.INT64))
    assert _div(numel, tokens).concrete() == 5120


def test_numel_over_a_symbolic_width_is_the_row_count():
    rows = fresh_int("rows", T.INT64, 1, 1 << 20)
    cols = fresh_int("cols", T.INT64, 1, 1 << 18)
    numel = _mul(_mul(const_int(1, T.INT64), rows), cols)
    assert _div(numel, _mul(const_int(1, T.INT64), cols)) is rows


def test_bytes_over_vector_size_divides_the_count():
    cols = fresh_int("cols", T.INT64, 1, 1 << 18)
    vectors = _div(_mul(cols, const_int(2, T.INT64)), const_int(16, T.INT64))  # cols * sizeof(half) / 16
    assert not _has(vectors, z3.Z3_OP_BMUL)  # cols / 8: no product inside the division
    s = z3.Solver()
    s.add(vectors.bv != z3.UDiv(cols.bv, 8), cols.bv >= 1, cols.bv <= 1 << 18)
    assert s.check() == z3.unsat


def test_a_wrapping_operand_is_not_simplified_away():
    # 1 * x where x may have wrapped keeps x's wrap sites: the identity returns x itself.
    x = fresh_int("x", T.INT32, -(1 << 31), (1 << 31) - 1)
    big = ints.arith("*", x, const_int(3, T.INT32), T.INT32, NO_SPAN)
    assert big.sites and _mul(const_int(1, T.INT32), big, T.INT32).sites == big.sites


def test_a_quotient_by_a_symbolic_divisor_is_linear_for_the_integers():
    # t / d < n follows from t < n * d in linear arithmetic once the quotient is a variable with
    # q * d <= t < q * d + d; z3's integer division by a variable is nonlinear.
    from analyzers.engine import lia
    lia.use(lia.Lia())
    t = fresh_int("t", T.INT64, 0, 1023)
    d = fresh_int("d", T.INT64, 1, 1024)
    n = fresh_int("n", T.INT64, 1, 1024)
    q = _div(t, d)
    r = ints.arith("%", t, d, T.INT64, NO_SPAN)
    assert lia.linear(ints.I(q) < ints.I(n)) and lia.linear(ints.I(r) >= 0)
    below = ints.I(t) < lia.CURRENT.product(ints.I(n), ints.I(d), 1, 1024, 1, 1024)
    assert lia.CURRENT.unsat([], below, ints.I(q) >= ints.I(n), nonlinear=False)
    assert lia.CURRENT.unsat([], ints.I(r) >= ints.I(d), nonlinear=False)  # the remainder is below d
    assert not lia.CURRENT.unsat([], ints.I(q) >= ints.I(n), nonlinear=False)  # without the bound it can be


def test_a_quotient_of_a_signed_dividend_truncates_toward_zero():
    # C: -7 / 2 == -3 and -7 % 2 == -1; the facts must admit exactly that side for x < 0.
    from analyzers.engine import lia
    lia.use(lia.Lia())
    x = fresh_int("x", T.INT32, -100, 100)
    d = fresh_int("d", T.INT32, 1, 10)
    q, r = _div(x, d, T.INT32), ints.arith("%", x, d, T.INT32, NO_SPAN)
    assert lia.linear(ints.I(q) <= 0) and lia.linear(ints.I(r) <= 0)
    assert lia.CURRENT.unsat([], ints.I(x) < 0, ints.I(r) > 0, nonlinear=False)  # the remainder takes x's sign
    assert lia.CURRENT.unsat([], ints.I(r) <= -ints.I(d), nonlinear=False)
    assert not lia.CURRENT.unsat([], ints.I(x) == -7, ints.I(d) == 2, ints.I(q) == -3, nonlinear=False)
    # The second tier's exact definitions agree with C (the linear tier over-approximates q * d).
    exact = z3.Solver()
    exact.add(*lia.CURRENT.definitions, ints.I(x) == -7, ints.I(d) == 2)
    assert exact.check() == z3.sat and exact.model().eval(ints.I(q)).as_long() == -3


def _add(a, b, ty=T.INT64):
    return ints.arith("+", a, b, ty, NO_SPAN)


def test_a_sum_of_products_over_one_factor_is_ordered_against_the_others():
    # seq * heads * parts + head * parts < seqs * heads * parts for seq < seqs and head < heads:
    # linear only once the sum is parts * (seq * heads + head), ordered against seqs * heads * parts.
    from analyzers.engine import lia
    lia.use(lia.Lia())
    seqs = fresh_int("seqs", T.INT64, 1, 1000)
    seq = fresh_int("seq", T.INT64, 0, 999)
    head = fresh_int("head", T.INT64, 0, 39)
    heads = const_int(40, T.INT64)
    parts = fresh_int("parts", T.INT64, 1, 4096)
    row = _add(_mul(_mul(seq, heads), parts), _mul(head, parts))
    size = _mul(_mul(seqs, heads), parts)
    seq_in = ints.I(seq) < ints.I(seqs)
    assert lia.CURRENT.unsat([], seq_in, ints.I(row) + ints.I(parts) > ints.I(size), nonlinear=False)
    assert not lia.CURRENT.unsat([], ints.I(row) + ints.I(parts) > ints.I(size), nonlinear=False)  # seq may be past


def test_equalities_on_the_path_make_products_of_equal_factors_equal():
    # The launcher checked out.size(0) == rows, out.size(1) == cols and group_size == 128:
    # out.size(0) * out.size(1) is rows * cols, and cols * group_size is 128 * cols, facts no
    # envelope over the ranges gives.
    from analyzers.engine import lia
    lia.use(lia.Lia())

    def linear_unsat(*conds, path: bool) -> bool:
        s = z3.SolverFor("QF_LIA")
        s.add(*conds, *(lia.CURRENT.facts(list(conds), path) or []))
        return s.check() == z3.unsat

    size0 = fresh_int("size0", T.INT64, 1, 1 << 20)
    size1 = fresh_int("size1", T.INT64, 1, 1 << 12)
    rows = fresh_int("rows", T.INT64, 1, 1 << 20)
    cols = fresh_int("cols", T.INT64, 1, 1 << 12)
    group = fresh_int("group_size", T.INT64, 0, 1 << 16)
    out_numel, needed = _mul(size0, size1), _mul(rows, cols)
    checked = z3.And(ints.I(size0) == ints.I(rows), ints.I(size1) == ints.I(cols))
    assert linear_unsat(checked, ints.I(out_numel) < ints.I(needed), path=True)
    assert not linear_unsat(checked, ints.I(out_numel) < ints.I(needed), path=False)
    width = _mul(cols, group)
    one_of = z3.Or(ints.I(group) == 64, ints.I(group) == 128)
    assert linear_unsat(one_of, z3.Not(ints.I(group) == 64), ints.I(width) != 128 * ints.I(cols), path=True)
    assert not linear_unsat(one_of, ints.I(width) != 128 * ints.I(cols), path=True)


def test_a_size_the_path_proves_a_multiple_is_that_multiple_of_its_quotient():
    # The launcher checked k % 128 == 0 and out.numel() / k >= rows: a kernel row of k / 128
    # groups of 128 ends inside out, row * (k / 128) * 128 + k <= out.numel() for row < rows;
    # linear only once rows_out * k is 128 * (rows_out * (k / 128)), ordered against row * (k / 128).
    from analyzers.engine import lia
    lia.use(lia.Lia())

    def linear_unsat(*conds, path: bool) -> bool:
        s = z3.SolverFor("QF_LIA")
        s.add(*conds, *(lia.CURRENT.facts(list(conds), path) or []))
        return s.check() == z3.unsat

    k = fresh_int("k", T.INT64, 1, 1 << 16)
    numel = fresh_int("out_numel", T.INT64, 0, 1 << 40)
    rows = fresh_int("rows", T.INT64, 1, 1 << 20)
    row = fresh_int("row", T.INT64, 0, 1 << 20)
    groups = _div(k, const_int(128, T.INT64))
    out_rows = _div(numel, k)
    row_end = ints.I(_mul(_mul(row, groups), const_int(128, T.INT64))) + ints.I(k)
    facts = (ints.I(out_rows) >= ints.I(rows), ints.I(row) < ints.I(rows))
    multiple = ints.I(k) % 128 == 0
    assert linear_unsat(multiple, *facts, row_end > ints.I(numel), path=True)
    # Without the check the linear facts know nothing of (k / 128) * 128 against k: the bound is
    # left to the nonlinear tier.
    assert not linear_unsat(*facts, row_end > ints.I(numel), path=True)


def test_bit_fields_that_do_not_overlap_or_as_their_sum():
    from analyzers.engine import lia
    lia.use(lia.Lia())
    tile = fresh_int("tile", T.INT32, 0, 1 << 16)
    row = fresh_int("row", T.INT32, 0, 31)
    shifted = ints.arith("<<", tile, const_int(9, T.INT32), T.INT32, NO_SPAN)
    fields = ints.arith("|", shifted, ints.arith("<<", row, const_int(4, T.INT32), T.INT32, NO_SPAN), T.INT32, NO_SPAN)
    # (tile << 9) | (row << 4), row << 4 below 512: the integers read it exactly, as a sum.
    assert lia.linear(ints.I(fields)) and z3.simplify(ints.I(fields) - 512 * ints.I(tile) - 16 * ints.I(row)).eq(
        z3.IntVal(0))
    # Fields that may overlap (row << 4 up to 496, OR-ed with row << 3) have no exact integer form.
    overlapping = ints.arith("|", ints.arith("<<", row, const_int(3, T.INT32), T.INT32, NO_SPAN),
                             ints.arith("<<", row, const_int(4, T.INT32), T.INT32, NO_SPAN), T.INT32, NO_SPAN)
    assert str(ints.I(overlapping)).startswith("abs!")


def test_a_narrowed_value_read_back_wider_is_its_wrapped_value_for_the_integers():
    # `int n = numel` (numel an int64) then `i < n` with i an int64: the comparison reads n widened,
    # the wrapped 32-bit value, in bit-vectors and in integers alike. Read as its exact value, the
    # integers let `i < n` hold at numel = 2^31 where the machine's n is negative, and the smallest
    # witness they propose is refused in bit-vectors (a witness search of sixty queries).
    from analyzers.engine import lia
    lia.use(lia.Lia())
    numel = fresh_int("numel", T.INT64, 1, 1 << 40)
    n = ints.convert(numel, T.INT32, NO_SPAN)
    i = fresh_int("i", T.INT64, 0, 0)
    entered = ints.compare("<", i, ints.convert(n, T.INT64, NO_SPAN)).term
    entered_i = lia.CURRENT.translate(entered)
    assert lia.CURRENT.unsat([], entered_i, ints.I(numel) == 1 << 31)  # n is -2^31: the loop is not entered
    assert lia.CURRENT.unsat([], entered_i, ints.I(numel) == 1 << 32)  # n is 0
    assert not lia.CURRENT.unsat([], entered_i, ints.I(numel) == (1 << 32) + 1024)  # n is 1,024
    assert not lia.CURRENT.unsat([], entered_i, ints.I(numel) == 5)
    exact = ints.convert(fresh_int("k", T.INT32, 0, 100), T.INT64, NO_SPAN)  # no wrap: its own value
    assert lia.CURRENT.unsat([], ints.I(exact) > 100)

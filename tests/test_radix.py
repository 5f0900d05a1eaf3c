"""The radix split of two threads' offsets (engine/radix.py), on polynomials alone."""
import z3

from analyzers.engine import radix
from analyzers.engine.lia import Lia


def _access(polys, term, size=4, shifts=(0,)):
    return radix.Access(polys.of(term), tuple(((), s, size) for s in shifts))


def test_row_major_offset_splits_at_a_shared_size_into_index_and_rest():
    col, row, tokens = z3.Ints("col row tokens")
    polys = radix.Polynomials(Lia())
    asked = []

    def bounded(members, rest, base):
        asked.append((str(polys.term(rest)), str(polys.term(base))))
        return "tokens" in str(polys.term(base))  # the constant radix 4 (bytes) is not proved here

    a = _access(polys, 4 * (col * tokens + row))
    parts = radix.split(polys, a, a, lambda t: str(t) == "tokens", bounded)
    # The rest's bound is what the lemma needs: 4 * row + 4 <= 4 * tokens on each thread's path.
    assert ("4*row", "4*tokens") in asked
    assert sorted((str(polys.term(p)), s) for p, s, _, _ in parts) == [("4*row", 4), ("col", 1)]


def test_no_split_where_the_rest_is_not_proved_in_range():
    col, row, tokens = z3.Ints("col row tokens")
    polys = radix.Polynomials(Lia())
    a = _access(polys, col * tokens + row)
    assert radix.split(polys, a, a, lambda t: str(t) == "tokens", lambda *_: False) is None


def test_no_radix_from_a_value_the_threads_do_not_share():
    col, row, tokens = z3.Ints("col row tokens")
    polys = radix.Polynomials(Lia())
    a = _access(polys, col * tokens + row)
    # No shared atom and no constant coefficient: nothing to split at.
    assert radix.split(polys, a, a, lambda t: False, lambda *_: True) is None


def test_a_constant_radix_splits_each_accesss_shift_into_rows_and_rest():
    bx, tx = z3.Ints("bx tx")
    polys = radix.Polynomials(Lia())
    # Three chunks of a row of 9,728 bytes, 4,096 bytes apart: 9728 * bx + 16 * tx + {0, 4096, 8192}.
    a = _access(polys, 9728 * bx + 16 * tx, size=2, shifts=(0, 4096, 8192))
    seen = []

    def bounded(members, rest, base):
        seen.append((str(polys.term(base)), sorted(s for _, s, _ in members)))
        return str(polys.term(base)) == "9728"

    parts = radix.split(polys, a, a, lambda t: False, bounded)
    assert ("9728", [0, 4096, 8192]) in seen  # every shift under a row: each stays in the rest
    assert sorted((str(polys.term(p)), s) for p, s, _, _ in parts) == [("16*tx", 8194), ("bx", 1)]

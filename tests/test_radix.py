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


def _terms_are(polys, p, expected) -> bool:
    """The polynomial's parts, each as a term, are the expected terms one for one, up to the order
    of a product's factors (which follows z3's term ids, reused within a process)."""
    parts = [polys.term({m: c}) for m, c in p.items()]
    if len(parts) != len(expected):
        return False
    left = list(expected)
    for t in parts:
        same = [e for e in left if z3.simplify(t - e).eq(z3.IntVal(0)) or z3.simplify(t).eq(z3.simplify(e))]
        if not same:
            return False
        left.remove(same[0])
    return True


def test_a_dividend_beside_its_quotient_reads_as_quotient_and_remainder():
    slot, block_size = z3.Ints("slot block_size")
    lia = Lia()
    block, block_times_size = lia.quotient(slot, block_size, 0, 1 << 20, 16, 32)
    polys = radix.Polynomials(lia)
    # A value cache's `block * (block_size * 1000) + slot % block_size`: expanded, `999 *
    # block_size * block + slot`, which no radix splits; read again, `1000 * block_size * block + R`.
    p = polys.of(block * block_size * 1000 + (slot - block_times_size))
    assert _terms_are(polys, p, [1000 * block_size * block, slot - block_times_size])
    a = radix.Access(p, (((), 0, 2),))
    parts = radix.split(polys, a, a, lambda t: str(t) == "block_size", lambda *_: True)
    assert (f"slot - {block_times_size}", 2) in [(str(polys.term(q)), s) for q, s, _, _ in parts]


def test_a_remainder_divided_by_a_constant_splits_again():
    r = z3.Int("r")
    eighth = z3.If(r >= 0, r / 8, -((-r) / 8))  # C's r / 8
    polys = radix.Polynomials(Lia())
    # The interleaved layout's `(r / 8) * 1024 + r % 8`, with r % 8 == r - 8 * (r / 8).
    p = polys.of(1024 * eighth + (r - 8 * eighth))
    assert {str(polys.term({m: c})) for m, c in p.items()} == {f"1024*{eighth}", f"r - 8*{eighth}"}


def test_the_members_common_step_is_a_radix():
    r = z3.Int("r")
    polys = radix.Polynomials(Lia())
    # An unrolled `dst[2 * r + 16 * i]`, i < 8, r < 8: equal offsets need equal i and equal r.
    a = _access(polys, 2 * r, size=2, shifts=tuple(16 * i for i in range(8)))
    parts = radix.split(polys, a, a, lambda t: False, lambda members, rest, base: str(polys.term(base)) == "16")
    assert sorted((str(polys.term(p)), s) for p, s, _, _ in parts) == [("0", 8), ("2*r", 2)]


def test_a_slot_split_by_the_block_size_and_again_by_eight():
    slot, block_size = z3.Ints("slot block_size")
    lia = Lia()
    block, block_times_size = lia.quotient(slot, block_size, 0, 1 << 20, 16, 32)
    offset = slot - block_times_size
    eighth = z3.If(offset >= 0, offset / 8, -((-offset) / 8))
    polys = radix.Polynomials(lia)
    # The interleaved layout: `block * 4096 * block_size + (offset / 8) * 1024 + offset % 8`. The
    # second rewrite needs the first's remainder, whichever quotient the reader meets first.
    p = polys.of(block * block_size * 4096 + eighth * 1024 + (offset - 8 * eighth))
    assert _terms_are(polys, p, [4096 * block_size * block, 1024 * eighth, offset - 8 * eighth])


def test_an_exact_division_by_a_constant_divides_the_polynomial():
    row, col = z3.Ints("row col")
    polys = radix.Polynomials(Lia())
    # Packed outputs: `(row * 112 + col * 2) >> 1`, every coefficient even: row * 56 + col.
    half = z3.If(row * 112 + col * 2 >= 0, (row * 112 + col * 2) / 2, -((-(row * 112 + col * 2)) / 2))
    assert sorted(str(polys.term({m: c})) for m, c in polys.of(half).items()) == ["56*row", "col"]
    # An odd coefficient leaves the division an atom.
    assert len(polys.of((row * 112 + col) / 2)) == 1


def test_the_base_of_quotients_and_remainders_by_constants():
    row, tiles = z3.Ints("row tiles")
    truncated = z3.If(row >= 0, row / 32, -((-row) / 32))
    # A swizzled layout's fields: each names `row`, whose equality they make together.
    for field in (row / 128, row % 32, truncated % 4, truncated):
        assert radix.base_of(field).eq(row)
    # A quotient by a size, a plain variable and a sum are no such chains.
    assert radix.base_of(row / tiles) is None and radix.base_of(row) is None and radix.base_of((row + 1) / 8) is None

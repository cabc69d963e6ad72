"""`unreduced.Builder`'s insertion points: an op is found before, at or after where the last
insertion left off, and finding it never formats the op (`repr` resolves its location: with
debug info, a second parse of the whole file)."""

from __future__ import annotations

import pytest

from shardwise import ir
from shardwise.export.explicit_reshards.unreduced import Builder


def _block(n: int) -> tuple[ir.Block, list[ir.Op]]:
    block = ir.Block()
    ops = [block.append(ir.Op(f"t.op{i}")) for i in range(n)]
    return block, ops


def _no_repr(self: ir.Op) -> str:
    raise AssertionError(f"repr of {self.name} while looking for an insertion point")


@pytest.mark.parametrize("first", [0, 3, 5])
@pytest.mark.parametrize("second", [0, 2, 4, 5])
def test_insertions_before_and_after_the_last_one(
    first: int, second: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ir.Op, "__repr__", _no_repr)
    block, ops = _block(6)
    builder = Builder()
    builder.before(ops[first])
    a = builder.insert(ir.Op("t.a"))
    builder.after(ops[second])  # before, at or after where `a` went
    b = builder.insert(ir.Op("t.b"))
    expected = [op for op in ops]
    expected.insert(first, a)
    expected.insert(expected.index(ops[second]) + 1, b)
    assert block.ops == expected

"""Finding an op's place in its block from a hint (`unreduced.Builder`'s insertion points, the
visiting walk's next op): found before, at or after the hint, and never by formatting the op
(`repr` resolves its location: with debug info, a second parse of the whole file)."""

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


def test_the_visiting_walk_finds_its_next_op_after_erasures_without_its_repr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`walk_post_order_visiting` looks up the next op where it was; when the visit erased ops
    before it, the op is found further back, again without formatting it."""
    from shardwise.ir.walk import walk_post_order_visiting

    monkeypatch.setattr(ir.Op, "__repr__", _no_repr)
    block, ops = _block(6)
    region = ir.Region()
    region.blocks.append(block)
    root = ir.Op("t.root", regions=[region])
    visited: list[str] = []

    def visit(op: ir.Op) -> None:
        visited.append(op.name)
        if op is ops[3]:  # erase two ops before it: the next op moves back by two
            ops[0].erase()
            ops[1].erase()
            block.insert(block.ops.index(op) + 1, ir.Op("t.inserted"))

    walk_post_order_visiting(root, visit)
    assert visited == [f"t.op{i}" for i in range(6)] + ["t.root"]  # not the inserted op


@pytest.mark.parametrize(
    ("hint", "at"),
    [(10, 10), (10, 12), (10, 73), (10, 74), (10, 199), (10, 0), (10, 9), (0, 199), (200, 5)],
    ids=["at", "just-after", "last-near", "first-far", "end", "start", "just-before", "0", "past"],
)
def test_an_op_is_found_at_before_or_far_after_the_hint(
    hint: int, at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`index_near` looks a few places past the hint first, then in the whole block."""
    from shardwise.ir.walk import index_near

    monkeypatch.setattr(ir.Op, "__repr__", _no_repr)
    block, ops = _block(200)
    assert index_near(block.ops, ops[at], hint) == at

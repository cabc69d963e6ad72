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


def _walk_finding_every_next_op(op: ir.Op, visit, names) -> None:
    """The visiting walk as it was before it stepped over unvisited ops: its place in the block
    looked up before every op (the specification the walk keeps)."""
    from shardwise.ir.walk import index_near

    for region in op.regions:
        for block in region.blocks:
            current = block.ops[0] if block.ops else None
            i = 0
            while current is not None:
                if not (i < len(block.ops) and block.ops[i] is current):
                    i = index_near(block.ops, current, i)
                following = block.ops[i + 1] if i + 1 < len(block.ops) else None
                if current.regions:
                    _walk_finding_every_next_op(current, visit, names)
                elif names is None or current.name in names:
                    visit(current)
                current = following
                i += 1
    visit(op)


def _program(seed: int) -> ir.Op:
    """A root op over a block of 40 ops, named t.a / t.b / t.c, some with a nested block."""
    import random

    rng = random.Random(seed)

    def block_of(n: int, depth: int) -> ir.Block:
        block = ir.Block()
        for _ in range(n):
            name = rng.choice(["t.a", "t.b", "t.c"])
            if depth < 2 and rng.random() < 0.15:
                inner = ir.Region()
                inner.add_block(block_of(rng.randint(0, 5), depth + 1))
                block.append(ir.Op(name, regions=[inner]))
            else:
                block.append(ir.Op(name))
        return block

    region = ir.Region()
    region.add_block(block_of(40, 0))
    return ir.Op("t.root", regions=[region])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("names", [frozenset({"t.a"}), None], ids=["names", "all"])
def test_the_visiting_walk_visits_what_finding_every_next_op_visits(seed: int, names) -> None:
    """Stepping over unvisited ops without looking up their place visits the same ops in the
    same order, with visits that insert ops around the visited one, erase ops before it, or
    replace the block's list."""
    from shardwise.ir.walk import walk_post_order_visiting

    runs = [
        _visits(walk, seed, names)
        for walk in (walk_post_order_visiting, _walk_finding_every_next_op)
    ]
    assert runs[0] == runs[1]
    assert len(runs[0]) > 10


def _visits(walk, seed: int, names) -> list[str]:
    root = _program(seed)
    visited: list[str] = []

    def visit(op: ir.Op) -> None:
        visited.append(op.name)
        block = op.parent
        if block is None or op.name == "t.root":
            return
        at = block.ops.index(op)
        kind = len(visited) % 4
        if kind == 0:  # an op right after it and one right before
            block.ops.insert(at + 1, ir.Op("t.a"))
            block.ops.insert(at, ir.Op("t.a"))
        elif kind == 1 and at > 0 and not block.ops[at - 1].regions:  # erase the one before
            del block.ops[at - 1]
        elif kind == 2:  # a new list, two ops further ahead
            block.ops = [*block.ops[: at + 3], ir.Op("t.a"), *block.ops[at + 3 :]]

    walk(root, visit, names)
    return visited

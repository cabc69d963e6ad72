"""`Op.walk_list` is `list(Op.walk())`: every op, pre-order, on models with nested regions."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.io.mlir import load_file
from shardwise.ir import Block, Op, Region, TensorType

DATA = Path(__file__).resolve().parents[1] / "models" / "data"


@pytest.mark.parametrize(
    "model", ["cond", "nested_calls", "scan_layers", "shard_map_collectives", "while_loop"]
)
def test_walk_list_is_the_walk_of_a_model(model: str) -> None:
    root = load_file(DATA / f"{model}.mlir").op
    walked = root.walk_list()
    assert walked == list(root.walk())
    assert any(op.regions for op in walked[1:])  # nested regions were walked


def test_walk_list_visits_an_op_before_its_regions_and_its_next_sibling() -> None:
    t = TensorType((), "f32")

    def region_op(*inner: Op) -> Op:
        block = Block()
        for op in inner:
            block.append(op)
        return Op("test.region", result_types=[t], regions=[Region([block, Block()])])

    def leaf(i: int) -> Op:
        return Op(f"test.leaf{i}", result_types=[t])

    a = region_op(leaf(0), region_op(leaf(1)), leaf(2))
    b = region_op()
    c = leaf(3)
    body = Block()
    for op in (a, b, c):
        body.append(op)
    root = Op("test.root", regions=[Region([body])])
    names = [op.name for op in root.walk_list()]
    assert names == [
        "test.root",
        "test.region",
        "test.leaf0",
        "test.region",
        "test.leaf1",
        "test.leaf2",
        "test.region",
        "test.leaf3",
    ]

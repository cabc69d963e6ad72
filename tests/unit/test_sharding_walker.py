"""The sharding walker's shortcuts keep `get_sharding`/`set_sharding`'s meaning.

`_transform_op` reads an ordinary op's one result's sharding straight from its ``sdy.sharding``
list; which ops are not ordinary is spelled out twice (here and in `sharding_access`), so a
new special owner added to one place only would be read from the wrong attribute.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shardwise.api import parse_sharding
from shardwise.io.mlir import load_file, load_text, write_text
from shardwise.ir import SHARDING_ATTR
from shardwise.propagation.propagation_pipeline import import_and_propagate
from shardwise.sdy import data_flow, sharding_walker
from shardwise.sdy import shardings as sharding_access
from shardwise.sharding import TensorSharding


def test_ordinary_ops_are_those_get_sharding_reads_from_the_list():
    special = sharding_walker._OWN_PROPERTY_OPS | data_flow.DATA_FLOW_OPS | {"func.func"}
    assert special == sharding_access._SPECIAL_OWNERS


@pytest.mark.parametrize(
    ("texts", "calls"),
    [
        (['<@m, [{"x", ?}]>'] * 3, 1),
        (['<@m, [{"x", ?}]>', '<@m, [{"x"}]>', '<@m, [{"x", ?}]>'], 2),
    ],
    ids=["one-value-three-objects", "two-values"],
)
def test_memoized_transform_calls_once_per_value(texts, calls):
    seen = []

    def close(sharding: TensorSharding) -> TensorSharding:
        seen.append(sharding)
        return sharding.closed_like()

    transform = sharding_walker.memoized_transform(close)
    shardings = [parse_sharding(t) for t in texts]  # distinct objects, some equal
    results = [transform(s) for s in shardings]
    assert [str(r) for r in results] == [str(s.closed_like()) for s in shardings]
    assert len(seen) == calls


def test_memoized_transform_returns_an_unchanged_input_itself():
    sharding = parse_sharding('<@m, [{"x"}, {}]>')
    assert sharding_walker.memoized_transform(TensorSharding.closed_like)(sharding) is sharding


@pytest.mark.parametrize(
    "model", ["cond", "gpt_stack_4", "moe", "scan_layers", "shard_map_collectives", "while_loop"]
)
def test_memoized_walk_writes_what_the_plain_walk_writes(model):
    """`transform_shardings` with a `MemoizedTransform` (ordinary ops inline, written when the
    result is not the sharding itself) leaves the module the plain walk leaves."""
    path = Path(__file__).resolve().parents[1] / "models" / "data" / f"{model}.mlir"
    texts = []
    for fn in (sharding_walker.memoized_transform(TensorSharding.closed_like), _closed_like):
        module = load_file(path)
        import_and_propagate(module)
        sharding_walker.transform_shardings(module.op, fn)
        texts.append(write_text(module, debug_info=False))
    assert texts[0] == texts[1]
    assert "?" not in texts[0].split("sdy.mesh")[-1]  # every sharding closed


def _closed_like(sharding: TensorSharding) -> TensorSharding:
    return sharding.closed_like()


def test_memoized_walk_shares_one_list_per_result():
    module = load_text(
        """module {
  sdy.mesh @m = <["x"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.abs %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x", ?}]>]>} : tensor<8xf32>
    %1 = stablehlo.negate %0 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x", ?}]>]>} : tensor<8xf32>
    %2 = stablehlo.sine %1 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"x"}]>]>} : tensor<8xf32>
    return %2 : tensor<8xf32>
  }
}"""
    )
    ops = module.funcs[0].regions[0].entry.ops
    closed = ops[2].attributes[SHARDING_ATTR]
    sharding_walker.transform_shardings(
        module.op, sharding_walker.memoized_transform(TensorSharding.closed_like)
    )
    abs_, negate, sine = (op.attributes[SHARDING_ATTR] for op in ops[:3])
    assert str(abs_) == '#sdy.sharding_per_value<[<@m, [{"x"}]>]>'
    assert abs_ is negate  # one list for the one closed result
    assert sine is closed  # already closed: not written

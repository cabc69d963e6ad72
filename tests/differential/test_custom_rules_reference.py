"""User rules: the einsum-like string gives JAX's rule; propagation with it equals Shardy's.

Two references: JAX's own ``custom_partitioning`` conversion (`sdy_sharding_rule_to_mlir`)
for the rule text, and Shardy's propagation over a module carrying the same rule as a custom
``sdy.sharding_rule`` attribute.
"""

from __future__ import annotations

import pytest

from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import run_pass
from shardwise.ir import parse_type
from shardwise.propagation.basic_propagation import basic_propagate
from shardwise.propagation.user_priority_propagation import user_priority_propagate
from shardwise.rules import custom
from shardwise.rules.custom import parse_rule_spec, rule_from_spec

# (rule, operand shapes, result shapes, special factors / sizes)
CASES = [
    ("i j, j k -> i k", [(8, 16), (16, 4)], [(8, 4)], {"reduction_factors": ("j",)}),
    ("i, i -> i", [(8,), (8,)], [(8,)], {}),
    ("... i, ... i -> ... i", [(2, 3, 8), (2, 3, 8)], [(2, 3, 8)], {}),
    ("... i -> ...", [(4, 6)], [(4,)], {"reduction_factors": ("i",)}),
    ("(a b) c -> (a b) c", [(6, 5)], [(6, 5)], {"factor_sizes": {"a": 2, "b": 3}}),
    ("i j -> j i", [(3, 7)], [(7, 3)], {}),
    ("x y, y -> x", [(4, 1), (1,)], [(4,)], {"need_replication_factors": ("y",)}),
    ("... i j, ...1 k -> ... i", [(2, 4, 5), (9, 3)], [(2, 4)], {"permutation_factors": ("j",)}),
    ("i (j k) -> (j k) i", [(8, 12)], [(12, 8)], {"factor_sizes": {"j": 3, "k": 4}}),
    (" -> i", [()], [(5,)], {}),
    ("i, i -> ", [(5,), (5,)], [()], {"reduction_factors": ("i",)}),
]


def _jax_rule_text(rule: str, in_shapes, out_shapes, kwargs) -> str:
    from jax._src import custom_partitioning_sharding_rule as cp
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    sizes = kwargs.get("factor_sizes", {})
    rest = {k: v for k, v in kwargs.items() if k != "factor_sizes"}
    spec = cp.str_to_sdy_sharding_rule(rule, **rest, **sizes)
    with jax_mlir.make_ir_context(), ir.Location.unknown():
        f32 = ir.F32Type.get()
        ins = [ir.RankedTensorType.get(list(s), f32) for s in in_shapes]
        outs = [ir.RankedTensorType.get(list(s), f32) for s in out_shapes]
        return str(cp.sdy_sharding_rule_to_mlir(spec, ins, outs))


def _tensor(shape) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


@pytest.mark.parametrize(("rule", "ins", "outs", "kwargs"), CASES, ids=[c[0] for c in CASES])
def test_rule_string_matches_jax(rule, ins, outs, kwargs):
    ours = rule_from_spec(
        parse_rule_spec(rule, **kwargs),
        [parse_type(_tensor(s)) for s in ins],
        [parse_type(_tensor(s)) for s in outs],
    )
    assert str(ours) == _jax_rule_text(rule, ins, outs, kwargs)


MODULE = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.custom_call @my_matmul(%arg0, %arg1)RULE : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.tanh %0 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


@pytest.fixture
def my_matmul_string_rule():
    custom.register_rule("my_matmul", "i j, j k -> i k", reduction_factors=("j",))
    yield
    custom.unregister_rule("my_matmul")


@pytest.fixture
def my_matmul_decorated_rule():
    @custom.sharding_rule("my_matmul")
    def rule(op, builder):
        lhs, rhs = (v.type.shape for v in op.operands)
        builder.add_factor([0, -1], [0], lhs[0])
        builder.add_factor([-1, 1], [1], rhs[1])
        builder.add_factor([1, 0], [-1], lhs[1], custom_factor_type("reduction"))
        return builder.build()

    yield
    custom.unregister_rule("my_matmul")


def custom_factor_type(name: str):
    from shardwise.rules.rule import FactorType

    return {"reduction": FactorType.REDUCTION}[name]


STRING_RULE = "([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} reduction={j}"
BUILDER_RULE = "([i, k], [k, j])->([i, j]) {i=8, j=4, k=16} reduction={k}"


def _reference_with_rule(pass_name: str, rule: str) -> str:
    attr = f" {{sdy.sharding_rule = #sdy.op_sharding_rule<{rule}, custom>}}"
    return run_pass(MODULE.replace("RULE", attr), pass_name)


def _ours(pass_fn) -> str:
    module = load_text(MODULE.replace("RULE", ""))
    assert custom.apply_user_rules(module) == 1
    pass_fn(module)
    return write_text(module)


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("sdy-basic-propagate", basic_propagate),
        ("sdy-user-priority-propagate", user_priority_propagate),
    ],
)
def test_string_rule_propagates_like_shardy(my_matmul_string_rule, name, fn):
    ours = _ours(fn)
    assert ours == _reference_with_rule(name, STRING_RULE)
    assert "custom>" in ours  # written back so Shardy itself can use it


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("sdy-basic-propagate", basic_propagate),
        ("sdy-user-priority-propagate", user_priority_propagate),
    ],
)
def test_decorated_rule_propagates_like_shardy(my_matmul_decorated_rule, name, fn):
    assert _ours(fn) == _reference_with_rule(name, BUILDER_RULE)


@pytest.mark.parametrize(
    ("rule", "kwargs", "message"),
    [
        ("i j", {}, "needs '->'"),
        ("i (j) -> i", {}, "two or more factor names"),
        ("i j -> i . j", {}, "'.' may only appear"),
        ("i j -> (a b)", {}, "only appears in compound dims"),
        ("i j -> (a b)", {"factor_sizes": {"i": 4}}, "represents a whole dimension"),
        ("i j -> (a b)", {"factor_sizes": {"a": 4, "b": 5}}, "has size 20, the dim has size 24"),
        ("i j -> k", {"reduction_factors": ("q",)}, "unknown factor"),
        ("i -> k", {}, "rank 1, the op's operand 0 has rank 2"),
    ],
)
def test_bad_rule_strings(rule, kwargs, message):
    from shardwise.errors import RuleError

    with pytest.raises(RuleError, match=message):
        spec = parse_rule_spec(rule, **kwargs)
        rule_from_spec(spec, [parse_type("tensor<4x6xf32>")], [parse_type("tensor<24xf32>")])

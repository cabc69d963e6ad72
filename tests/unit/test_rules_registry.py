"""The rule registry: names, dispatch, no-rule ops, warnings, existing rules, populate."""

from __future__ import annotations

import warnings

import pytest

from shardwise.errors import RuleError
from shardwise.ir import (
    SHARDING_RULE_ATTR,
    Block,
    Module,
    Op,
    RawAttr,
    Region,
    TensorType,
    clone_op,
)
from shardwise.rules import registry
from shardwise.rules.ops import custom_call, elementwise
from shardwise.rules.populate import populate_op_sharding_rules
from shardwise.rules.registry import (
    NO_RULE_OPS,
    UnknownOpWarning,
    attach_rules_to_clone,
    create_op_sharding_rule,
    get_or_create_sharding_rule,
    register,
    registered_ops,
)
from shardwise.rules.rule import OpShardingRule

T = TensorType((8, 4), "f32")


def make_op(name: str, n_operands: int = 1, n_results: int = 1, **attrs: str) -> Op:
    op = Op(
        name, result_types=[T] * n_results, properties={k: RawAttr(v) for k, v in attrs.items()}
    )
    for _ in range(n_operands):
        op.add_operand(Block([T]).args[0])
    return op


def in_func(*ops: Op) -> Module:
    """A module with one func.func whose body is `ops` plus a func.return."""
    body = Block([T])
    for op in ops:
        body.append(op)
    body.append(Op("func.return"))
    func = Op("func.func", regions=[Region([body])], properties={"sym_name": RawAttr('"f"')})
    top = Block()
    top.append(func)
    return Module(Op("builtin.module", regions=[Region([top])]))


@pytest.fixture(autouse=True)
def fresh_warnings():
    registry.reset_unknown_op_warnings()
    yield
    registry.reset_unknown_op_warnings()


@pytest.mark.parametrize(
    "names",
    [elementwise.POINTWISE_OPS, sorted(NO_RULE_OPS), registered_ops()],
    ids=["pointwise", "no_rule", "registered"],
)
def test_op_name_lists_are_sorted_and_unique(names) -> None:
    assert list(names) == sorted(set(names))


def test_custom_call_target_lists_are_disjoint() -> None:
    assert not custom_call.NO_RULE_TARGETS & custom_call.POINTWISE_TARGETS


def test_no_rule_ops_are_not_registered() -> None:
    assert not set(registered_ops()) & NO_RULE_OPS


def test_every_op_of_shardys_switch_is_registered() -> None:
    expected = {
        "stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.batch_norm_inference",
        "stablehlo.bitcast_convert", "stablehlo.broadcast_in_dim", "stablehlo.cholesky",
        "stablehlo.clamp", "stablehlo.concatenate", "stablehlo.convolution",
        "stablehlo.custom_call", "stablehlo.dot", "stablehlo.dot_general",
        "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice", "stablehlo.fft",
        "stablehlo.gather", "stablehlo.pad", "stablehlo.reduce", "stablehlo.reduce_scatter",
        "stablehlo.reduce_window", "stablehlo.reshape", "stablehlo.reverse",
        "stablehlo.rng_bit_generator", "stablehlo.scatter", "stablehlo.select",
        "stablehlo.select_and_scatter", "stablehlo.slice", "stablehlo.sort",
        "stablehlo.transpose", "stablehlo.triangular_solve",
    }  # fmt: skip
    assert expected | set(elementwise.POINTWISE_OPS) == set(registered_ops())


def test_registering_twice_raises() -> None:
    with pytest.raises(ValueError, match="already has a sharding rule"):
        register("stablehlo.add")(lambda op, conservative: None)


def test_registering_a_no_rule_op_raises() -> None:
    with pytest.raises(ValueError, match="NO_RULE_OPS"):
        register("stablehlo.constant")(lambda op, conservative: None)


@pytest.mark.parametrize(
    "name", ["stablehlo.constant", "stablehlo.while", "func.call", "sdy.reshard"]
)
def test_no_rule_ops_get_no_rule_silently(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert create_op_sharding_rule(make_op(name)) is None


def test_terminator_gets_no_rule_silently() -> None:
    ret = Op("stablehlo.return")
    ret.add_operand(Block([T]).args[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert create_op_sharding_rule(ret) is None


def test_unknown_op_warns_once_per_op_name_with_shardys_wording() -> None:
    with pytest.warns(
        UnknownOpWarning, match="^op 'stablehlo.map' is unknown to SDY sharding rule registry$"
    ):
        assert create_op_sharding_rule(make_op("stablehlo.map")) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert create_op_sharding_rule(make_op("stablehlo.map")) is None
    with pytest.warns(UnknownOpWarning, match="^op 'stablehlo.composite' is unknown"):
        assert create_op_sharding_rule(make_op("stablehlo.composite")) is None


def test_unknown_custom_call_warns_once_and_silent_targets_never() -> None:
    silent = make_op("stablehlo.custom_call", call_target_name='"tpu_custom_call"')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert create_op_sharding_rule(silent) is None
    unknown = make_op("stablehlo.custom_call", call_target_name='"foo"')
    with pytest.warns(
        UnknownOpWarning, match="^custom call @foo is unknown to SDY sharding rule registry$"
    ):
        assert create_op_sharding_rule(unknown) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert create_op_sharding_rule(unknown) is None


def test_missing_attribute_is_a_rule_error() -> None:
    with pytest.raises(
        RuleError, match="'stablehlo.transpose' op requires attribute 'permutation'"
    ):
        create_op_sharding_rule(make_op("stablehlo.transpose"))


def test_created_rule_is_stored_unless_asked_not_to() -> None:
    op = make_op("stablehlo.tanh")
    rule = get_or_create_sharding_rule(op, set_on_op=False)
    assert SHARDING_RULE_ATTR not in op.attributes
    assert get_or_create_sharding_rule(op) == rule
    assert op.attributes[SHARDING_RULE_ATTR] == rule


def test_existing_rule_wins() -> None:
    custom = OpShardingRule((8, 4), (((0,), (1,)),), (((0,), (1,)),), is_custom_rule=True)
    op = make_op("stablehlo.tanh")
    op.attributes[SHARDING_RULE_ATTR] = custom
    assert get_or_create_sharding_rule(op) is custom


def test_existing_raw_rule_is_parsed() -> None:
    text = "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} need_replication={j}, custom>"
    op = make_op("stablehlo.tanh")
    op.attributes[SHARDING_RULE_ATTR] = RawAttr(text)
    assert str(get_or_create_sharding_rule(op)) == text


def test_populate_sets_rules_on_ops_with_rules_only() -> None:
    tanh, const = make_op("stablehlo.tanh"), make_op("stablehlo.constant", n_operands=0)
    module = populate_op_sharding_rules(in_func(tanh, const))
    assert str(tanh.attributes[SHARDING_RULE_ATTR]) == (
        "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}>"
    )
    assert SHARDING_RULE_ATTR not in const.attributes
    assert all(
        SHARDING_RULE_ATTR not in op.attributes
        for op in module.walk()
        if op.name.startswith(("func", "builtin"))
    )


# -- rules shared by op signature -----------------------------------------------------------------


def test_ops_with_one_signature_share_one_rule() -> None:
    first = create_op_sharding_rule(make_op("stablehlo.reverse", dimensions="array<i64: 1>"))
    second = create_op_sharding_rule(make_op("stablehlo.reverse", dimensions="array<i64: 1>"))
    assert first is second
    assert str(first) == "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} permutation={j}>"


def test_ops_of_the_same_objects_find_their_rule_without_a_signature(monkeypatch) -> None:
    """Types and property values that are the same objects (as the parser shares them) key the
    rule by identity: the second op's rule is found without building its signature."""
    dims = RawAttr("array<i64: 0>")
    first, second = make_op("stablehlo.reverse"), make_op("stablehlo.reverse")
    first.properties["dimensions"] = second.properties["dimensions"] = dims
    rule = create_op_sharding_rule(first)

    def no_signature(*_args: object) -> None:
        raise AssertionError("the signature was built")

    monkeypatch.setattr(registry, "_signature", no_signature)
    assert create_op_sharding_rule(second) is rule
    with pytest.raises(AssertionError, match="signature was built"):  # another object: by value
        create_op_sharding_rule(make_op("stablehlo.reverse", dimensions="array<i64: 0>"))


@pytest.mark.parametrize(
    "attrs, expected",
    [
        (
            {"dimensions": "array<i64: 0>"},
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} permutation={i}>",
        ),
        (
            {"dimensions": "array<i64: 1>"},
            "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} permutation={j}>",
        ),
    ],
    ids=["dim0", "dim1"],
)
def test_a_different_attribute_is_a_different_signature(attrs: dict, expected: str) -> None:
    assert str(create_op_sharding_rule(make_op("stablehlo.reverse", **attrs))) == expected


def _update_slice(start: Op) -> Op:
    """dynamic_update_slice(%operand: 8x4, %update: 2x4, start, start): one module per call."""
    update = Block([TensorType((2, 4), "f32")]).args[0]
    op = Op("stablehlo.dynamic_update_slice", result_types=[T])
    op.add_operand(Block([T]).args[0])
    op.add_operand(update)
    op.add_operand(start.results[0])
    op.add_operand(start.results[0])
    return op


def test_rules_reading_operands_defining_ops_are_not_shared() -> None:
    """Same types and attributes; constant starts make dim 0 pass-through, others need
    replication (`dynamic_update_slice_rule`), so the signature alone must not decide."""
    scalar = TensorType((), "i32")
    constant = Op("stablehlo.constant", result_types=[scalar])
    computed = Op("stablehlo.add", result_types=[scalar])
    with_constant = create_op_sharding_rule(_update_slice(constant))
    with_computed = create_op_sharding_rule(_update_slice(computed))
    assert (
        str(with_constant)
        == "#sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=8, j=2, k=4}>"
    )
    assert str(with_computed) == (
        "#sdy.op_sharding_rule<([i, k], [j, k], [], [])->([i, k]) {i=8, j=2, k=4} need_replication={j}>"
    )


# -- rules attached to a body before it is cloned ---------------------------------------------


@pytest.mark.parametrize("conservative", [False, True], ids=["default", "conservative"])
def test_rules_attached_to_a_body_are_those_a_first_visit_creates(conservative: bool) -> None:
    """`attach_rules_to_clone` stores the rule `get_or_create_sharding_rule` would, and only
    where the signature decides it; a clone then carries the same rule object."""
    tanh = make_op("stablehlo.tanh")
    reverse = make_op("stablehlo.reverse", dimensions="array<i64: 1>")
    custom = OpShardingRule((8, 4), (((0,), (1,)),), (((0,), (1,)),), is_custom_rule=True)
    with_rule = make_op("stablehlo.tanh")
    with_rule.attributes[SHARDING_RULE_ATTR] = custom
    update = _update_slice(Op("stablehlo.constant", result_types=[TensorType((), "i32")]))
    unknown = make_op("foo.bar")
    rejected = make_op("stablehlo.transpose")  # no permutation: its rule function raises
    module = in_func(tanh, reverse, with_rule, update, unknown, rejected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an op without a rule function warns nothing here
        attach_rules_to_clone(module.funcs[0].walk_list(), conservative)
    for op in (tanh, reverse):
        fresh = make_op(op.name, **{k: str(v) for k, v in op.properties.items()})
        assert op.attributes[SHARDING_RULE_ATTR] is create_op_sharding_rule(fresh, conservative)
        assert clone_op(op).attributes[SHARDING_RULE_ATTR] is op.attributes[SHARDING_RULE_ATTR]
    assert with_rule.attributes[SHARDING_RULE_ATTR] is custom
    assert SHARDING_RULE_ATTR not in update.attributes  # reads its operands' defining ops
    assert SHARDING_RULE_ATTR not in unknown.attributes
    assert SHARDING_RULE_ATTR not in rejected.attributes  # propagation reports it, in order
    assert all(
        SHARDING_RULE_ATTR not in op.attributes
        for op in module.walk()
        if op.name.startswith(("func", "builtin"))
    )


def _scatter(combiner: str) -> Op:
    """scatter(8x4 operand, 5x1 indices, 5x4 updates): rows of updates combined into rows."""
    scalar = TensorType((), "f32")
    body = Block([scalar, scalar])
    combine = Op(combiner, list(body.args), [scalar])
    body.append(combine)
    body.append(Op("stablehlo.return", [combine.results[0]]))
    dims = (
        "#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
        "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>"
    )
    op = Op(
        "stablehlo.scatter",
        result_types=[T],
        properties={"scatter_dimension_numbers": RawAttr(dims)},
        regions=[Region([body])],
    )
    for t in (T, TensorType((5, 1), "i32"), TensorType((5, 4), "f32")):
        op.add_operand(Block([t]).args[0])
    return op


def test_a_scatters_rule_is_shared_by_what_it_reads_of_its_update_computation() -> None:
    """Same types and attributes: an add combines commutatively (the update rows reduce into
    the result), a subtract does not (they need replication)."""
    add = create_op_sharding_rule(_scatter("stablehlo.add"))
    subtract = create_op_sharding_rule(_scatter("stablehlo.subtract"))
    assert create_op_sharding_rule(_scatter("stablehlo.add")) is add
    assert create_op_sharding_rule(_scatter("stablehlo.subtract")) is subtract
    head = "#sdy.op_sharding_rule<([k, j], [i, l], [i, j])->([k, j]) {i=5, j=4, k=8, l=1}"
    assert str(add) == head + " reduction={i} need_replication={l}>"
    assert str(subtract) == head + " need_replication={i, l}>"

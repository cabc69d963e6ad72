"""Helpers shared by the import passes: the sharding walker and the call graph.

Shardy's `transformShardings` (common/sharding_walker.cc) and `walkCalls`/`iterateFuncs`
(ir/utils.cc, over MLIR's `CallGraph`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    TensorType,
    Type,
    Value,
    func_arg_attrs,
    func_result_attrs,
    func_result_types,
    parse_type,
    split_top_level,
    string_attr_value,
    symbol_ref_name,
)
from shardwise.mesh import Mesh
from shardwise.propagation import data_flow
from shardwise.propagation.sharding_access import get_sharding, set_sharding
from shardwise.sharding import TensorSharding, TensorShardingPerValue

__all__ = [
    "ORIGINAL_FUNC_NAME_ATTR",
    "transform_shardings",
    "walk_shardings",
    "funcs_in_call_graph_order",
    "calls_in_call_graph_order",
    "callee_name",
    "original_func_name",
    "is_static_shaped",
    "mesh_of",
    "func_arg_shardings",
    "func_result_shardings",
]

ORIGINAL_FUNC_NAME_ATTR = "sdy.original_func_name"

TransformFn = Callable[[TensorSharding], TensorSharding]


# -- sharding walker ----------------------------------------------------------------------------


def _per_value(op: Op, key: str) -> tuple[TensorSharding, ...]:
    attr = op.properties.get(key, op.attributes.get(key))
    return attr.shardings if isinstance(attr, TensorShardingPerValue) else ()


def _set_per_value(op: Op, key: str, shardings: list[TensorSharding]) -> None:
    holder = op.attributes if key == SHARDING_ATTR or key in op.attributes else op.properties
    holder[key] = TensorShardingPerValue(tuple(shardings))


def _transform_list(op: Op, key: str, fn: TransformFn) -> None:
    shardings = _per_value(op, key)
    if not shardings:
        return
    new = [fn(s) for s in shardings]
    if new != list(shardings):
        _set_per_value(op, key, new)


def _transform_dict(attrs: dict | None, fn: TransformFn) -> None:
    if attrs is None:
        return
    sharding = attrs.get(SHARDING_ATTR)
    if isinstance(sharding, TensorSharding):
        new = fn(sharding)
        if new != sharding:
            attrs[SHARDING_ATTR] = new


def _transform_func(func: Op, fn: TransformFn) -> None:
    num_args = len(func.regions[0].entry.args) if func.regions[0].blocks else 0
    for i in range(num_args):
        _transform_dict(func_arg_attrs(func, i), fn)
    for i in range(len(func_result_types(func))):
        _transform_dict(func_result_attrs(func, i), fn)


def _transform_op(op: Op, fn: TransformFn) -> None:
    if op.name == "func.func":
        _transform_func(op, fn)
    elif op.name in ("sdy.manual_computation", "sdy.named_computation"):
        _transform_list(op, "in_shardings", fn)
        _transform_list(op, "out_shardings", fn)
    elif data_flow.is_data_flow_op(op) or len(op.results) != 1:
        _transform_list(op, SHARDING_ATTR, fn)
    else:
        sharding = get_sharding(op.results[0])
        if sharding is not None:
            new = fn(sharding)
            if new != sharding:
                set_sharding(op.results[0], new)


def transform_shardings(module: Module, fn: TransformFn) -> None:
    """Replace every sharding in the module by `fn(sharding)`, in pre-order (`transformShardings`)."""
    for op in list(module.walk()):
        _transform_op(op, fn)


def walk_shardings(module: Module) -> Iterator[TensorSharding]:
    """Every sharding in the module, in `transformShardings` order."""
    found: list[TensorSharding] = []

    def collect(sharding: TensorSharding) -> TensorSharding:
        found.append(sharding)
        return sharding

    for op in module.walk():
        _transform_op(op, collect)
        yield from found
        found.clear()


# -- call graph ----------------------------------------------------------------------------------


def callee_name(call: Op) -> str:
    return symbol_ref_name(call.get_attr("callee"))


def _has_body(func: Op) -> bool:
    return bool(func.regions) and bool(func.regions[0].blocks)


def _calls_in(op: Op) -> Iterator[Op]:
    for nested in op.walk():
        if nested.name == "func.call":
            yield nested


def _rpo_funcs(module: Module) -> list[Op]:
    """Funcs with a body in reverse post-order of MLIR's `CallGraph` from the external node.

    The external node has an edge to every top-level func (module order); a func has one
    edge per distinct callee, in the order its calls appear.
    """
    funcs = {module.symbol_name(f): f for f in module.funcs if _has_body(f)}
    visited: set[int] = set()
    post_order: list[Op] = []

    def visit(func: Op) -> None:
        visited.add(id(func))
        for callee in dict.fromkeys(callee_name(c) for c in _calls_in(func)):
            target = funcs.get(callee)
            if target is not None and id(target) not in visited:
                visit(target)
        post_order.append(func)

    for func in funcs.values():
        if id(func) not in visited:
            visit(func)
    return post_order[::-1]


def funcs_in_call_graph_order(module: Module, pre_order: bool = False) -> list[Op]:
    """`iterateFuncs`: callees before callers by default, callers first with `pre_order`."""
    rpo = _rpo_funcs(module)
    return rpo if pre_order else rpo[::-1]


def calls_in_call_graph_order(module: Module, pre_order: bool = False) -> list[Op]:
    """`walkCalls`: the calls of each func (program order) with funcs in call-graph order."""
    return [c for f in funcs_in_call_graph_order(module, pre_order) for c in _calls_in(f)]


def original_func_name(func: Op) -> str:
    attr = func.attributes.get(ORIGINAL_FUNC_NAME_ATTR)
    if attr is not None:
        return string_attr_value(attr)
    return string_attr_value(func.get_attr("sym_name"))


# -- small queries -------------------------------------------------------------------------------


def is_static_shaped(value: Value) -> bool:
    return isinstance(value.type, TensorType) and value.type.is_static


def mesh_of(module: Module, sharding: TensorSharding) -> Mesh | None:
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh = module.meshes().get(sharding.mesh_or_ref)
    return mesh if isinstance(mesh, Mesh) else None


def _mesh_or_ref(module: Module, shardings: list[TensorSharding | None]):
    """`getMeshOrRef`: the mesh of the first sharding whose mesh is not maximal."""
    for sharding in shardings:
        if sharding is None:
            continue
        mesh = mesh_of(module, sharding)
        if mesh is not None and not mesh.is_maximal:
            return sharding.mesh_or_ref
    return None


def _fill_open(
    module: Module, shardings: list[TensorSharding | None], ranks: list[int]
) -> TensorShardingPerValue | None:
    mesh_or_ref = _mesh_or_ref(module, shardings)
    if mesh_or_ref is None:
        return None
    return TensorShardingPerValue(
        tuple(
            s if s is not None else TensorSharding.fully_open(mesh_or_ref, r)
            for s, r in zip(shardings, ranks, strict=True)
        )
    )


def func_input_types(func: Op) -> list[Type]:
    """The argument types from the ``function_type`` property (the body may have moved)."""
    text = str(func.properties["function_type"]).strip()
    depth = 0
    for i, c in enumerate(text):
        if c in "<([{":
            depth += 1
        elif c in ")]}" or (c == ">" and text[i - 1] != "-"):
            depth -= 1
            if depth == 0 and c == ")":
                return [parse_type(t) for t in split_top_level(text[1:i])]
    return []


def func_arg_shardings(module: Module, func: Op) -> TensorShardingPerValue | None:
    """`getFuncArgShardings`: None if no argument has a sharding on a non-maximal mesh."""
    types = func_input_types(func)
    shardings = [(_arg_attrs(func, i) or {}).get(SHARDING_ATTR) for i in range(len(types))]
    return _fill_open(module, shardings, [t.rank for t in types])


def _arg_attrs(func: Op, index: int) -> dict | None:
    array = func.properties.get("arg_attrs")
    return None if array is None else array.elements[index].entries


def func_result_shardings(module: Module, func: Op) -> TensorShardingPerValue | None:
    """`getFuncResultShardings`: None if no result has a sharding on a non-maximal mesh."""
    types = func_result_types(func)
    shardings = [(func_result_attrs(func, i) or {}).get(SHARDING_ATTR) for i in range(len(types))]
    return _fill_open(module, shardings, [t.rank for t in types])

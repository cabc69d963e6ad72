"""`sdy-update-non-divisible-input-output-shardings`: the shardings of func arguments and
results (and manual computations) cut to the axes that divide their dims evenly (Shardy's
`export/update_non_divisible_input_output_shardings.cc`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.errors import PropagationError
from shardwise.export.sink_data_flow_edges import set_block_arg_owner_shardings
from shardwise.ir import (
    SHARDING_ATTR,
    Module,
    Op,
    TensorType,
    Type,
    func_result_types,
    ops_in_pre_order,
)
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.sdy import manual_computation
from shardwise.sdy.funcs import main_func
from shardwise.sdy.sharding_walker import get_per_value, set_per_value
from shardwise.sdy.shardings import (
    get_func_result_sharding,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
)
from shardwise.sharding import DimensionSharding, TensorSharding, resolve_mesh

__all__ = [
    "evenly_sharded",
    "export_main_func",
    "update_non_divisible_input_output_shardings",
]


Meshes = Mapping[str, object]  # `Module.meshes()`, read once per pass


_CALLS_AND_MANUAL_COMPUTATIONS = frozenset({"func.call", "sdy.manual_computation"})


def _evenly_sharded_dim(dim: DimensionSharding, size: int, mesh: Mesh) -> DimensionSharding:
    if size % dim.sharded_size(mesh) == 0:
        return dim
    remaining = size
    axes: list[AxisRef] = []
    for axis in dim.axes:
        axis_size = axis.size(mesh)
        gcd = math.gcd(axis_size, remaining)
        if gcd == 1:
            break
        if gcd == axis_size:
            axes.append(axis)
            remaining //= gcd
            continue
        axes.append(AxisRef(axis.name, SubAxisInfo(axis.pre_size, gcd)))
        break
    # The reference rebuilds the dim without its priority.
    return DimensionSharding(tuple(axes), dim.is_closed)


def evenly_sharded(sharding: TensorSharding, type: TensorType, mesh: Mesh) -> TensorSharding:
    """`getEvenlySharded`: per dim, the longest axis prefix whose size divides the dim.

    mesh = <"x"=4, "y"=2>:

    | sharding          | type        | result                 |
    | ----------------- | ----------- | ---------------------- |
    | [{"x"}]           | tensor<8>   | [{"x"}]                |
    | [{"x"}, {"y"}]    | tensor<2x2> | [{"x":(1)2}, {"y"}]    |
    | [{"x"}]           | tensor<3>   | [{}]                   |
    | [{"x","y"}]       | tensor<4>   | [{"x"}]                |
    | [{"y","x"}]       | tensor<4>   | [{"y","x":(1)2}]       |
    """
    # Not strict: a maximal sharding has no dims whatever the rank (the reference zips too).
    dims = tuple(
        _evenly_sharded_dim(d, size, mesh)
        for d, size in zip(sharding.dim_shardings, type.shape, strict=False)
    )
    if dims == sharding.dim_shardings:
        return sharding  # the usual case: no copy (`replace` is slow)
    return sharding.replace_dims(dims)


def _static_tensor(type: Type) -> TensorType | None:
    return type if isinstance(type, TensorType) and type.is_static else None


def _mesh_of(meshes: Meshes, sharding: TensorSharding) -> Mesh:
    mesh = resolve_mesh(sharding, meshes)
    assert mesh is not None, f"unknown mesh @{sharding.mesh_or_ref}"  # the module verified
    return mesh


def _update_list(meshes: Meshes, types: list[Type], shardings: list[TensorSharding]):
    new = []
    for type, sharding in zip(types, shardings, strict=True):
        tensor = _static_tensor(type)
        if tensor is not None:
            sharding = evenly_sharded(sharding, tensor, _mesh_of(meshes, sharding))
        new.append(sharding)
    return new


class _EvenlySharded:
    """`evenly_sharded` once per (sharding object, tensor type): a big func's arguments
    share a few of each."""

    def __init__(self, meshes: Meshes) -> None:
        self.meshes = meshes
        self.known: dict[tuple[int, TensorType], tuple[TensorSharding, TensorSharding]] = {}

    def __call__(self, sharding: TensorSharding, tensor: TensorType) -> TensorSharding:
        hit = self.known.get((id(sharding), tensor))
        if hit is not None:
            return hit[1]
        new = evenly_sharded(sharding, tensor, _mesh_of(self.meshes, sharding))
        self.known[(id(sharding), tensor)] = (sharding, new)  # holds `sharding`: its id stays
        return new


def _update_func(even: _EvenlySharded, func: Op) -> None:
    """A sharding left as it is (the same object) is not written back (a no-op)."""
    for arg in func.regions[0].entry.args:
        sharding = get_sharding(arg)
        tensor = _static_tensor(arg.type)
        if sharding is not None and tensor is not None:
            new = even(sharding, tensor)
            if new is not sharding:
                set_sharding(arg, new)
    for i, type in enumerate(func_result_types(func)):
        sharding = get_func_result_sharding(func, i)
        tensor = _static_tensor(type)
        if sharding is not None and tensor is not None:
            new = even(sharding, tensor)
            if new is not sharding:
                set_func_result_sharding(func, i, new)


def _update_manual_computation(meshes: Meshes, op: Op) -> None:
    manual = manual_computation.manual_axes_of(op)
    outer = get_per_value(op, "in_shardings")
    if outer:
        local = [manual_computation.erase_manual_axes(s, manual) for s in outer]
        types = [a.type for a in op.regions[0].entry.args]
        set_block_arg_owner_shardings(op, _update_list(meshes, types, local))
    out = get_per_value(op, "out_shardings")
    if out:
        types = [r.type for r in op.results]
        set_per_value(op, "out_shardings", _update_list(meshes, types, out))


@sdy_pass("sdy-update-non-divisible-input-output-shardings")
def update_non_divisible_input_output_shardings(
    module: Module, calls_and_manual_computations: list[Op] | None = None
) -> None:
    """Func args/results, call results and manual-computation edges become evenly sharded.

    `calls_and_manual_computations`: the module's ``func.call`` and ``sdy.manual_computation``
    ops in pre-order, if the caller has them."""
    meshes = module.meshes()
    even = _EvenlySharded(meshes)
    for func in module.funcs:
        _update_func(even, func)
    # One walk for both kinds: each update rewrites only its own op's attributes, so doing
    # calls and manual computations interleaved ends the same as all calls first.
    manual_computations = []
    if calls_and_manual_computations is None:
        calls_and_manual_computations = ops_in_pre_order(module.op, _CALLS_AND_MANUAL_COMPUTATIONS)
    for op in calls_and_manual_computations:
        if op.name == "func.call":
            shardings = get_per_value(op, SHARDING_ATTR)
            if shardings:
                types = [r.type for r in op.results]
                set_per_value(op, SHARDING_ATTR, _update_list(meshes, types, shardings))
        elif op.name == "sdy.manual_computation":
            manual_computations.append(op)
    for op in manual_computations:
        _update_manual_computation(meshes, op)


def export_main_func(module: Module) -> Op:
    """The main func (`sdy.funcs.main_func`), or an error naming what export needs."""
    main = main_func(module)
    if main is None:
        raise PropagationError(
            "cannot find the main function: the module has "
            + (
                "several functions and none is named 'main'; rename the entry function to 'main'"
                if module.funcs
                else "no function; export needs a func.func"
            ),
            module.op.location,
        )
    return main

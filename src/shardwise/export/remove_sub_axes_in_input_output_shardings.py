"""`sdy-remove-sub-axes-in-input-output-shardings`: open dims of the main func's argument and
result shardings cut at their first sub-axis (Shardy's
`export/remove_sub_axes_in_input_output_shardings.cc`).
"""

from __future__ import annotations

from shardwise.axis import AxisRef
from shardwise.export.update_non_divisible_input_output_shardings import export_main_func
from shardwise.ir import (
    Module,
    func_result_types,
)
from shardwise.passes import sdy_pass
from shardwise.sdy.sharding_walker import memoized_transform
from shardwise.sdy.shardings import (
    get_func_result_sharding,
    get_sharding,
    set_func_result_sharding,
    set_sharding,
)
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = [
    "remove_sub_axes_in_input_output_shardings",
]


def _remove_sub_axes(sharding: TensorSharding) -> TensorSharding:
    if not any(
        not d.is_closed and any(a.is_sub_axis for a in d.axes) for d in sharding.dim_shardings
    ):
        return sharding  # the usual case: nothing to cut, no copy
    dims = []
    for d in sharding.dim_shardings:
        if d.is_closed:
            dims.append(d)
            continue
        axes: list[AxisRef] = []
        for axis in d.axes:
            if axis.is_sub_axis:
                break
            axes.append(axis)
        dims.append(DimensionSharding(tuple(axes), d.is_closed, d.priority))
    return sharding.replace_dims(tuple(dims))


@sdy_pass("sdy-remove-sub-axes-in-input-output-shardings")
def remove_sub_axes_in_input_output_shardings(module: Module) -> None:
    """Open dims of the main func's arg/result shardings are cut at their first sub-axis."""
    func = export_main_func(module)
    # Once per sharding object; one left as it is (the same object) is not written back.
    remove = memoized_transform(_remove_sub_axes)
    for arg in func.regions[0].entry.args:
        sharding = get_sharding(arg)
        if sharding is not None and (new := remove(sharding)) is not sharding:
            set_sharding(arg, new)
    for i in range(len(func_result_types(func))):
        sharding = get_func_result_sharding(func, i)
        if sharding is not None and (new := remove(sharding)) is not sharding:
            set_func_result_sharding(func, i, new)

"""`sdy-convert-global-to-local`: the global program -> the program one device runs.

Shardy's `ConvertGlobalToLocalPass` (jaxlib 0.10.2) is a dialect conversion over the module:
every op but the module and its meshes is converted once, in pre-order, by the pattern for
its kind (`collectives.COLLECTIVE_PATTERNS`, `ops.OP_PATTERNS`), else by the generic one
(converted operands, local result types). Channel handles continue after the largest one in
the module. Where the reference's pass or the verifier after it rejects the result, we raise
a `ShardwiseError` naming the op instead (see `_check_converted`):

| construct                                     | reference                                 |
| --------------------------------------------- | ----------------------------------------- |
| a dim its sharding does not divide            | aborts (non-divisible sharding)           |
| `func.call` of a func whose types change      | verifier: 'func.call' op result type      |
|                                               | mismatch (calls are not converted) [1]    |
| `stablehlo.while` carrying a sharded value    | verifier: operands vs block arguments [1] |
| custom call aliasing an operand and a result  | verifier: shapes mismatch in the          |
| sharded differently                           | output_operand_alias attribute            |
| a sharded `stablehlo.constant`                | verifier: inferred type incompatible      |
| a leftover sdy op (`sdy.reshard`,             | failed to legalize operation              |
| `sdy.sharding_constraint`, barriers, ...)     |                                           |
| ops of other dialects (`chlo.top_k`, ...)     | failed to legalize operation              |
| values of one elementwise op / reshape /      | verifier: shapes or element counts differ |
| optimization_barrier sharded differently      |                                           |
| partial slice or concat along a sharded dim   | the slice/concatenate pattern's message   |
| `dynamic_slice` along a sharded dim           | verifier: slice size greater than dim     |
| collective permute mapping two devices to one | verifier: duplicate targets               |
| sharded contracting dot/conv/gather without   | aborts (expected one sdy.all_reduce user) |
| its `sdy.all_reduce`                          |                                           |
| reduce_window/select_and_scatter window or    | aborts (not a pass-through dimension)     |
| stride over a sharded dim                     |                                           |
| gather with non-i64 indices into a collapsed  | crashes                                   |
| sharded dim                                   |                                           |
| custom call output aliasing an operand        | verifier: output_operand_alias shapes     |
| sharded otherwise                             | mismatch                                  |

[1] converted with ``ConversionOptions.beyond_reference`` (`convert`, which `shardwise
partition` calls; the pass by its Shardy name keeps the reference's options): `calls.py`,
`control_flow.py`; and the op-level local forms of `extended.py` (chlo ops, sharded
constants, whole-dim dynamic slices).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shardwise.errors import ShardwiseError, VerifyError
from shardwise.export.convert_global_to_local.aliases import check_output_operand_aliases
from shardwise.export.convert_global_to_local.builder import SUB_AXES
from shardwise.export.convert_global_to_local.calls import CALL_PATTERNS
from shardwise.export.convert_global_to_local.collectives import COLLECTIVE_PATTERNS
from shardwise.export.convert_global_to_local.control_flow import CONTROL_FLOW_PATTERNS
from shardwise.export.convert_global_to_local.extended import extended_pattern
from shardwise.export.convert_global_to_local.ops import OP_PATTERNS, generic
from shardwise.export.convert_global_to_local.state import ConversionOptions, ConversionState
from shardwise.export.convert_global_to_local.windowed import WINDOWED_PATTERNS
from shardwise.ir import Module, Op, TensorType
from shardwise.mesh import Mesh
from shardwise.passes import sdy_pass
from shardwise.rules.ops.elementwise import POINTWISE_OPS
from shardwise.rules.stablehlo_attrs import parse_i64_array

__all__ = ["convert", "convert_global_to_local"]

# Ops whose operands (of the result's rank) and results share one shape: a local type that
# differs between them means the op's values are sharded inconsistently.
_SAME_SHAPE_OPS = frozenset(
    name
    for name in (*POINTWISE_OPS, "stablehlo.select", "stablehlo.clamp")
    if name.startswith("stablehlo.")
)
_CHANNEL_RE = re.compile(r"#stablehlo\.channel_handle<handle = (-?\d+)")
_ALWAYS_LEGAL = frozenset({"sdy.mesh", "builtin.module"})
# `ConversionOptions.beyond_reference`: what `shardwise partition` converts further.
BEYOND_REFERENCE_PATTERNS = {**CALL_PATTERNS, **CONTROL_FLOW_PATTERNS}


@sdy_pass("sdy-convert-global-to-local")
def convert_global_to_local(
    module: Module,
    per_dim_all_gather: bool = False,
    combine_multi_dimension_reduce_scatter: bool = False,
    enable_rgv3: bool = False,
) -> None:
    """``sdy-convert-global-to-local{...}`` on `module`, in place."""
    options = ConversionOptions(
        per_dim_all_gather, combine_multi_dimension_reduce_scatter, enable_rgv3
    )
    convert(module, options)


def convert(module: Module, options: ConversionOptions) -> None:
    """The conversion with `options` (``beyond_reference``: `shardwise partition`'s mode)."""
    token = SUB_AXES.set(options.beyond_reference)
    module.types_changed = True
    try:
        _convert(module, options)
    finally:
        SUB_AXES.reset(token)


def _convert(module: Module, options: ConversionOptions) -> None:
    meshes = {k: v for k, v in module.meshes().items() if isinstance(v, Mesh)}
    state = ConversionState(module, options, meshes, _next_channel_id(module))
    state.collect_arg_shardings()
    ops = [op for op in module.op.walk() if op.name not in _ALWAYS_LEGAL]
    for op in ops:
        if id(op) in state.erased:
            continue
        # An op of an unregistered dialect is converted like any StableHLO op by the
        # reference (results to local types by their shardings), not refused.
        beyond = None
        if options.beyond_reference:
            beyond = BEYOND_REFERENCE_PATTERNS.get(op.name) or extended_pattern(op)
        (beyond or _pattern(op, module.unregistered_ops))(state, op)
    state.finish()
    _check_converted(module)


def _next_channel_id(module: Module) -> int:
    """One past the largest ``channel_handle`` in the module (1 when there is none)."""
    largest = 0
    for op in module.op.walk():
        attr = op.get_attr("channel_handle")
        if attr is None:
            continue
        m = _CHANNEL_RE.match(str(attr))
        if m is not None:
            largest = max(largest, int(m.group(1)))
    return largest + 1


def _pattern(op: Op, unregistered: frozenset[str] = frozenset()):
    pattern = (
        COLLECTIVE_PATTERNS.get(op.name)
        or OP_PATTERNS.get(op.name)
        or WINDOWED_PATTERNS.get(op.name)
    )
    if pattern is not None:
        return pattern
    dialect = op.name.split(".", 1)[0]
    if dialect == "stablehlo" or op.name == "func.return" or op.name in unregistered:
        return generic
    return _illegal


def _illegal(state: ConversionState, op: Op) -> None:
    raise VerifyError(
        f"failed to legalize operation '{op.name}' that was explicitly marked illegal "
        "(sdy-convert-global-to-local converts StableHLO, func and the sdy collectives; "
        "run the export pipeline's reshard-to-collectives first)",
        op.location,
    )


# -- what the reference's verifier would reject --------------------------------------------------


def _check_converted(module: Module) -> None:
    """The verifier's checks that the conversion can break, op by op in program order."""
    funcs = {module.symbol_name(f): f for f in module.funcs}
    for op in module.op.walk():
        if op.name == "func.call":
            _check_call(op, funcs)
        elif op.name == "func.return":
            _check_return(op)
        elif op.name == "stablehlo.while":
            _check_while(op)
        elif op.name == "stablehlo.dynamic_slice":
            _check_dynamic_slice(op)
        elif op.name == "stablehlo.dynamic_update_slice":
            _check_dynamic_update_slice(op)
        elif op.name in _SAME_SHAPE_OPS:
            _check_same_shape(op)
        elif op.name == "stablehlo.reshape":
            _check_reshape(op)
        elif op.name == "stablehlo.broadcast_in_dim":
            _check_broadcast(op)
        elif op.name == "stablehlo.optimization_barrier":
            _check_barrier(op)
        elif op.name == "stablehlo.custom_call":
            check_output_operand_aliases(op)


def _check_call(op: Op, funcs: dict[str | None, Op]) -> None:
    from shardwise.ir import func_result_types, symbol_ref_name

    callee = funcs.get(symbol_ref_name(op.get_attr("callee")))
    if callee is None or not callee.regions or not callee.regions[0].blocks:
        return
    args = [a.type for a in callee.regions[0].entry.args]
    for i, (operand, expected) in enumerate(zip(op.operands, args, strict=False)):
        if operand.type != expected:
            raise VerifyError(
                f"'func.call' op operand type mismatch: expected operand type '{expected}', "
                f"but provided '{operand.type}' for operand number {i} (calls are not "
                "converted: inline the callee or leave its values unsharded)",
                op.location,
            )
    for i, (result, expected) in enumerate(
        zip(op.results, func_result_types(callee), strict=False)
    ):
        if result.type != expected:
            raise VerifyError(
                f"'func.call' op result type mismatch at index {i} (calls are not converted: "
                "inline the callee or leave its values unsharded)",
                op.location,
            )


def _check_return(op: Op) -> None:
    from shardwise.ir import func_result_types

    func = op.parent_op
    if func is None or func.name != "func.func":
        return
    for i, (operand, expected) in enumerate(
        zip(op.operands, func_result_types(func), strict=False)
    ):
        if operand.type != expected:
            raise VerifyError(
                f"'func.return' op type of return operand {i} ('{operand.type}') doesn't match "
                f"function result type ('{expected}') in function @{_name(func)}: the returned "
                "value's sharding differs from the function result's",
                op.location,
            )


def _name(func: Op) -> str:
    text = str(func.get_attr("sym_name"))
    return text.strip('"')


def _check_while(op: Op) -> None:
    for region in op.regions:
        args = region.entry.args
        for i, (operand, arg) in enumerate(zip(op.operands, args, strict=False)):
            if operand.type != arg.type:
                raise ShardwiseError(
                    f"'stablehlo.while': operand {i} becomes {operand.type} on each device but "
                    f"its block argument stays {arg.type}: the reference does not convert "
                    "while loops ('expect operands to be compatible with condition block "
                    "arguments'); keep loop-carried values unsharded",
                    op.location,
                )


def _check_same_shape(op: Op) -> None:
    if not op.results or not isinstance(op.results[0].type, TensorType):
        return
    expected = op.results[0].type.shape
    for kind, values in (("operand", op.operands), ("result", op.results)):
        for i, value in enumerate(values):
            t = value.type
            if isinstance(t, TensorType) and t.rank == len(expected) and t.shape != expected:
                raise VerifyError(
                    f"'{op.name}' op requires the same shape for all operands and results: "
                    f"{kind} {i} is {t} on each device but result 0 is {op.results[0].type} "
                    "(their shardings differ; run sdy-insert-explicit-reshards first)",
                    op.location,
                )


def _check_reshape(op: Op) -> None:
    source, result = op.operands[0].type, op.results[0].type
    if not isinstance(source, TensorType) or not isinstance(result, TensorType):
        return
    if source.is_static and result.is_static and source.num_elements != result.num_elements:
        raise VerifyError(
            f"'stablehlo.reshape' op number of output elements ({result.num_elements}) doesn't "
            f"match expected number of elements ({source.num_elements}): on each device the "
            f"operand is {source} and the result {result} (the shardings of the two sides do "
            "not split the data alike)",
            op.location,
        )


def _check_broadcast(op: Op) -> None:
    """StableHLO's verifier: each operand dim is 1 or its result dim's size (fuzz 1962-66: an
    operand sharded on another mesh than the result, which explicit reshards leave alone)."""
    source, result = op.operands[0].type, op.results[0].type
    if not isinstance(source, TensorType) or not isinstance(result, TensorType):
        return
    dims = parse_i64_array(op.properties["broadcast_dimensions"])
    for d, (size, target) in enumerate(zip(source.shape, dims, strict=False)):
        if size not in (1, result.shape[target]):
            raise VerifyError(
                f"'stablehlo.broadcast_in_dim' op size of operand dimension {d} ({size}) is not "
                f"equal to 1 or size of result dimension {target} ({result.shape[target]}): on "
                f"each device the operand is {source} and the result {result} (the two are "
                "sharded on different meshes or unlike each other)",
                op.location,
            )


def _oversized_dim(sizes: Sequence[int], shape: Sequence[int]) -> tuple[int, int, int] | None:
    """The first (dim, size, available) where `sizes` outgrows a static dim of `shape`."""
    for dim, (size, available) in enumerate(zip(sizes, shape, strict=False)):
        if available >= 0 and size > available:
            return dim, size, available
    return None


def _check_dynamic_slice(op: Op) -> None:
    source = op.operands[0].type
    if not isinstance(source, TensorType):
        return
    found = _oversized_dim(parse_i64_array(op.properties["slice_sizes"]), source.shape)
    if found is not None:
        dim, size, available = found
        raise VerifyError(
            f"'stablehlo.dynamic_slice' has slice size {size} greater than dimension size "
            f"{available} in dimension {dim} of operand: the sliced dimension is sharded "
            "(replicate it before slicing)",
            op.location,
        )


def _check_dynamic_update_slice(op: Op) -> None:
    operand, update = op.operands[0].type, op.operands[1].type
    if not isinstance(operand, TensorType) or not isinstance(update, TensorType):
        return
    found = _oversized_dim(update.shape, operand.shape)
    if found is not None:
        dim, size, available = found
        raise VerifyError(
            f"expects size at dimension {dim} of update to be in range [0, {available}]. "
            f"Got: {size}. (the updated dimension is sharded: replicate it before the update)",
            op.location,
        )


def _check_barrier(op: Op) -> None:
    for i, (operand, result) in enumerate(zip(op.operands, op.results, strict=False)):
        if operand.type != result.type:
            raise VerifyError(
                "'stablehlo.optimization_barrier' op requires the same type for operand and "
                f"result at index {i}: {operand.type} on each device in, {result.type} out "
                "(give the barrier's results the shardings of its operands)",
                op.location,
            )

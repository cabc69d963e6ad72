"""`sdy-pad-for-divisibility` (``transforms/export/pad_for_divisibility.cc``).

Every value whose sharding does not divide its shape is padded (at the high end) to the next
multiple of its shard count per dim, so that each device holds an equal shard. Shardy does it
with MLIR's dialect conversion; this module replays that conversion on our IR:

* ops are visited in pre-order; an op is *illegal* if it is a StableHLO op with an operand or
  result whose padded type differs from its type (``sdy.all_slice`` if its operand is not
  divisible by its out sharding, ``sdy.all_gather`` if its operand is not; the func if an
  argument or result is non-divisible - an error);
* an illegal op is rewritten by its pattern (new ops before it) and its results are mapped to
  the new values; operands come from that mapping, with an ``unrealized_conversion_cast`` when
  the mapped value's type is not the operand's own padded type (the type converter's
  materializations);
* at the end the old ops are erased, and users left alone (legal ops, ``func.return``) get
  the new values, through a cast back to the old type where it changed.

The patterns (`pad_for_divisibility_patterns`), as in the jaxlib 0.10.2 build: StableHLO ops
generically (the result is the larger of the type inferred from the padded operands and its
own padded type), ``stablehlo.slice`` (limits widened), ``stablehlo.dot_general`` (contracting
dims masked to zero), ``sdy.all_slice`` (input padded) and ``sdy.all_gather`` (result sliced
back). Other sdy collectives (``all_to_all``, ``reduce_scatter``, ``all_reduce``) are left
alone; the verifier then rejects one whose operand was padded. A cache records which values
are known to be padded with zeros, so that masks are not built twice.
"""

from __future__ import annotations

from shardwise.errors import VerifyError
from shardwise.export.pad_for_divisibility_conversion import Conversion, padded_type
from shardwise.export.pad_for_divisibility_patterns import rewrite
from shardwise.ir import Module, Op, func_result_types
from shardwise.passes import sdy_pass
from shardwise.sdy.shardings import get_func_result_sharding, get_sharding
from shardwise.verify import COLLECTIVE_OPS

__all__ = ["pad_for_divisibility", "pad_func_for_divisibility"]

_CAST = "builtin.unrealized_conversion_cast"


@sdy_pass("sdy-pad-for-divisibility", nests_in_func=True)
def pad_for_divisibility(module: Module) -> None:
    """The pass on every ``func.func`` of `module`, in order (the pass manager's nesting)."""
    meshes = module.meshes()
    module.types_changed = True
    for func in module.funcs:
        pad_func_for_divisibility(func, meshes)


def pad_func_for_divisibility(func: Op, meshes: dict[str, object]) -> None:
    """Pad the non-divisibly sharded values of `func`; its inputs/outputs must be divisible."""
    _check_func_io(func, meshes)
    conversion = Conversion(meshes)
    ops = [op for op in func.walk() if op is not func]
    for op in ops:
        if not _is_legal(op, conversion):
            rewrite(op, conversion)
    conversion.commit()
    _check_collective_operands(func)


def _check_func_io(func: Op, meshes: dict[str, object]) -> None:
    """`FuncOpPattern`: Shardy expects function IO to be divisible."""
    if not func.regions or not func.regions[0].blocks:
        return
    for arg in func.regions[0].entry.args:
        if padded_type(arg.type, get_sharding(arg), meshes) != arg.type:
            raise _io_error(func, f"argument #{arg.index}")
    for index, type in enumerate(func_result_types(func)):
        if padded_type(type, get_func_result_sharding(func, index), meshes) != type:
            raise _io_error(func, f"result #{index}")


def _io_error(func: Op, what: str) -> VerifyError:
    return VerifyError(
        f"'func.func' op {what} has a non-divisible sharding. Shardy expects function IO to be "
        "divisible. (run sdy-update-non-divisible-input-output-shardings first)",
        func.location,
    )


def _is_legal(op: Op, conversion: Conversion) -> bool:
    """The conversion target: which ops need no rewrite (read on the original values)."""
    legal_value = conversion.is_legal_value
    if op.name.startswith("stablehlo."):
        return all(legal_value(v) for v in op.results) and all(legal_value(v) for v in op.operands)
    if op.name == "sdy.all_slice":
        return conversion.is_legal_type(op.operands[0], op.properties.get("out_sharding"))
    if op.name == "sdy.all_gather":
        return all(legal_value(v) for v in op.operands)
    return True  # other sdy ops, func.return, ...: legal (or unknown and left alone)


def _check_collective_operands(func: Op) -> None:
    """The collectives' verifier after the pass: a collective left alone whose operand is now
    a cast (padded elsewhere) has an operand without a sharding."""
    for op in func.walk():
        if op.name in COLLECTIVE_OPS and op.operands:
            definer = op.operands[0].defining_op
            if definer is not None and definer.name == _CAST:
                raise VerifyError(
                    f"'{op.name}' op collective on operand without sharding (its operand was "
                    "padded for divisibility; sdy-pad-for-divisibility does not pad this "
                    "collective)",
                    op.location,
                )

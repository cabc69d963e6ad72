"""`sdy-verify-unreduced-axes` (``export/verify_unreduced_axes.cc``, Shardy after June 2026).

Unreduced axes may only appear or disappear where that is legal: an op may introduce `sum`
unreduced axes (a dot may, a reduce only its body's reduction kind), only explicit reshards
(`sdy.reshard`/`sdy.sharding_constraint`) and all-reduce style collectives may drop them, and
calls and returns must pass them through unchanged. Messages are Shardy's.

NOTE: the reference in jaxlib 0.10.2 predates this pass, so it is ported from Shardy's
source and tested against hand-derived cases, not differentially.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardwise.axis import AxisRef, axis_set_diff
from shardwise.errors import VerifyError
from shardwise.ir import Module, Op, Value, symbol_ref_name
from shardwise.mesh import Mesh
from shardwise.passes import FUNC, sdy_pass
from shardwise.sdy import manual_computation
from shardwise.sdy.shardings import get_func_result_sharding, get_sharding
from shardwise.sharding import TensorSharding, resolve_mesh

__all__ = ["verify_unreduced_axes"]

_EXPLICIT_RESHARDS = frozenset({"sdy.reshard", "sdy.sharding_constraint"})
_RETURN_LIKE = frozenset({"func.return", "sdy.return"})  # stablehlo.return is not ReturnLike
_BODY_REDUCTIONS = {"stablehlo.add": "sum", "stablehlo.maximum": "max", "stablehlo.minimum": "min"}
_DROPPED = (
    " without a blessed operation (e.g., sdy.reshard). "
    "This is an invalid transition from unreduced to reduced."
)


def _fail(op: Op, message: str) -> VerifyError:
    return VerifyError(f"'{op.name}' op {message}", op.location)


def _bypass_barriers(value: Value) -> Value:
    while value.defining_op is not None and value.defining_op.name == "sdy.propagation_barrier":
        value = value.defining_op.operands[0]
    return value


def _sharding(value: Value) -> TensorSharding | None:
    """`getShardingBypassingBarriers`."""
    return get_sharding(_bypass_barriers(value))


def _from_explicit_reshard(value: Value) -> bool:
    op = _bypass_barriers(value).defining_op
    return op is not None and op.name in _EXPLICIT_RESHARDS


def _unreduced(sharding: TensorSharding | None) -> tuple[AxisRef, ...]:
    return sharding.unreduced_axes if sharding is not None else ()


def _verify_equal(op: Op, source: Sequence[AxisRef], target: Sequence[AxisRef], suffix: str):
    if sorted(set(source), key=AxisRef.sort_key) == sorted(set(target), key=AxisRef.sort_key):
        return
    names = {a.name for a in source if a not in target} | {
        a.name for a in target if a not in source
    }
    raise _fail(op, f"has unreduced axes mismatch for '{', '.join(sorted(names))}{suffix}")


class _Verifier:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.meshes = module.meshes()

    def mesh(self, sharding: TensorSharding) -> Mesh | None:
        return resolve_mesh(sharding, self.meshes)

    def common_mesh(self, shardings: list[TensorSharding | None]) -> tuple[bool, Mesh | None]:
        found: Mesh | None = None
        for sharding in shardings:
            mesh = self.mesh(sharding) if sharding is not None else None
            if mesh is None:
                continue
            if found is not None and found != mesh:
                return False, None
            found = mesh
        return True, found

    def transition(
        self,
        op: Op,
        operands: list[TensorSharding | None],
        results: list[TensorSharding | None],
        introduce: str | None,
        remove: str | None,
    ) -> None:
        """`verifyUnreducedAxesTransition`."""
        consistent, mesh = self.common_mesh(operands + results)
        if not consistent:
            return
        flat_in = [a for s in operands for a in _unreduced(s)]
        flat_out = [a for s in results for a in _unreduced(s)]
        sizes = mesh if mesh is not None else Mesh()
        introduced = [] if flat_out == flat_in else axis_set_diff(flat_out, flat_in, sizes)
        removed = [] if flat_out == flat_in else axis_set_diff(flat_in, flat_out, sizes)
        if introduced:
            if introduce is None:
                raise _fail(op, f"cannot add new unreduced axis '{introduced[0].name}'.")
            self._reduction_ops(op, results, introduced, introduce, "cannot introduce")
        if removed:
            if remove is None:
                raise _fail(op, f"dropped unreduced axis '{removed[0].name}'{_DROPPED}")
            self._reduction_ops(op, operands, removed, remove, "cannot reduce")
        self._kept_reduction_ops(op, operands, results)

    @staticmethod
    def _reduction_ops(op, shardings, diff: list[AxisRef], expected: str, prefix: str) -> None:
        for sharding in shardings:
            if sharding is None or sharding.reduction_op == expected:
                continue
            if any(a.overlaps(d) for a in sharding.unreduced_axes for d in diff):
                raise _fail(
                    op,
                    f"{prefix} '{sharding.reduction_op}' unreduced axes. Expected '{expected}'.",
                )

    @staticmethod
    def _kept_reduction_ops(op, operands, results) -> None:
        for result in results:
            for axis in _unreduced(result):
                for operand in operands:
                    if operand is None or operand.reduction_op == result.reduction_op:
                        continue
                    if any(a.overlaps(axis) for a in operand.unreduced_axes):
                        raise _fail(
                            op,
                            "cannot change the reduction operator of kept unreduced axes "
                            f"from {operand.reduction_op} to {result.reduction_op}.",
                        )

    # -- per op kind ------------------------------------------------------------------------

    def operand_shardings(self, op: Op, values: list[Value]) -> list[TensorSharding | None]:
        """Operand shardings; values produced by an explicit reshard count as unsharded."""
        return [None if _from_explicit_reshard(v) else _sharding(v) for v in values]

    def result_shardings(self, op: Op) -> list[TensorSharding | None]:
        return [_sharding(r) for r in op.results]

    def explicit_reshard(self, op: Op) -> None:
        source = _sharding(op.operands[0])
        if source is not None:
            self.transition(op, [source], [op.get_attr("sharding")], "sum", source.reduction_op)

    def sdy_all_reduce(self, op: Op) -> None:
        operand = _sharding(op.operands[0])
        if operand is None:
            raise _fail(op, "operand must be sharded.")
        out = op.get_attr("out_sharding")
        assert isinstance(out, TensorSharding), f"{op.name} without out_sharding"
        self.transition(op, [operand], [out], None, out.reduction_op)

    def reduce(self, op: Op) -> None:
        num_inputs = len(op.operands) // 2
        operands = self.operand_shardings(op, op.operands[:num_inputs])
        self.transition(op, operands, self.result_shardings(op), _body_reduction(op), None)

    def stablehlo_collective(self, op: Op) -> None:
        operand = _sharding(op.operands[0])
        result = _sharding(op.results[0])
        if operand is None and result is None:
            return
        body = _body_reduction(op) if op.regions else None
        self.transition(op, [operand], [result], None, body)

    def call(self, op: Op) -> None:
        callee = self.module.lookup_symbol(symbol_ref_name(op.get_attr("callee")))
        if callee is None or callee.name != "func.func":
            return
        args = callee.regions[0].entry.args
        for i, operand in enumerate(op.operands):
            if _from_explicit_reshard(operand):
                continue
            arg_axes = _unreduced(_sharding(args[i]))
            _verify_equal(op, _unreduced(_sharding(operand)), arg_axes, f"' at call argument {i}.")
        for i, result in enumerate(op.results):
            func_axes = _unreduced(get_func_result_sharding(callee, i))
            _verify_equal(op, func_axes, _unreduced(_sharding(result)), f"' at call result {i}.")

    def return_pair(self, op: Op, operand: Value, result: TensorSharding | None, i: int) -> None:
        if _from_explicit_reshard(operand) or result is None:
            return
        suffix = f"' at return value {i}{_DROPPED}"
        _verify_equal(op, _unreduced(_sharding(operand)), result.unreduced_axes, suffix)

    def terminator(self, op: Op) -> None:
        parent = op.parent_op
        assert parent is not None
        if parent.name == "func.func":
            for i, operand in enumerate(op.operands):
                self.return_pair(op, operand, get_func_result_sharding(parent, i), i)
            return
        for i, operand in enumerate(op.operands[: len(parent.results)]):
            result = _sharding(parent.results[i])
            if parent.name == "sdy.manual_computation" and result is not None:
                result = manual_computation.erase_manual_axes(
                    result, manual_computation.manual_axes_of(parent)
                )
            self.return_pair(op, operand, result, i)

    def default(self, op: Op) -> None:
        operands = self.operand_shardings(op, op.operands)
        self.transition(op, operands, self.result_shardings(op), "sum", None)

    def visit(self, op: Op) -> None:
        name = op.name
        if name in _EXPLICIT_RESHARDS:
            self.explicit_reshard(op)
        elif name == "stablehlo.reduce":
            self.reduce(op)
        elif name in ("stablehlo.dot_general", "stablehlo.dot"):
            self.default(op)  # may introduce `sum` axes (contracting dims), never drop
        elif name in ("sdy.all_reduce", "sdy.reduce_scatter"):
            self.sdy_all_reduce(op)
        elif name in ("stablehlo.all_reduce", "stablehlo.reduce_scatter"):
            self.stablehlo_collective(op)
        elif name == "func.call":
            self.call(op)
        elif op.is_terminator:
            if name in _RETURN_LIKE:
                self.terminator(op)
        else:
            self.default(op)


def _body_reduction(op: Op) -> str | None:
    """`getReductionType`: sum/max/min if every returned value is made by that one op."""
    region = op.regions[0]
    if not region.blocks:
        return None
    ret = region.entry.terminator
    if ret is None or ret.name != "stablehlo.return" or not ret.operands:
        return None
    kinds = set()
    for value in ret.operands:
        defining = value.defining_op
        kind = _BODY_REDUCTIONS.get(defining.name) if defining is not None else None
        if kind is None:
            return None
        kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else None


@sdy_pass("sdy-verify-unreduced-axes", anchor=FUNC)
def verify_unreduced_axes(func: Op, module: Module | None = None) -> None:
    """Raise `VerifyError` at the first op (post-order) that drops or invents unreduced axes."""
    if module is None:
        module = _module_of(func)
    verifier = _Verifier(module)
    for op in func.walk_post_order():
        if op is not func:
            verifier.visit(op)


def _module_of(op: Op) -> Module:
    root = op
    while root.parent_op is not None:
        root = root.parent_op
    return Module(root)

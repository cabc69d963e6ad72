"""The conversion's state: shardings of the original values, local types, replacements.

Like MLIR's dialect conversion, a converted op's original stays readable: its sharding,
operands and users are those of the global program while later ops are converted, and the
values replacing it are looked up through `lookup` (a chain: a manual computation's result is
replaced by a body value, itself replaced when its op is converted). Ops converted in place
(type changes only) keep their identity. Originals are erased at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from shardwise.errors import ShardwiseError, UnsupportedError, VerifyError
from shardwise.ir import DYNAMIC, Module, Op, TensorType, Type, Value
from shardwise.mesh import Mesh
from shardwise.sdy import data_flow
from shardwise.sdy.shardings import get_func_result_sharding, get_sharding
from shardwise.sharding import TensorSharding

__all__ = ["ConversionOptions", "ConversionState", "local_type"]


@dataclass(frozen=True, slots=True)
class ConversionOptions:
    """The options of ``sdy-convert-global-to-local`` in the jaxlib 0.10.2 build."""

    per_dim_all_gather: bool = False
    combine_multi_dimension_reduce_scatter: bool = False
    enable_rgv3: bool = False
    # Not an option of the reference: `shardwise partition` converts what the reference
    # rejects (calls whose types change, loops carrying sharded values: `calls.py`,
    # `control_flow.py`; op-level local forms: `extended.py`). Where the reference converts,
    # the output stays its own.
    beyond_reference: bool = False


def local_type(type: Type, sharding: TensorSharding | None, mesh: Mesh | None, op: Op) -> Type:
    """`getLocalType`: each dim divided by the size of the axes sharding it.

    A value without a sharding or mesh keeps its type, a dynamic dim stays dynamic. A dim
    that its axes do not divide makes the reference abort ("Failed to compute local type due to non-divisible
    sharding"); we raise instead.
    """
    if sharding is None or mesh is None or not isinstance(type, TensorType):
        return type
    shape = []
    for dim, (size, dim_sharding) in enumerate(
        zip(type.shape, sharding.dim_shardings, strict=False)
    ):
        factor = 1
        for axis in dim_sharding.axes:
            factor *= axis.size(mesh)
        if size != DYNAMIC and size % factor:
            raise ShardwiseError(
                f"'{op.name}': failed to compute the local type of {type} with sharding "
                f"{sharding}: dimension {dim} ({size}) is not divisible by {factor} (the "
                "reference aborts: 'Failed to compute local type due to non-divisible "
                "sharding'); pad the dimension or run sdy-update-non-divisible-input-output-"
                "shardings first",
                op.location,
            )
        shape.append(size if size == DYNAMIC else size // factor)
    return TensorType(tuple(shape), type.element_type, type.encoding)


@dataclass
class ConversionState:
    module: Module
    options: ConversionOptions
    meshes: dict[str, Mesh]
    next_channel: int
    arg_shardings: dict[Value, TensorSharding] = field(default_factory=dict)
    replacements: dict[Value, Value] = field(default_factory=dict)
    replaced_ops: list[Op] = field(default_factory=list)
    erased: set[int] = field(default_factory=set)
    global_types: dict[Value, Type] = field(default_factory=dict)

    # -- reading the global program ---------------------------------------------------------

    def sharding(self, value: Value) -> TensorSharding | None:
        """The converter's `getSharding`: block arguments only from the collected map."""
        if value.is_block_arg:
            return self.arg_shardings.get(value)
        return get_sharding(value)

    def mesh(self, sharding: TensorSharding | None) -> Mesh | None:
        if sharding is None:
            return None
        ref = sharding.mesh_or_ref
        if isinstance(ref, Mesh):
            return ref
        return self.meshes.get(ref)

    def require_mesh(self, sharding: TensorSharding | None, op: Op) -> Mesh:
        mesh = self.mesh(sharding)
        if mesh is None:
            raise VerifyError(f"'{op.name}' op failed to resolve mesh", op.location)
        return mesh

    def global_type(self, value: Value) -> Type:
        """The type `value` had in the global program (before `set_type`)."""
        return self.global_types.get(value, value.type)

    def set_type(self, value: Value, type: Type) -> None:
        """Give a value kept in place its local type, remembering the global one."""
        self.global_types.setdefault(value, value.type)
        value.type = type

    def local_type(self, value: Value, op: Op) -> Type:
        sharding = self.sharding(value)
        return local_type(self.global_type(value), sharding, self.mesh(sharding), op)

    def local_tensor_type(self, value: Value, op: Op) -> TensorType:
        result = self.local_type(value, op)
        if not isinstance(result, TensorType):
            raise UnsupportedError(f"'{op.name}': expected a ranked tensor, got {result}")
        return result

    def func_result_type(self, func: Op, index: int, type: Type) -> Type:
        sharding = get_func_result_sharding(func, index)
        return local_type(type, sharding, self.mesh(sharding), func)

    # -- the converted program --------------------------------------------------------------

    def lookup(self, value: Value) -> Value:
        while value in self.replacements:
            value = self.replacements[value]
        return value

    def operands(self, op: Op) -> list[Value]:
        """The adaptor's operands: each original operand's current replacement."""
        return [self.lookup(v) for v in op.operands]

    def channel(self) -> int:
        handle = self.next_channel
        self.next_channel += 1
        return handle

    def replace(self, op: Op, values: Sequence[Value]) -> None:
        """Record that `values` replace `op`'s results; `op` is erased at the end."""
        for result, value in zip(op.results, values, strict=True):
            self.replacements[result] = value
        self.replaced_ops.append(op)

    def remap_in_place(self, op: Op, result_types: Sequence[Type] | None = None) -> None:
        """`localizeGenericOp`, in place: converted operands, local result types."""
        for i, value in enumerate(self.operands(op)):
            if op.operands[i] is not value:
                op.set_operand(i, value)
        if result_types is None:
            result_types = [self.local_type(r, op) for r in op.results]
        for result, type in zip(op.results, result_types, strict=True):
            self.set_type(result, type)

    def collect_arg_shardings(self) -> None:
        """Func arguments' and manual/named computations' block-argument shardings."""
        for op in self.module.op.walk():
            if not op.regions or not op.regions[0].blocks:
                continue  # a declaration has no arguments to convert
            if op.name == "func.func":
                for arg in op.regions[0].entry.args:
                    sharding = get_sharding(arg)
                    if sharding is not None:
                        self.arg_shardings[arg] = sharding
            elif op.name in ("sdy.manual_computation", "sdy.named_computation"):
                for arg in op.regions[0].entry.args:
                    sharding = data_flow.get_edge_owner_sharding(op, arg)
                    if sharding is not None:
                        self.arg_shardings[arg] = sharding

    def finish(self) -> None:
        """Move the remaining uses to the replacements and erase the originals."""
        for op in self.replaced_ops:
            for result in op.results:
                replacement = self.lookup(result)
                if replacement is not result:
                    result.replace_all_uses_with(replacement)
        for op in reversed(self.replaced_ops):
            for region in op.regions:
                for block in region.blocks:
                    for nested in reversed(list(block.ops)):
                        nested.erase()
            op.erase()

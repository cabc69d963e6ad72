"""The planner's search space: classes of dimensions propagation makes share one sharding.

Two tensor dimensions are in one class when an op's sharding rule maps both to the same factor
(as the dim's major factor: a reshape's compound dim follows its first factor), or when a
data-flow edge carries one to the other (a call's operand and its callee's argument, a region
op's operand, block argument and result). Union-find over (value, dim) pairs, over the ops the
entry function reaches, a callee once per call (as Shardy's import flattens calls: two calls
of a helper do not tie their callers' dims), gives the classes; sharding one dim of a class
on an axis lets propagation carry the axis to the rest of the class (or forces a reshard
where a user's sharding disagrees).

Only the classes that touch an unannotated argument of the entry function are planned. Each
gets candidates: replicated, each mesh axis alone, then pairs (and the whole mesh for three
axes) in mesh order; a candidate must divide the class's dim size. Classes with the same
signature (dim size and the argument types and dims they touch) form one `Group`: repeated
layers get one choice, so a 24-layer model is searched like a one-layer one.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from shardwise.axis import AxisRef
from shardwise.ir import Module, Op, SymbolTable, TensorType, Value, func_arg_attrs
from shardwise.mesh import Mesh
from shardwise.rules.registry import get_or_create_sharding_rule
from shardwise.rules.rule import OpShardingRule
from shardwise.sdy.funcs import callee_of, main_func
from shardwise.sdy.shardings import get_sharding
from shardwise.sharding import DimensionSharding, TensorSharding

__all__ = ["ArgInfo", "DimClass", "Group", "SearchSpace", "build_space"]

Candidate = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """An entry-function argument: its index, shape, and whether the planner may set it."""

    index: int
    shape: tuple[int, ...]
    type_text: str
    planned: bool  # False: the user's sharding (or not a static tensor), left as it is
    classes: tuple[int, ...]  # the class of each dim (-1: none, e.g. a size-1 dim)


@dataclass(frozen=True, slots=True)
class DimClass:
    """One class: its dim size (the gcd of its argument dims), the argument dims in it, and
    the elements of the values (intermediates included) it reaches."""

    size: int
    arg_dims: tuple[tuple[int, int], ...]  # (argument index, dim)
    value_bytes: int  # elements (not bytes) of every distinct value with a dim in the class
    # whether a dim of the class is an operand dim of a dot or a convolution: a dim that
    # splits compute (Megatron's hidden dims), not one only indexed (a scan's layer dim)
    in_dot: bool = False


@dataclass(frozen=True, slots=True)
class Group:
    """Classes tied to one choice (same signature), and the candidates they share."""

    classes: tuple[int, ...]
    candidates: tuple[Candidate, ...]  # candidates[0] == (): replicated


@dataclass(frozen=True, slots=True)
class SearchSpace:
    mesh_name: str
    mesh: Mesh
    args: tuple[ArgInfo, ...]
    classes: tuple[DimClass, ...]
    groups: tuple[Group, ...]
    # `shardings` by choice: the search asks for one choice many times (ranking, validity,
    # keys), and each answer walks every argument (0.33 CPU s at 96 GPT layers, uncached)
    _shardings: dict[tuple[int, ...], dict[int, TensorSharding] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # The planned arguments with the group of each dim (-1: none), for `shardings`: the
    # arguments of a stack's layers share these tuples (their classes differ, their groups
    # do not), so a choice's axes are worked out once per distinct tuple.
    _arg_groups: tuple[tuple[int, tuple[int, ...]], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        of = self.group_of_class()
        shared: dict[tuple[int, ...], tuple[int, ...]] = {}
        arg_groups = []
        for arg in self.args:
            if arg.planned:
                groups = tuple(of[c] if c >= 0 else -1 for c in arg.classes)
                arg_groups.append((arg.index, shared.setdefault(groups, groups)))
        object.__setattr__(self, "_arg_groups", tuple(arg_groups))

    def group_of_class(self) -> dict[int, int]:
        return {c: g for g, group in enumerate(self.groups) for c in group.classes}

    def group_args(self, g: int) -> frozenset[int]:
        """The planned arguments a group's classes touch."""
        return frozenset(a for c in self.groups[g].classes for a, _ in self.classes[c].arg_dims)

    def shardings(self, choice: tuple[int, ...]) -> dict[int, TensorSharding] | None:
        """The closed sharding of each planned argument for a choice (a candidate index per
        group); None if the choice puts one axis on two dims of an argument."""
        found = self._built(choice)
        return None if found is None else dict(found)  # the caller's to change

    def is_plan(self, choice: tuple[int, ...]) -> bool:
        """Whether `shardings(choice)` is not None (without copying them)."""
        return self._built(choice) is not None

    def _built(self, choice: tuple[int, ...]) -> dict[int, TensorSharding] | None:
        if choice not in self._shardings:
            self._shardings[choice] = self._build_shardings(choice)
        return self._shardings[choice]

    def _build_shardings(self, choice: tuple[int, ...]) -> dict[int, TensorSharding] | None:
        # Arguments whose dims get the same axes share one sharding (the layers of a stack):
        # one object, so its text is printed once (`evaluate._key`). By the groups of their
        # dims first: one lookup per argument, the axes worked out once per distinct groups.
        by_groups: dict[tuple[int, ...], TensorSharding] = {}
        made: dict[tuple[Candidate, ...], TensorSharding] = {}
        out: dict[int, TensorSharding] = {}
        for index, groups in self._arg_groups:
            sharding = by_groups.get(groups)
            if sharding is not None:
                out[index] = sharding
                continue
            axes_of_dims = tuple(
                self.groups[g].candidates[choice[g]] if g >= 0 else () for g in groups
            )
            sharding = made.get(axes_of_dims)
            if sharding is None:
                if sum(map(len, axes_of_dims)) != len(set().union(*axes_of_dims)):
                    return None  # one axis on two dims
                dims = tuple(
                    DimensionSharding(tuple(AxisRef(a) for a in axes), is_closed=True)
                    for axes in axes_of_dims
                )
                sharding = made[axes_of_dims] = TensorSharding(self.mesh_name, dims)
            by_groups[groups] = sharding
            out[index] = sharding
        return out

    def choice_of(self, shardings: dict[int, TensorSharding]) -> tuple[int, ...] | None:
        """The choice that writes `shardings` (a standard plan), if one does: every dim of a
        group's classes has the same axes, one of the group's candidates."""
        choice = []
        for group in self.groups:
            seen = {
                tuple(a.name for a in shardings[a].dim_shardings[d].axes)
                for c in group.classes
                for a, d in self.classes[c].arg_dims
                if a in shardings
            }
            if len(seen) != 1 or next(iter(seen)) not in group.candidates:
                return None
            choice.append(group.candidates.index(next(iter(seen))))
        return tuple(choice)

    def conflicts(self) -> list[tuple[int, int]]:
        """Pairs of groups in one argument: they cannot both use an axis."""
        of = self.group_of_class()
        pairs: set[tuple[int, int]] = set()
        for arg in self.args:
            groups = sorted({of[c] for c in arg.classes if c in of})
            pairs.update(itertools.combinations(groups, 2))
        return sorted(pairs)


class _UnionFind:
    """Union-find over (value, dim, call context): a callee's values are keyed by the call
    that reached them, so two calls of one func are two copies (as Shardy's import flattens
    the call graph), and dims that only meet in a shared helper are not tied. A value's dims
    are numbered together when it is first keyed (`base` + dim: no tuple per dim)."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.base: dict[tuple[int, int], int] = {}  # (id(value), context) -> its dim 0
        self.values: dict[int, Value] = {}
        self.dot_keys: list[int] = []  # operand dims of dots and convolutions
        self.ctx = 0  # the call context of the ops being linked

    def key(self, value: Value, dim: int, ctx: int | None = None) -> int:
        k = (id(value), self.ctx if ctx is None else ctx)
        base = self.base.get(k)
        if base is None:
            base = self.base[k] = len(self.parent)
            self.parent.extend(range(base, base + _rank(value)))
            self.values[id(value)] = value
        return base + dim

    def roots(self) -> list[int]:
        """Each index's root, in one pass: a parent is never above its child's index (`union`
        hangs the larger root under the smaller, `find` hangs a node under its grandparent),
        so a parent's root is known before its children's."""
        root = self.parent.copy()
        for i, p in enumerate(self.parent):
            if p != i:
                root[i] = root[p]
        return root

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _rank(value: Value) -> int:
    t = value.type
    return len(t.shape) if isinstance(t, TensorType) else 0


def _elements(value: Value) -> int:
    t = value.type
    return t.num_elements if isinstance(t, TensorType) and t.is_static else 0


def _link_values(
    uf: _UnionFind, a: Value, b: Value, ctx_a: int | None = None, ctx_b: int | None = None
) -> None:
    if _rank(a) != _rank(b) or not isinstance(a.type, TensorType):
        return
    for d in range(_rank(a)):
        uf.union(uf.key(a, d, ctx_a), uf.key(b, d, ctx_b))


def _link_rule(uf: _UnionFind, op: Op) -> None:
    rule = get_or_create_sharding_rule(op, set_on_op=False)
    if rule is None:
        return
    tensors = [*op.operands, *op.results]
    n = len(tensors)
    # Each tensor keyed once per op, not once per dim (`key` builds a tuple and looks it up:
    # 150k calls at 96 GPT layers); the union-find's `find` inlined, as in `union`.
    bases: dict[int, int] = {}
    parent, known, ctx = uf.parent, uf.base, uf.ctx
    for dims in _factor_dims(rule):
        first = -1
        for t, d in dims:
            if t >= n:
                continue
            base = bases.get(t)
            if base is None:
                base = known.get((id(tensors[t]), ctx))
                if base is None:
                    base = uf.key(tensors[t], 0)
                bases[t] = base
            k = base + d
            while parent[k] != k:
                parent[k] = parent[parent[k]]
                k = parent[k]
            if first < 0:
                first = k
            elif k < first:
                parent[first] = first = k
            elif k > first:
                parent[k] = first
    if op.name in _COMPUTE_OPS:
        uf.dot_keys.extend(uf.key(value, d) for value in op.operands for d in range(_rank(value)))


@functools.lru_cache(maxsize=4096)
def _factor_dims(rule: OpShardingRule) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The (tensor, dim) pairs of `rule` whose major factor is the same, per factor that links
    more than one dim (not one that needs replication or blocks propagation, nor of size 1):
    read once per rule, not once per op (ops of a repeated layer share their rules)."""
    skip = set(rule.need_replication_factors) | set(rule.blocked_propagation_factors)
    by_factor: dict[int, list[tuple[int, int]]] = {}
    for t, mapping in enumerate(rule.tensor_mappings):
        for d, factors in enumerate(mapping):
            if factors and factors[0] not in skip and rule.factor_sizes[factors[0]] > 1:
                by_factor.setdefault(factors[0], []).append((t, d))
    return tuple(tuple(dims) for dims in by_factor.values() if len(dims) > 1)


_COMPUTE_OPS = frozenset({"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"})


def _link_call(
    uf: _UnionFind, module: Module, symbols: SymbolTable, op: Op, inner: int
) -> Op | None:
    """Tie a call's operands and results (this context) to its callee's arguments and
    returned values (context `inner`); the callee, or None if it has no body."""
    callee = callee_of(module, op, symbols)
    if not callee.regions or not callee.regions[0].blocks:
        return None
    block = callee.regions[0].entry
    for a, b in zip(op.operands, block.args, strict=False):
        _link_values(uf, a, b, uf.ctx, inner)
    if block.terminator is not None:
        for a, b in zip(block.terminator.operands, op.results, strict=False):
            _link_values(uf, a, b, inner, uf.ctx)
    return callee


def _link_data_flow(uf: _UnionFind, op: Op) -> None:
    if op.name == "sdy.manual_computation":  # local types inside: not the same dims
        return
    for region in op.regions:
        for block in region.blocks:
            if len(block.args) == len(op.operands):
                for a, b in zip(op.operands, block.args, strict=True):
                    _link_values(uf, a, b)
            term = block.terminator
            if term is not None and len(term.operands) == len(op.results):
                for a, b in zip(term.operands, op.results, strict=True):
                    _link_values(uf, a, b)
    if op.name == "stablehlo.while":  # one edge: operand, block args, yielded value, result
        for a, b in zip(op.operands, op.results, strict=False):
            _link_values(uf, a, b)


def _link_from(uf: _UnionFind, module: Module, func: Op) -> None:
    """Link every op reached from `func`, each callee once per call that reaches it."""
    contexts = itertools.count(1)
    symbols = SymbolTable(module)
    work = [(func, 0)]
    while work:
        body, uf.ctx = work.pop()
        for op in body.walk():
            if op is body or op.name == "func.return":
                continue
            if op.name == "func.call":
                inner = next(contexts)
                callee = _link_call(uf, module, symbols, op, inner)
                if callee is not None:
                    work.append((callee, inner))
            elif op.regions:
                _link_data_flow(uf, op)
            else:
                _link_rule(uf, op)


def _candidates(mesh: Mesh, size: int) -> tuple[Candidate, ...]:
    names = [a.name for a in mesh.axes if a.size > 1]
    sizes = {a.name: a.size for a in mesh.axes}
    out: list[Candidate] = [()]
    for r in range(1, min(len(names), 3) + 1):
        for combo in itertools.combinations(names, r):
            if r == 3 and len(names) > 3:
                continue
            n = 1
            for a in combo:
                n *= sizes[a]
            if size % n == 0 and size >= n:
                out.append(combo)
    return tuple(out)


def build_space(module: Module, mesh_name: str, mesh: Mesh) -> SearchSpace:
    """The classes and groups of `module` (unpropagated) for a plan on `mesh`."""
    func = main_func(module)
    assert func is not None, "the caller checked that the module has an entry function"
    uf = _UnionFind()
    _link_from(uf, module, func)
    uf.ctx = 0
    block_args = func.regions[0].entry.args
    # Number the classes that touch an argument, in argument order (deterministic).
    class_of_root: dict[int, int] = {}
    args: list[ArgInfo] = []
    for i, arg in enumerate(block_args):
        t = arg.type
        static = isinstance(t, TensorType) and t.is_static and t.rank > 0
        planned = static and get_sharding(arg) is None and not _has_user_attr(func, i)
        dims: list[int] = []
        for d in range(_rank(arg)):
            if not planned or not isinstance(t, TensorType) or t.shape[d] <= 1:
                dims.append(-1)
                continue
            root = uf.find(uf.key(arg, d))
            dims.append(class_of_root.setdefault(root, len(class_of_root)))
        shape = tuple(t.shape) if isinstance(t, TensorType) else ()
        args.append(ArgInfo(i, shape, str(t), planned, tuple(dims)))
    classes = _classes(uf, class_of_root, args)
    return SearchSpace(mesh_name, mesh, tuple(args), classes, _groups(classes, args, mesh))


def _has_user_attr(func: Op, index: int) -> bool:
    attrs = func_arg_attrs(func, index)
    return attrs is not None and "sdy.sharding" in attrs


def _classes(
    uf: _UnionFind, class_of_root: dict[int, int], args: list[ArgInfo]
) -> tuple[DimClass, ...]:
    arg_dims: dict[int, list[tuple[int, int]]] = {c: [] for c in class_of_root.values()}
    sizes: dict[int, int] = {}
    for arg in args:
        for d, c in enumerate(arg.classes):
            if c >= 0:
                arg_dims[c].append((arg.index, d))
                sizes[c] = math.gcd(sizes.get(c, 0), arg.shape[d])
    roots = uf.roots()
    in_dot = {class_of_root.get(roots[k], -1) for k in uf.dot_keys}
    value_elements = _value_elements(uf, roots, class_of_root)
    return tuple(
        DimClass(sizes[c], tuple(arg_dims[c]), value_elements[c], c in in_dot)
        for c in range(len(class_of_root))
    )


def _value_elements(uf: _UnionFind, roots: list[int], class_of_root: dict[int, int]) -> list[int]:
    """Per class, the elements of the (value, call context) pairs with a dim in it, each pair
    counted once. In numpy, over the union-find's numbering: a pair's dims are numbered
    together, pairs in the order they were keyed (a loop over the pairs and their dims was
    half of `build_space` at 96 GPT layers)."""
    n_classes = len(class_of_root)
    if n_classes == 0:
        return []
    class_at = np.full(len(roots), -1, dtype=np.int64)
    class_at[np.fromiter(class_of_root, np.int64, n_classes)] = np.arange(n_classes)
    of_key = class_at[np.asarray(roots, dtype=np.int64)]  # the class of each numbered dim
    bases = np.fromiter(uf.base.values(), np.int64, len(uf.base))
    owner = np.repeat(np.arange(len(bases)), np.diff(bases, append=len(roots)))
    hit = of_key >= 0
    pair, cls = np.divmod(np.unique(owner[hit] * n_classes + of_key[hit]), n_classes)
    vids = [vid for vid, _ in uf.base]
    by_type: dict[int, int] = {}  # elements by the type object's id (a layer's types repeat)
    counts = []
    for i in pair.tolist():
        value = uf.values[vids[i]]
        n = by_type.get(id(value.type))
        if n is None:
            n = by_type[id(value.type)] = _elements(value)
        counts.append(n)
    elements = np.array(counts, dtype=np.int64)
    totals = np.zeros(n_classes, dtype=np.int64)
    np.add.at(totals, cls, elements)
    return totals.tolist()


def _groups(classes: tuple[DimClass, ...], args: list[ArgInfo], mesh: Mesh) -> tuple[Group, ...]:
    types = {a.index: a.type_text for a in args}
    by_signature: dict[tuple, list[int]] = {}
    for c, cls in enumerate(classes):
        signature = (cls.size, tuple(sorted((types[a], d) for a, d in cls.arg_dims)))
        by_signature.setdefault(signature, []).append(c)
    groups = []
    for members in by_signature.values():
        size = min(classes[c].size for c in members)
        groups.append(Group(tuple(members), _candidates(mesh, size)))
    return tuple(groups)

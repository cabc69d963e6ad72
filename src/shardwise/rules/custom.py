"""Sharding rules written by users, for custom calls and ops Shardy does not know.

Two ways to give a rule, both ending as an `OpShardingRule` with the ``custom`` flag:

* a string in the einsum-like notation of JAX's ``custom_partitioning`` ``sharding_rule``::

      register_rule("my_matmul", "i j, j k -> i k", reduction_factors=("j",))

  Factors are words; ``(i j)`` is a compound dimension (its factor sizes come from
  ``factor_sizes``), a leading ``...`` (or ``...1``) stands for any number of batch dims;
* a decorator over a function that builds the rule from the op with `OpShardingRuleBuilder`
  (or returns a spec string)::

      @sharding_rule("my_target")
      def my_rule(op, builder):
          return builder.add_factor(...).build()

`apply_user_rules(module)` writes the rule onto every matching op as ``sdy.sharding_rule``
(custom rules are what Shardy reads first and keeps after propagation), so propagation, ours
or Shardy's on our output, uses it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shardwise.errors import RuleError
from shardwise.ir import SHARDING_RULE_ATTR, Module, Op, TensorType, Type
from shardwise.rules.rule import OpShardingRule

__all__ = [
    "RuleSpec",
    "parse_rule_spec",
    "rule_from_spec",
    "register_rule",
    "sharding_rule",
    "unregister_rule",
    "user_rule_for",
    "apply_user_rules",
    "registered_user_rules",
]

_BATCH = "\u2026"  # one character standing for "..." while parsing
_FACTOR_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# A dimension is one factor name or a compound tuple of names; a batch marker is "...N".
DimSpec = str | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A parsed rule string: per operand/result, its dims (names, compounds, batch marker)."""

    operands: tuple[tuple[DimSpec, ...], ...]
    results: tuple[tuple[DimSpec, ...], ...]
    reduction_factors: tuple[str, ...] = ()
    need_replication_factors: tuple[str, ...] = ()
    permutation_factors: tuple[str, ...] = ()
    factor_sizes: dict[str, int] = field(default_factory=dict, hash=False, compare=False)


def _parse_side(text: str) -> tuple[tuple[DimSpec, ...], ...]:
    text = " ".join(text.split())
    if not text:
        return ((),)
    values: list[tuple[DimSpec, ...]] = []
    for part in text.split(","):
        values.append(_parse_value(part.strip()))
    return tuple(values)


def _parse_value(text: str) -> tuple[DimSpec, ...]:
    dims: list[DimSpec] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch == " ":
            pos += 1
        elif ch == _BATCH:
            if dims:
                raise RuleError(f"'...' can only start a value, in '{text}'")
            m = re.compile(r"\d*").match(text, pos + 1)
            assert m is not None
            dims.append("..." + str(int(m.group() or "0")))
            pos = m.end()
        elif ch == "(":
            end = text.find(")", pos)
            if end < 0:
                raise RuleError(f"unbalanced '(' in '{text}'")
            names = text[pos + 1 : end].split()
            if len(names) < 2 or not all(_FACTOR_RE.fullmatch(n) for n in names):
                raise RuleError(
                    f"a compound dimension needs two or more factor names, got '({text[pos + 1 : end]})'"
                )
            dims.append(tuple(names))
            pos = end + 1
        else:
            m = _FACTOR_RE.match(text, pos)
            if m is None:
                raise RuleError(f"unexpected character '{ch}' in rule value '{text}'")
            dims.append(m.group())
            pos = m.end()
    return tuple(dims)


def parse_rule_spec(
    text: str,
    *,
    reduction_factors: Sequence[str] = (),
    need_replication_factors: Sequence[str] = (),
    permutation_factors: Sequence[str] = (),
    factor_sizes: dict[str, int] | None = None,
) -> RuleSpec:
    """Parse ``"i j, j k -> i k"`` (JAX ``custom_partitioning`` notation)."""
    if "->" not in text:
        raise RuleError(f"a sharding rule needs '->' between operands and results: '{text}'")
    if _BATCH in text:
        raise RuleError(f"unexpected character '{_BATCH}' in '{text}'")
    text = text.replace("...", _BATCH)
    if "." in text:
        raise RuleError(f"'.' may only appear as '...' in '{text}'")
    lhs, rhs = text.split("->", 1)
    operands, results = _parse_side(lhs), _parse_side(rhs)
    whole = {d for value in (*operands, *results) for d in value if isinstance(d, str)}
    for name in factor_sizes or {}:
        if name in whole:
            raise RuleError(
                f"factor '{name}' represents a whole dimension; do not give its size "
                "(factor_sizes is only for factors inside compound dims)"
            )
    return RuleSpec(
        operands,
        results,
        tuple(reduction_factors),
        tuple(need_replication_factors),
        tuple(permutation_factors),
        dict(factor_sizes or {}),
    )


class _FactorTable:
    """Factor name -> (index, size), indices in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.size: dict[str, int | None] = {}

    def add(self, name: str, size: int | None) -> None:
        if name not in self.index:
            self.index[name] = len(self.index)
            self.size[name] = size
            return
        known = self.size[name]
        if name.startswith("...") and None not in (size, known) and size != known:
            raise RuleError(f"batch dimension {name} has two sizes: {known} and {size}")
        if size is not None and (known is None or size < known):
            self.size[name] = size


def _shape(t: Type) -> tuple[int, ...]:
    if not isinstance(t, TensorType):
        raise RuleError(f"a sharding rule needs ranked tensors, got {t}")
    return t.shape


def rule_from_spec(
    spec: RuleSpec, operand_types: Sequence[Type], result_types: Sequence[Type]
) -> OpShardingRule:
    """Resolve `spec` against an op's types: factor indices, sizes and the batch dims."""
    for kind, values, types in (
        ("operands", spec.operands, operand_types),
        ("results", spec.results, result_types),
    ):
        if len(values) != len(types):
            raise RuleError(f"the rule has {len(values)} {kind}, the op has {len(types)}")
    shapes = [_shape(t) for t in (*operand_types, *result_types)]
    values = (*spec.operands, *spec.results)
    table = _FactorTable()
    expanded = [
        _expand(v, shape, i, len(spec.operands))
        for i, (v, shape) in enumerate(zip(values, shapes, strict=True))
    ]
    _check_batch_ranks(expanded)
    for dims, shape in zip(expanded, shapes, strict=True):
        for dim, size in zip(dims, shape, strict=True):
            if isinstance(dim, str):
                table.add(dim, size)
            else:
                for name in dim:
                    table.add(name, spec.factor_sizes.get(name))
    for name, known in table.size.items():
        if known is None:
            raise RuleError(f"factor '{name}' only appears in compound dims: give its size")
    mappings = [_mapping(dims, shape, table) for dims, shape in zip(expanded, shapes, strict=True)]
    n = len(spec.operands)

    def indices(names: Sequence[str]) -> tuple[int, ...]:
        unknown = [x for x in names if x not in table.index]
        if unknown:
            raise RuleError(f"unknown factor(s) {', '.join(unknown)} in the special factor lists")
        return tuple(sorted(table.index[x] for x in names))

    return OpShardingRule(
        factor_sizes=tuple(table.size[name] for name in table.index),  # type: ignore[misc]
        operand_mappings=tuple(mappings[:n]),
        result_mappings=tuple(mappings[n:]),
        reduction_factors=indices(spec.reduction_factors),
        need_replication_factors=indices(spec.need_replication_factors),
        permutation_factors=indices(spec.permutation_factors),
        is_custom_rule=True,
    )


def _expand(dims: tuple[DimSpec, ...], shape: tuple[int, ...], index: int, n_operands: int):
    """Replace a leading batch marker by one factor per leading dim of `shape`."""
    what = f"operand {index}" if index < n_operands else f"result {index - n_operands}"
    if dims and isinstance(dims[0], str) and dims[0].startswith("..."):
        group, rest = dims[0], dims[1:]
        batch_rank = max(len(shape) - len(rest), 0)
        dims = tuple(f"{group}_{k}" for k in range(batch_rank)) + rest
    if len(dims) != len(shape):
        raise RuleError(
            f"the rule gives {what} rank {len(dims)}, the op's {what} has rank {len(shape)}"
        )
    return dims


def _check_batch_ranks(expanded: list[tuple[DimSpec, ...]]) -> None:
    ranks: dict[str, int] = {}
    for dims in expanded:
        counts: dict[str, int] = {}
        for d in dims:
            if isinstance(d, str) and d.startswith("..."):
                group = d.rsplit("_", 1)[0]
                counts[group] = counts.get(group, 0) + 1
        for group, count in counts.items():
            if ranks.setdefault(group, count) != count:
                raise RuleError(f"'{group}' stands for {ranks[group]} and {count} dims")


def _mapping(dims, shape, table: _FactorTable) -> tuple[tuple[int, ...], ...]:
    result: list[tuple[int, ...]] = []
    for dim, size in zip(dims, shape, strict=True):
        if isinstance(dim, str):
            result.append((table.index[dim],))
            continue
        product = 1
        for name in dim:
            product *= table.size[name] or 1
        if product != size:
            raise RuleError(
                f"compound dimension ({' '.join(dim)}) has size {product}, the dim has size {size}"
            )
        result.append(tuple(table.index[name] for name in dim))
    return tuple(result)


# -- the user rule registry ------------------------------------------------------------------

RuleBuilderFn = Callable[..., Any]
_USER_RULES: dict[str, Callable[[Op], OpShardingRule]] = {}
# A user rule function: (op, builder) -> OpShardingRule, or a rule string.
UserRuleFn = Callable[[Op, Any], Any]


def _key(op: Op) -> str:
    if op.name == "stablehlo.custom_call":
        target = op.get_attr("call_target_name")
        return str(target).strip('"') if target is not None else ""
    return op.name


def register_rule(target: str, spec: str | UserRuleFn, **kwargs: Any) -> None:
    """Use `spec` (a rule string or a function of the op) for custom calls to `target`.

    `target` is a ``call_target_name`` or any op name (``"mydialect.op"``). Keyword arguments
    of a string spec: ``reduction_factors``, ``need_replication_factors``,
    ``permutation_factors``, ``factor_sizes``.
    """
    if target in _USER_RULES:
        raise RuleError(f"a sharding rule for '{target}' is already registered")
    if isinstance(spec, str):
        parsed = parse_rule_spec(spec, **kwargs)

        def build(op: Op) -> OpShardingRule:
            return rule_from_spec(
                parsed, [v.type for v in op.operands], [v.type for v in op.results]
            )

    else:
        fn = spec

        def build(op: Op) -> OpShardingRule:
            from shardwise.rules.builder import OpShardingRuleBuilder

            produced = fn(op, OpShardingRuleBuilder.for_op(op))
            if isinstance(produced, str):
                return rule_from_spec(
                    parse_rule_spec(produced, **kwargs),
                    [v.type for v in op.operands],
                    [v.type for v in op.results],
                )
            if not isinstance(produced, OpShardingRule):
                raise RuleError(f"the rule function for '{target}' returned {produced!r}")
            return _as_custom(produced)

    _USER_RULES[target] = build


def _as_custom(rule: OpShardingRule) -> OpShardingRule:
    from dataclasses import replace

    return rule if rule.is_custom_rule else replace(rule, is_custom_rule=True)


def sharding_rule(target: str, **kwargs: Any) -> Callable[[RuleBuilderFn], RuleBuilderFn]:
    """Decorator form of `register_rule`: ``@sharding_rule("my_target")``."""

    def decorate(fn: RuleBuilderFn) -> RuleBuilderFn:
        register_rule(target, fn, **kwargs)
        return fn

    return decorate


def unregister_rule(target: str) -> None:
    _USER_RULES.pop(target, None)


def registered_user_rules() -> tuple[str, ...]:
    return tuple(sorted(_USER_RULES))


def user_rule_for(op: Op) -> OpShardingRule | None:
    build = _USER_RULES.get(_key(op))
    if build is None:
        return None
    try:
        return build(op)
    except RuleError as e:
        raise RuleError(f"sharding rule for '{_key(op)}': {e.message}", op.location) from None


def apply_user_rules(module: Module) -> int:
    """Write every registered rule onto its ops as ``sdy.sharding_rule``; returns how many."""
    if not _USER_RULES:
        return 0
    count = 0
    for op in module.walk():
        rule = user_rule_for(op)
        if rule is not None:
            op.attributes[SHARDING_RULE_ATTR] = rule
            count += 1
    return count

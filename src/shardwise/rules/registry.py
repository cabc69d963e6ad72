"""Which sharding rule an op gets (Shardy's `op_sharding_rule_registry`).

Rules live in `shardwise.rules.ops.<family>` and register themselves by op name with
`@register(...)`. Dispatch (`create_op_sharding_rule`), first match wins:

1. a registered rule function;
2. `NO_RULE_OPS`: ops that deliberately get no rule (handled elsewhere or nothing to shard);
3. terminators: no rule, silently;
4. anything else: no rule, plus one warning per op name (per command run)
   ``op '<name>' is unknown to SDY sharding rule registry``; `ops_without_rule` lists them.

`get_or_create_sharding_rule` first honours a rule already on the op (``sdy.sharding_rule``,
e.g. a user's custom rule) and by default stores a created rule on the op.
"""

from __future__ import annotations

import importlib
import operator
import warnings
from collections.abc import Callable, Hashable, Iterable

from shardwise.errors import ShardwiseError
from shardwise.hashing import InternTable
from shardwise.ir import SHARDING_RULE_ATTR, Module, Op, OpaqueType, RawAttr, TensorType
from shardwise.rules.rule import OpShardingRule
from shardwise.syntax import parse_op_sharding_rule

__all__ = [
    "NO_RULE_OPS",
    "RuleFn",
    "UnknownOpWarning",
    "attach_rules_to_clone",
    "create_op_sharding_rule",
    "ops_without_rule",
    "get_or_create_sharding_rule",
    "has_rule_function",
    "register",
    "registered_ops",
    "reset_unknown_op_warnings",
    "warn_once",
]

# A rule function: the op and whether propagation is conservative -> its rule (None: no rule).
RuleFn = Callable[[Op, bool], OpShardingRule | None]

_RULES: dict[str, RuleFn] = {}

# Ops that get no rule on purpose: symbols and structure, data-flow ops whose edges propagation
# handles itself (while, case, optimization_barrier, named/manual computations), and ops with
# nothing to shard or whose sharding is fixed (constants, iota, tokens, send/recv).
NO_RULE_OPS: frozenset[str] = frozenset(
    {
        "builtin.module",
        "func.call",
        "func.func",
        "sdy.constant",
        "sdy.data_flow_edge",
        "sdy.func_data_flow_edge",
        "sdy.manual_computation",
        "sdy.mesh",
        "sdy.named_computation",
        "sdy.propagation_barrier",
        "sdy.reshard",
        "sdy.sharding_group",
        "stablehlo.after_all",
        "stablehlo.case",
        "stablehlo.constant",
        "stablehlo.create_token",
        "stablehlo.get_tuple_element",
        "stablehlo.infeed",
        "stablehlo.iota",
        "stablehlo.optimization_barrier",
        "stablehlo.outfeed",
        "stablehlo.partition_id",
        "stablehlo.recv",
        "stablehlo.send",
        "stablehlo.while",
    }
)

# Ops that always end a block (others are recognised by position, see `_is_terminator`).
_TERMINATORS = frozenset({"func.return", "mhlo.return", "sdy.return", "stablehlo.return"})


class UnknownOpWarning(UserWarning):
    """An op (or custom call target) that the rule registry does not know: no rule."""


_warned: set[str] = set()
# While `ops_without_rule` runs: the names found, instead of warnings.
_collecting: list[set[str]] = []


def warn_once(kind: str, message: str, subject: str = "") -> None:
    """Emit `message` as an `UnknownOpWarning` the first time it comes up (once per op name or
    custom call target, until `reset_unknown_op_warnings`).

    Shardy logs it (`LOG(WARNING)`, once per kind); the command line shows it with --verbose.
    `subject` names the op for `ops_without_rule` (default: `kind`).
    """
    if _collecting:
        _collecting[-1].add(subject or kind)
        return
    if message in _warned:
        return
    _warned.add(message)
    warnings.warn(message, UnknownOpWarning, stacklevel=3)


def ops_without_rule(module: Module) -> frozenset[str]:
    """The ops of `module` that get no sharding rule but should (each is warned about once):
    op names, and ``stablehlo.custom_call @target`` for unknown custom call targets. Such an
    op replicates what flows through it. Ops rule-less on purpose are not listed."""
    found: set[str] = set()
    _collecting.append(found)
    try:
        for op in module.walk():
            try:
                create_op_sharding_rule(op)
            except ShardwiseError:  # a rule that rejects the op: reported where it is used
                continue
    finally:
        _collecting.pop()
    return frozenset(found)


def reset_unknown_op_warnings() -> None:
    """Forget which warnings were emitted (for tests)."""
    _warned.clear()


def register(
    *op_names: str, regions_read: Callable[[Op], Hashable] | None = None
) -> Callable[[RuleFn], RuleFn]:
    """Register the decorated function as the rule of `op_names`; registering twice raises.

    `regions_read`: for a rule that reads the op's regions, all it reads of them (a hashable
    summary, e.g. whether a scatter's update computation is a commutative reduction): rules
    are then shared by signature plus that summary, as for ops without regions.
    """

    def decorate(fn: RuleFn) -> RuleFn:
        for name in op_names:
            if name in _RULES:
                raise ValueError(f"op '{name}' already has a sharding rule: {_RULES[name]}")
            if name in NO_RULE_OPS:
                raise ValueError(f"op '{name}' is listed in NO_RULE_OPS")
            _RULES[name] = fn
            if regions_read is not None:
                _REGIONS_READ[name] = regions_read
        return fn

    return decorate


_families_imported = False


def _rules() -> dict[str, RuleFn]:
    # Importing the families fills `_RULES`. They sit above this module (they import
    # `register`), so the registry loads them by name on first use, as the pass catalogue
    # loads pass modules. (A check of a flag, not an import statement per call: one per op.)
    global _families_imported
    if not _families_imported:
        importlib.import_module(_RULE_FAMILIES)

        _families_imported = True
    return _RULES


def registered_ops() -> tuple[str, ...]:
    """Every op name with a rule function, sorted."""
    return tuple(sorted(_rules()))


def has_rule_function(op_name: str) -> bool:
    """Whether `op_name` has a rule function (else an op of it gets a rule only if attached)."""
    return op_name in _rules()


def _is_terminator(op: Op) -> bool:
    if op.name in _TERMINATORS:
        return True
    parent = op.parent_op
    return op.is_terminator and parent is not None and parent.name != "builtin.module"


# Built-in rules that read more than the op's signature: the defining ops of operands
# (concatenate, dynamic_update_slice), a result's users (custom calls: X64Combine).
_READS_MORE_THAN_SIGNATURE = frozenset(
    {"stablehlo.concatenate", "stablehlo.custom_call", "stablehlo.dynamic_update_slice"}
)
# Ops with regions whose built-in rule function reads none of them (its signature is enough).
_REGIONS_NOT_READ = frozenset({"stablehlo.reduce"})
# Ops whose built-in rule function reads their regions, by name: what it reads of them
# (`register(..., regions_read=...)`), part of the signature.
_REGIONS_READ: dict[str, Callable[[Op], Hashable]] = {}
# Attributes no rule reads, left out of the signature (they change during propagation).
_NOT_IN_SIGNATURE = frozenset({"sdy.sharding", SHARDING_RULE_ATTR})
_RULE_FAMILIES = "shardwise.rules.ops"
_BUILTIN_RULES_MODULE = _RULE_FAMILIES + "."

# Rules of built-in rule functions by op signature: layers of a model repeat the same ops.
_rules_by_signature: dict[tuple, OpShardingRule | None] = {}
_MAX_CACHED_RULES = 1 << 14


# Rules are keys of propagation's memoized step: equal rules as one object compare by identity.
_interned_rules = InternTable(_MAX_CACHED_RULES)


def _interned(rule: OpShardingRule | None) -> OpShardingRule | None:
    return None if rule is None else _interned_rules(rule)


def _signature(op: Op, rule_fn: RuleFn, conservative: bool) -> tuple | None:
    """What a built-in rule function reads of `op` (name, types, attributes, what it reads of
    the regions), or None when it may read more (regions it does not summarize, operands'
    defining ops, a user's rule function). It may hold unhashable attributes: the lookup then
    raises TypeError."""
    if op.name in _READS_MORE_THAN_SIGNATURE or not rule_fn.__module__.startswith(
        _BUILTIN_RULES_MODULE
    ):
        return None
    regions: tuple = ()
    if op.regions and op.name not in _REGIONS_NOT_READ:
        read = _REGIONS_READ.get(op.name)
        if read is None:
            return None
        regions = (read(op),)
    return (
        op.name,
        conservative,
        tuple([v.type for v in op.operands]),
        tuple([r.type for r in op.results]),
        tuple(op.properties.items()),
        tuple([item for item in op.attributes.items() if item[0] not in _NOT_IN_SIGNATURE]),
        regions,
    )


def _identity_key(op: Op, rule_fn: RuleFn, conservative: bool) -> tuple | None:
    """A key of `op`'s `_signature` by the identity of its types and property values,
    cheaper to build and to hash than the signature (whose types and attributes hash in
    Python), or None for an op whose signature has more (a discardable attribute, what is
    read of its regions) or that has none. Equal keys mean the same objects, hence equal
    signatures, while those objects are alive (`_rules_by_identity` keeps them) and
    immutable (checked when a key is stored, `_immutable_values`)."""
    attributes = op.attributes
    if attributes and not attributes.keys() <= _NOT_IN_SIGNATURE:
        return None
    if (op.regions and op.name not in _REGIONS_NOT_READ) or op.name in _READS_MORE_THAN_SIGNATURE:
        return None
    if not rule_fn.__module__.startswith(_BUILTIN_RULES_MODULE):
        return None
    operands, results, properties = op.operands, op.results, op.properties
    return (
        op.name,
        conservative,
        len(operands),
        len(results),
        *map(id, map(_TYPE_OF, operands)),
        *map(id, map(_TYPE_OF, results)),
        *properties,  # the names, in order
        *map(id, properties.values()),
    )


_TYPE_OF = operator.attrgetter("type")
# Property values whose identity stands for their value: frozen (no mutable field).
_IMMUTABLE_VALUES = frozenset({RawAttr, str, int, float, bool, type(None)})


def _immutable_values(op: Op) -> bool:
    return all(type(v) in _IMMUTABLE_VALUES for v in op.properties.values()) and all(
        type(v.type) in _IMMUTABLE_TYPES for v in (*op.operands, *op.results)
    )


_IMMUTABLE_TYPES = frozenset({TensorType, OpaqueType})
# Rules by `_identity_key`, each with the objects the key names (kept alive: ids stay theirs).
_rules_by_identity: dict[tuple, tuple[tuple, OpShardingRule | None]] = {}


def create_op_sharding_rule(op: Op, conservative: bool = False) -> OpShardingRule | None:
    """The rule Shardy would create for `op` (ignoring any rule already on it)."""
    rule_fn = _rules().get(op.name)
    if rule_fn is not None:
        key = _identity_key(op, rule_fn, conservative)
        if key is not None:
            found = _rules_by_identity.get(key)
            if found is not None:
                return found[1]
        signature = _signature(op, rule_fn, conservative)
        if signature is None:
            return _interned(rule_fn(op, conservative))
        try:
            rule = _rules_by_signature.get(signature)
        except TypeError:  # an unhashable attribute (e.g. a dictionary)
            return _interned(rule_fn(op, conservative))
        if rule is None:
            if len(_rules_by_signature) >= _MAX_CACHED_RULES:
                _rules_by_signature.clear()
                _rules_by_identity.clear()
            rule = _rules_by_signature[signature] = _interned(rule_fn(op, conservative))
        if key is not None and _immutable_values(op):
            if len(_rules_by_identity) >= _MAX_CACHED_RULES:
                _rules_by_identity.clear()
            _rules_by_identity[key] = (signature, rule)
        return rule
    if op.name in NO_RULE_OPS or _is_terminator(op):
        return None
    warn_once("op", f"op '{op.name}' is unknown to SDY sharding rule registry", op.name)
    return None


def attach_rules_to_clone(ops: Iterable[Op], conservative: bool) -> None:
    """Store on each of `ops` that has no rule yet the rule propagation would store there
    (`get_or_create_sharding_rule` with `conservative`), where that rule is a function of the
    op's signature alone; clones made afterwards copy it with the op's other attributes (a
    func body called n times: one rule lookup per op instead of n).

    What the clone would read on its first visit is the same signature, hence the same
    (interned) rule: an op with no rule function, one whose rule reads more than its
    signature (its regions, its operands' defining ops, a user's rule function), with an
    unhashable attribute, or whose rule function rejects it (the error is propagation's to
    report, after the checks that come before it) is left alone and gets its rule as before.
    """
    rules = _rules()
    for op in ops:
        rule_fn = rules.get(op.name)
        if rule_fn is None or SHARDING_RULE_ATTR in op.attributes:
            continue
        signature = _signature(op, rule_fn, conservative)
        if signature is None:
            continue
        try:
            hash(signature)
            rule = create_op_sharding_rule(op, conservative)
        except (TypeError, ShardwiseError):
            continue
        if rule is not None:
            op.attributes[SHARDING_RULE_ATTR] = rule


def _existing_rule(op: Op) -> OpShardingRule | None:
    attr = op.attributes.get(SHARDING_RULE_ATTR)
    if attr is None or isinstance(attr, OpShardingRule):
        return attr
    return parse_op_sharding_rule(str(attr))


def get_or_create_sharding_rule(
    op: Op, conservative: bool = False, set_on_op: bool = True
) -> OpShardingRule | None:
    """The rule on `op` if it has one, else a created one (stored on `op` if `set_on_op`)."""
    existing = _existing_rule(op)
    if existing is not None:
        return existing
    rule = create_op_sharding_rule(op, conservative)
    if set_on_op and rule is not None:
        op.attributes[SHARDING_RULE_ATTR] = rule
    return rule

"""Build the two programs the checker runs, on our IR.

- The *reference*: the global program with every sharding, sharding constraint, reshard and
  `sdy` collective removed (in Shardy's global view those are identities on values), for one
  device.
- The *program under test*: the per-device (local) program as the body of an
  ``sdy.manual_computation`` over a one-axis mesh ``@shardwise_devices = <["d"=N]>``. Every
  argument and result of the wrapper gets a leading dimension of size N sharded on "d": row p is
  what device id p holds. The body's collectives name device ids (``replica_groups`` with
  ``use_global_device_ids``, ``source_target_pairs``), so only the device ids matter, never the
  mesh coordinates of the wrapper; the slicing by the real mesh happens in numpy
  (`shardwise.check.slicing`), where device id p gets the slice of its position in that mesh.

Both can also return every intermediate value of their main function as extra results
(`add_intermediates`), which is how the checker finds the first op that diverges.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from shardwise import ir
from shardwise.check.fft_layout import NOTE, gathers_as_sums, zero_literal
from shardwise.errors import UnsupportedError
from shardwise.io.mlir import load_text, write_text
from shardwise.ir import ArrayAttr, DictAttr, Module, Op, RawAttr, TensorType, Value
from shardwise.sharding import TensorShardingPerValue

__all__ = [
    "fan_in",
    "DEVICE_MESH",
    "LOCAL_MAIN",
    "find_main",
    "main_ops",
    "reference_program",
    "truth_program",
    "wrap_local",
    "add_intermediates",
    "computation_results",
    "funcs_holding_computations",
    "is_computation",
    "without_results",
    "cut_at_computations",
    "set_results",
]

DEVICE_MESH = "shardwise_devices"
LOCAL_MAIN = "shardwise_local_main"

# `sdy` ops that are identities on the global value: their result is their first operand.
IDENTITY_SDY_OPS = frozenset(
    {
        "sdy.sharding_constraint",
        "sdy.reshard",
        "sdy.all_gather",
        "sdy.all_slice",
        "sdy.all_reduce",
        "sdy.all_to_all",
        "sdy.collective_permute",
        "sdy.reduce_scatter",
        "sdy.replicated_to_unreduced",
        "sdy.sharded_to_unreduced",
        "sdy.propagation_barrier",
        "sdy.data_flow_edge",
    }
)
_DROPPED_SDY_OPS = frozenset({"sdy.sharding_group", "sdy.mesh"})
_SHARDING_ATTRS = ("mhlo.sharding", "mhlo.frontend_attributes")


def fan_in(module: Module) -> int:
    """The most elements one op of `module` folds into one of its result's: the reduced dims
    of a ``reduce``, the contracting dims of a dot, the window of a ``reduce_window``, the
    kernel of a convolution (all of it: an upper bound). The checker's float floor grows
    with its square root (`values`); a reassociated sum of that many terms rounds so."""
    import math

    from shardwise.rules.stablehlo_attrs import parse_dot_dimension_numbers, parse_i64_array

    most = 1
    for op in _walk(module):
        shapes = [v.type.shape for v in op.operands if isinstance(v.type, TensorType)]
        if not shapes:
            continue
        if op.name == "stablehlo.reduce" and "dimensions" in op.properties:
            n = math.prod(shapes[0][d] for d in parse_i64_array(op.properties["dimensions"]))
        elif op.name == "stablehlo.dot_general" and "dot_dimension_numbers" in op.properties:
            numbers = parse_dot_dimension_numbers(op.properties["dot_dimension_numbers"])
            n = math.prod(shapes[0][d] for d in numbers.lhs_contracting_dimensions)
        elif op.name == "stablehlo.dot" and shapes[0]:
            n = shapes[0][-1]
        elif op.name == "stablehlo.reduce_window" and "window_dimensions" in op.properties:
            n = math.prod(parse_i64_array(op.properties["window_dimensions"]))
        elif op.name == "stablehlo.convolution" and len(shapes) > 1:
            n = math.prod(shapes[1])
        else:
            continue
        most = max(most, n)
    return most


def find_main(module: Module) -> Op:
    """The entry function: ``@main``, else the only public ``func.func``."""
    funcs = module.funcs
    for func in funcs:
        if module.symbol_name(func) == "main":
            return func
    public = [f for f in funcs if str(f.properties.get("sym_visibility", "")) != '"private"']
    if len(public) == 1:
        return public[0]
    raise UnsupportedError(
        f"{module.filename}: no func.func @main and {len(public)} public functions; "
        "name the entry function main"
    )


def main_ops(func: Op) -> list[Op]:
    """The top-level ops of a function body, in program order, without the return."""
    return [op for op in func.regions[0].entry.ops if not op.is_terminator]


def _walk(module: Module) -> Iterator[Op]:
    return iter(list(module.walk()))


def _is_sdy_attr(name: str) -> bool:
    return name.startswith("sdy.") or name in _SHARDING_ATTRS


def strip_shardings(module: Module) -> None:
    """Remove every sharding-related op and attribute, keeping the values' computation."""
    for op in _walk(module):
        if op.name == "sdy.manual_computation" or op.name == "sdy.named_computation":
            raise UnsupportedError(
                f"'{op.name}' in the program: the checker cannot run it unsharded yet",
                op.location,
            )
        if op.name in IDENTITY_SDY_OPS:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
            continue
        if op.name in _DROPPED_SDY_OPS:
            op.erase()
            continue
        for name in [n for n in op.attributes if _is_sdy_attr(n)]:
            del op.attributes[name]
        if op.name == "func.func":
            _strip_func_attrs(op)
    for name in [n for n in module.op.attributes if n.startswith(("mhlo.", "sdy."))]:
        del module.op.attributes[name]


def _strip_func_attrs(func: Op) -> None:
    for key in ("arg_attrs", "res_attrs"):
        array = func.properties.get(key)
        if array is None:
            continue
        for entry in array.elements:
            for name in [n for n in entry.entries if _is_sdy_attr(n)]:
                del entry.entries[name]


def _types_text(types: Sequence[ir.Type]) -> str:
    return ", ".join(str(t) for t in types)


def set_results(func: Op, values: list[Value]) -> None:
    """Make `values` the function's results (its return and its type)."""
    block = func.regions[0].entry
    ret = block.terminator
    assert ret is not None
    ret.drop_operands()
    for value in values:
        ret.add_operand(value)
    _retype(func)


def _retype(func: Op) -> None:
    """The function's type and attribute lists from its entry block's arguments and its
    return's operands (lists grown with empty dicts, cut to the count)."""
    block = func.regions[0].entry
    ret = block.terminator
    assert ret is not None
    args, results = [a.type for a in block.args], [v.type for v in ret.operands]
    func.properties["function_type"] = RawAttr(f"({_types_text(args)}) -> ({_types_text(results)})")
    for key, count in (("arg_attrs", len(args)), ("res_attrs", len(results))):
        if key in func.properties:
            old = func.properties[key].elements
            func.properties[key] = ArrayAttr(
                [old[i] if i < len(old) else DictAttr() for i in range(count)]
            )


def add_intermediates(func: Op) -> list[Value]:
    """Return every result of every top-level op after the function's own results.

    Returns the added values in program order (the outputs after the original results).
    """
    ret = func.regions[0].entry.terminator
    assert ret is not None
    originals = list(ret.operands)
    extra = [v for op in main_ops(func) for v in op.results]
    set_results(func, originals + extra)
    return extra


@dataclass(frozen=True, slots=True)
class Program:
    """MLIR text to compile, with what the checker needs to read its outputs.

    `ops` are the top-level ops of main after stripping (their locations point into the
    user's file) and `op_shardings` their ``sdy.sharding`` before stripping (None: none).
    With intermediates, output ``num_results + k`` is the k-th result of ``ops`` in order.
    """

    text: str
    num_results: int
    ops: tuple[Op, ...]
    op_shardings: tuple[TensorShardingPerValue | None, ...]
    has_intermediates: bool = False
    notes: tuple[str, ...] = ()  # what was changed so that XLA runs it (`fft_layout`)

    def output_index(self, value: Value) -> int | None:
        """The output holding `value` (a result of one of `ops`), None if not returned."""
        if not self.has_intermediates:
            return None
        index = self.num_results
        for op in self.ops:
            if op is value.owner:
                return index + value.index
            index += len(op.results)
        return None


def _stripped(text: str, filename: str, intermediates: bool) -> tuple[Module, Op, Program]:
    """Load, record main's op shardings, strip, optionally return every intermediate."""
    module = load_text(text, filename)
    main = find_main(module)
    for op in dead_computations(module):
        op.erase()
    erase_uncalled_computations(module)
    before = {id(op): op.attributes.get(ir.SHARDING_ATTR) for op in main_ops(main)}
    strip_shardings(module)
    ops = tuple(main_ops(main))
    shardings = tuple(_per_value(before.get(id(op))) for op in ops)
    num_results = len(ir.func_result_types(main))
    if intermediates:
        add_intermediates(main)
    return module, main, Program("", num_results, ops, shardings, intermediates)


def dead_computations(module: Module) -> list[Op]:
    """The manual and named computations at the top level of main whose results only dead
    code uses, with that dead code, in an order to erase them (users first): erased before a
    program runs, so that it needs no reference of its own (fuzz --check 2042-8-15: a dead
    manual computation made XLA's partitioning the reference, and XLA's partitioner gets a
    pad along a sharded dim wrong that ours gets right; 2043-366-3: one whose results only a
    dead reshape reads). Dead: no effect, and every use by a dead op."""
    from shardwise.sdy.op_properties import has_no_memory_effect

    ops = main_ops(find_main(module))
    top = {id(op): op for op in ops}
    holding = funcs_holding_computations(module)
    dead: set[int] = set()
    for op in reversed(ops):
        if (
            not is_computation(op, holding)
            and op.name not in IDENTITY_SDY_OPS  # identities here (2047-492-6: a constraint)
            and not has_no_memory_effect(op)
        ):
            continue
        if all(id(_top_level(user, top)) in dead for r in op.results for user, _ in r.uses):
            dead.add(id(op))
    # Keep the dead ops that (transitively) read a dead computation; the rest stay.
    erased: set[int] = set()
    for op in ops:
        if id(op) in dead and (
            is_computation(op, holding)
            or any(
                id(v.defining_op) in erased
                for inner in (op, *op.walk())  # a region's ops read it too (2046-14-4)
                for v in inner.operands
                if v.defining_op
            )
        ):
            erased.add(id(op))
    return [op for op in reversed(ops) if id(op) in erased]


def computation_results(module: Module) -> frozenset[int]:
    """The indices of main's results that depend on a live manual or named computation (one
    at the top level of main, or in a function a call there reaches): they have no unsharded
    meaning. The others are compared with the unsharded run of the program without them
    (`without_results`): XLA's partitioner, the reference for the rest, gets some ops wrong
    that ours gets right (fuzz --check 2045-68-37: a pad with interior padding along a
    sharded dim; 2045-418-9: a case on an unreduced index)."""
    main = find_main(module)
    dead = {id(op) for op in dead_computations(module)}
    ops = main_ops(main)
    top = {id(op): op for op in ops}
    holding = funcs_holding_computations(module)
    tainted: set[int] = set()
    for op in ops:
        if id(op) in dead:
            continue
        inner = (op, *op.walk())
        if any(is_computation(o, holding) for o in inner) or any(
            v.defining_op is not None and id(_top_level(v.defining_op, top)) in tainted
            for o in inner
            for v in o.operands
        ):
            tainted.add(id(op))
    ret = main.regions[0].entry.terminator
    assert ret is not None
    return frozenset(
        i
        for i, v in enumerate(ret.operands)
        if v.defining_op is not None and id(_top_level(v.defining_op, top)) in tainted
    )


def is_computation(op: Op, holding: set[str]) -> bool:
    """A manual or named computation, or a call of a function that holds one (`holding`)."""
    return op.name in _COMPUTATIONS or (op.name == "func.call" and _callee(op) in holding)


def _callee(op: Op) -> str | None:
    attr = op.properties.get("callee") or op.attributes.get("callee")
    return None if attr is None else ir.symbol_ref_name(attr)


def funcs_holding_computations(module: Module) -> set[str]:
    """The functions whose bodies (through calls too) hold a manual or named computation."""
    bodies = {module.symbol_name(f): list(f.walk()) for f in module.funcs}
    holding: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, body in bodies.items():
            if (
                name is not None
                and name not in holding
                and any(is_computation(o, holding) for o in body)
            ):
                holding.add(name)
                grew = True
    return holding


def erase_uncalled_computations(module: Module) -> None:
    """Erase the functions that hold a manual or named computation and that main no longer
    calls, through calls too (once dead calls are erased: 2047-492-6)."""
    main = find_main(module)
    called = {_callee(op) for op in main.walk() if op.name == "func.call"}
    while True:  # the functions main still calls, through calls too
        more = {
            _callee(inner)
            for f in module.funcs
            if module.symbol_name(f) in called
            for inner in f.walk()
            if inner.name == "func.call"
        } - called
        if not more:
            break
        called |= more
    holding = funcs_holding_computations(module)
    for f in module.funcs:  # a function no one calls any more whose body holds one
        name = module.symbol_name(f)
        if f is not main and name in holding and name not in called:
            f.erase()


def without_results(text: str, filename: str, results: frozenset[int]) -> str | None:
    """The global program with main's `results` replaced by zeros, so that the manual and
    named computations only they read are dead (`dead_computations`) and the program runs
    unsharded; None when a live computation is left (an op with effects reads one)."""
    module = load_text(text, filename)
    main = find_main(module)
    ret = main.regions[0].entry.terminator
    assert ret is not None
    block = main.regions[0].entry
    values = list(ret.operands)
    for i in sorted(results):
        t = values[i].type
        if not isinstance(t, TensorType) or not t.is_static:
            return None
        zero = Op(
            "stablehlo.constant",
            [],
            [t],
            {"value": RawAttr(f"dense<{zero_literal(t.element_type)}> : {t}")},
            location=ret.location,
        )
        block.insert_before(ret, zero)
        values[i] = zero.results[0]
    ret.drop_operands()
    for v in values:
        ret.add_operand(v)
    for op in dead_computations(module):
        op.erase()
    erase_uncalled_computations(module)
    if any(op.name in _COMPUTATIONS for op in module.walk()):
        return None
    return write_text(module)


def cut_at_computations(text: str, filename: str) -> tuple[str, int] | None:
    """The global program with each manual or named computation at the top level of main
    (and each call there of a function holding one) replaced by new arguments of main, after
    its own: fed with the computations' results from XLA's partitioned run, the ops around
    the computations then run unsharded (`checker._around_computations`). Returns the text and the
    number of arguments added; None when a computation is left elsewhere (in a region of
    another op: a loop body) or its results are not static tensors.

    Ops after a computation are only as right in XLA's partitioned run as XLA's partitioner
    is, and it gets some wrong that ours gets right (fuzz --check 2050-317-19: a scatter into
    a manual computation's result, one element written on the wrong device)."""
    module = load_text(text, filename)
    main = find_main(module)
    holding = funcs_holding_computations(module)
    block = main.regions[0].entry
    added = 0
    for op in main_ops(main):
        if not is_computation(op, holding):
            continue
        for result in op.results:
            if not isinstance(result.type, TensorType) or not result.type.is_static:
                return None
            result.replace_all_uses_with(block.add_arg(result.type))
            added += 1
        op.erase()
    erase_uncalled_computations(module)
    holding = funcs_holding_computations(module)
    if any(is_computation(op, holding) for op in main.walk()):
        return None
    _retype(main)
    return write_text(module), added


def _top_level(op: Op, top: dict[int, Op]) -> Op | None:
    return next((a for a in (op, *op.ancestors()) if id(a) in top), None)


_COMPUTATIONS = ("sdy.manual_computation", "sdy.named_computation")


def _per_value(attr: object) -> TensorShardingPerValue | None:
    return attr if isinstance(attr, TensorShardingPerValue) else None


def reference_program(text: str, filename: str, intermediates: bool = False) -> Program:
    """The global program without shardings, for one device (see the module docstring)."""
    module, _, program = _stripped(text, filename, intermediates)
    return replace(program, text=write_text(module))


def truth_program(text: str, filename: str) -> str:
    """The reference program with its floats in f64 (`promote.promote_to_f64`)."""
    from shardwise.check.promote import promote_to_f64

    module, _, _ = _stripped(text, filename, intermediates=False)
    return promote_to_f64(module)


def wrap_local(text: str, filename: str, devices: int, intermediates: bool = False) -> Program:
    """The local program as a manual computation over `devices` devices (module docstring)."""
    module, main, program = _stripped(text, filename, intermediates)
    if gathers_as_sums(module):
        program = replace(program, notes=(NOTE,))
    main.properties["sym_name"] = RawAttr(f'"{LOCAL_MAIN}"')
    main.properties["sym_visibility"] = RawAttr('"private"')
    arg_types = [_tensor(a.type, "argument") for a in main.regions[0].entry.args]
    result_types = [_tensor(t, "result") for t in ir.func_result_types(main)]
    body = write_text(module).rstrip()
    assert body.endswith("}"), body[-20:]
    wrapper = _wrapper_text(arg_types, result_types, devices)
    return replace(program, text=body[:-1] + wrapper + "}\n")


def _tensor(type_: ir.Type, what: str) -> TensorType:
    if not isinstance(type_, TensorType) or not type_.is_static:
        raise UnsupportedError(f"a local-program {what} of type {type_}: only static tensors run")
    return type_


def _stacked(t: TensorType, n: int) -> TensorType:
    return TensorType((n, *t.shape), t.element_type)


def _device_sharding(t: TensorType) -> str:
    dims = ", ".join(['{"d"}'] + ["{}"] * t.rank)
    return f"<@{DEVICE_MESH}, [{dims}]>"


def _wrapper_text(args: list[TensorType], results: list[TensorType], n: int) -> str:
    """``@main`` taking and returning the stacked arrays, calling the local main per device."""
    outer_args = ", ".join(
        f"%arg{i}: {_stacked(t, n)} {{sdy.sharding = #sdy.sharding{_device_sharding(t)}}}"
        for i, t in enumerate(args)
    )
    outer_results = ", ".join(
        f"{_stacked(t, n)} {{sdy.sharding = #sdy.sharding{_device_sharding(t)}}}" for t in results
    )
    block_args = ", ".join(f"%l{i}: {_stacked(t, 1)}" for i, t in enumerate(args))
    lines = [f'  sdy.mesh @{DEVICE_MESH} = <["d"={n}]>']
    lines.append(f"  func.func @main({outer_args}) -> ({outer_results}) {{")
    count = f":{len(results)}" if len(results) > 1 else ""
    lines.append(
        f"    %r{count} = sdy.manual_computation({', '.join(f'%arg{i}' for i in range(len(args)))})"
        f" in_shardings=[{', '.join(_device_sharding(t) for t in args)}]"
        f" out_shardings=[{', '.join(_device_sharding(t) for t in results)}]"
        f' manual_axes={{"d"}} ({block_args}) {{'
    )
    for i, t in enumerate(args):
        lines.append(f"      %b{i} = stablehlo.reshape %l{i} : ({_stacked(t, 1)}) -> {t}")
    call_args = ", ".join(f"%b{i}" for i in range(len(args)))
    lines.append(
        f"      %c{count} = func.call @{LOCAL_MAIN}({call_args}) : "
        f"({_types_text(list(args))}) -> ({_types_text(list(results))})"
    )
    for i, t in enumerate(results):
        ref = f"%c#{i}" if count else "%c"
        lines.append(f"      %d{i} = stablehlo.reshape {ref} : ({t}) -> {_stacked(t, 1)}")
    returned = ", ".join(f"%d{i}" for i in range(len(results)))
    lines.append(f"      sdy.return {returned} : {_types_text([_stacked(t, 1) for t in results])}")
    outer_types = [_stacked(t, n) for t in results]
    lines.append(
        f"    }} : ({_types_text([_stacked(t, n) for t in args])}) -> ({_types_text(outer_types)})"
    )
    refs = ", ".join(f"%r#{i}" if count else "%r" for i in range(len(results)))
    lines.append(f"    return {refs} : {_types_text(outer_types)}")
    lines.append("  }")
    return "\n".join(lines) + "\n"

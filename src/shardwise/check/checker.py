"""`check`: run a partitioned program on simulated devices against the unsharded program.

1. Inputs: one random array per argument of the global main (`values.random_input`, seeded).
2. Reference: the global program without shardings on one CPU device (`programs.reference_program`).
3. Under test: the local program wrapped in a manual computation on N simulated CPU devices
   (`programs.wrap_local`); device id p gets the slice of each input that the argument's
   sharding gives it (`slicing.split`), and each result is reassembled by its sharding
   (`slicing.assemble`; replicas that disagree count as a difference).
4. Every result is compared (`values.compare`); if any differs, both programs run again
   returning every intermediate and `localize` names the first op that diverges.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from shardwise import ir
from shardwise.check import conditioning, programs, scaled_inputs, xla_spmd
from shardwise.check.executor import ExecutionError, Executor, shared_executor
from shardwise.check.localize import Divergence, localize
from shardwise.check.result import DEFAULT_INPUTS, CheckResult, ResultCheck
from shardwise.check.slicing import assemble, local_shape, split
from shardwise.check.values import Difference, compare, random_input, reference_scale, vacuous
from shardwise.errors import Location, UnsupportedError, VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.mesh import Mesh
from shardwise.names import result_name
from shardwise.sharding import TensorSharding

__all__ = ["check", "CheckResult", "ResultCheck"]


def _text_of(program: str | ir.Module, default_name: str) -> tuple[str, str]:
    if isinstance(program, ir.Module):
        return write_text(program), program.filename
    return program, default_name


class _Meshes:
    """Resolve a sharding's mesh: inline, or by name in the local then the global module."""

    def __init__(self, *modules: ir.Module) -> None:
        self._by_name: dict[str, Mesh] = {}
        for module in reversed(modules):
            for name, mesh in module.meshes().items():
                if isinstance(mesh, Mesh):
                    self._by_name[name] = mesh

    def __call__(self, sharding: TensorSharding) -> Mesh:
        ref = sharding.mesh_or_ref
        if isinstance(ref, Mesh):
            return ref
        mesh = self._by_name.get(ref.lstrip("@"))
        if mesh is None:
            raise VerifyError(f"sharding {sharding} names an unknown mesh @{ref.lstrip('@')}")
        return mesh


def _sharding(func: ir.Op, index: int, result: bool) -> TensorSharding | None:
    attrs = ir.func_result_attrs(func, index) if result else ir.func_arg_attrs(func, index)
    value = (attrs or {}).get(ir.SHARDING_ATTR)
    return value if isinstance(value, TensorSharding) else None


def _io_shardings(
    lmain: ir.Op, gmain: ir.Op, count: int, result: bool
) -> list[TensorSharding | None]:
    """Each argument's (result's) sharding: the local program's, else the global program's."""
    return [_sharding(lmain, i, result) or _sharding(gmain, i, result) for i in range(count)]


@dataclass(frozen=True, slots=True)
class _Case:
    """Both programs, loaded, with the inputs each one gets."""

    gtext: str
    ltext: str
    gmod: ir.Module
    lmod: ir.Module
    meshes: _Meshes
    mesh: Mesh  # the mesh the local program runs on
    inputs: tuple[np.ndarray, ...]  # global arrays, one per argument
    local_inputs: tuple[np.ndarray, ...]  # per argument: row p is device id p's piece
    result_shardings: tuple[TensorSharding | None, ...]
    xla_reference: bool  # the reference is XLA's partitioned run (`xla_spmd`)
    arg_shardings: tuple[TensorSharding | None, ...]  # how the local program's inputs split
    # With an XLA reference: the results that depend on no manual or named computation, and
    # the program that gives them unsharded (`programs.without_results`); XLA's partitioner,
    # trusted for the rest, gets some ops wrong that ours gets right (fuzz --check 2045-68-37).
    unsharded_results: frozenset[int] = frozenset()
    unsharded_text: str | None = None
    fan_in: int = 1  # the most elements one reduction folds into one (`programs.fan_in`)


def check(
    global_program: str | ir.Module,
    local_program: str | ir.Module,
    seed: int = 0,
    devices: int | None = None,
    executor: Executor | None = None,
    global_name: str = "global.mlir",
    local_name: str = "local.mlir",
    against_xla: bool = False,
) -> CheckResult:
    """Run `local_program` on simulated devices and `global_program` on one; compare results.

    Raises `UnsupportedError` when XLA's CPU backend cannot compile or run either program
    (its message names the ops), `VerifyError` when the two programs do not fit together.
    `against_xla` also runs XLA's own partitioning of `global_program` and compares it with
    the unsharded reference (`CheckResult.against_xla`).
    """
    gtext, gname = _text_of(global_program, global_name)
    ltext, lname = _text_of(local_program, local_name)
    case = _prepare(gtext, gname, ltext, lname, seed, devices)
    run = executor or shared_executor()
    try:
        _, gout, wrapped, lout = _run_both(run, case, intermediates=False)
        whole = True
    except UnsupportedError:  # XLA cannot partition the whole program: only its computations
        around = _around_computations(run, case) if case.xla_reference else None
        if around is None:
            raise
        gout, whole = around, False
        wrapped, lout = _run_local(run, case, intermediates=False)
    inputs = DEFAULT_INPUTS
    if not case.xla_reference and any(vacuous(y) for y in gout):
        scaled = _finite_inputs(run, case, gout)
        if scaled is not None:
            case = _with_inputs(case, scaled[0])
            inputs = scaled[1]
            _, gout, _, lout = _run_both(run, case, intermediates=False)
    truths, tolerance = _truth(run, case)
    checks = _checks(case, lout, gout, truths)
    xla_results = _xla_results(case)
    reference = (
        "unsharded"
        if not xla_results
        else "xla"
        if len(xla_results) == len(checks)
        else "xla+unsharded"
    )
    around = None
    if whole and xla_results and not all(c.equal for c in checks):
        around = _around_computations(run, case)
        if around is not None:
            gout = [around[i] if i in xla_results else g for i, g in enumerate(gout)]
            checks = _checks(case, lout, gout, truths)
    if not whole or around is not None:
        reference = "around-computations"
        tolerance = "the computations' results come from XLA's partitioned run"
    divergence = None
    if not all(c.equal for c in checks):
        checks = _conditioning(run, case, checks, lout, gout, truths, seed)
        divergence = _localize(run, case, checks) if whole else None
    versus_xla = None
    if against_xla and not case.xla_reference:
        xout = _run_spmd(run, xla_spmd.spmd_program(case.gtext, gname), case)
        versus_xla = tuple(
            compare(x, g, t, fan_in=case.fan_in) for x, g, t in zip(xout, gout, truths, strict=True)
        )
    return CheckResult(
        gname,
        lname,
        case.mesh.total_size,
        seed,
        checks,
        divergence,
        reference,
        versus_xla,
        tolerance,
        inputs,
        xla_results,
        wrapped.notes,
    )


def _checks(
    case: _Case,
    lout: list[np.ndarray],
    gout: list[np.ndarray],
    truths: list[np.ndarray | None],
) -> tuple[ResultCheck, ...]:
    gmain = programs.find_main(case.gmod)
    return tuple(
        replace(
            _check_result(i, lout[i], gout[i], s, case.meshes, case.mesh, truths[i], case.fan_in),
            name=result_name(gmain, i) or "",
        )
        for i, s in enumerate(case.result_shardings)
    )


def _around_computations(run: Executor, case: _Case) -> list[np.ndarray] | None:
    """The results with only the manual and named computations taken from XLA's partitioned
    run and the ops around them run unsharded (`programs.cut_at_computations`): the
    reference when XLA's whole run disagrees with ours, since its partitioner gets some ops
    wrong that ours gets right (fuzz --check 2050-317-19), or when XLA cannot partition the
    whole program (2051-401-11: a strided slice beside a manual computation). XLA partitions
    only the computations and what they read. None when the program cannot be cut so (a
    computation in a loop body) or XLA cannot run even that."""
    cut = programs.cut_at_computations(case.gtext, case.gmod.filename)
    if cut is None:
        return None
    text, added = cut
    spmd = xla_spmd.spmd_program(case.gtext, case.gmod.filename, computations_only=True)
    if spmd.num_results != added:
        return None
    around = programs.reference_program(text, case.gmod.filename)
    try:
        values = _run_spmd(run, spmd, case)
        return _run(run, around.text, [*case.inputs, *values], 1, case.gmod)
    except UnsupportedError:
        return None


def _xla_results(case: _Case) -> tuple[int, ...]:
    """The results whose reference is XLA's partitioning."""
    if not case.xla_reference:
        return ()
    return tuple(i for i in range(len(case.result_shardings)) if i not in case.unsharded_results)


def _finite_inputs(
    run: Executor, case: _Case, gout: list[np.ndarray]
) -> tuple[list[np.ndarray], str] | None:
    """Inputs drawn like a model's initialization, where normal(0, 1) ones made some float
    result NaN or infinite everywhere (`scaled_inputs`)."""
    ref = programs.reference_program(case.gtext, case.gmod.filename).text
    try:
        return scaled_inputs.finite_inputs(
            lambda text, sets: run.run_many(text, sets, 1),
            ref,
            case.gmod,
            list(case.inputs),
            scaled_inputs.informative(gout),
        )
    except ExecutionError:
        return None


def _truth(run: Executor, case: _Case) -> tuple[list[np.ndarray | None], str]:
    """The results of the unsharded program in float64 (`promote`), one per result, and
    "float64"; or Nones and why there is no truth (the fixed tolerance is used then)."""
    n = len(case.result_shardings)
    why_not = "the reference is XLA's own partitioning (no float64 run of it)"
    if case.xla_reference and case.unsharded_text is None:
        return [None] * n, why_not
    floats = [x for x in case.inputs if x.dtype.kind == "f"]
    if not floats and not any(_has_float_result(case)):
        return [None] * n, "no float values"
    try:
        source = case.unsharded_text if case.xla_reference else case.gtext
        assert source is not None
        text = programs.truth_program(source, case.gmod.filename)
        inputs = [_to_f64(x) for x in case.inputs]
        out = run.run(text, inputs, 1)
    except ExecutionError as e:
        first = e.message.strip().splitlines()[0] if e.message.strip() else e.stage
        return [None] * n, f"XLA cannot {e.stage} the float64 program: {first[:160]}"
    except (UnsupportedError, VerifyError) as e:
        return [None] * n, f"no float64 program: {str(e).splitlines()[0][:160]}"
    if case.xla_reference:  # float64 values for the unsharded results only
        kept = [x if i in case.unsharded_results else None for i, x in enumerate(out[:n])]
        return kept, "float64" if case.unsharded_results else why_not
    return list(out), "float64"


def _has_float_result(case: _Case) -> list[bool]:
    gmain = programs.find_main(case.gmod)
    return [
        isinstance(t, ir.TensorType) and t.element_type in ("f32", "f16", "bf16")
        for t in ir.func_result_types(gmain)
    ]


def _to_f64(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64) if x.dtype.kind == "f" and x.dtype.name != "float64" else x


def _conditioning(
    run: Executor,
    case: _Case,
    checks: tuple[ResultCheck, ...],
    lout: list[np.ndarray],
    gout: list[np.ndarray],
    truths: list[np.ndarray | None],
    seed: int,
) -> tuple[ResultCheck, ...]:
    """Mark the results that differ only where the unsharded program is unstable
    (`conditioning`): the reference runs again on rounding-level perturbations of its
    inputs, a round at a time, while a round still explains more failing elements. With
    XLA's partitioning as the reference, only for the results no computation reaches (their
    reference is the unsharded program without the others: fuzz --check 2060-485-2, an
    exponential of an exponential of a sum beside a manual computation), and only when every
    failing result is one of them."""
    if not any(x.dtype.kind == "f" for x in case.inputs):
        return checks
    source = case.gtext
    if case.xla_reference:
        failing = {c.index for c in checks if not c.equal}
        if case.unsharded_text is None or not failing <= case.unsharded_results:
            return checks
        source = case.unsharded_text
    sens: dict[int, conditioning.Sensitivity] = {}
    for c in checks:
        if c.equal or c.disagreeing_devices:
            continue
        sharding = case.result_shardings[c.index]
        own = case.meshes(sharding) if sharding is not None else case.mesh
        try:
            actual, _ = assemble(lout[c.index], gout[c.index].shape, sharding, own)
        except UnsupportedError:
            return checks
        sens[c.index] = conditioning.Sensitivity(
            actual, gout[c.index], truths[c.index], case.fan_in
        )
    if len(sens) != sum(not c.equal for c in checks):
        return checks  # replicas that disagree: DIFFERENT whatever the reference does
    ref = programs.reference_program(source, case.gmod.filename).text
    left = sum(s.unexplained() for s in sens.values())
    for round_ in range(conditioning.ROUNDS):
        try:
            runs = run.run_many(ref, conditioning.perturbed_inputs(case.inputs, seed, round_), 1)
        except ExecutionError:
            break
        for outputs in runs:
            for index, s in sens.items():
                s.add(outputs[index])
        now = sum(s.unexplained() for s in sens.values())
        if now == 0 or now == left:
            break
        left = now
    return tuple(_conditioned(c, sens[c.index]) if c.index in sens else c for c in checks)


def _conditioned(check: ResultCheck, sens: conditioning.Sensitivity) -> ResultCheck:
    if sens.amplified():
        return replace(check, amplified=True)
    return replace(check, ill_conditioned=sens.explained)


def _prepare(
    gtext: str,
    gname: str,
    ltext: str,
    lname: str,
    seed: int,
    devices: int | None,
) -> _Case:
    """Load both programs, check that they fit together, draw and split the inputs."""
    gmod, lmod = load_text(gtext, gname), load_text(ltext, lname)
    gmain, lmain = programs.find_main(gmod), programs.find_main(lmod)
    meshes = _Meshes(lmod, gmod)
    gargs = [a.type for a in gmain.regions[0].entry.args]
    largs = [a.type for a in lmain.regions[0].entry.args]
    gresults, lresults = ir.func_result_types(gmain), ir.func_result_types(lmain)
    if len(gargs) != len(largs) or len(gresults) != len(lresults):
        raise VerifyError(
            f"the local main has {len(largs)} arguments and {len(lresults)} results, "
            f"the global main {len(gargs)} and {len(gresults)}; they must match",
            lmain.location,
        )
    arg_shardings = _io_shardings(lmain, gmain, len(gargs), result=False)
    result_shardings = _io_shardings(lmain, gmain, len(gresults), result=True)
    mesh = _device_mesh(arg_shardings + result_shardings, meshes, lmod, devices)
    rng = np.random.default_rng(seed)
    inputs = tuple(random_input(_tensor(t, gmain, "argument"), rng) for t in gargs)
    local_inputs = _split_inputs(inputs, arg_shardings, meshes, mesh, lmain)
    xla_reference = xla_spmd.needs_xla_reference(gmod)
    unsharded_results: frozenset[int] = frozenset()
    unsharded_text = None
    if xla_reference:
        dependent = programs.computation_results(gmod)
        if len(dependent) < len(gresults):
            unsharded_text = programs.without_results(gtext, gname, dependent)
            if unsharded_text is not None:
                unsharded_results = frozenset(range(len(gresults))) - dependent
    return _Case(
        gtext,
        ltext,
        gmod,
        lmod,
        meshes,
        mesh,
        inputs,
        local_inputs,
        tuple(result_shardings),
        xla_reference,
        tuple(arg_shardings),
        unsharded_results,
        unsharded_text,
        programs.fan_in(gmod),
    )


def _split_inputs(
    inputs: tuple[np.ndarray, ...],
    arg_shardings: list[TensorSharding | None] | tuple[TensorSharding | None, ...],
    meshes: _Meshes,
    mesh: Mesh,
    lmain: ir.Op,
) -> tuple[np.ndarray, ...]:
    """Each global input split into the devices' pieces (row p: device id p's)."""
    largs = [a.type for a in lmain.regions[0].entry.args]
    return tuple(
        _split_input(x, s, meshes, mesh, lt, i, lmain)
        for i, (x, s, lt) in enumerate(zip(inputs, arg_shardings, largs, strict=True))
    )


def _with_inputs(case: _Case, inputs: list[np.ndarray]) -> _Case:
    """`case` on other global inputs (the programs stay loaded)."""
    given = tuple(inputs)
    lmain = programs.find_main(case.lmod)
    local = _split_inputs(given, case.arg_shardings, case.meshes, case.mesh, lmain)
    return replace(case, inputs=given, local_inputs=local)


def _run_both(
    run: Executor, case: _Case, intermediates: bool
) -> tuple[programs.Program, list[np.ndarray], programs.Program, list[np.ndarray]]:
    """The reference (on one device, or XLA's partitioning) and the wrapped local program on
    the mesh's devices."""
    if case.xla_reference:
        _check_no_unreduced_results(case)
        ref = xla_spmd.spmd_program(case.gtext, case.gmod.filename, intermediates)
        gout = _run_spmd(run, ref, case)
        if case.unsharded_text is not None:  # the results no computation reaches
            alone = programs.reference_program(case.unsharded_text, case.gmod.filename)
            unsharded = _run(run, alone.text, list(case.inputs), 1, case.gmod)
            for i in case.unsharded_results:
                gout[i] = unsharded[i]
    else:
        ref = programs.reference_program(case.gtext, case.gmod.filename, intermediates)
        gout = _run(run, ref.text, list(case.inputs), 1, case.gmod)
    wrapped, lout = _run_local(run, case, intermediates)
    return ref, gout, wrapped, lout


def _run_local(
    run: Executor, case: _Case, intermediates: bool
) -> tuple[programs.Program, list[np.ndarray]]:
    """The wrapped local program on the mesh's devices."""
    n = case.mesh.total_size
    if n == 1:  # XLA does not partition for one device: run the local program as it is
        wrapped = programs.reference_program(case.ltext, case.lmod.filename, intermediates)
        rows = [x[0] for x in case.local_inputs]
        lout = [x[None] for x in _run(run, wrapped.text, rows, 1, case.lmod)]
        return wrapped, lout
    wrapped = programs.wrap_local(case.ltext, case.lmod.filename, n, intermediates)
    return wrapped, _run(run, wrapped.text, list(case.local_inputs), n, case.lmod)


def _check_no_unreduced_results(case: _Case) -> None:
    """XLA's partitioner returns a replicated value declared unreduced whole on every device
    (no device zeroed), so its result's sum over the axes is not the value: with XLA's
    partitioning as the reference such a result cannot be compared (fuzz --check 2043-366-3,
    `check --against xla` on a replicated sum returned `unreduced={"y"}`: twice the value)."""
    for i, sharding in enumerate(case.result_shardings):
        if i in case.unsharded_results:
            continue
        if sharding is not None and sharding.unreduced_axes:
            raise UnsupportedError(
                f"result {i} has unreduced axes ({sharding}) and the "
                "reference is XLA's own partitioning (the program has a manual or named "
                "computation), which returns a replicated value declared unreduced whole on "
                "every device: its sum over those axes is not the value, so the result cannot "
                "be compared; return it reduced, or check the program without the computation",
                Location(case.gmod.filename),
            )


def _run_spmd(run: Executor, program: programs.Program, case: _Case) -> list[np.ndarray]:
    """`program` partitioned by XLA itself on the mesh's devices: global arrays out."""
    shapes = xla_spmd.result_shapes(program)
    if case.mesh.total_size == 1:
        raise UnsupportedError(
            f"{case.gmod.filename}: XLA does not partition a program for a mesh of one device, "
            "so its manual or named computations cannot run; give the mesh two devices or more",
            Location(case.gmod.filename),
        )
    try:
        return run.run(program.text, list(case.inputs), case.mesh.total_size, shapes)
    except ExecutionError as e:
        raise _unsupported(e, case.gmod) from None


def _tensor(type_: ir.Type, func: ir.Op, what: str) -> ir.TensorType:
    if not isinstance(type_, ir.TensorType) or not type_.is_static:
        raise UnsupportedError(f"an {what} of type {type_}: only static tensors run", func.location)
    return type_


def _device_mesh(
    shardings: list[TensorSharding | None], meshes: _Meshes, lmod: ir.Module, devices: int | None
) -> Mesh:
    """The mesh the program runs on: the one its shardings name (all must have one size)."""
    found = {meshes(s) for s in shardings if s is not None}
    if not found:
        found = {m for m in lmod.meshes().values() if isinstance(m, Mesh) and m.axes}
    sizes = {m.total_size for m in found}
    if len(sizes) > 1:
        raise UnsupportedError(f"the shardings name meshes of {sorted(sizes)} devices; use one")
    if not found:
        raise VerifyError("the local program names no mesh: nothing says how many devices run it")
    mesh = max(found, key=lambda m: len(m.axes))
    if devices is not None and devices != mesh.total_size:
        raise VerifyError(f"--devices {devices}, but the mesh {mesh} has {mesh.total_size}")
    return mesh


def _split_input(
    x: np.ndarray,
    sharding: TensorSharding | None,
    meshes: _Meshes,
    mesh: Mesh,
    local_type: ir.Type,
    index: int,
    lmain: ir.Op,
) -> np.ndarray:
    own = meshes(sharding) if sharding is not None else mesh
    expected = x.shape if sharding is None else local_shape(x.shape, sharding, own)
    if not isinstance(local_type, ir.TensorType) or tuple(local_type.shape) != expected:
        raise VerifyError(
            f"argument {index} of the local main has type {local_type}, but its sharding "
            f"{sharding or 'replicated'} gives per-device shape {list(expected)}",
            lmain.regions[0].entry.args[index].location or lmain.location,
        )
    return split(x, sharding, own)


def _run(
    run: Executor, text: str, inputs: list[np.ndarray], devices: int, module: ir.Module
) -> list[np.ndarray]:
    try:
        return run.run(text, inputs, devices)
    except ExecutionError as e:
        raise _unsupported(e, module) from None


def _unsupported(error: ExecutionError, module: ir.Module) -> UnsupportedError:
    """XLA could not compile or run the program: name the ops most likely at fault."""
    suspects = [
        f"{op.name}{_call_target(op)} at {op.location}"
        for op in module.walk()
        if op.name
        in (
            "stablehlo.custom_call",
            "stablehlo.infeed",
            "stablehlo.outfeed",
            "stablehlo.send",
            "stablehlo.recv",
            "stablehlo.rng_bit_generator",
        )
    ]
    first_line = error.message.strip().splitlines()[0] if error.message.strip() else "?"
    notes = [f"op XLA CPU may not run: {s}" for s in suspects]
    if "fft_thunk" in error.message:
        ffts = [str(op.location) for op in module.walk() if op.name == "stablehlo.fft"]
        notes.append(
            "XLA CPU bug, not a wrong program: layout assignment gives a stablehlo.fft a "
            "non-row-major layout when its result feeds an all_gather (or another op that "
            "wants its gathered dimension major), and the CPU fft thunk accepts row-major "
            "only; a jax.shard_map of ifft -> all_gather(axis=1) fails the same way. "
            f"fft ops: {', '.join(ffts) or '?'}"
        )
    return UnsupportedError(
        f"XLA's CPU backend cannot {error.stage} {module.filename}: {first_line}",
        Location(module.filename),
        notes,
    )


def _call_target(op: ir.Op) -> str:
    target = op.properties.get("call_target_name") or op.attributes.get("call_target_name")
    return f" @{str(target).strip(chr(34))}" if target is not None else ""


def _check_result(
    index: int,
    stacked: np.ndarray,
    expected: np.ndarray,
    sharding: TensorSharding | None,
    meshes: _Meshes,
    mesh: Mesh,
    truth: np.ndarray | None = None,
    fan_in: int = 1,
) -> ResultCheck:
    own = meshes(sharding) if sharding is not None else mesh
    label = str(sharding) if sharding is not None else "replicated"
    want = expected.shape if sharding is None else local_shape(expected.shape, sharding, own)
    if stacked.shape[1:] != tuple(want):
        bad = Difference(False, float("inf"), float("inf"), expected.size, expected.size)
        return ResultCheck(index, label, bad, tuple(range(len(stacked))), ())
    actual, disagree = assemble(stacked, expected.shape, sharding, own)
    is_vacuous = vacuous(expected)
    difference = compare(actual, expected, truth, fan_in=fan_in)
    if sharding is not None and sharding.unreduced_axes:
        # Partial values: no one device's piece is a slice of the result, only their sum.
        differing = () if difference.equal else tuple(range(len(stacked)))
        return ResultCheck(index, label, difference, differing, tuple(disagree), vacuous=is_vacuous)
    pieces = split(expected, sharding, own)
    if truth is None or expected.dtype.kind not in "fc":
        differing = tuple(
            p for p in range(len(stacked)) if not compare(stacked[p], pieces[p]).equal
        )
    else:  # each piece held to the whole result's error scale
        truth_pieces, scale = split(truth, sharding, own), reference_scale(expected, truth)
        differing = tuple(
            p
            for p in range(len(stacked))
            if not compare(stacked[p], pieces[p], truth_pieces[p], scale, fan_in).equal
        )
    return ResultCheck(index, label, difference, differing, tuple(disagree), vacuous=is_vacuous)


def _localize(run: Executor, case: _Case, checks: tuple[ResultCheck, ...]) -> Divergence | None:
    """Run both programs again, returning every intermediate, and find the first divergence."""
    ref, gout, wrapped, lout = _run_both(run, case, intermediates=True)
    differing = [
        (c.index, c.sharding, c.difference, c.differing_devices) for c in checks if not c.equal
    ]
    return localize(ref, wrapped, gout, lout, case.meshes, case.mesh, differing)

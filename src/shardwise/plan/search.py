"""`plan_module`: choose the entry function's argument shardings that minimize step time.

1. The search space (`space.py`): groups of classes, a few candidates each.
2. Candidates are evaluated exactly by `cost.estimate` (Shardy's own passes, as in the
   report), through a `concurrent.futures.Executor`, memoized by the shardings they write.
3. Small spaces (at most `ENUMERATE_LIMIT` choices) are enumerated. Larger ones: each
   candidate of each group is probed alone (the rest replicated); a MILP (HiGHS through
   `scipy.optimize.milp`) over one-hot choices minimizes the sum of the probes' time deltas
   under the memory budget (the probes' memory deltas, summed) and the rule that groups in one
   argument never share an axis; its `TOP_K` best solutions (no-good cuts) are evaluated
   exactly, then a coordinate descent from the best moves one group at a time while that pays
   (trying the moves the probes predict to pay, and back to replicated). Candidates are evaluated on
   clones of the module loaded once; axes of one size stand in for each other in the probes
   when nothing in the module names an axis (`milp.probe_stand_ins`).
4. The standard plans (`standard.py`) are evaluated too; the answer is the fastest
   candidate that fits the budget among all of them, so it is never worse than the best
   standard plan that fits. Ties go to the earlier candidate: the output is deterministic.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import time
from collections.abc import Sequence
from typing import Any

from shardwise.errors import InputError
from shardwise.ir import Module, copy_attr, gc_paused
from shardwise.mesh import Mesh, MeshAxis
from shardwise.plan.cost import DEFAULT_COST, CostParams, estimate_ir
from shardwise.plan.evaluate import (
    Cuts,
    Evaluator,
    Key,
    Source,
    WithMesh,
    _fresh_copy,
    _key,
    _master,
    add_mesh,
    cuts_job,
    evaluate_candidate,
    make_executor,
    make_helper,
    prepare_job,
    stack_cuts,
    use_as_master,
)
from shardwise.plan.helper import HelperDied, HelperProcess
from shardwise.plan.result import ArgPlan, Plan
from shardwise.plan.space import SearchSpace, build_space
from shardwise.plan.standard import standard_plans
from shardwise.sdy.funcs import main_func
from shardwise.sdy.shardings import get_sharding, set_sharding
from shardwise.sharding import TensorSharding

__all__ = [
    "ENUMERATE_LIMIT",
    "TOP_K",
    "InfeasibleBudgetError",
    "evaluate_candidate",
    "parse_memory",
    "parse_mesh_spec",
    "plan_module",
]

ENUMERATE_LIMIT = 64
TOP_K = 2
DESCENT_ROUNDS = 2
Shardings = dict[int, TensorSharding]


class InfeasibleBudgetError(InputError):
    """No candidate fits the per-device memory budget."""


# -- inputs -------------------------------------------------------------------------------------

_UNITS = {"": 1, "b": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def parse_memory(text: str | int | float | None) -> int | None:
    """``16GiB``, ``512MiB``, ``2.5GB``, ``1e9`` -> bytes."""
    if text is None or isinstance(text, int | float):
        return None if text is None else int(text)
    m = re.fullmatch(r"\s*([0-9.eE+]+)\s*([kKmMgGtT]?)(i?)[bB]?\s*", text)
    if m is None:
        raise InputError(f"--memory {text!r}: expected bytes like 16GiB, 512MiB, 2.5GB or 1e9")
    unit = _UNITS[m.group(2).lower()]
    if m.group(3):
        unit = 1024 ** "bkmgt".index(m.group(2).lower() or "b")
    return int(float(m.group(1)) * unit)


def parse_mesh_spec(spec: Any) -> Mesh | None:
    """``"data=2,model=4"``, ``{"data": 2, "model": 4}``, a `Mesh` or a JAX mesh -> `Mesh`."""
    if spec is None or isinstance(spec, Mesh):
        return spec
    if isinstance(spec, str):
        axes = []
        for part in spec.split(","):
            name, sep, size = part.strip().partition("=")
            if not sep or not name or not size.strip().isdigit():
                raise InputError(f"--mesh {spec!r}: expected NAME=SIZE,... like data=2,model=4")
            axes.append(MeshAxis(name.strip(), int(size)))
        return Mesh(tuple(axes))
    if isinstance(spec, dict):
        return Mesh(tuple(MeshAxis(str(k), int(v)) for k, v in spec.items()))
    from shardwise.api import mesh_from_jax

    return mesh_from_jax(spec)


def _resolve_mesh(module: Module, mesh: Mesh | None) -> tuple[str, Mesh, bool]:
    """The mesh to plan on, its symbol name, and whether an ``sdy.mesh`` op was added."""
    meshes = {k: v for k, v in module.meshes().items() if isinstance(v, Mesh) and v.axes}
    if mesh is None:
        if len(meshes) != 1:
            found = ", ".join(f"@{k}" for k in meshes) or "none"
            raise InputError(
                f"give the mesh to plan on (--mesh data=2,model=4): the module has {found}"
            )
        name, found_mesh = next(iter(meshes.items()))
        return name, found_mesh, False
    for name, existing in meshes.items():
        if existing.equals(mesh, ignore_device_ids=True):
            return name, existing, False
    if "mesh" in module.meshes():
        raise InputError(f"the module's mesh @mesh is {module.meshes()['mesh']}, not {mesh}")
    add_mesh(module, mesh)
    return "mesh", mesh, True


# -- the search ---------------------------------------------------------------------------------


def _fits(result: dict[str, Any], budget: int | None) -> bool:
    return budget is None or result["peak_memory_bytes_per_device"] <= budget


def _rank(result: dict[str, Any], budget: int | None) -> tuple[bool, float]:
    """How a result ranks (lowest first): one that fits the budget, then the fastest."""
    return (not _fits(result, budget), result["time_s"])


def _choice_shardings(space: SearchSpace, choices: list[tuple[int, ...]]) -> list[Shardings]:
    out = []
    for choice in choices:
        s = space.shardings(choice)
        if s is not None:
            out.append(s)
    return out


def _enumerate(space: SearchSpace) -> list[tuple[int, ...]]:
    ranges = [range(len(g.candidates)) for g in space.groups]
    return [c for c in itertools.product(*ranges) if space.is_plan(c)]


def _search_choices(
    space: SearchSpace, ev: Evaluator, budget: int | None, seeds: Sequence[Shardings] = ()
) -> list[tuple[int, ...]]:
    """The choices worth evaluating exactly: all of a small space, else the MILP's best and
    a coordinate descent from the best of those and of the `seeds` (the standard plans that
    are choices)."""
    total = math.prod(len(g.candidates) for g in space.groups)
    if total <= ENUMERATE_LIMIT:
        return _enumerate(space)
    from shardwise.plan.milp import milp_choices, probe_choices, probe_stand_ins

    symmetric = _axes_interchangeable(ev)
    probes = probe_choices(space, symmetric)
    memory = budget is not None  # without a budget only the step time ranks the candidates
    results = dict(zip(probes, ev.run(_choice_shardings(space, probes), memory), strict=True))
    predicted = dict(results)  # the probes the additive model reads: stand-ins included
    if symmetric:
        for choice, stand_in in probe_stand_ins(space).items():
            if stand_in in results and space.is_plan(choice):
                predicted.setdefault(choice, results[stand_in])
    found = milp_choices(space, predicted, budget, TOP_K)
    if ev.helper is not None:
        _guess_answer(space, ev, budget, (results, predicted))
    found += [c for c in (space.choice_of(seed) for seed in seeds) if c is not None]
    found = [c for c in dict.fromkeys(found) if space.is_plan(c)]
    evaluated = dict(zip(found, ev.run(_choice_shardings(space, found), memory), strict=True))
    evaluated.update(results)
    return _descend(space, ev, budget, evaluated, predicted)


def _guess_answer(
    space: SearchSpace,
    ev: Evaluator,
    budget: int | None,
    probes: tuple[dict[tuple[int, ...], dict[str, Any]], dict[tuple[int, ...], dict[str, Any]]],
) -> None:
    """Start the answer's whole-module evaluation in the helper (`Evaluator.expect`) before
    anything but the probes is estimated: the guess is the descent's first neighbour (the one
    the probes predict to gain most) of the best probe (`probes`: their results, and what the
    MILP read of them). On the GPT cases of benchmarks/plan/ the descent starts from that probe
    (the MILP's choices and the standard plans cost more) and the guess is the answer, sent
    ~1 s of this process's work before the descent finds it (the MILP's choices, the standard
    plans and the neighbour are estimated in between), so the helper's evaluation (1.6 s at 96
    layers) ends about when this process asks for it. It estimates nothing and changes no
    result; a wrong guess is replaced by the descent's own, costing the helper's core."""
    results, predicted = probes

    best = min(results, key=lambda c: _rank(results[c], budget))
    neighbours, change = _neighbours(space, best, results[best], budget, predicted)
    gains = [n for n in neighbours if n not in results and change.get(n, 0.0) < 0.0]
    if gains:
        ev.expect(space.shardings(min(gains, key=lambda n: change[n])) or {})


def _axes_interchangeable(ev: Evaluator) -> bool:
    """Whether axes of one size are interchangeable in every probe (`probe_stand_ins`): every
    link priced alike and no sharding in the module (on an argument, a constraint, a manual
    computation: only the mesh names axes)."""
    if ev.params.per_axis:
        return False
    module = _master(ev.text, ev.name)
    for op in module.walk():
        if op.name.startswith("sdy.") and op.name != "sdy.mesh":
            return False
        if op.attributes and any("sdy." in key or "sharding" in key for key in op.attributes):
            return False
        if op.name == "func.func" and "sdy" in str(op.properties.get("arg_attrs", "")):
            return False
        if op.name == "func.func" and "sdy" in str(op.properties.get("res_attrs", "")):
            return False
    return True


def _descend(
    space: SearchSpace,
    ev: Evaluator,
    budget: int | None,
    evaluated: dict[tuple[int, ...], dict[str, Any]],
    probes: dict[tuple[int, ...], dict[str, Any]],
) -> list[tuple[int, ...]]:
    """Coordinate descent from the best choice evaluated: each round evaluates the moves of
    one group that the probes predict to pay (`_neighbours`) and moves to the best neighbour
    if it is better; it stops when none is."""

    def rank(c: tuple[int, ...]) -> tuple[bool, float]:
        return _rank(evaluated[c], budget)

    best = min(evaluated, key=rank)
    for _ in range(DESCENT_ROUNDS):
        neighbours, predicted = _neighbours(space, best, evaluated[best], budget, probes)
        todo = [n for n in neighbours if n not in evaluated]
        guide = (evaluated[best], predicted)
        _evaluate_round(space, ev, todo, budget, evaluated, guide)
        step = min([best, *neighbours], key=rank)
        if step == best:
            break
        best = step
    return list(evaluated)


def _neighbours(
    space: SearchSpace,
    best: tuple[int, ...],
    result: dict[str, Any],
    budget: int | None,
    probes: dict[tuple[int, ...], dict[str, Any]],
) -> tuple[list[tuple[int, ...]], dict[tuple[int, ...], float]]:
    """The descent's neighbours of `best` (evaluated as `result`): the moves of one group that
    the probes predict to pay (the candidate's probe against the current one's: time, or
    memory while `best` does not fit) and each group's move back to replicated; and the
    probes' predicted change of each, where they tell."""
    base = tuple(0 for _ in space.groups)
    what = "time_s" if _fits(result, budget) else "peak_memory_bytes_per_device"

    def alone(g: int, k: int) -> float | None:
        probe = probes.get(base[:g] + (k,) + base[g + 1 :])
        return None if probe is None else probe[what]

    neighbours = []
    predicted: dict[tuple[int, ...], float] = {}
    for g, group in enumerate(space.groups):
        here = alone(g, best[g])
        for k in range(len(group.candidates)):
            n = best[:g] + (k,) + best[g + 1 :]
            there = alone(g, k)
            if k == best[g] or there is None or not space.is_plan(n):
                continue
            if here is None or there < here:
                neighbours.append(n)
                predicted[n] = 0.0 if here is None else there - here
        # And back to replicated: probes alone favour sharding, in context it may not pay
        # (a sharded attention beside a sharded MLP on 8x8).
        off = best[:g] + (0,) + best[g + 1 :]
        if best[g] != 0 and off not in neighbours and space.is_plan(off):
            neighbours.append(off)
    return neighbours, predicted


def _evaluate_round(
    space: SearchSpace,
    ev: Evaluator,
    todo: list[tuple[int, ...]],
    budget: int | None,
    evaluated: dict[tuple[int, ...], dict[str, Any]],
    guide: tuple[dict[str, Any], dict[tuple[int, ...], float]],
) -> None:
    """A descent round's new neighbours `todo`, evaluated into `evaluated` (in `todo`'s
    order). With a helper process, one at a time, those the probes predict to gain most
    first (`guide`: the best's result and the predicted changes): a
    neighbour better than the best so far is sent to the helper at once (`Evaluator.expect`),
    as the answer unless a later one beats it. On the GPT cases of benchmarks/plan/ the answer
    is one of round one's neighbours; its whole-module evaluation then runs beside the rest of
    the descent. The order of the evaluations changes no result (each costs a fresh copy)."""
    memory = budget is not None
    if ev.helper is None:
        evaluated.update(zip(todo, ev.run(_choice_shardings(space, todo), memory), strict=True))
        return
    best_result, predicted = guide
    current = _rank(best_result, budget)
    got: dict[tuple[int, ...], dict[str, Any]] = {}
    for n in sorted(todo, key=lambda n: predicted.get(n, 0.0)):
        (got[n],) = ev.run(_choice_shardings(space, [n]), memory)
        if _rank(got[n], budget) < current:
            current = _rank(got[n], budget)
            ev.expect(space.shardings(n) or {})
    evaluated.update((n, got[n]) for n in todo)


def _source(module: Any, name: str | None = None) -> tuple[str, str]:
    """The unpropagated text of a `ShardedModule`, an `ir.Module` or MLIR text (named `name`),
    and a name."""
    from shardwise.io.mlir import write_text

    if isinstance(module, str):
        return module, name or "<plan>"
    if isinstance(module, Module):
        return write_text(module), module.filename
    return module._unpropagated_text(), module.ir.filename


def _without_collectives(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "collectives"}


def plan_module(
    module: Any,
    mesh: Any = None,
    memory: str | int | None = None,
    params: CostParams = DEFAULT_COST,
    executor: Any = None,
    progress: Any = None,
    name: str | None = None,
) -> Plan:
    """The plan for `module` (a `ShardedModule`, `ir.Module` or text) on `mesh` (or the
    module's one mesh), within `memory` bytes per device (``"16GiB"`` or an int).
    `name`: the file `module` was read from, when it is text (errors name it).

    `executor`: a `concurrent.futures.Executor`, ``"processes"``, ``"inline"``,
    ``"dask://HOST:PORT"``, or None (in-process for small modules, else processes).
    `progress` (an `explain.progress.ProgressSink`) hears of each candidate evaluated.
    Raises `InfeasibleBudgetError` when no candidate fits the budget.
    """
    start = time.perf_counter()
    source, name = _source(module, name)
    budget = parse_memory(memory)
    # MLIR parses the text once for the whole search. The input as loaded is the master the
    # cuts and candidates copy (`_master`: unchanged until the answer's whole-module
    # evaluation costs it, last), or, when the mesh is added to it, the master of the text
    # with the mesh: not a clone of it (0.15 s at 96 GPT layers).
    base = _master(source, name)
    if main_func(base) is None:
        raise InputError(f"{name}: no entry function (func.func @main) to plan")
    mesh_name, mesh_value, added = _resolve_mesh(base, parse_mesh_spec(mesh))
    text: Source = source
    if added:  # candidates clone the input with its mesh: the text is not parsed again
        text = WithMesh(source, mesh_value)
        use_as_master(text, name, base, instead_of=source)
    # No cyclic GC until the plan is made: the modules loaded for the whole search (the input,
    # its master copies, the cuts, the answer) are millions of long-lived objects that every
    # full collection walked again (2.7-3.6 of 13.7-14.6 CPU s at 96 GPT layers, 0.3 of 5.6 at
    # 24); each candidate's module, with the ops its passes erased, is freed by reference
    # counting (`release_ops`). Peak RSS at 96 layers: 545 MB (448 MB with the GC on).
    with gc_paused():
        pool, owned = make_executor(executor, base)
        # On a machine of two cores the candidates run here, one at a time: a helper process
        # forked now, holding the loaded input, cuts the stack while the search space is built
        # here, and evaluates the search's best on the whole module while the search goes on.
        helper = make_helper(executor, pool, base, text, name)
        ev = None
        try:
            cut = None if helper is None else helper.submit(cuts_job)
            space = build_space(base, mesh_name, mesh_value)
            cuts, helper = _cuts(base, text, name, helper, cut)
            ev = Evaluator(text, name, params, pool, progress, cuts, helper)
            ev.print_input()
            labelled, results = _search(space, ev, budget)
            ev.expect(labelled[_answer(results, budget)][1])
            # The answer printed before the whole module is costed on the loaded input itself.
            printed = _printed_answer(ev, labelled, results, budget)
            reported = _checked(ev, labelled, results, budget)
            if reported is None:  # the cuts' estimates missed: search the whole module instead
                ev.close()
                whole = Evaluator(text, name, params, pool, progress)
                whole.full_memo = ev.full_memo
                ev = whole
                labelled, results = _search(space, ev, budget)
                reported = results
        finally:
            if ev is not None:
                ev.close()
            elif helper is not None:
                helper.close()
            if owned and pool is not None:
                pool.shutdown()
        # The replicated program (every planned argument closed and replicated): the search has
        # evaluated it already (a probe, or one of the enumerated choices).
        base_result = ev.run([space.shardings(tuple(0 for _ in space.groups)) or {}], False)[0]
        lower_bound = base_result["compute_s"] / max(1, mesh_value.total_size)
        n_standard = sum(1 for label, _ in labelled if label != "search")  # listed first
        plan = _choose(
            text, name, labelled, (results, reported), n_standard, budget, lower_bound, printed
        )
        plan.search_time_s = time.perf_counter() - start
        plan.candidates_evaluated = len(ev.memo)
        return plan


def _cuts(
    base: Module, text: Source, name: str, helper: HelperProcess | None, job: int | None
) -> tuple[Cuts | None, HelperProcess | None]:
    """`stack_cuts` of the input, from the helper's job `job` or (without a helper, or if it
    died) made here; and the helper, kept only with cuts (without them the search is the
    whole module's evaluations: nothing to overlap), told to copy the input ahead of the
    answer's evaluation."""
    if helper is not None and job is not None:
        try:
            cuts = helper.result(job)
            if cuts is not None:
                helper.submit(prepare_job)
                return cuts, helper
        except HelperDied:
            pass
        helper.close()
    return stack_cuts(base, text, name), None


def _search(
    space: SearchSpace, ev: Evaluator, budget: int | None
) -> tuple[list[tuple[str, Shardings]], list[dict[str, Any]]]:
    """The standard plans and the search's choices, labelled, and their estimates."""
    labelled: list[tuple[str, Shardings]] = list(standard_plans(space).items())
    # Reported: their peak memory too. Estimated when the search first asks for them (the
    # answer's guess comes before them: `_guess_answer`), or at the end.
    ev.reported.update(_key(s) for _, s in labelled)
    choices = _search_choices(space, ev, budget, [s for _, s in labelled])
    labelled += [("search", s) for s in _choice_shardings(space, choices)]
    return labelled, ev.run([s for _, s in labelled], budget is not None)


def _checked(
    ev: Evaluator,
    labelled: list[tuple[str, Shardings]],
    results: list[dict[str, Any]],
    budget: int | None,
) -> list[dict[str, Any]] | None:
    """`results` with the whole module's evaluation of the answer `_choose` reports: the best
    candidate that fits (or, when none fits, the smallest peak); the runner-up's summary stays
    its estimate (a whole-module evaluation of it cost 0.8 of the GPT case's 8.8 CPU s). None
    if the answer's differs from its estimate: the cuts are not to be trusted. (The ranking
    stays the estimates': rounding must not reorder candidates that tie, as symmetric ones
    do.)"""
    if ev.cuts is None:
        return results
    i = _answer(results, budget)
    (exact,) = ev.full([labelled[i][1]], last=True)
    key = _key(labelled[i][1])
    if not _agrees(exact, results[i], budget, key in ev.exact_memory):
        return None
    return [
        exact if _key(other) == key else r for (_, other), r in zip(labelled, results, strict=True)
    ]


def _ranking(results: list[dict[str, Any]], budget: int | None) -> list[int]:
    """The candidates' indices, those that fit first, then by time (ties: the earliest)."""
    return sorted(
        range(len(results)),
        key=lambda i: (*_rank(results[i], budget), i),
    )


def _answer(results: list[dict[str, Any]], budget: int | None) -> int:
    """The candidate `_choose` reports (the fastest that fits, ties: the earliest), or, when
    none fits, the one of the smallest peak."""
    order = _ranking(results, budget)
    if _fits(results[order[0]], budget):
        return order[0]
    return min(order, key=lambda j: (results[j]["peak_memory_bytes_per_device"], j))


def _printed_answer(
    ev: Evaluator,
    labelled: list[tuple[str, Shardings]],
    results: list[dict[str, Any]],
    budget: int | None,
) -> dict[Key, tuple[str, list[ArgPlan]]]:
    """`_annotated` of the answer that fits, by its key (empty if none fits), from the
    helper's printout of the input where there is one."""
    i = _answer(results, budget)
    if not _fits(results[i], budget):
        return {}
    shardings = labelled[i][1]
    return {_key(shardings): _annotated(ev.text, ev.name, shardings, ev.printed_input())}


def _agrees(
    exact: dict[str, Any], estimate: dict[str, Any], budget: int | None, memory: bool
) -> bool:
    """Whether an estimate from the cuts is the whole module's evaluation (up to rounding);
    its peak memory too if `memory`."""
    keys = ("time_s", "comm_bytes_per_device") + (("peak_memory_bytes_per_device",) * memory)
    return _fits(exact, budget) == _fits(estimate, budget) and all(
        math.isclose(exact[k], estimate[k], rel_tol=1e-9, abs_tol=1e-15) for k in keys
    )


def _choose(
    text: Source,
    name: str,
    labelled: list[tuple[str, Shardings]],
    evaluations: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    n_standard: int,
    budget: int | None,
    lower_bound: float,
    printed: dict[Key, tuple[str, list[ArgPlan]]],
) -> Plan:
    """The fastest candidate that fits (ties: the earliest), its runner-up, the standard
    plans' summaries (the first `n_standard` candidates). `evaluations`: what ranks the
    candidates (estimates) and what is reported of them (the whole module's where known);
    `printed`: `_annotated` of candidates by key, where known."""
    ranked, results = evaluations
    order = _ranking(ranked, budget)
    best = order[0]
    if not _fits(ranked[best], budget):
        raise _infeasible(text, name, labelled, evaluations, budget or 0)
    runner = next((i for i in order[1:] if _key(labelled[i][1]) != _key(labelled[best][1])), None)
    chosen_name, chosen = labelled[best]
    planned, args = printed.get(_key(chosen)) or _annotated(text, name, chosen)
    runner_up = None
    if runner is not None:
        runner_up = {
            "name": labelled[runner][0],
            "summary": _without_collectives(results[runner]),
            "time_diff_s": results[runner]["time_s"] - results[best]["time_s"],
            "args": {str(i): str(s) for i, s in sorted(labelled[runner][1].items())},
        }
    return Plan(
        text=planned,
        filename=name,
        args=args,
        summary=_without_collectives(results[best]),
        name=chosen_name,
        runner_up=runner_up,
        standard={
            n: (_without_collectives(r) if _fits(r, budget) else None)
            for (n, _), r in zip(labelled[:n_standard], results, strict=False)
        },
        lower_bound=lower_bound,
        search_time_s=0.0,
        memory_budget=budget,
    )


def _annotated(
    text: Source, name: str, shardings: Shardings, printed: str | None = None
) -> tuple[str, list[ArgPlan]]:
    """The input's text with `shardings` on the entry function's arguments, and the arguments'
    plans: the loaded input (the candidates' master) printed with them set for the while, on a
    copy of its argument attributes put back after. It prints what a clone of it with the
    shardings set prints, without cloning the whole module (0.15 s at 96 GPT layers) or
    printing it twice (0.2 s). `printed`: the input's printout (by the helper), in which
    only the entry function's signature then changes (`with_func_signature`)."""
    from shardwise.io.mlir import func_signature_text, with_func_signature, write_text

    module = _master(text, name)
    func = main_func(module)
    assert func is not None
    signature = func_signature_text(module, func) if printed is not None else None
    before = func.properties.get("arg_attrs")
    if before is not None:
        func.properties["arg_attrs"] = copy_attr(before)
    try:
        args = func.regions[0].entry.args
        for i, sharding in sorted(shardings.items()):
            set_sharding(args[i], sharding)
        if printed is None:
            return write_text(module), _arg_plans(module, shardings)
        return with_func_signature(printed, signature, module, func), _arg_plans(module, shardings)
    finally:
        if before is None:
            func.properties.pop("arg_attrs", None)
        else:
            func.properties["arg_attrs"] = before


def _arg_plans(module: Module, chosen: Shardings) -> list[ArgPlan]:
    from shardwise.names import arg_name

    func = main_func(module)
    assert func is not None
    out = []
    for i, arg in enumerate(func.regions[0].entry.args):
        sharding = get_sharding(arg)
        label = arg_name(arg) or f"main:arg{i}"
        out.append(
            ArgPlan(i, label, str(arg.type), sharding, sharding is not None and i not in chosen)
        )
    return out


def _infeasible(
    text: Source,
    name: str,
    labelled: list[tuple[str, Shardings]],
    evaluations: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    budget: int,
) -> InfeasibleBudgetError:
    """The error naming the smallest peak found and the largest tensors live at it."""
    ranked, results = evaluations
    i = min(range(len(ranked)), key=lambda j: (ranked[j]["peak_memory_bytes_per_device"], j))
    peak = results[i]["peak_memory_bytes_per_device"]
    largest = ", ".join(
        f"{label} {size} B/device" for label, size in _largest_at_peak(text, name, labelled[i][1])
    )
    return InfeasibleBudgetError(
        f"no plan fits {budget} B per device: the smallest peak found is {peak} B per device "
        f"(plan {labelled[i][0]}); the largest tensors live at that peak: {largest}; "
        f"the smallest feasible budget found is --memory {peak}"
    )


def _largest_at_peak(text: Source, name: str, shardings: Shardings) -> list[tuple[str, int]]:
    """The five largest tensors live at the peak of the plan `shardings` (its propagated
    module): ``(name, bytes per device)``, the largest first."""
    from shardwise.explain.report import _value_bytes
    from shardwise.explain.run import key_name
    from shardwise.explain.summary import live_at_peak
    from shardwise.names import op_source

    module = _fresh_copy(text, name)
    func = main_func(module)
    assert func is not None
    args = func.regions[0].entry.args
    for j, sharding in sorted(shardings.items()):
        set_sharding(args[j], sharding)
    estimate_ir(module, DEFAULT_COST)
    live = live_at_peak(module, functools.partial(_value_bytes, module))
    out = []
    for value, size in sorted(live, key=lambda p: -p[1])[:5]:
        label = key_name(module, value).replace("?", "a value the reshards inserted")
        source = str(op_source(value.defining_op)) if value.defining_op is not None else ""
        out.append((f"{label} ({value.type}{', ' + source if source else ''})", size))
    return out

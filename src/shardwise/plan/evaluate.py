"""Evaluating candidates: a module loaded once, each candidate's shardings written on a clone
of it and costed by `cost.estimate_ir`, through a `concurrent.futures.Executor`; for a stack of
repeated layers, on the module cut to a few of them (`stack.py`)."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from shardwise.errors import InputError
from shardwise.ir import Module, Op, RawAttr, gc_paused, release_ops, releasing_erased
from shardwise.mesh import Mesh
from shardwise.plan.cost import CostParams, estimate_ir
from shardwise.plan.helper import HelperDied, HelperProcess
from shardwise.plan.stack import CUT, MIN_DEPTH, Stack, cut_copy, extrapolate, find_stack
from shardwise.sdy.funcs import main_func
from shardwise.sdy.shardings import set_sharding
from shardwise.sharding import TensorSharding

__all__ = [
    "Cuts",
    "Evaluator",
    "Source",
    "WithMesh",
    "add_mesh",
    "evaluate_candidate",
    "make_executor",
    "make_helper",
    "stack_cuts",
    "use_as_master",
]

Shardings = dict[int, TensorSharding]
Key = tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class WithMesh:
    """A module's text with the mesh the planner adds to it (`add_mesh`): the module the
    planner plans, named without printing it (a printout of the input was 0.2 CPU s at 96 GPT
    layers). Loading it, here or in a worker process, loads `text` and adds the mesh."""

    text: str
    mesh: Mesh


Source = str | WithMesh  # what a module to load is given as: its text, or that and a mesh


def add_mesh(module: Module, mesh: Mesh) -> None:
    """Add `mesh` to `module` as ``sdy.mesh @mesh``, its first op."""
    op = Op("sdy.mesh", properties={"mesh": mesh, "sym_name": RawAttr('"mesh"')})
    module.body.insert(0, op)


def _key(shardings: Shardings) -> Key:
    # `_text` once per sharding object: a candidate's L blocks of arguments share a few
    # objects (`SearchSpace.shardings`, `standard_plans`), and each `_text` call hashes and
    # compares its argument (0.5 ms a key at 96 GPT layers, 80 keys a plan).
    texts: dict[int, str] = {}
    out = []
    for i, sharding in sorted(shardings.items(), key=_first):
        text = texts.get(id(sharding))
        if text is None:
            text = texts[id(sharding)] = _text(sharding)
        out.append((i, text))
    return tuple(out)


def _first(item: tuple[int, TensorSharding]) -> int:
    return item[0]


@functools.lru_cache(maxsize=4096)
def _text(sharding: TensorSharding) -> str:
    """`str(sharding)`, printed once per distinct sharding: a candidate of a stack of L layers
    writes the same few shardings on its L blocks of arguments (0.21 CPU s of keys at 96 GPT
    layers, printing each)."""
    return str(sharding)


def evaluate_candidate(text: Source, name: str, key: Key, params: CostParams) -> dict[str, Any]:
    """Load `text`, write the shardings of `key` on the entry function's arguments, estimate.
    Top-level so that executors in other processes (or on Dask workers) can run it."""
    # No cyclic GC while the candidate is costed: its clone and the passes' IR are young
    # objects that survive a few collections each and get promoted, so collections kept
    # walking them (1.7-2.0 of 8.8 CPU seconds on the GPT case of benchmarks/plan/); the
    # module is freed by reference counting below, and the few cycles the passes leave are
    # collected once the GC is on again.
    with gc_paused():
        return _cost_of(_fresh_copy(text, name), key, params)


def _cost_of(
    module: Module, key: Key, params: CostParams, imported: bool = False
) -> dict[str, Any]:
    """`module` with the shardings of `key` written, estimated; then freed. `imported`:
    `module` has been through Shardy's import pipeline already (`prepare_job`)."""
    with gc_paused(), releasing_erased():
        ops = list(module.walk())  # those the passes erase too: freed below, not left to the GC
        try:
            return _estimate_with(module, key, params, imported)
        finally:
            release_ops(ops)
            module.release()  # frees it by reference counting: no GC pass over a dead module


def _estimate_with(module: Module, key: Key, params: CostParams, imported: bool) -> dict[str, Any]:
    """`module` with the shardings of `key` written, estimated (`_cost_of` without the free)."""
    from shardwise.syntax import parse_tensor_sharding

    func = main_func(module)
    assert func is not None
    args = func.regions[0].entry.args
    for i, sharding_text in key:
        set_sharding(args[i], parse_tensor_sharding(sharding_text))
    return estimate_ir(module, params, imported)


@functools.lru_cache(maxsize=6)
def _generic_form(text: str, name: str) -> Any:
    """The text parsed by MLIR once per process; each candidate loads a copy from it."""
    from shardwise.io.mlir import GenericForm

    return GenericForm.of(text, name)


_MASTERS: dict[tuple[Source, str], Module] = {}  # the last few texts loaded, oldest first
_MAX_MASTERS = 6


def _load(text: Source, name: str) -> Module:
    """`text` loaded (from MLIR's parse of it, done once per process)."""
    if isinstance(text, str):
        return _generic_form(text, name).load()
    module = _generic_form(text.text, name).load()
    add_mesh(module, text.mesh)
    return module


def _master(text: Source, name: str) -> Module:
    """The text loaded once per process, never changed: candidates propagate clones of it."""
    module = _MASTERS.pop((text, name), None)
    if module is None:
        module = _load(text, name)
    _remember(text, name, module)
    return module


def use_as_master(text: Source, name: str, module: Module, instead_of: str | None = None) -> None:
    """`module` is what loading `text` gives (the planner's input with the mesh it added):
    clones of it stand for `text` from now on, so the text is not parsed again; `module` must
    not change afterwards. `instead_of`: a text whose master is no longer needed."""
    if instead_of is not None:
        _MASTERS.pop((instead_of, name), None)
    _MASTERS.pop((text, name), None)
    _remember(text, name, module)


def _remember(text: Source, name: str, module: Module) -> None:
    """`module` as the newest master, the oldest dropped past `_MAX_MASTERS`."""
    _MASTERS[text, name] = module
    while len(_MASTERS) > _MAX_MASTERS:
        del _MASTERS[next(iter(_MASTERS))]


def _fresh_copy(text: Source, name: str) -> Module:
    """A copy of `_master` to change: cloning the IR is about 5x faster than loading the
    generic form again, and gives the same module (same ops, uses, names and locations)."""

    from shardwise.io.generic_text import RESOURCES
    from shardwise.ir.edit import clone_op

    master = _master(text, name)
    with gc_paused():  # as the parser: the clone is one live graph, nothing for the GC to find
        copy = Module(clone_op(master.op), master.source, master.filename)
    copy.allow_unregistered_dialect = master.allow_unregistered_dialect
    copy.unregistered_ops = master.unregistered_ops
    if master in RESOURCES:
        RESOURCES[copy] = RESOURCES[master]
    return copy


class Evaluator:
    """Evaluations through an executor, memoized by the shardings written.

    `run` gives the estimates the search ranks by: the whole module's evaluation, or, when the
    module is a stack of repeated layers (`stack.py`), one extrapolated from its cuts to a few
    layers: to 2 and 3 layers, or, when only the step time matters (`memory=False`: no
    budget), to 1 and 2 (the step time grows by the same from the first layer on, the peak
    memory may not). `full` gives the whole module's evaluation; `expect` starts one early in
    the `helper` process, if there is one (the evaluator owns it from then on: `close`).
    `reported`: the candidates whose estimate always includes the peak memory (as if `run`
    with `memory=True`), whenever and however they are first asked for: their estimate does
    not depend on the order of the evaluations."""

    def __init__(
        self,
        text: Source,
        name: str,
        params: CostParams,
        executor: Executor | None,
        progress: Any = None,
        cuts: Cuts | None = None,
        helper: HelperProcess | None = None,
    ):
        self.text, self.name, self.params, self.executor = text, name, params, executor
        self.cuts = cuts
        self.helper = helper
        self.expected: dict[Key, int] = {}  # the helper's whole-module evaluations, by job
        self.memo: dict[Key, dict[str, Any]] = {}  # the estimates
        self.exact_memory: set[Key] = set()  # the estimates whose peak memory is right
        self.reported: set[Key] = set()  # estimated with their peak memory, always
        self.full_memo: dict[Key, dict[str, Any]] = {}
        self.cut_memo: dict[tuple[int, Key], dict[str, Any]] = {}
        self.progress = progress  # a `explain.progress.ProgressSink`, or None
        self.printed: int | None = None  # the helper's job printing the input, if sent
        self.printout: str | None = None  # its reply, once read

    def run(self, candidates: Sequence[Shardings], memory: bool = True) -> list[dict[str, Any]]:
        if self.cuts is None:
            return self.full(candidates)
        keys = [_key(c) for c in candidates]
        todo = {}  # key -> the lower cut its estimate extrapolates from
        for k in dict.fromkeys(keys):
            exact = memory or k in self.reported
            if k not in (self.exact_memory if exact else self.memo):
                todo[k] = CUT if exact else CUT - 1
        jobs = [(c, k) for k, low in todo.items() for c in (low, low + 1)]
        jobs = [job for job in jobs if job not in self.cut_memo]
        texts, on_cut = self.cuts.texts, self.cuts.key
        done = self._evaluate([(texts[c], on_cut(c, k)) for c, k in jobs], len(self.cut_memo))
        self.cut_memo.update(zip(jobs, done, strict=True))
        for k, low in todo.items():
            lo, hi = self.cut_memo[low, k], self.cut_memo[low + 1, k]
            self.memo[k] = extrapolate(lo, hi, self.cuts.depth, low)
            if low == CUT:
                self.exact_memory.add(k)
        return [self.memo[k] for k in keys]

    def expect(self, candidate: Shardings) -> None:
        """`candidate` is likely the answer (the search's best so far): its whole-module
        evaluation starts in the helper process while the search goes on, for `full` to
        take. A guess the helper is still busy with is dropped (the helper killed and forked
        again: a guess costs the second core, never this one)."""
        key = _key(candidate)
        if self.helper is None or key in self.full_memo or key in self.expected:
            return
        try:
            self._send(key)
        except HelperDied:
            self.close()  # no more guesses: `full` evaluates here

    def _send(self, key: Key) -> None:
        assert self.helper is not None
        for k, job in list(self.expected.items()):
            if self.helper.done(job):
                self.full_memo[k] = self.helper.result(job)
                del self.expected[k]
        if self.expected:
            self._keep_printout()  # the new helper's printout would come after its guess
            if self.helper is not None:
                self.helper.close()
            self.helper = HelperProcess((self.text, self.name))
            self.expected, self.printed = {}, None
        self.expected[key] = self.helper.submit(whole_module_job, key, self.params)

    def print_input(self) -> None:
        """Have the helper print the input (`write_text` of the master), for `printed_input`:
        while it waits for the answer, the printout costs it nothing."""
        if self.helper is not None and self.printed is None:
            try:
                self.printed = self.helper.submit(printed_job)
            except HelperDied:
                self.close()

    def printed_input(self) -> str | None:
        """The helper's printout of the input (`print_input`), or None (the helper died, or
        its printout failed: printed here, that reports the failure)."""
        self._keep_printout(wait=True)
        return self.printout

    def _keep_printout(self, wait: bool = False) -> None:
        """Read the helper's printout if it has come (or, `wait`, once it comes)."""
        if self.helper is None or self.printed is None or self.printout is not None:
            return
        try:
            if wait or self.helper.done(self.printed):
                self.printout = self.helper.result(self.printed)
        except HelperDied:
            self.close()
        except Exception:  # noqa: BLE001  (printed here instead, which reports it)
            self.printed = None

    def close(self) -> None:
        """Kill the helper process (a guess it still runs is dropped)."""
        if self.helper is not None:
            self.helper.close()
            self.helper, self.expected, self.printed = None, {}, None

    def full(self, candidates: Sequence[Shardings], last: bool = False) -> list[dict[str, Any]]:
        """The whole module's evaluations (the estimates too when there are no cuts): those
        the helper was asked for (`expect`) from it, the others here.

        `last`: the module's last evaluation here: one candidate is costed on the loaded
        module itself, not a clone of it (0.15 s at 96 GPT layers); a later use of the text
        loads it again."""
        keys = [_key(c) for c in candidates]
        for k in dict.fromkeys(keys):
            if k not in self.full_memo and k in self.expected and self.helper is not None:
                try:
                    self.full_memo[k] = self.helper.result(self.expected.pop(k))
                except HelperDied:
                    self.close()  # evaluated here instead
        missing = list(dict.fromkeys(k for k in keys if k not in self.full_memo))
        if last and missing:
            self.close()  # its guesses missed: the whole core is this evaluation's
        if last and len(missing) == 1:
            self._tick(len(self.full_memo), len(self.full_memo) + 1)
            master = _MASTERS.pop((self.text, self.name), None)
            if master is None:
                master = _load(self.text, self.name)
            self.full_memo[missing[0]] = _cost_of(master, missing[0], self.params)
            missing = []
        done = self._evaluate([(self.text, k) for k in missing], len(self.full_memo))
        self.full_memo.update(zip(missing, done, strict=True))
        if self.cuts is None:
            self.memo = self.full_memo
        return [self.full_memo[k] for k in keys]

    def _evaluate(self, jobs: list[tuple[Source, Key]], done: int) -> list[dict[str, Any]]:
        total, out = done + len(jobs), []
        if self.executor is None or len(jobs) < 2:
            for i, (text, k) in enumerate(jobs):
                self._tick(done + i, total)
                out.append(evaluate_candidate(text, self.name, k, self.params))
        else:
            futures = [
                self.executor.submit(evaluate_candidate, text, self.name, k, self.params)
                for text, k in jobs
            ]
            for i, future in enumerate(futures):
                self._tick(done + i, total)
                out.append(future.result())
        self._tick(total, total)
        return out

    def _tick(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress.update(done, total, "evaluating candidates")


@dataclass(frozen=True, slots=True)
class Cuts:
    """A stack of `depth` repeated layers cut to 1, 2 and 3 of them: texts[k], whose arguments
    are the whole module's arguments args[k]."""

    depth: int
    texts: dict[int, str]
    args: dict[int, tuple[int, ...]]

    def key(self, k: int, key: Key) -> Key:
        """A candidate's shardings (of the whole module's arguments) on the cut to k layers."""
        position = {a: i for i, a in enumerate(self.args[k])}
        return tuple((position[i], s) for i, s in key if i in position)


def stack_cuts(base: Module, text: Source, name: str) -> Cuts | None:
    """The module (`text`, loaded as `base`) cut to 1, 2 and 3 of its repeated layers; None
    when it is not such a stack, or too shallow for the cuts to pay (`stack.py`).

    The whole module is cut once, to `MIN_DEPTH` layers, and that small module is cut to 1,
    2 and 3 (a cut to k layers is the k-layer program, so cutting a cut gives the same text);
    each cut copies only the ops it keeps (`cut_copy`): no clone of the whole module (three
    of them were 2.25 of 10.7 s at 96 GPT layers)."""
    found = find_stack(base)
    if found is None or found.depth < MIN_DEPTH:
        return None
    if found.depth > MIN_DEPTH:
        small = _cut_text(text, name, found, MIN_DEPTH)
        if small is not None:
            small_text, small_args = small
            small_found = find_stack(_master(small_text, name))
            if small_found is not None and small_found.depth == MIN_DEPTH:
                cuts = _cuts_of(small_text, name, small_found, small_args)
                if cuts is not None:
                    return Cuts(found.depth, *cuts)
    cuts = _cuts_of(text, name, found, tuple(range(len(found.arg_layer))))
    return None if cuts is None else Cuts(found.depth, *cuts)


def _cuts_of(
    text: Source, name: str, found: Stack, arg_index: tuple[int, ...]
) -> tuple[dict[int, str], dict[int, tuple[int, ...]]] | None:
    """The cuts of `text` to 1, 2 and 3 layers, with the kept arguments as indices of the
    whole module's (`arg_index[i]`: the whole module's index of `text`'s argument i)."""
    texts, args = {}, {}
    for k in (CUT - 1, CUT, CUT + 1):
        got = _cut_text(text, name, found, k)
        if got is None:
            return None
        texts[k], kept = got
        args[k] = tuple(arg_index[i] for i in kept)
    return texts, args


def _cut_text(text: Source, name: str, found: Stack, k: int) -> tuple[str, tuple[int, ...]] | None:
    """`text` cut to `k` layers of the stack `found` in it, and the arguments kept: a copy of
    the kept ops of its master (`cut_copy`), printed."""
    from shardwise.io.generic_text import RESOURCES
    from shardwise.io.mlir import write_text

    master = _master(text, name)
    with gc_paused():
        got = cut_copy(master, found, k)
    if got is None:
        return None
    top, kept = got
    module = Module(top, master.source, master.filename)
    module.allow_unregistered_dialect = master.allow_unregistered_dialect
    module.unregistered_ops = master.unregistered_ops
    if master in RESOURCES:
        RESOURCES[module] = RESOURCES[master]
    try:
        return write_text(module), kept
    finally:
        module.release()  # freed by reference counting, not left to the GC


def make_executor(executor: Any, module: Module) -> tuple[Executor | None, bool]:
    """The executor to use and whether we own it (and must shut it down)."""
    if isinstance(executor, Executor):
        return executor, False
    if executor in ("inline", None) and (executor == "inline" or _is_small(module)):
        return None, False
    if isinstance(executor, str) and executor.startswith("dask://"):
        from shardwise.plan.dask_executor import dask_executor

        return dask_executor(executor.removeprefix("dask://")), True
    if executor not in (None, "processes"):
        raise InputError(f"--executor {executor!r}: expected processes, inline or dask://HOST:PORT")
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    workers = max(1, min(4, os.cpu_count() or 1))
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")), True


def _is_small(module: Module) -> bool:
    """Small modules evaluate faster in-process than a process pool starts."""
    return (os.cpu_count() or 1) <= 2 or _is_small_module(module)


def _is_small_module(module: Module) -> bool:
    # Counted up to the bound only: a 96-layer GPT has 36k ops (a whole walk, ~15 ms).
    return next(itertools.islice(module.walk(), 3000, None), None) is None


def make_helper(
    executor: Any, pool: Executor | None, module: Module, text: Source, name: str
) -> HelperProcess | None:
    """A helper process for `text` (loaded as `module`, the master) where the candidates are
    evaluated in this process only for want of cores (`executor` None, no pool chosen: a
    machine of two), the module is not small, and a fork is safe; else None."""
    if executor is not None or pool is not None or (os.cpu_count() or 1) < 2:
        return None
    if not HelperProcess.possible() or _is_small_module(module):
        return None
    try:
        return HelperProcess((text, name))
    except OSError:  # no fork now (out of memory, out of processes): none
        return None


def cuts_job(state: tuple[Source, str]) -> Cuts | None:
    """`stack_cuts` of the text's master, in the helper process."""
    text, name = state
    with gc_paused():
        return stack_cuts(_master(text, name), text, name)


_PREPARED: dict[tuple[Source, str], Module] = {}  # in the helper: a copy of the master to cost


def prepare_job(state: tuple[Source, str]) -> None:
    """A copy of the text's master, made in the helper while it waits for `whole_module_job`
    (0.15 s at 96 GPT layers off the time the planner waits for that), taken through Shardy's
    import pipeline already (0.14 s more): the shardings the planner writes (of the module's
    mesh, by name, without axes of size 1 or priorities) are none of what those passes read
    or rewrite (inlined meshes, size-one axes, callees' shardings, data-flow ops), so writing
    them after the import is writing them before."""
    from shardwise.imports.import_pipeline import import_pipeline

    with gc_paused():
        module = _fresh_copy(*state)
        import_pipeline(module)
        _PREPARED[state] = module


def printed_job(state: tuple[Source, str]) -> str:
    """`write_text` of the text's master, in the helper process."""
    from shardwise.io.mlir import write_text

    with gc_paused():
        return write_text(_master(*state))


_SPENT: list[Module] = []  # in the helper: the module `whole_module_job` costed last


def whole_module_job(state: tuple[Source, str], key: Key, params: CostParams) -> dict[str, Any]:
    """The whole module's evaluation of `key`, in the helper process: `evaluate_candidate`
    on the copy `prepare_job` made, if there is one. The module is freed when the next one
    is costed, not before the reply (0.05 s at 96 GPT layers, on the planner's critical
    path): the planner rarely sends another, and kills the helper when done."""
    with gc_paused():
        while _SPENT:
            _SPENT.pop().release()
        module = _PREPARED.pop(state, None)
        if module is None:
            return _cost_of(_fresh_copy(*state), key, params)
        _SPENT.append(module)
        with releasing_erased():
            return _estimate_with(module, key, params, imported=True)

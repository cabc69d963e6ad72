"""The fuzzer's own machinery: deterministic generation, printing, shrinking, the CLI."""

from __future__ import annotations

import pytest

from shardwise.fuzz import cli, runner
from shardwise.fuzz.constructs import CONSTRUCT_KINDS
from shardwise.fuzz.generator import OP_KINDS, generate_module, generate_program
from shardwise.fuzz.program import AxisSpec, DimSpec, ShardingSpec, print_program
from shardwise.fuzz.runner import compare_module, run_ours
from shardwise.fuzz.shrink import shrink_program
from shardwise.fuzz.worker import ReferenceOutcome, split_passes
from shardwise.io.reference import run_pass


def test_generation_is_deterministic() -> None:
    assert generate_module("seed-1") == generate_module("seed-1")
    assert generate_module("seed-1") != generate_module("seed-2")


def test_generator_covers_every_op_kind() -> None:
    kinds = {op.kind for i in range(150) for op in generate_program(f"cover-{i}").ops}
    assert set(OP_KINDS) <= kinds


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        (ShardingSpec("mesh", (DimSpec(),)), "#sdy.sharding<@mesh, [{}]>"),
        (
            ShardingSpec(
                "m",
                (DimSpec((AxisSpec("x", 2, 2), AxisSpec("y")), False, 1), DimSpec(closed=False)),
                (AxisSpec("z"),),
            ),
            '#sdy.sharding<@m, [{"x":(2)2, "y", ?}p1, {?}], replicated={"z"}>',
        ),
    ],
    ids=["closed-empty", "sub-axis-open-priority-replicated"],
)
def test_sharding_text(spec: ShardingSpec, text: str) -> None:
    assert str(spec) == text


def test_shrink_keeps_the_property_and_gets_small() -> None:
    prog = next(
        p
        for p in (generate_program(f"shrink-{i}") for i in range(50))
        if len(p.ops) > 8 and any(op.kind == "dot_general" for op in p.ops)
    )

    def has_dot(candidate) -> bool:
        return any(op.kind == "dot_general" for op in candidate.ops)

    small = shrink_program(prog, has_dot)
    assert has_dot(small)
    assert [op.kind for op in small.ops if op.kind != "constant"] == ["dot_general"]
    assert all(a.sharding is None for a in small.args)
    assert "dot_general" in print_program(small)


SMALL = """sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


@pytest.mark.parametrize(
    "name",
    [
        "sdy-basic-propagate",
        "sdy-aggressive-propagate{propagation-strategy=basic conservative-propagation=true}",
        "sdy-propagation-pipeline",
        "sdy-insert-explicit-reshards{enable-full-version=true}",
    ],
    ids=["plain", "options", "pipeline", "reshards"],
)
def test_any_registered_pass_runs_on_our_side(name: str) -> None:
    ok, text = run_ours(SMALL, name)
    assert ok, text
    assert text == run_pass(SMALL, name)


def test_unknown_pass_is_reported_not_raised() -> None:
    ok, text = run_ours(SMALL, "sdy-no-such-pass")
    assert not ok and "unknown pass" in text


def test_cli_zero_modules_prints_a_summary(capsys) -> None:
    assert cli.main(["--seed", "1", "--count", "0"]) == 0
    out = capsys.readouterr().out
    assert "modules: 0" in out
    assert "reference crashes" in out


def test_cli_rejects_bad_counts(capsys) -> None:
    assert cli.main(["--count", "-1"]) == 2
    assert "--count" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("spec", "passes"),
    [
        ("sdy-basic-propagate", ["sdy-basic-propagate"]),
        (
            "sdy-propagation-pipeline,sdy-reshard-to-collectives",
            ["sdy-propagation-pipeline", "sdy-reshard-to-collectives"],
        ),
        (
            "sdy-aggressive-propagate{propagation-strategy=basic,conservative-propagation=true}, "
            "sdy-insert-explicit-reshards",
            [
                "sdy-aggressive-propagate{propagation-strategy=basic,conservative-propagation=true}",
                "sdy-insert-explicit-reshards",
            ],
        ),
    ],
    ids=["one", "chain", "commas-in-options"],
)
def test_split_passes(spec: str, passes: list[str]) -> None:
    assert split_passes(spec) == passes


CONSTRUCT_TEXT = {
    "case": '"stablehlo.case"(',
    "optimization_barrier": "stablehlo.optimization_barrier",
    "call": "func.call @",
    "sharding_group": "group_id=",
    "manual_computation": "manual_axes={",
    "reshard": "sdy.reshard %",
}


@pytest.mark.parametrize("kind", CONSTRUCT_KINDS)
def test_each_construct_is_generated_and_printed(kind: str) -> None:
    prog = next(p for p in (generate_program(f"construct-{i}") for i in range(60)) if _has(p, kind))
    text = print_program(prog)
    assert CONSTRUCT_TEXT[kind] in text
    run_pass(text, None)  # the reference parses and verifies it


def _has(prog, kind: str) -> bool:
    return any(op.kind == kind for op in prog.ops)


def test_shrinking_rewires_values_a_case_branch_captures() -> None:
    prog = next(
        p
        for p in (generate_program(f"shrink-case-{i}") for i in range(80))
        if _has(p, "case") and len(p.ops) > 6
    )

    def has_case(candidate) -> bool:
        return _has(candidate, "case")

    small = shrink_program(prog, has_case)
    assert [op.kind for op in small.ops if op.kind != "constant"] == ["case"]
    assert not small.funcs
    run_pass(print_program(small), None)  # every captured value is still defined


# -- nesting: constructs inside manual computation bodies and callees ----------------------------

NESTED_FORMS = [
    ("manual_computation", "call"),  # a jit inside a shard_map
    ("manual_computation", "case"),  # lax.cond inside a shard_map
    ("manual_computation", "sharding_group"),  # shard_alike inside a shard_map
    ("callee", "manual_computation"),  # a shard_map inside a jitted function
    ("callee", "sharding_group"),
    ("callee", "call"),  # nested jit
]


def _nested(prog) -> set[tuple[str, str]]:
    """(container, kind) of every op in a manual computation body or a callee."""
    found: set[tuple[str, str]] = set()

    def walk(ops, container: str | None) -> None:
        for op in ops:
            if container:
                found.add((container, op.kind))
            if op.kind == "manual_computation":
                walk(op.attrs["body"].ops, "manual_computation")

    walk(prog.ops, None)
    for f in prog.funcs:
        walk(f.ops, "callee")
    return found


@pytest.mark.parametrize("form", NESTED_FORMS, ids=["/".join(f) for f in NESTED_FORMS])
def test_each_nested_form_is_generated_and_accepted(form: tuple[str, str]) -> None:
    prog = next(
        p for p in (generate_program(f"nested-{i}") for i in range(200)) if form in _nested(p)
    )
    run_pass(print_program(prog), None)  # the reference parses and verifies it


def _manual_scopes(prog):
    """(body ops, manual axes) of every manual computation, also inside callees."""
    out = []

    def walk(ops, manual: frozenset[str]) -> None:
        for op in ops:
            if op.kind == "manual_computation":
                inner = manual | frozenset(op.attrs["manual_axes"])
                out.append((op.attrs["body"].ops, inner))
                walk(op.attrs["body"].ops, inner)

    for ops in [prog.ops] + [f.ops for f in prog.funcs]:
        walk(ops, frozenset())
    return out


def _group_scopes(prog) -> dict[int, set[int]]:
    """group id -> the bodies (by id) holding its members."""
    scopes: dict[int, set[int]] = {}

    def walk(ops, scope: int) -> None:
        for op in ops:
            if op.kind == "sharding_group":
                scopes.setdefault(op.attrs["group"], set()).add(scope)
            for body in op.attrs.get("branches", []) + [op.attrs.get("body")]:
                if body is not None and not isinstance(body, list):
                    walk(body.ops, id(body))

    walk(prog.ops, id(prog))
    for f in prog.funcs:
        walk(f.ops, id(f))
    return scopes


def test_group_ids_never_span_bodies_and_callees_avoid_manual_axes() -> None:
    """A sharding group's members sit in one body (ids are unique module-wide); a callee
    called from a manual body never names the body's manual axes."""
    checked_groups = checked_calls = 0
    for i in range(80):
        prog = generate_program(f"nested-{i}")
        for group, scopes in _group_scopes(prog).items():
            assert len(scopes) == 1, (f"nested-{i}", group)
            checked_groups += 1
        funcs = {f.name: f for f in prog.funcs}
        for ops, manual in _manual_scopes(prog):
            for op in (op for op in ops if op.kind == "call"):
                callee = funcs[op.attrs["callee"]]
                shardings = [a.sharding for a in callee.args] + [r.sharding for r in callee.results]
                named = {ax.name for s in shardings if s for d in s.dims for ax in d.axes}
                assert not named & manual, (f"nested-{i}", callee.name, manual)
                checked_calls += 1
    assert checked_groups > 10 and checked_calls > 3


def _manual_computations_in_scope(prog):
    """(manual computation, manual axes around it) of every manual computation, also in a
    callee, which gets the manual axes of every body that calls it (it is inlined there)."""
    around = {f.name: frozenset() for f in prog.funcs}
    found = []

    def walk(ops, manual: frozenset[str]) -> None:
        for op in ops:
            if op.kind == "call":
                around[op.attrs["callee"]] |= manual
            if op.kind == "manual_computation":
                found.append((op, manual))
                walk(op.attrs["body"].ops, manual | frozenset(op.attrs["manual_axes"]))

    before = None
    while before != around:  # a callee may call another: repeat until nothing grows
        before = dict(around)
        found.clear()
        walk(prog.ops, frozenset())
        for f in prog.funcs:
            walk(f.ops, around[f.name])
    return found


def test_nested_manual_computations_avoid_the_parent_manual_axes() -> None:
    """A manual computation in a callee called from a manual body never names the body's
    manual axes in its in/out shardings: after inlining, Shardy rejects the module ("operates
    on axis ... already bound by a parent sdy.manual_computation op"), a wasted fuzz case."""
    nested = 0
    for i in range(600):
        prog = generate_program(f"manual-scope-{i}")
        for op, manual in _manual_computations_in_scope(prog):
            if not manual:
                continue
            nested += 1
            shardings = op.attrs["in_shardings"] + op.attrs["out_shardings"]
            named = {ax.name for s in shardings for d in s.dims for ax in d.axes}
            assert not named & manual, (f"manual-scope-{i}", op.name, sorted(named & manual))
    assert nested >= 5  # about 1 module in 60 has one


def test_unreduced_axes_only_where_the_reference_survives_them() -> None:
    """Shardy 0.10.2 aborts on unreduced axes with two meshes, on a sharding-group member, and
    on a reducing op whose own result is unreduced: the generator avoids those inputs but
    keeps unreduced axes in some modules."""
    with_unreduced = 0
    for i in range(120):
        prog = generate_program(f"unreduced-{i}")
        text = print_program(prog)
        if "unreduced=" not in text:
            continue
        with_unreduced += 1
        assert len(prog.meshes) == 1 and "group_id=" not in text, f"unreduced-{i}"
        for ops in [prog.ops] + [f.ops for f in prog.funcs]:
            for op in ops:
                if op.kind in ("dot_general", "reduce", "scatter") and op.sharding is not None:
                    assert not op.sharding.unreduced, f"unreduced-{i}"
    assert 10 < with_unreduced < 60


def test_shrinking_reaches_into_manual_computation_bodies() -> None:
    def body_ops(p) -> int:
        return sum(len(op.attrs["body"].ops) for op in p.ops if op.kind == "manual_computation")

    prog = next(
        p
        for p in (generate_program(f"shrink-mc-{i}") for i in range(200))
        if body_ops(p) >= 4 and any(op.kind == "call" for op in _body_ops_of(p))
    )

    def has_manual(candidate) -> bool:
        return _has(candidate, "manual_computation")

    small = shrink_program(prog, has_manual)
    assert body_ops(small) == 0
    assert not small.funcs  # the callee called only from the body went with its call
    run_pass(print_program(small), None)


def _body_ops_of(prog):
    return [i for op in prog.ops if op.kind == "manual_computation" for i in op.attrs["body"].ops]


def test_dead_region_ops_carry_no_priorities() -> None:
    """Shardy 0.10.2's user-priority pass aborts on a prioritized op that reaches no result,
    also one inside a dead case or manual computation (shrunk from seed 516-223-0)."""
    from shardwise.fuzz.program import op_uses
    from shardwise.fuzz.shrink import _nested_shardings

    dead_regions = 0
    for i in range(150):
        prog = generate_program(f"dead-{i}")
        live = {r.value for r in prog.results}
        for op in reversed(prog.ops):
            names = [op.name] + [n for n, _ in op.attrs.get("extra", ())]
            if op.kind == "sharding_group" or any(n in live for n in names):
                live.update(op_uses(op))
                continue
            if op.kind in ("case", "manual_computation"):
                dead_regions += 1
            for s in _nested_shardings(op):
                assert all(d.priority is None for d in s.dims), (f"dead-{i}", op.name)
    assert dead_regions > 0


class _RejectingReference:
    """A reference that parses every module and fails (a verifier error) on every pass."""

    def run(self, text: str, passes: list[str]) -> ReferenceOutcome:
        error = "'sdy.manual_computation' op operates on axis \"z\" which is already bound"
        return ReferenceOutcome(True, False, "", ((False, error),) * len(passes))


@pytest.mark.parametrize(
    ("ours", "status"),
    [
        ((False, "VerifyError: fuzz.mlir:3:8: error: ...", True), "match"),
        ((False, "KeyError: 'x'", False), "diverge"),
        ((True, "module {\n}\n", True), "diverge"),
    ],
    ids=["both-reject", "ours-python-error", "ours-accepts"],
)
def test_a_reference_rejection_matches_only_our_clear_error(
    monkeypatch: pytest.MonkeyPatch, ours: tuple[bool, str, bool], status: str
) -> None:
    monkeypatch.setattr(runner, "_run_ours_checked", lambda text, pass_name: ours)
    _, got = compare_module(_RejectingReference(), "module {\n}\n", ["sdy-basic-propagate"])
    assert got == [status]


def test_divergence_file_names_stay_short_for_long_chains() -> None:
    from shardwise.fuzz.runner import _slug

    chain = ",".join(["sdy-propagation-pipeline", "sdy-insert-explicit-reshards"] * 10)
    slug = _slug(chain)
    assert len(slug) <= 80 and slug.startswith("propagation-pipeline-sdy-insert")
    assert slug != _slug(chain + ",symbol-dce")  # the hash tells chains apart
    assert _slug("sdy-basic-propagate") == "basic-propagate"


# A gather of i32 indices into a dim sharded on "z" and sliced to size 1: the reference's
# global-to-local does not crash on it every time, but writes index bounds read from
# uninitialized memory; ours refuses it (`ReferenceDefectError`), which the campaign counts
# apart from divergences (fuzz seed 1921-143).
_GATHER_I32 = """sdy.mesh @mesh = <["x"=4, "z"=6]>
func.func @main(%i: tensor<8x1xi32>, %t: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {"x"}]>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>}> : (tensor<6x8xf32>, tensor<8x1xi32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_a_known_reference_defect_is_not_a_divergence() -> None:
    from shardwise.fuzz.runner import compare_module
    from shardwise.fuzz.worker import ReferenceWorker

    chain = (
        "sdy-propagation-pipeline,sdy-insert-explicit-reshards{enable-full-version=true},"
        "sdy-reshard-to-collectives,sdy-convert-global-to-local"
    )
    with ReferenceWorker() as worker:
        ref, status = compare_module(worker, _GATHER_I32, [chain, "sdy-propagation-pipeline"])
    assert status[1] == "match"
    assert status[0] in ("defect", "crash")  # the reference crashes on some runs


def test_the_worker_runs_a_module_on_which_threaded_shardy_hangs() -> None:
    # Module 2099-32-0 (4 functions, a case, manual computations): Shardy's
    # sdy-pad-for-divisibility after the pipeline never returns when the pass manager runs on
    # jax's thread pool; on one thread it stops with a verifier error. The worker runs one
    # thread, so the campaign gets the reference's answer instead of a 60 s timeout "crash".
    from shardwise.fuzz.worker import ReferenceWorker

    text = print_program(generate_program("2099-32-0"))
    with ReferenceWorker(timeout=30) as worker:
        out = worker.run(text, ["sdy-propagation-pipeline,sdy-pad-for-divisibility"])
    assert out.parsed and not out.crashed and out.pass_crashed == (False,)
    ok, error = out.outputs[0]
    assert not ok and "number of output elements (1536)" in error

"""Our HloSharding text against XLA's, exactly.

Two references, both in jaxlib 0.10.2:

* XLA's own sdy -> HLO conversion (``convertToHloSharding``), reached by lowering a module whose
  function arguments carry ``sdy.sharding``s with ``mlir_module_to_xla_computation``: each
  parameter of the printed HLO has ``sharding={...}``. It takes any mesh (no devices needed),
  sub-axes, explicit device ids and unreduced axes. All cases of a test go into one module, so
  one call covers hundreds of shardings.
* JAX's ``NamedSharding._to_xla_hlo_sharding`` on abstract meshes: PartitionSpecs with tuple
  axes, None and unconstrained dims, unreduced axes, manual axis types and logical device ids.

Every case also checks the import: `from_hlo_sharding` of XLA's text exports back to it.
"""

from __future__ import annotations

import random
import re

import pytest

from shardwise.axis import AxisRef
from shardwise.mesh import Mesh, MeshAxis
from shardwise.sharding import DimensionSharding, TensorSharding
from shardwise.syntax import parse_mesh, parse_tensor_sharding
from shardwise.xla.hlo_sharding import from_hlo_sharding, to_hlo_sharding
from tests.property.test_hlo_tiles import random_mesh, random_sharding

jax = pytest.importorskip("jax")

# -- the XLA reference ------------------------------------------------------------------------


def _balanced(text: str, start: int) -> str:
    """The ``{...}`` group starting at `start` (HloSharding text nests braces)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start : i + 1]
    raise AssertionError(f"unbalanced braces in {text[start:]!r}")


def xla_export(cases: list[tuple[Mesh, TensorSharding]]) -> list[str]:
    """XLA's HloSharding text for each (mesh, sharding): one lowered module per distinct mesh.

    One mesh per module, because XLA's round-trip import first merges meshes of equal device
    count into one (``dedup_meshes``), which aborts on meshes it cannot relate.
    """
    by_mesh: dict[Mesh, list[int]] = {}
    for i, (mesh, _) in enumerate(cases):
        by_mesh.setdefault(mesh, []).append(i)
    result: dict[int, str] = {}
    for mesh, indices in by_mesh.items():
        texts = _xla_export_one_mesh(mesh, [cases[i][1] for i in indices])
        result.update(zip(indices, texts, strict=True))
    return [result[i] for i in range(len(cases))]


def _xla_export_one_mesh(mesh: Mesh, shardings: list[TensorSharding]) -> list[str]:
    from jax._src.lib import _jax

    args = []
    for i, sharding in enumerate(shardings):
        sizes = [max(d.sharded_size(mesh), 1) * 2 for d in sharding.dim_shardings]
        shape = "tensor<" + "".join(f"{s}x" for s in sizes) + "f32>"
        attr = str(TensorSharding("m", *_fields(sharding)))
        args.append(f"%arg{i}: {shape} {{sdy.sharding = {attr}}}")
    text = f"sdy.mesh @m = {mesh.body_str()}\nfunc.func @main({', '.join(args)}) {{ return }}\n"
    hlo = _jax.mlir.mlir_module_to_xla_computation(
        text, use_tuple_args=False, return_tuple=False
    ).as_hlo_text()
    found: dict[int, str] = {}
    for m in re.finditer(r"parameter\((\d+)\)(, sharding=)?", hlo):
        found[int(m.group(1))] = _balanced(hlo, m.end()) if m.group(2) else "{replicated}"
    return [found[i] for i in range(len(shardings))]


def _fields(s: TensorSharding) -> tuple:
    return (s.dim_shardings, s.replicated_axes, s.unreduced_axes, s.reduction_op)


def _check_all(cases: list[tuple[Mesh, TensorSharding]]) -> None:
    expected = xla_export(cases)
    failures = []
    for (mesh, sharding), want in zip(cases, expected, strict=True):
        got = to_hlo_sharding(sharding, mesh)
        back = to_hlo_sharding(from_hlo_sharding(want, mesh, sharding.rank), mesh)
        if got != want or back != want:
            failures.append(f"{mesh.body_str()} {sharding}: xla {want}, ours {got}, import {back}")
    assert not failures, "\n".join(failures[:20])


# -- hand-written cases, in Shardy notation -----------------------------------------------------

MESHES = {
    "x2y4": '<["x"=2, "y"=4]>',
    "x2y4_rev": '<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>',
    "x2y4_perm": '<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>',
    "a8": '<["a"=8]>',
    "x2y2z2": '<["x"=2, "y"=2, "z"=2]>',
    "x3y4z1": '<["x"=3, "y"=4, "z"=1]>',
    "a2b3c4d2": '<["a"=2, "b"=3, "c"=4, "d"=2]>',
    "empty": "<[]>",
    "maximal": "<[], device_ids=[5]>",
}

HAND_CASES = [
    ("x2y4", '[{"x"}, {}]'),
    ("x2y4", '[{"y"}, {"x"}]'),
    ("x2y4", '[{"y", "x"}]'),
    ("x2y4", '[{}, {"y"}]'),
    ("x2y4", "[{}, {}]"),
    ("x2y4", "[]"),
    ("x2y4", '[{"y":(1)2}, {"x"}]'),
    ("x2y4", '[{"x", "y":(1)2}, {}]'),
    ("x2y4", '[{"y":(2)2}, {}], unreduced={"x"}'),
    ("x2y4", '[{}], unreduced={"x", "y"}'),
    ("x2y4", '[{"x"}], unreduced={"y"}'),
    ("x2y4", '[{"x"}], replicated={"y"}'),
    ("x2y4_rev", '[{"y"}, {}]'),
    ("x2y4_rev", '[{"x"}, {"y"}]'),
    ("x2y4_rev", '[{"y":(2)2}], unreduced={"x"}'),
    ("x2y4_perm", '[{"y", "x"}]'),
    ("x2y4_perm", "[{}]"),
    ("a8", '[{"a":(1)2}, {"a":(2)4}]'),
    ("a8", '[{"a":(2)2}, {"a":(1)2}]'),
    ("a8", '[{"a":(4)2}]'),
    ("x2y2z2", '[{"z", "x"}, {}]'),
    ("x2y2z2", '[{"y"}, {"z"}, {"x"}]'),
    ("x2y2z2", '[{}], unreduced={"y"}'),
    ("x3y4z1", '[{"y":(2)2, "x"}, {"z"}]'),
    ("x3y4z1", '[{"z"}]'),
    ("x3y4z1", '[{}], unreduced={"z"}'),
    ("a2b3c4d2", '[{"c":(1)2, "a"}, {"d", "b"}]'),
    ("a2b3c4d2", '[{"c":(2)2}, {}], unreduced={"b"}'),
    ("empty", "[{}, {}]"),
    ("maximal", "[]"),
]


def _hand_case(mesh_key: str, body: str) -> tuple[Mesh, TensorSharding]:
    return parse_mesh(f"#sdy.mesh{MESHES[mesh_key]}"), parse_tensor_sharding(
        f"#sdy.sharding<@m, {body}>"
    )


def test_hand_cases_match_xla() -> None:
    _check_all([_hand_case(m, body) for m, body in HAND_CASES])


@pytest.mark.parametrize(
    ("mesh_key", "body", "expected"),
    [
        (
            "x2y4",
            '[{"y":(1)2}, {"x"}]',
            "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
        ),
        ("x2y4_rev", '[{"y"}, {}]', "{devices=[4,1,2]3,7,2,6,1,5,0,4 last_tile_dim_replicate}"),
        (
            "x2y4",
            '[{"y":(2)2}, {}], unreduced={"x"}',
            "{devices=[2,1,2,2]<=[4,2]T(1,0) last_tile_dims={unreduced, replicated}}",
        ),
        ("maximal", "[]", "{maximal device=5}"),
    ],
    ids=["sub_axis", "device_ids", "unreduced", "maximal"],
)
def test_pinned_xla_texts(mesh_key: str, body: str, expected: str) -> None:
    """A few XLA outputs written down, so a reference change shows up as a readable diff."""
    mesh, sharding = _hand_case(mesh_key, body)
    assert xla_export([(mesh, sharding)]) == [expected]
    assert to_hlo_sharding(sharding, mesh) == expected


# -- random cases: meshes of 1-4 axes, sub-axes, device orders, up to 64 devices ---------------


@pytest.mark.parametrize("seed", range(3))
def test_random_shardings_match_xla(seed: int) -> None:
    rng = random.Random(seed)
    cases = []
    for _ in range(40):
        mesh = random_mesh(rng)
        cases.extend((mesh, random_sharding(mesh, rng)) for _ in range(8))
    _check_all(cases)


# -- JAX NamedSharding: PartitionSpecs, manual axes, logical device ids ---------------------------


def _jax_case(sizes, names, spec, manual=(), ids=None):
    from jax.sharding import AbstractMesh, AxisType, NamedSharding

    # Unconstrained dims need Auto axes; unreduced axes must be Explicit.
    types = tuple(
        AxisType.Manual
        if n in manual
        else AxisType.Explicit
        if n in spec.unreduced
        else AxisType.Auto
        for n in names
    )
    mesh = AbstractMesh(tuple(sizes), tuple(names), axis_types=types)
    named = NamedSharding(mesh, spec, _logical_device_ids=ids)
    ndim = len(spec.partitions) + 1
    return str(named._to_xla_hlo_sharding(ndim)), ndim


def _ours_for_spec(sizes, names, spec, manual=(), ids=None) -> tuple[str, str]:
    """Our export of the spec's sdy sharding, and the export of our import of JAX's text."""
    from jax.sharding import PartitionSpec

    mesh = Mesh(tuple(MeshAxis(n, s) for n, s in zip(names, sizes, strict=True)), ids or ())
    dims = []
    for entry in (*spec.partitions, None):
        if entry is None or entry is PartitionSpec.UNCONSTRAINED:
            dims.append(DimensionSharding(is_closed=entry is None))
            continue
        entry = entry if isinstance(entry, tuple) else (entry,)
        dims.append(DimensionSharding(tuple(AxisRef(a) for a in entry)))
    unreduced = tuple(AxisRef(n) for n in names if n in spec.unreduced)
    sharding = TensorSharding("m", tuple(dims), unreduced_axes=unreduced)
    manual_axes = tuple(n for n in names if n in manual)
    want, ndim = _jax_case(sizes, names, spec, manual, ids)
    imported = from_hlo_sharding(want, mesh, ndim, manual_axes)
    return to_hlo_sharding(sharding, mesh, manual_axes), to_hlo_sharding(
        imported, mesh, manual_axes
    )


def _spec_cases():
    from jax.sharding import PartitionSpec as P

    U = P.UNCONSTRAINED
    return [
        ((2, 4), ("x", "y"), P("x"), (), None),
        ((2, 4), ("x", "y"), P(("y", "x")), (), None),
        ((2, 4), ("x", "y"), P(None, "y"), (), None),
        ((2, 4), ("x", "y"), P(U, "x"), (), None),
        ((2, 4), ("x", "y"), P("y", unreduced={"x"}), (), None),
        ((2, 4), ("x", "y"), P(unreduced={"x", "y"}), (), None),
        ((2, 2, 2), ("x", "y", "z"), P("y"), ("x",), None),
        ((2, 2, 2), ("x", "y", "z"), P(), ("x",), None),
        ((2, 2, 2), ("x", "y", "z"), P("y", "z"), ("x",), None),
        ((2, 2, 2), ("x", "y", "z"), P("z"), ("x", "y"), None),
        ((2, 2, 2), ("x", "y", "z"), P(), ("x", "y", "z"), None),
        ((2, 2, 2), ("x", "y", "z"), P("y"), (), (7, 6, 5, 4, 3, 2, 1, 0)),
        ((2, 2, 2), ("x", "y", "z"), P(("z", "x")), (), (0, 4, 1, 5, 2, 6, 3, 7)),
        ((2, 2, 2), ("x", "y", "z"), P("y"), ("z",), (3, 1, 2, 0, 7, 5, 6, 4)),
        ((4, 4, 4), ("a", "b", "c"), P(("c", "a"), "b"), (), None),
        ((4, 4, 4), ("a", "b", "c"), P("c"), ("a",), None),
        ((3, 1, 4), ("a", "b", "c"), P("b", "c"), (), None),
        ((2, 3, 4, 2), ("a", "b", "c", "d"), P(("d", "b"), None, "a"), (), None),
        ((2, 3, 4, 2), ("a", "b", "c", "d"), P("c", unreduced={"a", "d"}), (), None),
        ((8, 16), ("data", "model"), P("model", "data"), (), None),
    ]


def test_named_sharding_specs_match_jax() -> None:
    failures = []
    for sizes, names, spec, manual, ids in _spec_cases():
        want, _ = _jax_case(sizes, names, spec, manual, ids)
        got, back = _ours_for_spec(sizes, names, spec, manual, ids)
        if got != want or back != want:
            failures.append(f"{sizes} {names} {spec} {manual=} {ids=}: {want} vs {got}, {back}")
    assert not failures, "\n".join(failures)


def test_xla_parses_our_texts_unchanged() -> None:
    """XLA's own parser and printer leave every text we produce as it is (it is canonical)."""
    from jax._src.lib import xla_client as xc

    rng = random.Random(7)
    for _ in range(200):
        mesh = random_mesh(rng)
        text = to_hlo_sharding(random_sharding(mesh, rng), mesh)
        assert str(xc.HloSharding.from_string(text)) == text


# -- replica groups: XLA's parser keeps our iota text and expands it to our lists -------------


def _xla_replica_groups_texts(iotas: list[str]) -> list[str]:
    """Parse and print an HLO module with one all-reduce per iota replica-group text."""
    import jax._src.lib as jaxlib

    lines = [
        f"  r{i} = f32[8] all-reduce(p), replica_groups={t}, to_apply=add"
        for i, t in enumerate(iotas)
    ]
    hlo = (
        "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = f32[] add(a, b)\n}\n\nENTRY main {\n  p = f32[8] parameter(0)\n"
        + "\n".join(lines)
        + f"\n  ROOT t = tuple({', '.join(f'r{i}' for i in range(len(iotas)))})\n}}\n"
    )
    printed = jaxlib.hlo.hlo_module_from_text(hlo).to_string()
    return re.findall(r"all-reduce\(%p\), replica_groups=(\S+),", printed)


def test_replica_group_iota_texts_match_xla() -> None:
    from jax._src.lib import xla_client as xc

    from shardwise.xla.replica_groups import replica_groups
    from tests.property.test_hlo_tiles import random_pieces

    rng = random.Random(11)
    results = []
    while len(results) < 60:
        mesh = random_mesh(rng)
        if mesh.device_ids:
            continue
        axes = [p for p in random_pieces(mesh, rng) if rng.random() < 0.5]
        rng.shuffle(axes)
        results.append(replica_groups(mesh, axes))
    iotas = [r.iota for r in results]
    assert _xla_replica_groups_texts(iotas) == iotas
    for result in results:
        expanded = xc.HloSharding.from_string("{devices=" + result.iota + "}")
        assert expanded.tile_assignment_devices() == [d for g in result.groups for d in g]

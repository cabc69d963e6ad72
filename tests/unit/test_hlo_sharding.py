"""Unit rows for the HloSharding bridge, in Shardy notation.

Expected HloSharding texts were produced by XLA (jaxlib 0.10.2: its sdy export, or JAX's
NamedSharding for manual axes) and written down here; `tests/differential` re-derives them.
"""

from __future__ import annotations

import json

import pytest

from shardwise.axis import AxisRef, SubAxisInfo
from shardwise.errors import ParseError, UnsupportedError, VerifyError
from shardwise.mesh import Mesh
from shardwise.syntax import parse_axis_ref, parse_mesh, parse_tensor_sharding
from shardwise.xla.hlo_sharding import (
    from_hlo_sharding,
    ordered_axis_pieces,
    parse_hlo_sharding,
    to_hlo_sharding,
    tuple_sharding_text,
)
from shardwise.xla.replica_groups import replica_groups
from shardwise.xla.tile_assignment import canonical_iota, iota_values, transpose_flat

MESHES = {
    "x2y4": '<["x"=2, "y"=4]>',
    "x2y4_rev": '<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>',
    "a8": '<["a"=8]>',
    "x2y2z2": '<["x"=2, "y"=2, "z"=2]>',
    "a1": '<["a"=1]>',
    "empty": "<[]>",
    "maximal": "<[], device_ids=[5]>",
}


def mesh_of(key: str) -> Mesh:
    return parse_mesh(f"#sdy.mesh{MESHES[key]}")


def sharding_of(body: str):
    return parse_tensor_sharding(f"#sdy.sharding<@m, {body}>")


# -- tile assignments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reshape", "perm", "expected"),
    [
        ([3, 4, 5], [0, 1, 2], ((60,), (0,))),
        ([3, 4, 5], [2, 1, 0], ((3, 4, 5), (2, 1, 0))),
        ([3, 4, 5], [1, 2, 0], ((3, 20), (1, 0))),
        ([3, 4, 5], [1, 0, 2], ((3, 4, 5), (1, 0, 2))),
        ([3, 4, 5], [2, 0, 1], ((12, 5), (1, 0))),
        ([1, 3, 1, 4, 1, 5], [4, 3, 2, 5, 1, 0], ((3, 20), (1, 0))),
        ([1, 1], [1, 0], ((1,), (0,))),
    ],
    ids=["merge_all", "reverse", "merge_tail", "swap_head", "merge_head", "drop_ones", "all_ones"],
)
def test_canonical_iota(reshape, perm, expected) -> None:
    """Rows from the comment on XLA's ``CanonicalizeIotaDims``."""
    assert canonical_iota(reshape, perm) == expected


def test_iota_values_and_transpose() -> None:
    assert iota_values([4, 2], [1, 0]) == [0, 2, 4, 6, 1, 3, 5, 7]
    assert transpose_flat([9, 8, 7, 6, 5, 4], [2, 3], [1, 0]) == [9, 6, 8, 5, 7, 4]


# -- export ----------------------------------------------------------------------------------------

EXPORT_ROWS = [
    ("x2y4", '[{"x"}, {}]', "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
    ("x2y4", '[{"y"}, {"x"}]', "{devices=[4,2]<=[2,4]T(1,0)}"),
    ("x2y4", '[{"y", "x"}]', "{devices=[8]<=[2,4]T(1,0)}"),
    ("x2y4", '[{"x", "y"}]', "{devices=[8]<=[8]}"),
    ("x2y4", "[{}, {}]", "{replicated}"),
    ("x2y4", '[{}], replicated={"x"}', "{replicated}"),
    ("x2y4", '[{"y":(1)2}, {"x"}]', "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"),
    ("x2y4", '[{"x", "y":(1)2}, {}]', "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"),
    (
        "x2y4",
        '[{"y":(2)2}, {}], unreduced={"x"}',
        "{devices=[2,1,2,2]<=[4,2]T(1,0) last_tile_dims={unreduced, replicated}}",
    ),
    ("x2y4", '[{}], unreduced={"x", "y"}', "{unreduced}"),
    ("x2y4_rev", '[{"y"}, {}]', "{devices=[4,1,2]3,7,2,6,1,5,0,4 last_tile_dim_replicate}"),
    ("x2y4_rev", '[{"x", "y"}]', "{devices=[8]7,6,5,4,3,2,1,0}"),
    ("a8", '[{"a":(1)2}, {"a":(2)4}]', "{devices=[2,4]<=[8]}"),
    (
        "a8",
        '[{"a":(2)2}, {"a":(1)2}]',
        "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
    ),
    ("a1", '[{"a"}]', "{replicated}"),
    ("empty", "[{}]", "{replicated}"),
    ("maximal", "[]", "{maximal device=5}"),
]


@pytest.mark.parametrize(("mesh", "body", "expected"), EXPORT_ROWS, ids=lambda v: str(v)[:30])
def test_to_hlo_sharding(mesh: str, body: str, expected: str) -> None:
    assert to_hlo_sharding(sharding_of(body), mesh_of(mesh)) == expected


@pytest.mark.parametrize(
    ("body", "manual", "expected"),
    [
        (
            '[{"y"}, {}]',
            ("x",),
            "{devices=[2,1,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}",
        ),
        ('[{"y"}, {"z"}]', ("x",), "{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dims={manual}}"),
        ("[{}, {}]", ("x",), "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}"),
        ("[{}, {}]", ("x", "y", "z"), "{manual}"),
    ],
    ids=["manual_replicated", "manual_only", "manual_no_tiles", "all_manual"],
)
def test_to_hlo_sharding_with_manual_axes(
    body: str, manual: tuple[str, ...], expected: str
) -> None:
    assert to_hlo_sharding(sharding_of(body), mesh_of("x2y2z2"), manual) == expected


def test_manual_and_unreduced_together_is_unsupported() -> None:
    with pytest.raises(UnsupportedError, match="both unreduced and manual"):
        to_hlo_sharding(sharding_of('[{}], unreduced={"y"}'), mesh_of("x2y2z2"), ("x",))


def test_unknown_axis_is_an_error() -> None:
    with pytest.raises(VerifyError, match="unknown axis name: 'q'"):
        to_hlo_sharding(sharding_of('[{"q"}]'), mesh_of("x2y4"))


def test_ordered_axis_pieces() -> None:
    mesh = mesh_of("x2y4")
    pieces = ordered_axis_pieces(mesh, [parse_axis_ref('"y":(1)2'), AxisRef("x")])
    assert [str(p) for p in pieces] == ['"x"', '"y":(1)2', '"y":(2)2']


def test_tuple_sharding_text_marks_every_fifth_index() -> None:
    texts = ["{replicated}"] * 6
    assert tuple_sharding_text(texts) == (
        "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, "
        "/*index=5*/{replicated}}"
    )


# -- parsing -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "{replicated}",
        "{manual}",
        "{unreduced}",
        "{maximal device=3}",
        "{devices=[2,2]0,2,1,3}",
        "{devices=[4,2]<=[2,4]T(1,0)}",
        "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
        "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    ],
)
def test_parse_prints_back(text: str) -> None:
    assert str(parse_hlo_sharding(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{devices=[2,2]0,1,2}", "needs 4 device ids, got 3"),
        ("{devices=[2,2]<=[8]}", "inconsistent iota"),
        ("{devices=[2]<=[2] last_tile_dims={partial}}", "unknown subgroup kind"),
        ("{{replicated}, {replicated}}", "tuple shardings"),
        ("{devices=[2]<=[2] last_tile_dims={manual, replicated}}", "more subgroup kinds"),
    ],
    ids=["count", "iota_size", "bad_kind", "tuple", "too_many_kinds"],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_hlo_sharding(text)


# -- import ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mesh", "text", "expected"),
    [
        ("x2y4", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", '[{"x"}, {}]'),
        ("x2y4", "{devices=[4,2]<=[2,4]T(1,0)}", '[{"y"}, {"x"}]'),
        ("x2y4", "{devices=[8,1]<=[8]}", '[{"x", "y"}, {}]'),
        ("x2y4", "{devices=[1,2,4]<=[8] last_tile_dim_replicate}", '[{}, {"x"}]'),
        (
            "x2y4",
            "{devices=[2,2,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}",
            '[{"y":(1)2}, {"x"}]',
        ),
        (
            "x2y4",
            "{devices=[2,1,2,2]<=[4,2]T(1,0) last_tile_dims={unreduced, replicated}}",
            '[{"y":(2)2}, {}], unreduced={"x"}',
        ),
        ("x2y4", "{replicated}", "[{}, {}]"),
        ("x2y4", "{unreduced}", '[{}, {}], unreduced={"x", "y"}'),
        ("x2y4_rev", "{devices=[4,1,2]3,7,2,6,1,5,0,4 last_tile_dim_replicate}", '[{"y"}, {}]'),
        ("x2y4_rev", "{devices=[4,1,2]7,3,6,2,5,1,4,0 last_tile_dim_replicate}", '[{"y"}, {}]'),
        ("a8", "{devices=[2,4]<=[8]}", '[{"a":(1)2}, {"a":(2)4}]'),
        ("a8", "{devices=[4,2]<=[2,4]T(1,0)}", '[{"a":(2)4}, {"a":(1)2}]'),
        ("maximal", "{maximal device=5}", "[{}, {}]"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_from_hlo_sharding(mesh: str, text: str, expected: str) -> None:
    imported = from_hlo_sharding(text, mesh_of(mesh), 2, mesh_ref="m")
    assert str(imported) == str(sharding_of(expected))


def test_from_hlo_sharding_inlines_the_mesh_without_a_ref() -> None:
    sharding = from_hlo_sharding("{devices=[2]<=[2]}", parse_mesh('#sdy.mesh<["x"=2]>'), 1)
    assert str(sharding) == '#sdy.sharding<mesh<["x"=2]>, [{"x"}]>'


def test_from_hlo_sharding_with_manual_axes() -> None:
    text = "{devices=[2,1,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}"
    sharding = from_hlo_sharding(text, mesh_of("x2y2z2"), 2, manual_axes=("x",), mesh_ref="m")
    assert str(sharding) == '#sdy.sharding<@m, [{"y"}, {}]>'
    with pytest.raises(UnsupportedError, match="not the manual axes"):
        from_hlo_sharding(text, mesh_of("x2y2z2"), 2, manual_axes=("z",))


@pytest.mark.parametrize(
    ("mesh", "text", "rank", "message"),
    [
        ("x2y2z2", "{devices=[2,2,2]0,3,1,2,4,7,5,6}", 3, "not expressible"),
        ("x2y4", "{devices=[3]<=[3]}", 1, "not expressible"),
        ("x2y4", "{devices=[2,4]<=[8]}", 1, "tiles 2 dims but the tensor has rank 1"),
        ("x2y4", "{devices=[2,4]0,1,2,3,4,5,6,9}", 2, r"uses devices \[9\]"),
        ("x2y4", "{maximal device=0}", 2, "not expressible"),
        ("x2y4", "{manual}", 2, "not expressible"),
        ("a8", "{devices=[8]0,1,2,3,5,4,6,7}", 1, "not expressible"),
    ],
    ids=["scrambled", "wrong_size", "rank", "foreign_device", "maximal", "manual", "swap"],
)
def test_from_hlo_sharding_errors(mesh: str, text: str, rank: int, message: str) -> None:
    with pytest.raises(UnsupportedError, match=message):
        from_hlo_sharding(text, mesh_of(mesh), rank)


# -- replica groups ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mesh", "axes", "groups", "iota"),
    [
        ("x2y4", ['"y"'], "{{0,1,2,3},{4,5,6,7}}", "[2,4]<=[8]"),
        ("x2y4", ['"x"'], "{{0,4},{1,5},{2,6},{3,7}}", "[4,2]<=[2,4]T(1,0)"),
        ("x2y4", ['"y"', '"x"'], "{{0,4,1,5,2,6,3,7}}", "[1,8]<=[2,4]T(1,0)"),
        ("x2y4", ['"x"', '"y"'], "{{0,1,2,3,4,5,6,7}}", "[1,8]<=[8]"),
        ("x2y4", ['"y":(1)2'], "{{0,2},{1,3},{4,6},{5,7}}", "[4,2]<=[2,2,2]T(0,2,1)"),
        ("x2y4", ['"y":(2)2', '"x"'], "{{0,4,1,5},{2,6,3,7}}", "[2,4]<=[2,4]T(1,0)"),
        ("x2y4", [], "{{0},{1},{2},{3},{4},{5},{6},{7}}", "[8,1]<=[8]"),
        ("x2y4_rev", ['"x"'], "{{7,3},{6,2},{5,1},{4,0}}", None),
    ],
    ids=["y", "x", "y_x", "x_y", "sub_axis", "sub_axis_and_x", "none", "device_ids"],
)
def test_replica_groups(mesh: str, axes: list[str], groups: str, iota: str | None) -> None:
    result = replica_groups(mesh_of(mesh), [parse_axis_ref(a) for a in axes])
    assert result.explicit_text() == groups
    assert result.iota == iota
    assert str(result) == (iota or groups)


def test_replica_groups_accept_names() -> None:
    assert replica_groups(mesh_of("x2y4"), ["x"]).groups == ((0, 4), (1, 5), (2, 6), (3, 7))


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        (['"q"'], "unknown axis name: 'q'"),
        (['"y"', '"y":(1)2'], "overlap"),
        (['"y":(1)3'], "does not divide"),
    ],
    ids=["unknown", "overlap", "indivisible"],
)
def test_replica_group_errors(axes: list[str], message: str) -> None:
    refs = [parse_axis_ref(a) for a in axes]
    with pytest.raises(VerifyError, match=message):
        replica_groups(mesh_of("x2y4"), refs)


def test_sub_axis_info_ordering_in_groups() -> None:
    """ "a":(2)2 then "a":(1)2 on a=8: inside a group the (2)2 digit is the major one."""
    mesh = mesh_of("a8")
    refs = [AxisRef("a", SubAxisInfo(2, 2)), AxisRef("a", SubAxisInfo(1, 2))]
    assert replica_groups(mesh, refs).groups[0] == (0, 4, 2, 6)


# -- whole modules ------------------------------------------------------------------------------------

MODULE = """
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", "y":(1)2}, {}]>]>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_export_module_to_hlo() -> None:
    mlir = pytest.importorskip("shardwise.io.mlir")
    from shardwise.xla.hlo_module import export_module_to_hlo, hlo_sharding_summary

    module = mlir.load_text(MODULE)
    entries = export_module_to_hlo(module)
    assert [(e.value.split(" at ")[0], e.hlo) for e in entries] == [
        ("arg 0", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"),
        ("result 0", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
        ("stablehlo.add #0", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"),
    ]
    text = mlir.write_text(module)
    assert 'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"' in text
    assert 'mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"' in text
    summary = hlo_sharding_summary(module, entries)
    assert json.loads(json.dumps(summary))["values"][0]["sdy"] == (
        '#sdy.sharding<@mesh, [{"x"}, {}]>'
    )


MANUAL_MODULE = """
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%a: tensor<4x8xf32>) {
    %1 = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"y"}]>]>} : tensor<4x8xf32>
    sdy.return %1 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2:2 = "stablehlo.optimization_barrier"(%0, %0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"z"}, {}]>, <@mesh, [{}, {}]>]>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>)
  return %2#0 : tensor<8x8xf32>
}
"""


def test_export_module_manual_axes_and_tuples() -> None:
    """Ops in a manual computation get its manual axes; two results give a tuple sharding."""
    mlir = pytest.importorskip("shardwise.io.mlir")
    from shardwise.xla.hlo_module import HLO_SHARDING_ATTR, export_module_to_hlo

    module = mlir.load_text(MANUAL_MODULE)
    export_module_to_hlo(module)
    ops = {op.name: op for op in module.walk()}
    add = ops["stablehlo.add"].attributes[HLO_SHARDING_ATTR]
    barrier = ops["stablehlo.optimization_barrier"].attributes[HLO_SHARDING_ATTR]
    assert str(add) == (
        '"{devices=[1,2,2,2]<=[2,2,2]T(1,0,2) last_tile_dims={manual, replicated}}"'
    )
    assert (
        str(barrier) == '"{{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}, {replicated}}"'
    )
    assert HLO_SHARDING_ATTR not in ops["sdy.manual_computation"].attributes

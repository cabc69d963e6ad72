"""Table-driven tests of the AxisRef algebra (`shardwise.axis`).

Rows are written in Shardy notation. Most come from the example comments in Shardy's
`ir/attrs.td` (`contains`, `prefixOf`, ..., `merge`) and the cases of `ir/dialect_test.cc`
and `ir/utils_test.cc`; the rest are ours. Mesh-dependent operations use the mesh named in
the test (Shardy's examples assume ``"a"=8`` unless stated).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardwise.axis import (
    AxisRef,
    PrefixStatus,
    SubAxisInfo,
    add_axis_or_merge,
    axes_size,
    axis_set_diff,
    greatest_common_prefix_of_lists,
    is_axis_list_prefix_of,
    lists_overlap,
    prefix_without_overlap_with_list,
    quote_string,
    sort_and_merge_axes,
    truncate_axes_by_removing_overlaps,
)
from shardwise.mesh import Mesh, MeshAxis

_AXIS_RE = re.compile(r'^"(\w+)"(?::\((\d+)\)(\d+))?$')


def ax(text: str) -> AxisRef:
    """``"a"`` or ``"a":(2)4`` -> AxisRef (test-local; the real parser lives in syntax.py)."""
    m = _AXIS_RE.match(text.strip())
    assert m is not None, text
    name, pre, size = m.groups()
    return AxisRef(name) if pre is None else AxisRef(name, SubAxisInfo(int(pre), int(size)))


def axes(text: str) -> list[AxisRef]:
    """``["a", "b":(1)2]`` -> list of AxisRef."""
    inner = text.strip()[1:-1].strip()
    return [ax(t) for t in inner.split(",")] if inner else []


def opt(text: str | None) -> AxisRef | None:
    return None if text is None else ax(text)


def mesh_of(**sizes: int) -> Mesh:
    return Mesh(tuple(MeshAxis(n, s) for n, s in sizes.items()))


MESH_A8 = mesh_of(a=8, b=4, x=8, y=4)
MESH_X16 = mesh_of(x=16, y=4)


# -- printing and order ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a", '"a"'),
        ("a b", '"a b"'),
        ('q"', '"q\\22"'),
        ("b\\s", '"b\\\\s"'),
        ("t\tn\n", '"t\\09n\\0A"'),
        ("é", '"\\C3\\A9"'),
    ],
    ids=["plain", "space", "quote", "backslash", "control", "utf8"],
)
def test_quote_string(name: str, expected: str) -> None:
    assert quote_string(name) == expected


def test_axis_ref_str() -> None:
    assert str(AxisRef("x")) == '"x"'
    assert str(AxisRef("x", SubAxisInfo(2, 4))) == '"x":(2)4'


# (smaller, larger) under Shardy's `AxisRefAttr::operator<` (dialect_test AxisRefAttrCompare).
SORT_ROWS = [
    ('"x"', '"y"'),
    ('"x":(1)4', '"y":(2)4'),
    ('"x"', '"y":(2)4'),
    ('"x":(1)4', '"y"'),
    ('"x":(1)4', '"x":(2)4'),
    ('"x":(1)4', '"x":(1)8'),
    ('"x":(1)4', '"x"'),
    ('"x":(1)4', '"x":(2)2'),
    ('"x"', '"x":(2)2'),
    ('"x":(1)8', '"x"'),
]


@pytest.mark.parametrize(("small", "large"), SORT_ROWS, ids=[f"{a}<{b}" for a, b in SORT_ROWS])
def test_sort_key_order(small: str, large: str) -> None:
    assert ax(small).sort_key() < ax(large).sort_key()
    assert not ax(large).sort_key() < ax(small).sort_key()


def test_mesh_axis_key_uses_declaration_order() -> None:
    mesh = mesh_of(z=4, a=4)
    ordered = sorted([ax('"a"'), ax('"z":(2)2'), ax('"z":(1)2')], key=mesh.axis_key)
    assert [str(a) for a in ordered] == ['"z":(1)2', '"z":(2)2', '"a"']


# -- relations ------------------------------------------------------------------------------

CONTAINS_ROWS = [
    ('"a"', '"a":(2)2', True),
    ('"a":(1)8', '"a":(1)4', True),
    ('"a":(2)16', '"a":(4)2', True),
    ('"a"', '"a"', True),
    ('"a":(2)2', '"a":(2)2', True),
    ('"a":(1)4', '"a":(2)4', False),
    ('"a":(2)4', '"a":(1)2', False),
    ('"a"', '"b":(1)2', False),
    ('"a":(1)8', '"a":(2)2', True),
    ('"a":(2)4', '"a"', False),
    ('"a"', '"b"', False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), CONTAINS_ROWS, ids=[f"{a},{b}" for a, b, _ in CONTAINS_ROWS]
)
def test_contains(a: str, b: str, expected: bool) -> None:
    assert ax(a).contains(ax(b)) is expected
    assert ax(a).strictly_contains(ax(b)) is (expected and a != b)


PREFIX_ROWS = [
    ('"a":(1)2', '"a"', True),
    ('"a":(2)2', '"a":(2)4', True),
    ('"a"', '"a"', True),
    ('"a":(2)4', '"a":(2)4', True),
    ('"a":(1)4', '"a":(1)2', False),
    ('"a":(1)4', '"a":(2)8', False),
    ('"a":(1)2', '"b"', False),
    ('"x":(1)4', '"x"', True),
    ('"x":(2)2', '"x":(2)8', True),
    ('"x":(1)4', '"x":(4)2', False),
    ('"a"', '"a":(1)2', False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), PREFIX_ROWS, ids=[f"{a},{b}" for a, b, _ in PREFIX_ROWS]
)
def test_prefix_of(a: str, b: str, expected: bool) -> None:
    assert ax(a).prefix_of(ax(b)) is expected
    assert ax(a).strict_prefix_of(ax(b)) is (expected and a != b)


SUFFIX_ROWS = [  # mesh "a"=8, "x"=8
    ('"a"', '"a"', True),
    ('"a":(2)4', '"a"', True),
    ('"a":(2)4', '"a":(1)8', True),
    ('"a"', '"b"', False),
    ('"a"', '"a":(2)4', False),
    ('"a":(1)8', '"a":(2)4', False),
    ('"a":(1)2', '"a":(2)4', False),
    ('"a":(1)4', '"a"', False),
    ('"x":(4)2', '"x":(2)4', True),
    ('"x":(2)2', '"x":(1)4', True),
    ('"x":(2)2', '"x"', False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), SUFFIX_ROWS, ids=[f"{a},{b}" for a, b, _ in SUFFIX_ROWS]
)
def test_suffix_of(a: str, b: str, expected: bool) -> None:
    assert ax(a).suffix_of(ax(b), MESH_A8) is expected
    assert ax(a).strict_suffix_of(ax(b), MESH_A8) is (expected and a != b)


OVERLAP_ROWS = [  # (a, b, overlaps, overlap)
    ('"a"', '"a":(2)2', True, '"a":(2)2'),
    ('"a":(2)2', '"a":(2)2', True, '"a":(2)2'),
    ('"a":(1)4', '"a":(2)4', True, '"a":(2)2'),
    ('"a":(2)4', '"a":(1)4', True, '"a":(2)2'),
    ('"a":(1)4', '"a":(1)2', True, '"a":(1)2'),
    ('"a":(2)8', '"a":(4)2', True, '"a":(4)2'),
    ('"a":(1)4', '"a":(4)2', False, None),
    ('"a":(1)2', '"a":(4)2', False, None),
    ('"a":(1)4', '"b":(2)4', False, None),
    ('"a":(1)2', '"a":(1)3', True, None),  # overlap but cannot coexist
    ('"a":(3)2', '"a":(2)3', True, None),
    ('"x"', '"x"', True, '"x"'),
    ('"x"', '"y"', False, None),
    ('"x":(4)4', '"x":(2)4', True, '"x":(4)2'),
    ('"x":(1)4', '"x"', True, '"x":(1)4'),
    ('"x":(4)8', '"x"', True, '"x":(4)8'),
    ('"x":(2)2', '"x":(1)8', True, '"x":(2)2'),
]


@pytest.mark.parametrize(
    ("a", "b", "overlaps", "overlap"), OVERLAP_ROWS, ids=[f"{a},{b}" for a, b, _, _ in OVERLAP_ROWS]
)
def test_overlaps_and_overlap(a: str, b: str, overlaps: bool, overlap: str | None) -> None:
    assert ax(a).overlaps(ax(b)) is overlaps
    assert ax(b).overlaps(ax(a)) is overlaps
    assert ax(a).overlap(ax(b)) == opt(overlap)
    assert ax(b).overlap(ax(a)) == opt(overlap)


COEXIST_ROWS = [
    ('"a"', '"b"', True),
    ('"a"', '"b":(2)2', True),
    ('"a"', '"a"', True),
    ('"a"', '"a":(2)2', True),
    ('"a":(1)2', '"a":(4)2', True),
    ('"a":(1)4', '"a":(2)4', True),
    ('"a":(1)2', '"a":(1)3', False),
    ('"a":(1)2', '"a":(3)2', False),
    ('"a":(1)3', '"a":(2)3', False),
    ('"x":(2)2', '"x":(2)2', True),
    ('"x":(1)2', '"x":(1)4', True),
    ('"x":(1)2', '"x":(2)4', True),
    ('"x":(1)2', '"x":(6)2', True),
    ('"x":(1)4', '"x":(2)2', True),
    ('"x":(2)3', '"x":(3)2', False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), COEXIST_ROWS, ids=[f"{a},{b}" for a, b, _ in COEXIST_ROWS]
)
def test_can_coexist(a: str, b: str, expected: bool) -> None:
    assert ax(a).can_coexist(ax(b)) is expected
    assert ax(b).can_coexist(ax(a)) is expected


# -- constructions --------------------------------------------------------------------------

PREFIX_WITHOUT_OVERLAP_ROWS = [
    ('"a"', '"a":(2)2', '"a":(1)2'),
    ('"a":(1)4', '"a":(2)4', '"a":(1)2'),
    ('"a":(2)8', '"a":(4)2', '"a":(2)2'),
    ('"a":(1)4', '"a":(4)2', '"a":(1)4'),
    ('"a":(1)2', '"a":(4)2', '"a":(1)2'),
    ('"a":(1)4', '"b":(2)4', '"a":(1)4'),
    ('"a":(2)2', '"a":(2)2', None),
    ('"a":(2)4', '"a":(1)4', None),
    ('"a":(1)4', '"a":(1)2', None),
    ('"a":(1)2', '"a":(3)2', None),
    ('"a":(1)3', '"a":(2)3', None),
    ('"x"', '"x"', None),
    ('"x":(2)4', '"x"', None),
    ('"x"', '"x":(2)4', '"x":(1)2'),
    ('"x":(4)2', '"x":(2)8', None),
    ('"x"', '"y"', '"x"'),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    PREFIX_WITHOUT_OVERLAP_ROWS,
    ids=[f"{a}-{b}" for a, b, _ in PREFIX_WITHOUT_OVERLAP_ROWS],
)
def test_prefix_without_overlap(a: str, b: str, expected: str | None) -> None:
    assert ax(a).prefix_without_overlap(ax(b)) == opt(expected)


SUFFIX_WITHOUT_OVERLAP_ROWS = [  # mesh "a"=8 (attrs.td), "x"=16 (dialect_test)
    (MESH_A8, '"a"', '"a":(2)2', '"a":(4)2'),
    (MESH_A8, '"a":(1)4', '"a":(1)2', '"a":(2)2'),
    (MESH_A8, '"a":(2)8', '"a":(4)2', '"a":(8)2'),
    (MESH_A8, '"a":(1)4', '"a":(4)2', '"a":(1)4'),
    (MESH_A8, '"a":(1)2', '"a":(4)2', '"a":(1)2'),
    (MESH_A8, '"a":(1)4', '"b":(2)4', '"a":(1)4'),
    (MESH_A8, '"a":(2)2', '"a":(2)2', None),
    (MESH_A8, '"a":(1)4', '"a":(2)4', None),
    (MESH_A8, '"a":(2)2', '"a":(1)4', None),
    (MESH_A8, '"a":(2)3', '"a":(1)3', None),
    (MESH_A8, '"a":(3)2', '"a":(1)2', None),
    (MESH_X16, '"x"', '"x":(2)4', '"x":(8)2'),
    (MESH_X16, '"x":(2)4', '"x"', None),
    (MESH_X16, '"x":(2)4', '"x":(1)4', '"x":(4)2'),
    (MESH_X16, '"x":(1)4', '"x":(2)2', None),
    (MESH_X16, '"x"', '"x"', None),
]


@pytest.mark.parametrize(
    ("mesh", "a", "b", "expected"),
    SUFFIX_WITHOUT_OVERLAP_ROWS,
    ids=[f"{a}-{b}" for _, a, b, _ in SUFFIX_WITHOUT_OVERLAP_ROWS],
)
def test_suffix_without_overlap(mesh: Mesh, a: str, b: str, expected: str | None) -> None:
    assert ax(a).suffix_without_overlap(ax(b), mesh) == opt(expected)


GCP_ROWS = [
    ('"a"', '"a"', '"a"'),
    ('"a":(1)4', '"a"', '"a":(1)4'),
    ('"a"', '"a":(1)4', '"a":(1)4'),
    ('"a":(1)2', '"a":(1)4', '"a":(1)2'),
    ('"a":(2)8', '"a":(2)4', '"a":(2)4'),
    ('"a"', '"b"', None),
    ('"a":(1)2', '"a":(2)4', None),
    ('"x":(1)2', '"y":(1)2', None),
    ('"x":(2)4', '"x":(2)4', '"x":(2)4'),
]


@pytest.mark.parametrize(("a", "b", "expected"), GCP_ROWS, ids=[f"{a},{b}" for a, b, _ in GCP_ROWS])
def test_greatest_common_prefix(a: str, b: str, expected: str | None) -> None:
    assert ax(a).greatest_common_prefix(ax(b)) == opt(expected)
    assert ax(b).greatest_common_prefix(ax(a)) == opt(expected)


CAN_MERGE_ROWS = [
    ('"a":(2)4', '"a":(8)2', True),
    ('"b":(1)2', '"b":(2)4', True),
    ('"c":(1)2', '"c":(4)2', False),
    ('"d":(2)4', '"d":(1)2', False),
    ('"x":(1)4', '"x":(4)2', True),
    ('"x":(4)2', '"x":(1)4', False),
    ('"x"', '"x"', False),
    ('"x":(1)2', '"x":(1)2', False),
    ('"x"', '"y"', False),
    ('"x":(1)2', '"y":(2)2', False),
    ('"x"', '"x":(4)2', False),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), CAN_MERGE_ROWS, ids=[f"{a},{b}" for a, b, _ in CAN_MERGE_ROWS]
)
def test_can_merge(a: str, b: str, expected: bool) -> None:
    assert ax(a).can_merge(ax(b)) is expected


MERGE_ROWS = [
    (mesh_of(a=16, b=8), '"a":(2)4', '"a":(8)2', '"a":(2)8'),
    (mesh_of(a=16, b=8), '"b":(1)2', '"b":(2)4', '"b"'),
    (mesh_of(x=16), '"x":(1)4', '"x":(4)2', '"x":(1)8'),
    (mesh_of(x=16), '"x":(2)2', '"x":(4)4', '"x":(2)8'),
    (mesh_of(x=16), '"x":(1)8', '"x":(8)2', '"x"'),
]


@pytest.mark.parametrize(
    ("mesh", "a", "b", "expected"), MERGE_ROWS, ids=[f"{a}+{b}" for _, a, b, _ in MERGE_ROWS]
)
def test_merge(mesh: Mesh, a: str, b: str, expected: str) -> None:
    assert ax(a).merge(ax(b), mesh) == ax(expected)


def test_size_and_pre_sizes() -> None:
    assert ax('"a"').size(MESH_A8) == 8
    assert ax('"a":(2)2').size(MESH_A8) == 2
    assert ax('"a"').pre_size == 1
    assert ax('"a":(2)2').pre_size == 2
    assert ax('"a"').next_pre_size(MESH_A8) == 8
    assert ax('"a":(2)2').next_pre_size(MESH_A8) == 4


# -- axis lists -----------------------------------------------------------------------------


AXIS_SET_DIFF_ROWS = [  # utils_test GetAxisSetDiff, mesh a=8, b=4, c=2, d=4
    ("[]", '["c", "d"]', "[]"),
    ('["b", "a"]', "[]", '["b", "a"]'),
    ('["a", "b":(1)2]', '["b":(1)2, "a"]', "[]"),
    ('["b", "a"]', '["c", "d":(1)2]', '["b", "a"]'),
    ('["b", "a"]', '["b", "d"]', '["a"]'),
    ('["b", "a":(1)4]', '["a", "b":(2)2]', '["b":(1)2]'),
    ('["a":(2)4]', '["a":(1)4]', '["a":(4)2]'),
    ('["b":(1)2, "a"]', '["a":(2)2, "b":(2)2]', '["b":(1)2, "a":(1)2, "a":(4)2]'),
    ('["a"]', '["a":(1)2, "a":(4)2]', '["a":(2)2]'),
    ('["a"]', '["a":(4)2, "a":(1)2]', '["a":(2)2]'),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), AXIS_SET_DIFF_ROWS, ids=[f"{a}-{b}" for a, b, _ in AXIS_SET_DIFF_ROWS]
)
def test_axis_set_diff(a: str, b: str, expected: str) -> None:
    mesh = mesh_of(a=8, b=4, c=2, d=4)
    assert axis_set_diff(axes(a), axes(b), mesh) == axes(expected)


IS_PREFIX_ROWS = [
    ("[]", "[]", PrefixStatus.EQUAL),
    ("[]", '["a"]', PrefixStatus.STRICT_PREFIX),
    ('["a"]', "[]", PrefixStatus.NOT_A_PREFIX),
    ('["a", "b"]', '["a", "b"]', PrefixStatus.EQUAL),
    ('["a"]', '["a", "b"]', PrefixStatus.STRICT_PREFIX),
    ('["a":(1)2]', '["a", "b"]', PrefixStatus.STRICT_PREFIX),
    ('["a", "b":(1)2]', '["a", "b"]', PrefixStatus.STRICT_PREFIX),
    ('["a", "b":(2)2]', '["a", "b"]', PrefixStatus.NOT_A_PREFIX),
    ('["b"]', '["a", "b"]', PrefixStatus.NOT_A_PREFIX),
    ('["a", "b", "c"]', '["a", "b"]', PrefixStatus.NOT_A_PREFIX),
    ('["a":(1)2, "b"]', '["a", "b"]', PrefixStatus.NOT_A_PREFIX),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), IS_PREFIX_ROWS, ids=[f"{a}~{b}" for a, b, _ in IS_PREFIX_ROWS]
)
def test_is_axis_list_prefix_of(a: str, b: str, expected: str) -> None:
    assert is_axis_list_prefix_of(axes(a), axes(b)) == expected


GCP_LIST_ROWS = [
    ('["a", "b"]', '["a", "b"]', '["a", "b"]'),
    ('["a", "b"]', '["a", "c"]', '["a"]'),
    ('["a", "b":(1)2]', '["a", "b"]', '["a", "b":(1)2]'),
    ('["a", "b", "c"]', '["a", "b":(1)2, "c"]', '["a", "b":(1)2]'),
    ('["b"]', '["a"]', "[]"),
    ("[]", '["a"]', "[]"),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), GCP_LIST_ROWS, ids=[f"{a}^{b}" for a, b, _ in GCP_LIST_ROWS]
)
def test_greatest_common_prefix_of_lists(a: str, b: str, expected: str) -> None:
    assert greatest_common_prefix_of_lists(axes(a), axes(b)) == axes(expected)
    assert greatest_common_prefix_of_lists(axes(b), axes(a)) == axes(expected)


def test_prefix_without_overlap_with_list() -> None:
    assert prefix_without_overlap_with_list(ax('"a"'), axes('["b", "a":(4)2]')) == ax('"a":(1)4')
    assert prefix_without_overlap_with_list(ax('"a"'), axes('["a":(4)2, "a":(2)2]')) == ax(
        '"a":(1)2'
    )
    assert prefix_without_overlap_with_list(ax('"a"'), axes('["a":(1)2]')) is None
    assert prefix_without_overlap_with_list(ax('"a"'), []) == ax('"a"')


TRUNCATE_ROWS = [
    ('["a", "b", "c"]', '["b"]', '["a"]'),
    ('["a", "b", "c"]', '["b":(2)2]', '["a", "b":(1)2]'),
    ('["a", "b"]', '["d"]', '["a", "b"]'),
    ('["a", "b"]', '["a"]', "[]"),
]


@pytest.mark.parametrize(
    ("a", "b", "expected"), TRUNCATE_ROWS, ids=[f"{a}/{b}" for a, b, _ in TRUNCATE_ROWS]
)
def test_truncate_axes_by_removing_overlaps(a: str, b: str, expected: str) -> None:
    assert truncate_axes_by_removing_overlaps(axes(a), axes(b)) == axes(expected)


def test_lists_overlap() -> None:
    assert lists_overlap(axes('["a", "b":(1)2]'), axes('["b":(1)4]'))
    assert not lists_overlap(axes('["a", "b":(1)2]'), axes('["b":(2)2, "c"]'))
    assert not lists_overlap([], axes('["a"]'))


def test_sort_and_merge_axes() -> None:  # utils_test SortAndMergeAxes, all axes of size 8
    mesh = mesh_of(a=8, b=8, c=8, d=8)
    shuffled = axes('["d":(4)2, "b":(4)2, "a":(4)2, "c", "b":(1)2, "d":(2)2, "a":(1)2, "b":(2)2]')
    merged = sort_and_merge_axes(shuffled, mesh, mesh.axis_key)
    assert merged == axes('["a":(1)2, "a":(4)2, "b", "c", "d":(2)4]')


def test_add_axis_or_merge() -> None:
    mesh = mesh_of(a=8, b=8)
    result = axes('["b", "a":(1)2]')
    add_axis_or_merge(result, ax('"a":(2)2'), mesh)
    assert result == axes('["b", "a":(1)4]')
    add_axis_or_merge(result, ax('"a":(4)2'), mesh)
    assert result == axes('["b", "a"]')
    add_axis_or_merge(result, ax('"b":(1)2'), mesh)
    assert result == axes('["b", "a", "b":(1)2]')


def test_axes_size() -> None:
    assert axes_size(axes('["a", "b":(2)2]'), MESH_A8) == 16
    assert axes_size([], MESH_A8) == 1


# -- laws (hypothesis) ----------------------------------------------------------------------
# Sub-axes of one axis of size 2**6: pre-size and size are powers of two inside [1, 64).

FULL_LOG = 6
POW2_MESH = mesh_of(a=2**FULL_LOG)


@st.composite
def sub_axes_of_a(draw: st.DrawFn) -> AxisRef:
    if draw(st.booleans()) and draw(st.booleans()):
        return AxisRef("a")
    lo = draw(st.integers(0, FULL_LOG - 1))
    hi = draw(st.integers(lo + 1, FULL_LOG))
    if lo == 0 and hi == FULL_LOG:
        return AxisRef("a")
    return AxisRef("a", SubAxisInfo(2**lo, 2 ** (hi - lo)))


def interval(a: AxisRef) -> tuple[int, int]:
    return a.pre_size, a.next_pre_size(POW2_MESH)


@given(sub_axes_of_a())
def test_prefix_of_is_reflexive(a: AxisRef) -> None:
    assert a.prefix_of(a) and a.contains(a) and a.overlaps(a)


@given(sub_axes_of_a(), sub_axes_of_a())
def test_prefix_of_is_antisymmetric(a: AxisRef, b: AxisRef) -> None:
    if a.prefix_of(b) and b.prefix_of(a):
        assert a == b


@given(sub_axes_of_a(), sub_axes_of_a(), sub_axes_of_a())
def test_prefix_of_is_transitive(a: AxisRef, b: AxisRef, c: AxisRef) -> None:
    if a.prefix_of(b) and b.prefix_of(c):
        assert a.prefix_of(c)


@given(sub_axes_of_a(), sub_axes_of_a())
def test_overlap_is_symmetric_and_contained_in_both(a: AxisRef, b: AxisRef) -> None:
    assert a.overlaps(b) == b.overlaps(a)
    common = a.overlap(b)
    assert common == b.overlap(a)
    if common is not None:
        assert a.contains(common) and b.contains(common)
    # With powers of two everything can coexist, so overlap exists iff the intervals meet.
    (pa, na), (pb, nb) = interval(a), interval(b)
    assert (common is not None) == (max(pa, pb) < min(na, nb))


@given(sub_axes_of_a(), sub_axes_of_a())
def test_prefix_and_suffix_without_overlap_are_disjoint_parts(a: AxisRef, b: AxisRef) -> None:
    for part in (a.prefix_without_overlap(b), a.suffix_without_overlap(b, POW2_MESH)):
        if part is not None:
            assert a.contains(part)
            assert not part.overlaps(b) or not a.overlaps(b) and part == a
    prefix = a.prefix_without_overlap(b)
    if prefix is not None:
        assert prefix.prefix_of(a)
    suffix = a.suffix_without_overlap(b, POW2_MESH)
    if suffix is not None:
        assert suffix.suffix_of(a, POW2_MESH)


@given(sub_axes_of_a(), sub_axes_of_a())
def test_merge_of_split_restores_axis(a: AxisRef, b: AxisRef) -> None:
    """Splitting `a` at `b`'s pre-size gives a mergeable prefix/suffix pair whose merge is `a`."""
    pa, na = interval(a)
    cut = b.pre_size
    if not pa < cut < na:
        return
    major = AxisRef("a", SubAxisInfo(pa, cut // pa))
    minor = AxisRef("a", SubAxisInfo(cut, na // cut))
    assert major.can_merge(minor)
    assert major.prefix_of(a) and minor.suffix_of(a, POW2_MESH)
    assert major.merge(minor, POW2_MESH) == a
    assert major.size(POW2_MESH) * minor.size(POW2_MESH) == a.size(POW2_MESH)


@given(sub_axes_of_a(), sub_axes_of_a())
def test_greatest_common_prefix_is_prefix_of_both(a: AxisRef, b: AxisRef) -> None:
    common = a.greatest_common_prefix(b)
    if common is not None:
        assert common.prefix_of(a) and common.prefix_of(b)
    else:
        assert not a.prefix_of(b) and not b.prefix_of(a)


@given(st.lists(sub_axes_of_a(), max_size=3), st.lists(sub_axes_of_a(), max_size=3))
def test_axis_set_diff_parts_do_not_overlap_removed(
    first: list[AxisRef], second: list[AxisRef]
) -> None:
    for part in axis_set_diff(first, second, POW2_MESH):
        assert any(a.contains(part) for a in first)
        # Only meaningful when `second` has no internal overlaps (Shardy's precondition).
        if not any(x.overlaps(y) for i, x in enumerate(second) for y in second[i + 1 :]):
            assert not any(part.overlaps(r) for r in second)

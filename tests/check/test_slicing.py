"""Which slice each device holds: hand-derived tables in Shardy notation (numpy only)."""

import numpy as np
import pytest

from shardwise.api import parse_sharding
from shardwise.check.slicing import assemble, device_slices, split
from shardwise.errors import UnsupportedError
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding
from shardwise.syntax import parse_mesh


def _mesh(text: str) -> Mesh:
    return parse_mesh("#sdy.mesh" + text)


def _sharding(text: str) -> TensorSharding:
    return parse_sharding(text)


# (mesh, sharding, shape, expected rows/cols start of each device id 0..n-1 as (start, ...))
CASES = [
    ('<["x"=2, "y"=2]>', '<@m, [{"x"}, {"y"}]>', (4, 4), [(0, 0), (0, 2), (2, 0), (2, 2)]),
    ('<["x"=2, "y"=2]>', '<@m, [{"y"}, {"x"}]>', (4, 4), [(0, 0), (2, 0), (0, 2), (2, 2)]),
    # Two axes on one dim: "y" major here, so device (x, y) has index y*2 + x.
    ('<["x"=2, "y"=2]>', '<@m, [{"y", "x"}, {}]>', (8, 2), [(0, 0), (4, 0), (2, 0), (6, 0)]),
    ('<["x"=2, "y"=2]>', '<@m, [{"x", "y"}, {}]>', (8, 2), [(0, 0), (2, 0), (4, 0), (6, 0)]),
    # Sub-axes of x=4: "x":(1)2 is the major half of x, "x":(2)2 the minor half.
    ('<["x"=4]>', '<@m, [{"x":(1)2}, {"x":(2)2}]>', (4, 4), [(0, 0), (0, 2), (2, 0), (2, 2)]),
    ('<["x"=4]>', '<@m, [{"x":(2)2}, {"x":(1)2}]>', (4, 4), [(0, 0), (2, 0), (0, 2), (2, 2)]),
    # x=8 as three digits of size 2: "x":(2)2 is the middle one.
    ('<["x"=8]>', '<@m, [{"x":(2)2}]>', (4,), [(0,), (0,), (2,), (2,), (0,), (0,), (2,), (2,)]),
    # Explicit device ids: mesh position k holds device id device_ids[k].
    ('<["x"=2], device_ids=[1, 0]>', '<@m, [{"x"}]>', (4,), [(2,), (0,)]),
    (
        '<["x"=2, "y"=2], device_ids=[3, 1, 2, 0]>',
        '<@m, [{"x"}, {"y"}]>',
        (4, 4),
        [(2, 2), (0, 2), (2, 0), (0, 0)],
    ),
    ('<["x"=2, "y"=2]>', '<@m, [{}, {}], replicated={"x"}>', (4, 4), [(0, 0)] * 4),
]


@pytest.mark.parametrize("mesh, sharding, shape, starts", CASES, ids=[c[1] + c[0] for c in CASES])
def test_device_slices(mesh, sharding, shape, starts):
    m, s = _mesh(mesh), _sharding(sharding)
    got = [tuple(sl.start for sl in device_slices(shape, s, m, p)) for p in range(m.total_size)]
    assert got == starts


@pytest.mark.parametrize("mesh, sharding, shape, starts", CASES, ids=[c[1] + c[0] for c in CASES])
def test_split_then_assemble_is_identity(mesh, sharding, shape, starts):
    m, s = _mesh(mesh), _sharding(sharding)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    whole, disagree = assemble(split(x, s, m), shape, s, m)
    assert np.array_equal(whole, x) and disagree == []


def test_assemble_reports_replicas_that_disagree():
    m, s = _mesh('<["x"=2, "y"=2]>'), _sharding('<@m, [{"x"}, {}]>')
    pieces = split(np.arange(8.0).reshape(4, 2), s, m)
    pieces[3] += 1  # device 3 = (x=1, y=1): a replica of device 2's slice
    _, disagree = assemble(pieces, (4, 2), s, m)
    assert disagree == [3]


def test_indivisible_dimension_is_unsupported():
    with pytest.raises(UnsupportedError, match="not divisible by its 2 shards"):
        device_slices((3,), _sharding('<@m, [{"x"}]>'), _mesh('<["x"=2]>'), 0)


def test_assemble_sums_partial_values_over_unreduced_axes():
    """Devices at each coordinate along the unreduced axis "y" hold one whole array of
    partial values (split along "x"); the result is their sum."""
    m, s = _mesh('<["x"=2, "y"=2]>'), _sharding('<@m, [{"x"}, {}], unreduced={"y"}>')
    x = np.arange(8.0).reshape(4, 2)
    pieces = split(x, s, m)  # y=0 holds the value, y=1 zeros
    whole, disagree = assemble(pieces, (4, 2), s, m)
    assert np.array_equal(whole, x) and disagree == []
    # Any split of the value into partial sums gives it back.
    pieces[0] -= 5.0  # device (x=0, y=0)
    pieces[1] += 5.0  # device (x=0, y=1)
    whole, _ = assemble(pieces, (4, 2), s, m)
    assert np.array_equal(whole, x)

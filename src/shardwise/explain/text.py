"""Plain-text rendering of explanations and of a tensor's tiles on the device mesh."""

from __future__ import annotations

import itertools
import os
import sys

from shardwise.explain.chains import chain_lines, path_text
from shardwise.explain.places import origin_line, value_where, where
from shardwise.explain.provenance import Explanation
from shardwise.explain.run import Explained, key_name, key_type, mlir_name
from shardwise.ir import TensorType
from shardwise.mesh import Mesh
from shardwise.sharding import TensorSharding

__all__ = ["where", "origin_line", "value_where", "format_explanation", "picture", "wants_rich"]


def wants_rich(plain: bool, stream=None) -> bool:
    """Draw with `rich` (tables, colours) only on a terminal, unless ``--plain`` or NO_COLOR
    (https://no-color.org) asks for the plain text that pipes and tests see."""
    stream = stream if stream is not None else sys.stdout
    if plain or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def format_explanation(ex: Explained, exp: Explanation) -> str:
    mlir = mlir_name(ex.module, exp.key)
    header = exp.name if mlir == exp.name else f"{exp.name} ({mlir})"
    lines = [f"{header}{value_where(exp.key)}"]
    type_ = key_type(ex.module, exp.key)
    if type_ is not None:
        lines[0] += f" : {type_}"
    lines.append(
        f"  sharding: {exp.sharding if exp.sharding is not None else '(none: replicated)'}"
    )
    if exp.propagated is not None:
        lines.append(f"  propagation left (before the export steps): {exp.propagated}")
    if not exp.chains:
        lines.append("  no axis shards this tensor")

    for axis, chain in exp.chains.items():
        lines.extend(chain_lines(ex, exp.key, axis, chain))
    for b in exp.blocked:
        other = key_name(ex.module, b.other)
        if not b.path:
            lines.append(f"  axis {b.axis} (on {other}) stops at {where(b.op)}: {b.reason}")
            continue
        before = key_name(ex.module, b.path[0])
        lines.append(
            f"  axis {b.axis} (on {other}, {len(b.path)} ops away) stops at {where(b.op)}, "
            f"before {before}: {b.reason}"
        )
        lines.append("    path: " + path_text([key_name(ex.module, k) for k in (b.other, *b.path)]))
    return "\n".join(lines)


def picture(sharding: TensorSharding | None, type_: object, mesh: Mesh | None) -> str:
    """Which devices hold each tile (rank 1-2), like `jax.debug.visualize_array_sharding`."""
    if not isinstance(type_, TensorType) or type_.rank not in (1, 2):
        return "(picture: rank-1 and rank-2 tensors only)"
    if sharding is None or mesh is None or not mesh.axes:
        return _grid([[["all devices"]]], type_.shape, (1,) * type_.rank)
    sizes = {a.name: a.size for a in mesh.axes}
    names = [a.name for a in mesh.axes]
    dims = [[str(a).strip('"') for a in d.axes] for d in sharding.dim_shardings]
    if any(":" in a for d in dims for a in d):
        return "(picture: sub-axes are not drawn)"
    tiles = [max(1, _prod(sizes[a] for a in d)) for d in dims]
    while len(tiles) < 2:
        tiles.append(1)
    cells: list[list[list[str]]] = [[[] for _ in range(tiles[1])] for _ in range(tiles[0])]
    for device, coords in enumerate(itertools.product(*(range(sizes[n]) for n in names))):
        pos = dict(zip(names, coords, strict=True))
        idx = []
        for d in dims + [[]] * (2 - len(dims)):
            i = 0
            for a in d:
                i = i * sizes[a] + pos[a]
            idx.append(i)
        cells[idx[0]][idx[1]].append(str(device))
    grid = [[["D" + ",".join(c)] for c in row] for row in cells]
    return _grid(grid, type_.shape, tiles)


def _prod(xs) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _grid(cells: list[list[list[str]]], shape, tiles) -> str:
    width = max(len(c[0]) for row in cells for c in row) + 2
    sep = "+" + "+".join("-" * width for _ in cells[0]) + "+"
    out = [f"tensor{list(shape)} in {tiles[0]}x{tiles[1] if len(tiles) > 1 else 1} tiles", sep]
    for row in cells:
        out.append("|" + "|".join(c[0].center(width) for c in row) + "|")
        out.append(sep)
    return "\n".join(out)

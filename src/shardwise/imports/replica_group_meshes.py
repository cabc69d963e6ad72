"""Meshes inside StableHLO collectives' mesh-axes replica groups.

A collective may name its groups by mesh axes, with the mesh as a symbol or inline::

    replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [...]>
    replica_groups = #stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes=[<name =
        "z", size = 4>]>, axes = [#stablehlo.axis_ref<name = "z">]>

`sdy-lift-inlined-meshes` (jaxlib 0.10.2) turns an inline ``#stablehlo.mesh`` into an
``sdy.mesh @mesh`` symbol (its device ids dropped, one symbol per distinct inline mesh, never
reusing an sdy mesh, located at the first collective that has it) and renames references to a
deduplicated mesh; it visits all-gathers first, then all-reduces, reduce-scatters, all-to-alls
and collective broadcasts. `sdy-inline-meshes` of the reference erases every mesh, also those
a replica group still names, and its verifier then rejects the module: `missing_mesh_error`
reports that, with the reference's wording.
"""

from __future__ import annotations

import re

from shardwise.errors import VerifyError
from shardwise.ir import (
    Module,
    Op,
    RawAttr,
    SymbolTable,
    ops_in_post_order,
    string_attr,
    symbol_ref,
    symbol_ref_name,
)
from shardwise.mesh import Mesh, MeshAxis

__all__ = ["lift_replica_group_meshes", "missing_mesh_error", "COLLECTIVES_IN_WALK_ORDER"]

COLLECTIVES_IN_WALK_ORDER = tuple(
    "stablehlo." + name
    for name in ("all_gather", "all_reduce", "reduce_scatter", "all_to_all", "collective_broadcast")
)
_COLLECTIVE_NAMES = frozenset(COLLECTIVES_IN_WALK_ORDER)
_PREFIX = "#stablehlo.replica_group_mesh_axes<mesh = "
_REF_RE = re.compile(r'@("(?:[^"\\]|\\.)*"|[\w$.\-]+)')
_STRING = r'"(?:[^"\\]|\\.)*"'
_AXIS_RE = re.compile(r"<name = (" + _STRING + r"), size = (\d+)>")


def _split(text: str) -> tuple[str, str] | None:
    """``#stablehlo.replica_group_mesh_axes<mesh = M, rest`` -> (M, ``, rest``)."""
    if not text.startswith(_PREFIX):
        return None
    start = len(_PREFIX)
    if text.startswith("@", start):
        m = _REF_RE.match(text, start)
        if m is None:
            return None
        return m.group(0), text[m.end() :]
    depth = 0
    in_string = False
    i = start
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                return text[start : i + 1], text[i + 1 :]
        i += 1
    return None


def _sdy_mesh(stablehlo_mesh: str) -> Mesh:
    """``#stablehlo.mesh<axes=[<name = "x", size = 2>], device_ids=...>`` -> ``<["x"=2]>``."""
    axes = tuple(
        MeshAxis(symbol_ref_name("@" + name), int(size))
        for name, size in _AXIS_RE.findall(stablehlo_mesh)
    )
    return Mesh(axes)


def _replica_groups(op: Op) -> tuple[str, str] | None:
    attr = op.get_attr("replica_groups")
    return _split(str(attr)) if attr is not None else None


def _set_mesh(op: Op, name: str, rest: str) -> None:
    holder = op.properties if "replica_groups" in op.properties else op.attributes
    holder["replica_groups"] = RawAttr(_PREFIX + str(symbol_ref(name)) + rest)


def _collectives(module: Module) -> list[Op]:
    """The collectives in Shardy's order: one (post-order) walk per op kind."""
    by_kind: dict[str, list[Op]] = {name: [] for name in COLLECTIVES_IN_WALK_ORDER}
    # The walk collects by name: most modules hold few collectives or none.
    for op in ops_in_post_order(module.op, _COLLECTIVE_NAMES):
        by_kind[op.name].append(op)
    return [op for name in COLLECTIVES_IN_WALK_ORDER for op in by_kind[name]]


def lift_replica_group_meshes(
    module: Module, table: SymbolTable, by_ref: dict[str, str], last: Op | None
) -> Op | None:
    """Rename deduplicated mesh references and lift inline meshes of replica groups; new
    ``sdy.mesh`` ops go after `last` (the module's start if None). Returns the new last."""
    lifted: dict[str, str] = {}
    for op in _collectives(module):
        split = _replica_groups(op)
        if split is None:
            continue
        mesh_text, rest = split
        if mesh_text.startswith("@"):
            new_name = by_ref.get(symbol_ref_name(mesh_text))
        else:
            new_name = lifted.get(mesh_text)
            if new_name is None:
                mesh_op = Op(
                    "sdy.mesh",
                    properties={"mesh": _sdy_mesh(mesh_text), "sym_name": string_attr("mesh")},
                    location=op.location,
                    loc_text=op.loc_text,
                )
                if last is None:
                    module.body.insert(0, mesh_op)
                else:
                    module.body.insert_after(last, mesh_op)
                last = mesh_op
                new_name = lifted[mesh_text] = table.insert(mesh_op)
        if new_name is not None:
            _set_mesh(op, new_name, rest)
    return last


def missing_mesh_error(module: Module) -> VerifyError | None:
    """The reference's verifier error for the first collective whose replica groups name a
    mesh the module does not have, or None."""
    meshes = module.meshes()
    for op in module.walk():
        if op.name not in COLLECTIVES_IN_WALK_ORDER:
            continue
        split = _replica_groups(op)
        if split is None or not split[0].startswith("@"):
            continue
        name = symbol_ref_name(split[0])
        if name not in meshes:
            return VerifyError(
                f"'{op.name}' op replica_groups: mesh symbol '{name}' not found", op.location
            )
    return None

"""Annotate a whole module with XLA shardings: ``mhlo.sharding = "{...}"`` beside ``sdy.sharding``.

This is the body of ``shardwise export-hlo``: every function argument and result and every op
result that carries an sdy sharding gets the HloSharding XLA would give it (see
`shardwise.xla.hlo_sharding`). Ops with several results get XLA's tuple sharding
``{a, b}``. Ops nested in ``sdy.manual_computation`` bodies are exported with the manual axes
of their enclosing computations, as XLA does.

`export_module_to_hlo` returns one `HloShardingEntry` per exported value;
`hlo_sharding_summary` turns them into a JSON-ready dict for tools and reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shardwise import ir
from shardwise.axis import quote_string
from shardwise.errors import UnsupportedError, VerifyError
from shardwise.mesh import Mesh
from shardwise.sharding import ManualAxes, TensorSharding, TensorShardingPerValue
from shardwise.xla.hlo_sharding import to_hlo_sharding, tuple_sharding_text

__all__ = [
    "HLO_SHARDING_ATTR",
    "HloShardingEntry",
    "export_module_to_hlo",
    "hlo_sharding_summary",
    "import_module_from_hlo",
]

HLO_SHARDING_ATTR = "mhlo.sharding"


@dataclass(frozen=True, slots=True)
class HloShardingEntry:
    """One exported value: where it is, its sdy sharding text and its HloSharding text."""

    func: str
    value: str  # "arg 0", "result 1" or "stablehlo.add #0 at file:3:5"
    sdy: str
    hlo: str


def _mesh_of(sharding: TensorSharding, meshes: dict[str, Any]) -> Mesh:
    if isinstance(sharding.mesh_or_ref, Mesh):
        return sharding.mesh_or_ref
    mesh = meshes.get(sharding.mesh_or_ref)
    if mesh is None:
        raise VerifyError(f"unknown mesh: @{sharding.mesh_or_ref} in {sharding}")
    if not isinstance(mesh, Mesh):
        raise UnsupportedError(f"mesh @{sharding.mesh_or_ref} was not parsed: {mesh}")
    return mesh


def _manual_axes(op: ir.Op) -> tuple[str, ...]:
    """The manual axes of every ``sdy.manual_computation`` around `op`, outermost first."""
    axes: list[str] = []
    for parent in reversed(list(op.ancestors())):
        if parent.name != "sdy.manual_computation":
            continue
        attr = parent.get_attr("manual_axes")
        if not isinstance(attr, ManualAxes):
            raise UnsupportedError(f"manual_axes of {parent.name} was not parsed: {attr}")
        axes.extend(attr.axes)
    return tuple(axes)


def _export_one(sharding: Any, meshes: dict[str, Any], manual: tuple[str, ...] = ()) -> str:
    if not isinstance(sharding, TensorSharding):
        raise UnsupportedError(f"sdy.sharding was not parsed as a tensor sharding: {sharding}")
    mesh = _mesh_of(sharding, meshes)
    # Manual axes are listed in mesh order, whatever the nesting order.
    ordered = tuple(a for a in mesh.axis_names if a in manual)
    return to_hlo_sharding(sharding, mesh, ordered)


def _export_func_values(
    func: ir.Op, name: str, meshes: dict[str, Any], entries: list[HloShardingEntry]
) -> None:
    """Arguments, then results, of one ``func.func``."""
    lookups = [
        ("arg", len(func.regions[0].entry.args), ir.func_arg_attrs),
        ("result", len(ir.func_result_types(func)), ir.func_result_attrs),
    ]
    for kind, count, attrs_of in lookups:
        for i in range(count):
            attrs = attrs_of(func, i)
            if attrs is None or ir.SHARDING_ATTR not in attrs:
                continue
            text = _export_one(attrs[ir.SHARDING_ATTR], meshes)
            attrs[HLO_SHARDING_ATTR] = ir.RawAttr(quote_string(text))
            entries.append(
                HloShardingEntry(name, f"{kind} {i}", str(attrs[ir.SHARDING_ATTR]), text)
            )


def _export_op(
    op: ir.Op, func: str, meshes: dict[str, Any], entries: list[HloShardingEntry]
) -> None:
    per_value = op.attributes.get(ir.SHARDING_ATTR)
    if per_value is None or op.name == "sdy.manual_computation":
        return
    if not isinstance(per_value, TensorShardingPerValue):
        raise UnsupportedError(f"sdy.sharding of {op.name} was not parsed: {per_value}")
    manual = _manual_axes(op)
    texts = [_export_one(s, meshes, manual) for s in per_value.shardings]
    for i, (sharding, text) in enumerate(zip(per_value.shardings, texts, strict=True)):
        where = f"{op.name} #{i} at {op.location}"
        entries.append(HloShardingEntry(func, where, str(sharding), text))
    whole = texts[0] if len(texts) == 1 else tuple_sharding_text(texts)
    op.attributes[HLO_SHARDING_ATTR] = ir.RawAttr(quote_string(whole))


def export_module_to_hlo(module: ir.Module) -> list[HloShardingEntry]:
    """Set ``mhlo.sharding`` on every sharded value of `module` (in place) and list them.

    The ``sdy.sharding`` attributes stay, so the module still propagates and verifies.
    Raises `UnsupportedError` for a sharding or mesh the loader left unparsed, and for
    unreduced axes inside a manual computation (XLA cannot express both).
    """
    meshes = module.meshes()
    entries: list[HloShardingEntry] = []
    for func in module.funcs:
        name = module.symbol_name(func) or "?"
        _export_func_values(func, name, meshes, entries)
        for op in func.walk():
            if op is not func:
                _export_op(op, name, meshes, entries)
    return entries


def hlo_sharding_summary(module: ir.Module, entries: list[HloShardingEntry]) -> dict[str, Any]:
    """A JSON-ready summary: the meshes and, per exported value, its sdy and HLO sharding.

    ``{"meshes": {"mesh": "#sdy.mesh<...>"}, "values": [{"func": "main", "value": "arg 0",
    "sdy": "#sdy.sharding<...>", "hlo": "{devices=...}"}, ...]}``
    """
    return {
        "meshes": {name: str(mesh) for name, mesh in module.meshes().items()},
        "values": [{"func": e.func, "value": e.value, "sdy": e.sdy, "hlo": e.hlo} for e in entries],
    }


# -- the import direction ---------------------------------------------------------------------


def _hlo_text(attr: Any) -> str | None:
    if attr is None:
        return None
    text = str(attr)
    return text[1:-1] if text.startswith('"') else text


def _import_one(
    text: str, mesh: Mesh, mesh_name: str, type_: ir.Type, where: str
) -> TensorSharding:
    from shardwise.xla.hlo_sharding import from_hlo_sharding

    return from_hlo_sharding(text, mesh, type_.rank, mesh_ref=mesh_name)


def _tuple_elements(text: str) -> list[str]:
    """``{{a}, {b}}`` -> ``["{a}", "{b}"]``; a non-tuple sharding -> ``[text]``."""
    inner = text[1:-1].strip()
    if not inner.startswith("{"):
        return [text]
    elements, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            elements.append(inner[start:i].strip())
            start = i + 1
    elements.append(inner[start:].strip())
    return [e for e in elements if e]


def import_module_from_hlo(module: ir.Module, mesh: Mesh, mesh_name: str = "mesh") -> int:
    """Replace every ``mhlo.sharding`` by the equivalent ``sdy.sharding`` on `mesh`; in place.

    Adds ``sdy.mesh @mesh_name`` if the module has no such mesh. Returns how many values were
    converted. Raises `UnsupportedError` for an HloSharding the mesh cannot express.
    """
    meshes = module.meshes()
    if mesh_name not in meshes:
        mesh_op = ir.Op(
            "sdy.mesh", properties={"mesh": mesh, "sym_name": ir.RawAttr(quote_string(mesh_name))}
        )
        module.body.insert(0, mesh_op)
    elif meshes[mesh_name] != mesh:
        raise VerifyError(f"the module's mesh @{mesh_name} is {meshes[mesh_name]}, not {mesh}")
    count = 0
    for func in module.funcs:
        args = func.regions[0].entry.args if func.regions and func.regions[0].blocks else []
        for i, arg in enumerate(args):
            attrs = ir.func_arg_attrs(func, i)
            if attrs is None:
                continue
            text = _hlo_text(attrs.get(HLO_SHARDING_ATTR))
            if text is not None:
                attrs["sdy.sharding"] = _import_one(text, mesh, mesh_name, arg.type, f"arg {i}")
                del attrs[HLO_SHARDING_ATTR]
                count += 1
        for i, type_ in enumerate(ir.func_result_types(func)):
            attrs = ir.func_result_attrs(func, i)
            if attrs is None:
                continue
            text = _hlo_text(attrs.get(HLO_SHARDING_ATTR))
            if text is not None:
                attrs["sdy.sharding"] = _import_one(text, mesh, mesh_name, type_, f"result {i}")
                del attrs[HLO_SHARDING_ATTR]
                count += 1
        for op in func.walk():
            text = _hlo_text(op.attributes.get(HLO_SHARDING_ATTR))
            if op is func or text is None or not op.results:
                continue
            texts = _tuple_elements(text) if len(op.results) > 1 else [text]
            if len(texts) != len(op.results):
                raise UnsupportedError(
                    f"'{op.name}' has {len(op.results)} results but its sharding {text} has "
                    f"{len(texts)} elements",
                    op.location,
                )
            op.attributes["sdy.sharding"] = TensorShardingPerValue(
                tuple(
                    _import_one(t, mesh, mesh_name, r.type, op.name)
                    for t, r in zip(texts, op.results, strict=True)
                )
            )
            del op.attributes[HLO_SHARDING_ATTR]
            count += 1
    return count

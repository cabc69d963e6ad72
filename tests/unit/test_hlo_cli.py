"""`shardwise export-hlo` / `import-hlo`: sdy -> HLO -> sdy -> HLO is the identity on the HLO
text for every sharding of the propagated corpus models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardwise.cli import main
from shardwise.io.mlir import load_text
from shardwise.io.reference import run_pass
from shardwise.sharding import TensorSharding
from shardwise.xla.hlo_module import export_module_to_hlo, import_module_from_hlo

CORPUS = sorted((Path(__file__).parents[1] / "models" / "data").glob("*.mlir"))
SINGLE_MESH = [p for p in CORPUS if p.read_text().count("sdy.mesh @") == 1]


def _strip_sdy(module, keep_meshes: bool = False) -> None:
    """Forget every sdy sharding (func attrs and ops) and the meshes: only mhlo.sharding stays."""
    from shardwise import ir

    for op in list(module.body.ops):
        if op.name == "sdy.mesh" and not keep_meshes:
            op.erase()
    for func in module.funcs:
        for key in ("arg_attrs", "res_attrs"):
            array = func.properties.get(key)
            for entry in array.elements if array is not None else []:
                entry.entries.pop("sdy.sharding", None)
        for op in func.walk():
            op.attributes.pop("sdy.sharding", None)
    assert ir  # keep the import used


@pytest.mark.parametrize("path", SINGLE_MESH[:8], ids=lambda p: p.stem)
def test_round_trip_is_identity_on_hlo_text(path):
    propagated = run_pass(path.read_text(), "sdy-propagation-pipeline")
    module = load_text(propagated)
    mesh = next(iter(module.meshes().values()))
    first = export_module_to_hlo(module)
    _strip_sdy(module)
    import_module_from_hlo(module, mesh)
    for op in module.walk():
        op.attributes.pop("mhlo.sharding", None)
    for func in module.funcs:
        for key in ("arg_attrs", "res_attrs"):
            array = func.properties.get(key)
            for entry in array.elements if array is not None else []:
                entry.entries.pop("mhlo.sharding", None)
    second = export_module_to_hlo(module)
    assert [(e.func, e.value, e.hlo) for e in second] == [(e.func, e.value, e.hlo) for e in first]
    assert all(isinstance(s, TensorSharding) for s in _func_shardings(module))


def _func_shardings(module):
    for func in module.funcs:
        array = func.properties.get("arg_attrs")
        for entry in array.elements if array is not None else []:
            if "sdy.sharding" in entry.entries:
                yield entry.entries["sdy.sharding"]


def test_cli_export_then_import(tmp_path):
    from shardwise.io.mlir import write_text

    src = tmp_path / "in.mlir"
    src.write_text(run_pass(CORPUS[0].read_text(), "sdy-propagation-pipeline"))
    hlo, js = tmp_path / "hlo.mlir", tmp_path / "hlo.json"
    assert main(["export-hlo", str(src), "-o", str(hlo), "--json", str(js)]) == 0
    summary = json.loads(js.read_text())
    assert summary["values"] and all(v["hlo"].startswith("{") for v in summary["values"])
    module = load_text(hlo.read_text())
    mesh = str(module.meshes()["mesh"]).removeprefix("#sdy.mesh")
    _strip_sdy(module, keep_meshes=True)  # sdy.reshard ops still name the mesh
    bare = tmp_path / "bare.mlir"
    bare.write_text(write_text(module))
    out = tmp_path / "back.mlir"
    assert main(["import-hlo", str(bare), "--mesh", mesh, "-o", str(out)]) == 0
    assert "mesh" in load_text(out.read_text()).meshes()
    assert "mhlo.sharding" not in out.read_text()


def test_cli_import_rejects_bad_mesh(tmp_path, capsys):
    src = tmp_path / "in.mlir"
    src.write_text(CORPUS[0].read_text())
    with pytest.raises(SystemExit) as info:
        main(["import-hlo", str(src), "--mesh", "<[oops", "-o", str(tmp_path / "o.mlir")])
    assert info.value.code == 2
    assert "--mesh" in capsys.readouterr().err

"""`sdy-drop-sharding-and-mesh` (``transforms/export/drop_sharding_and_mesh.cc``).

The pass strips the sharding notation from a program: every ``sdy.sharding`` attribute (on
ops and on func arguments/results) and every ``sdy.mesh``. In the jaxlib 0.10.2 build every
mesh is erased, used or not, and module attributes are left alone; shardings held in inherent
attributes (``sdy.sharding_constraint``, ``sdy.reshard``, collectives, manual computations)
are kept, so a module that still has them fails the verifier that runs after the pass with
``unknown mesh: @name`` (raised here as a `VerifyError`, as the pass manager reports it), and
so does one whose collectives' replica groups name a mesh symbol (``mesh symbol 'm' not
found``).
"""

from __future__ import annotations

from shardwise.imports.replica_group_meshes import missing_mesh_error
from shardwise.ir import SHARDING_ATTR, Module, Op
from shardwise.passes import sdy_pass
from shardwise.verify import verify_module

__all__ = ["drop_sharding_and_mesh"]


@sdy_pass("sdy-drop-sharding-and-mesh")
def drop_sharding_and_mesh(module: Module) -> None:
    """Remove every ``sdy.sharding`` and every ``sdy.mesh``; verify what is left."""
    for op in module.walk():
        op.attributes.pop(SHARDING_ATTR, None)
        if op.name == "func.func":
            _drop_func_io_shardings(op)
    for mesh in [op for op in module.walk() if op.name == "sdy.mesh"]:
        mesh.erase()
    verify_module(module)
    error = missing_mesh_error(module)
    if error is not None:
        raise error


def _drop_func_io_shardings(func: Op) -> None:
    """`removeArgAttr`/`removeResultAttr` of ``sdy.sharding``; an all-empty list goes away.

    The ``arg_attrs``/``res_attrs`` lists are read directly: a declaration has no entry block.
    """
    for key in ("arg_attrs", "res_attrs"):
        array = func.properties.get(key)
        if array is None:
            continue
        for attrs in array.elements:
            attrs.entries.pop(SHARDING_ATTR, None)
        if all(not attrs.entries for attrs in array.elements):
            del func.properties[key]

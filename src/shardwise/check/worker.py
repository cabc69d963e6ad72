"""The child process that compiles and runs programs with XLA on simulated CPU devices.

Started by `shardwise.check.executor.Executor` with
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` already in its environment, so jax
creates N CPU devices when it initialises (a flag set after that has no effect, which is
why this runs in its own process). Protocol: one JSON request per stdin line,
``{"mlir": path, "devices": n, "inputs": path.npz, "dtypes": [...], "outputs": path.npz}``;
one JSON reply per stdout line, ``{"ok": true, "dtypes": [...]}`` or
``{"ok": false, "stage": "compile"|"run", "error": text}`` (arrays: `save_arrays`).

Programs with ``devices == 1`` run as they are on one device. A request with
``"spmd_result_shapes"`` is a program XLA partitions itself (its own shardings): global arrays
in, global arrays out (`_run_spmd`). Programs for n > 1 devices must
take and return arrays whose leading dimension has size n and is sharded over all n devices
(the form `shardwise.check.programs.wrap_local` builds): row p of an input is placed on
partition p, and row p of an output is read back from partition p.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np


def save_arrays(path: str, arrays: list[np.ndarray]) -> list[str]:
    """Write `arrays` to an .npz file; returns their dtype names (npz cannot hold bfloat16,
    which is stored as its bits, uint16, and restored from the name by `load_arrays`)."""
    names = [a.dtype.name for a in arrays]
    np.savez(path, *[a.view(np.uint16) if a.dtype.name == "bfloat16" else a for a in arrays])
    return names


def load_arrays(path: str, dtypes: list[str]) -> list[np.ndarray]:
    """Read what `save_arrays` wrote."""
    with np.load(path) as data:
        arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
    if "bfloat16" not in dtypes:
        return arrays
    import ml_dtypes

    return [
        a.view(ml_dtypes.bfloat16) if name == "bfloat16" else a
        for a, name in zip(arrays, dtypes, strict=True)
    ]


def _backend() -> tuple[Any, Any]:
    import jax
    from jax._src import xla_bridge

    # Arrays keep their dtypes (f64 for the float64 truth, i64): without x64, device_put
    # would make an i64 (f64) input i32 (f32), and XLA rejects it for a program that takes
    # i64 ("RuntimeProgramInputMismatch").
    jax.config.update("jax_enable_x64", True)

    backend = xla_bridge.get_backend("cpu")
    return backend, backend.devices()


def _initialize_lapack() -> None:
    """Load the LAPACK kernels behind jaxlib's ``lapack_*_ffi`` custom calls.

    jaxlib registers those targets but fills in the LAPACK functions (from scipy) only when
    jax lowers a linalg op; a program that arrives as text has not been lowered by jax, and
    calling the empty kernel crashes the process (SIGSEGV)."""
    from jax._src.lax import linalg

    linalg.initialize_lapack()


def _compile(text: str, devices: list[Any]) -> Any:
    from jax._src import compiler
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import xla_client as xc
    from jax._src.lib.mlir import ir

    backend, _ = _backend()
    if "@lapack_" in text:
        _initialize_lapack()
    n = len(devices)
    options = compiler.get_compile_options(
        num_replicas=1, num_partitions=n, device_assignment=np.array(devices).reshape(1, n)
    )
    options.executable_build_options.use_shardy_partitioner = True
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        return backend.compile_and_load(
            module, executable_devices=xc.DeviceList(tuple(devices)), compile_options=options
        )


def _put(array: np.ndarray, devices: list[Any]) -> Any:
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    if len(devices) == 1:
        return jax.device_put(array, devices[0])
    sharding = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec("d"))
    pieces = [jax.device_put(array[p : p + 1], d) for p, d in enumerate(devices)]
    return jax.make_array_from_single_device_arrays(array.shape, sharding, pieces)


def _run(executable: Any, inputs: list[np.ndarray], devices: list[Any]) -> list[np.ndarray]:
    args = [_put(a, devices) for a in inputs]
    results = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    position = {d.id: p for p, d in enumerate(devices)}
    outputs = []
    for per_device in results:
        rows: dict[int, np.ndarray] = {}
        for shard in per_device:
            (device,) = shard.devices()
            rows[position[device.id]] = np.asarray(shard)
        ordered = [rows[p] for p in range(len(devices))]
        outputs.append(ordered[0] if len(devices) == 1 else np.concatenate(ordered))
    return outputs


def _run_spmd(
    executable: Any, inputs: list[np.ndarray], devices: list[Any], shapes: list[list[int]]
) -> list[np.ndarray]:
    """Run a program XLA partitioned itself: global arrays in and out, each argument placed by
    the sharding XLA chose for it, each result put back together from its devices' pieces."""
    import jax
    from jax._src import op_shardings
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    n = len(devices)
    args = []
    for array, proto in zip(inputs, executable.get_parameter_shardings(), strict=True):
        op = xc.HloSharding.from_proto(proto)
        if str(op) == "{unreduced}":  # partial values: device 0 holds it, the others zeros
            pieces = [jax.device_put(array if p == 0 else np.zeros_like(array), d)
                      for p, d in enumerate(devices)]  # fmt: skip
            sharding = GSPMDSharding(tuple(devices), op)
            args.append(jax.make_array_from_single_device_arrays(array.shape, sharding, pieces))
            continue
        tiles = _partially_unreduced(op, array.shape)
        if tiles is not None:  # unreduced over some tile dims: one coordinate holds the value
            by_device = {device: (index, holds) for device, index, holds, _ in tiles}
            pieces = []
            for d in devices:
                index, holds = by_device[d.id]
                piece = array[index]
                pieces.append(jax.device_put(piece if holds else np.zeros_like(piece), d))
            sharding = GSPMDSharding(tuple(devices), op)
            args.append(jax.make_array_from_single_device_arrays(array.shape, sharding, pieces))
            continue
        indices = op_shardings.op_sharding_to_indices(op, array.shape, n)
        pieces = [jax.device_put(array[i], d) for i, d in zip(indices, devices, strict=True)]
        sharding = GSPMDSharding(tuple(devices), op)
        args.append(jax.make_array_from_single_device_arrays(array.shape, sharding, pieces))
    results = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    position = {d.id: p for p, d in enumerate(devices)}
    outputs = []
    for per_device, proto, shape in zip(
        results, executable.get_output_shardings(), shapes, strict=True
    ):
        op = xc.HloSharding.from_proto(proto)
        if str(op) == "{unreduced}":  # partial values: their sum
            outputs.append(np.sum(np.stack([np.asarray(x) for x in per_device]), axis=0))
            continue
        tiles = _partially_unreduced(op, tuple(shape))
        if tiles is not None:  # the sum over the unreduced tile dims, one replica each
            total: np.ndarray | None = None
            for shard in per_device:
                (device,) = shard.devices()
                _, index, _, first_replica = next(t for t in tiles if t[0] == device.id)
                piece = np.asarray(shard)
                if total is None:
                    total = np.zeros(tuple(shape), piece.dtype)
                if first_replica:
                    total[index] += piece
            assert total is not None
            outputs.append(total)
            continue
        indices = op_shardings.op_sharding_to_indices(op, tuple(shape), n)
        out: np.ndarray | None = None
        for shard in per_device:
            (device,) = shard.devices()
            piece = np.asarray(shard)
            if out is None:
                out = np.zeros(tuple(shape), piece.dtype)
            out[indices[position[device.id]]] = piece
        assert out is not None
        outputs.append(out)
    return outputs


def _partially_unreduced(
    op: Any, shape: tuple[int, ...]
) -> list[tuple[int, tuple[slice, ...], bool, bool]] | None:
    """For a tiled sharding with an unreduced subgroup (`last_tile_dims={unreduced, ...}`):
    per device its id, the slice of the global array it holds, whether it holds the value
    (coordinate 0 along every unreduced tile dim; the others hold zeros) and whether it is the
    first of its replicas (coordinate 0 along every other tile dim); None otherwise."""
    from jax._src.lib import xla_client as xc

    if not op.is_tiled():
        return None
    kinds = list(op.subgroup_types())
    unreduced = xc.OpSharding.Type.UNREDUCED
    if unreduced not in kinds:
        return None
    dims = list(op.tile_assignment_dimensions())
    rank = len(shape)
    grid = np.array(op.tile_assignment_devices()).reshape(dims)
    tiles = []
    for position in np.ndindex(*dims):
        index = tuple(
            slice(
                position[a] * -(-shape[a] // dims[a]), (position[a] + 1) * -(-shape[a] // dims[a])
            )
            for a in range(rank)
        )
        extra = list(zip(position[rank:], kinds, strict=True))
        holds = all(c == 0 for c, k in extra if k == unreduced)
        first = all(c == 0 for c, k in extra if k != unreduced)
        tiles.append((int(grid[position]), index, holds, first))
    return tiles


def serve(stdin: Any, stdout: Any) -> None:
    """Answer requests until stdin closes."""
    for line in stdin:
        request = json.loads(line)
        reply = _handle(request)
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def _handle(request: dict[str, Any]) -> dict[str, Any]:
    _, all_devices = _backend()
    n = request["devices"]
    if n > len(all_devices):
        return {"ok": False, "stage": "devices", "error": f"{len(all_devices)} devices, need {n}"}
    devices = list(all_devices[:n])
    with open(request["mlir"], encoding="utf-8") as f:
        text = f.read()
    try:
        executable = _compile(text, devices)
    except Exception as e:  # noqa: BLE001 - XLA's message goes back to the parent
        return {"ok": False, "stage": "compile", "error": str(e)}
    # "inputs" is one .npz, or a list of them (one compile, one run per set: "outputs" and
    # the reply's "dtypes" are then lists too).
    batch = isinstance(request["inputs"], list)
    in_paths = request["inputs"] if batch else [request["inputs"]]
    in_dtypes = request["dtypes"] if batch else [request["dtypes"]]
    out_paths = request["outputs"] if batch else [request["outputs"]]
    replies = []
    for in_path, dtypes, out_path in zip(in_paths, in_dtypes, out_paths, strict=True):
        inputs = load_arrays(in_path, dtypes)
        try:
            shapes = request.get("spmd_result_shapes")
            if shapes is not None:
                outputs = _run_spmd(executable, inputs, devices, shapes)
            else:
                outputs = _run(executable, inputs, devices)
        except Exception as e:  # noqa: BLE001
            return {"ok": False, "stage": "run", "error": f"{type(e).__name__}: {e}"}
        replies.append(save_arrays(out_path, outputs))
    return {"ok": True, "dtypes": replies if batch else replies[0]}


if __name__ == "__main__":
    _backend()  # initialise jax now, while the parent prepares the first request
    serve(sys.stdin, sys.stdout)

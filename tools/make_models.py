"""Lower real JAX programs to StableHLO with Shardy shardings, without running them.

The output of `jax.jit(...).lower(...).as_text()` is the module *before* Shardy's propagation
pipeline (only the user's annotations: argument/result shardings and sharding constraints);
`compile()` would run propagation, so we never call it. Each model is written to
`tests/models/data/<name>.mlir`; the GPT block is also the bundled example
`src/shardwise/examples/gpt_block.mlir`.

    python tools/make_models.py              # write every model
    python tools/make_models.py --check      # also run the reference pipeline on each
    python tools/make_models.py mlp_fwd_dp   # only the named models

`gpt_stack_text(depth)` is imported by `benchmarks/gen_gpt.py`.
"""

from __future__ import annotations

import os

# Eight CPU devices for the meshes; must be set before jax is imported.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
).strip()

import argparse  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.shard_alike import shard_alike  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", True)

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "tests" / "models" / "data"
EXAMPLE = ROOT / "src" / "shardwise" / "examples" / "gpt_block.mlir"
F32 = jnp.float32
# `lower` prints with `as_text(debug_info=DEBUG_INFO)`: True gives the `loc(...)` of every op
# (file:line of the JAX source), what a user gets who wants source lines (the benchmarks' variants).
DEBUG_INFO = False

# Small dimensions keep the files small; the structure is that of the real models.
BATCH, SEQ, D_MODEL, HEADS, D_FF, VOCAB = 8, 16, 64, 4, 256, 512


def mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Mesh:
    """A mesh over the 8 CPU devices with Auto axes (so sharding constraints are allowed)."""
    return Mesh(np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape), names)


def spec(*shape: int, dtype=F32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def lower(f: Callable, m: Mesh, args, in_specs, out_specs, **jit_kwargs) -> str:
    """Lower `f` under `m` with the given PartitionSpecs (None = unannotated) and return text."""

    def named(s):
        return None if s is None else NamedSharding(m, s)

    in_sh = jax.tree.map(named, in_specs, is_leaf=lambda x: x is None or isinstance(x, P))
    out_sh = jax.tree.map(named, out_specs, is_leaf=lambda x: x is None or isinstance(x, P))
    jitted = jax.jit(f, in_shardings=in_sh, out_shardings=out_sh, **jit_kwargs)
    return jitted.lower(*args).as_text(debug_info=DEBUG_INFO)


def constrain(m: Mesh, x, *parts):
    return jax.lax.with_sharding_constraint(x, NamedSharding(m, P(*parts)))


# --- MLP ---------------------------------------------------------------------------------------


def mlp(params, x):
    w1, b1, w2, b2 = params
    h = jax.nn.gelu(x @ w1 + b1)
    return h @ w2 + b2


def mlp_params():
    return (spec(D_MODEL, D_FF), spec(D_FF), spec(D_FF, D_MODEL), spec(D_MODEL))


def mlp_fwd_dp() -> str:
    """Data parallel: batch over all 8 devices, replicated weights."""
    m = mesh((8,), ("data",))
    return lower(mlp, m, (mlp_params(), spec(BATCH, D_MODEL)), ((P(),) * 4, P("data")), P("data"))


def mlp_fwd_tp() -> str:
    """Megatron tensor parallel: w1 column-split, w2 row-split, batch on "data"."""
    m = mesh((2, 4), ("data", "model"))
    w_specs = (P(None, "model"), P("model"), P("model", None), P())
    return lower(mlp, m, (mlp_params(), spec(BATCH, D_MODEL)), (w_specs, P("data")), P("data"))


def mlp_train() -> str:
    """Forward + backward (jax.grad) + SGD update, data and tensor parallel."""
    m = mesh((2, 4), ("data", "model"))

    def step(params, x, y):
        def loss_fn(p):
            return jnp.mean((mlp(p, x) - y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        new = jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
        return new, loss

    w_specs = (P(None, "model"), P("model"), P("model", None), P())
    args = (mlp_params(), spec(BATCH, D_MODEL), spec(BATCH, D_MODEL))
    return lower(step, m, args, (w_specs, P("data"), P("data")), (w_specs, P()))


# --- GPT ---------------------------------------------------------------------------------------


def layer_norm(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias


def gpt_layer_params():
    """(ln1_s, ln1_b, wqkv, wo, ln2_s, ln2_b, w1, w2)."""
    d, f = D_MODEL, D_FF
    return (spec(d), spec(d), spec(d, 3 * d), spec(d, d), spec(d), spec(d), spec(d, f), spec(f, d))


def gpt_layer_specs(model: str | tuple[str, ...] = "model", fsdp: str | None = None):
    """Megatron sharding of one layer; `fsdp` additionally shards the other weight dim."""
    return (
        P(),
        P(),
        P(fsdp, model),
        P(model, fsdp),
        P(),
        P(),
        P(fsdp, model),
        P(model, fsdp),
    )


def gpt_layer(m: Mesh, p, x, batch="data", model="model"):
    """Pre-LN transformer layer with causal attention; activations constrained Megatron-style."""
    ln1_s, ln1_b, wqkv, wo, ln2_s, ln2_b, w1, w2 = p
    b, s, d = x.shape
    hd = d // HEADS
    h = layer_norm(x, ln1_s, ln1_b)
    qkv = constrain(m, h @ wqkv, batch, None, model)
    q, k, v = jnp.split(qkv, 3, axis=-1)
    q, k, v = (t.reshape(b, s, HEADS, hd) for t in (q, k, v))
    q = constrain(m, q, batch, None, model, None)
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd).astype(np.float32)
    mask = jnp.tril(jnp.ones((s, s), dtype=bool))
    logits = jnp.where(mask, logits, -1e9)
    attn = jax.nn.softmax(logits, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, s, d)
    x = x + constrain(m, out @ wo, batch, None, None)
    h = layer_norm(x, ln2_s, ln2_b)
    h = constrain(m, jax.nn.gelu(h @ w1), batch, None, model)
    return x + constrain(m, h @ w2, batch, None, None)


def gpt_block() -> str:
    """One tensor-parallel GPT layer (attention + MLP + layernorm) on a (2, 4) mesh."""
    m = mesh((2, 4), ("data", "model"))
    args = (gpt_layer_params(), spec(BATCH, SEQ, D_MODEL))
    act = P("data", None, None)
    return lower(partial(gpt_layer, m), m, args, (gpt_layer_specs(), act), act)


def gpt_stack_text(depth: int) -> str:
    """A GPT stack of `depth` unrolled layers with embedding and LM head (forward only)."""
    m = mesh((2, 4), ("data", "model"))

    def model(embed, layers, tokens):
        x = jnp.take(embed, tokens, axis=0)
        for p in layers:
            x = gpt_layer(m, p, x)
        return x @ embed.T

    layers = tuple(gpt_layer_params() for _ in range(depth))
    args = (spec(VOCAB, D_MODEL), layers, spec(BATCH, SEQ, dtype=jnp.int32))
    in_specs = (P("model", None), tuple(gpt_layer_specs() for _ in range(depth)), P("data"))
    return lower(model, m, args, in_specs, P("data", None, "model"))


def gpt_stack_4() -> str:
    return gpt_stack_text(4)


def gpt_fsdp_3d() -> str:
    """Two GPT layers, fwd + bwd, on a (2, 2, 2) data/fsdp/model mesh (3D parallelism)."""
    m = mesh((2, 2, 2), ("data", "fsdp", "model"))
    batch = ("data", "fsdp")

    def loss_fn(layers, x):
        for p in layers:
            x = gpt_layer(m, p, x, batch=batch)
        return jnp.mean(x**2)

    def step(layers, x):
        loss, grads = jax.value_and_grad(loss_fn)(layers, x)
        return jax.tree.map(lambda p, g: p - 0.01 * g, layers, grads), loss

    w = tuple(gpt_layer_specs(fsdp="fsdp") for _ in range(2))
    args = (tuple(gpt_layer_params() for _ in range(2)), spec(BATCH, SEQ, D_MODEL))
    return lower(step, m, args, (w, P(batch)), (w, P()))


def gpt_block_train() -> str:
    """One tensor-parallel GPT layer, forward + backward + SGD update, on a (2, 4) mesh."""
    m = mesh((2, 4), ("data", "model"))

    def step(p, x):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean(gpt_layer(m, p, x) ** 2))(p)
        return jax.tree.map(lambda w, g: w - 0.01 * g, p, grads), loss

    args = (gpt_layer_params(), spec(BATCH, SEQ, D_MODEL))
    w = gpt_layer_specs()
    return lower(step, m, args, (w, P("data")), (w, P()))


# --- Other model families ---------------------------------------------------------------------


def convnet() -> str:
    """Two conv layers + pooling + dense head, batch sharded, output channels on "model"."""
    m = mesh((2, 4), ("data", "model"))

    def f(w1, w2, wd, x):
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn)
        h = jax.nn.relu(h)
        h = jax.lax.conv_general_dilated(h, w2, (2, 2), "SAME", dimension_numbers=dn)
        h = jax.nn.relu(h)
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = jnp.mean(h, axis=(1, 2))
        return h @ wd

    args = (spec(3, 3, 3, 16), spec(3, 3, 16, 32), spec(32, 10), spec(BATCH, 32, 32, 3))
    in_specs = (P(None, None, None, "model"), P(), P(), P("data"))
    return lower(f, m, args, in_specs, P("data"))


def moe() -> str:
    """Top-2 mixture of experts: router, top_k, dispatch via gather, combine via scatter-add."""
    m = mesh((2, 4), ("data", "expert"))
    n_exp, k, tokens = 8, 2, BATCH * SEQ

    def f(router, w_in, w_out, x):
        probs = jax.nn.softmax(x @ router, axis=-1)
        gate, idx = jax.lax.top_k(probs, k)  # [T, k]
        h = jnp.einsum("td,edf->tef", x, w_in)  # every expert on every token (small)
        h = jax.nn.relu(constrain(m, h, "data", "expert", None))
        y = jnp.einsum("tef,efd->ted", h, w_out)
        picked = jnp.take_along_axis(y, idx[:, :, None], axis=1)  # gather [T, k, d]
        out = jnp.sum(picked * gate[:, :, None], axis=1)
        load = jnp.zeros((n_exp,), F32).at[idx.reshape(-1)].add(1.0)  # scatter-add
        return out, load

    args = (spec(D_MODEL, n_exp), spec(n_exp, D_MODEL, 32), spec(n_exp, 32, D_MODEL))
    args += (spec(tokens, D_MODEL),)
    in_specs = (P(), P("expert"), P("expert"), P("data"))
    return lower(f, m, args, in_specs, (P("data"), P()))


def embedding() -> str:
    """Embedding lookup (jnp.take) with a vocab-sharded table, plus its gradient (scatter)."""
    m = mesh((2, 4), ("data", "model"))

    def loss(table, tokens):
        return jnp.sum(jnp.take(table, tokens, axis=0) ** 2)

    def f(table, tokens):
        return jax.value_and_grad(loss)(table, tokens)

    args = (spec(VOCAB, D_MODEL), spec(BATCH, SEQ, dtype=jnp.int32))
    return lower(f, m, args, (P("model", None), P("data")), (P(), P("model", None)))


def scan_layers() -> str:
    """lax.scan over 4 stacked MLP layers (lowers to stablehlo.while)."""
    m = mesh((2, 4), ("data", "model"))

    def f(w1s, w2s, x):
        def body(h, w):
            w1, w2 = w
            return h + jax.nn.relu(h @ w1) @ w2, jnp.mean(h)

        return jax.lax.scan(body, x, (w1s, w2s))

    args = (spec(4, D_MODEL, D_FF), spec(4, D_FF, D_MODEL), spec(BATCH, D_MODEL))
    in_specs = (P(None, None, "model"), P(None, "model", None), P("data"))
    return lower(f, m, args, in_specs, (P("data"), P()))


def while_loop() -> str:
    """A data-dependent lax.while_loop (power iteration until convergence)."""
    m = mesh((2, 4), ("data", "model"))

    def f(a, v):
        def cond(state):
            i, _, delta = state
            return (i < 50) & (delta > 1e-4)

        def body(state):
            i, v, _ = state
            w = a @ v
            w = w / jnp.linalg.norm(w, axis=0, keepdims=True)
            return i + 1, w, jnp.max(jnp.abs(w - v))

        return jax.lax.while_loop(cond, body, (0, v, jnp.float32(1.0)))[1]

    args = (spec(D_MODEL, D_MODEL), spec(D_MODEL, 8))
    return lower(f, m, args, (P("model", None), P(None, "data")), P(None, "data"))


def cond() -> str:
    """lax.cond choosing between two differently-shaped computations of the same result."""
    m = mesh((2, 4), ("data", "model"))

    def f(pred, x, w):
        return jax.lax.cond(
            pred > 0,
            lambda x, w: jnp.tanh(x @ w),
            lambda x, w: constrain(m, x, "data", "model") @ w.T.T,
            x,
            w,
        )

    args = (spec(dtype=jnp.int32), spec(BATCH, D_MODEL), spec(D_MODEL, D_MODEL))
    return lower(f, m, args, (P(), P("data"), P(None, "model")), P("data", "model"))


def shard_map_collectives() -> str:
    """shard_map with psum (row-parallel matmul) and all_gather inside, auto code around it."""
    m = mesh((2, 4), ("data", "model"))

    def inner(x, w):
        partial_sum = x @ w  # x: [b/2, d/4], w: [d/4, f]
        y = jax.lax.psum(partial_sum, "model")
        g = jax.lax.all_gather(y, "data", axis=0, tiled=True)
        return y, g

    def f(x, w):
        x = jnp.sin(x)
        y, g = jax.shard_map(
            inner,
            mesh=m,
            in_specs=(P("data", "model"), P("model", None)),
            out_specs=(P("data", None), P(None, None)),
            check_vma=False,
        )(x, w)
        return jnp.cos(y), g.sum(axis=0)

    args = (spec(BATCH, D_MODEL), spec(D_MODEL, D_FF))
    return lower(f, m, args, (None, None), (P("data"), P()))


def with_sharding_constraint() -> str:
    """Chains of constraints: open/replicated dims, a reshard in the middle, one unannotated arg."""
    m = mesh((2, 4), ("data", "model"))

    def f(x, y):
        a = constrain(m, x * 2.0, "data", None)
        b = constrain(m, a + y, None, "model")
        c = constrain(m, jnp.exp(b), P.UNCONSTRAINED, "model")
        return (c @ c.T).reshape(BATCH, 2, BATCH // 2)

    args = (spec(BATCH, D_MODEL), spec(BATCH, D_MODEL))
    return lower(f, m, args, (None, P(None, "model")), None)


def shard_alike_model() -> str:
    """jax.experimental.shard_alike ties two intermediates to one sharding group."""
    m = mesh((2, 4), ("data", "model"))

    def f(x, y):
        a = jnp.tanh(x)
        b = jnp.exp(y)
        a, b = shard_alike(a, b)
        return a + b, b * 2.0

    args = (spec(BATCH, D_MODEL), spec(BATCH, D_MODEL))
    return lower(f, m, args, (P("data", "model"), None), (None, None))


def fft() -> str:
    """FFTs (rfft2 / ifft over the last dims) with batch sharding."""
    m = mesh((2, 4), ("data", "model"))

    def f(x):
        y = jnp.fft.rfft2(x)
        z = jnp.fft.ifft(y * jnp.conj(y), axis=-1)
        return jnp.abs(z), jnp.fft.irfft2(y, s=x.shape[-2:])

    return lower(f, m, (spec(BATCH, 16, 16),), (P("data", "model"),), (P("data"), P("data")))


def linalg() -> str:
    """Batched cholesky, qr, eigh and triangular solve with batch sharding."""
    m = mesh((2, 4), ("data", "model"))

    def f(a, b):
        spd = a @ jnp.swapaxes(a, -1, -2) + 16.0 * jnp.eye(16, dtype=F32)
        lo = jnp.linalg.cholesky(spd)
        x = jax.scipy.linalg.solve_triangular(lo, b, lower=True)
        q, r = jnp.linalg.qr(a)
        w, v = jnp.linalg.eigh(spd)
        return x, q, r, w, v

    args = (spec(BATCH, 16, 16), spec(BATCH, 16, 4))
    out = (P("data"),) * 5
    return lower(f, m, args, (P("data"), P("data", None, "model")), out)


def sort_topk() -> str:
    """sort, argsort (multi-operand sort) and top_k along sharded and unsharded dims."""
    m = mesh((2, 4), ("data", "model"))

    def f(x, keys):
        s = jnp.sort(x, axis=-1)
        order = jnp.argsort(keys, axis=0)
        vals, idx = jax.lax.top_k(x, 4)
        return s, order, vals, idx

    args = (spec(BATCH, D_MODEL), spec(BATCH, D_MODEL))
    return lower(f, m, args, (P("data", "model"), P(None, "model")), (P("data"),) * 4)


def nested_calls() -> str:
    """jax.jit calling nested jitted functions (func.call), one of them called twice."""
    m = mesh((2, 4), ("data", "model"))

    @jax.jit
    def dense(x, w):
        return jax.nn.relu(x @ w)

    @jax.jit
    def block(x, w1, w2):
        h = constrain(m, dense(x, w1), "data", "model")
        return dense(h, w2) + x

    def f(x, w1, w2):
        return block(block(x, w1, w2), w1, w2)

    args = (spec(BATCH, D_MODEL), spec(D_MODEL, D_FF), spec(D_FF, D_MODEL))
    return lower(f, m, args, (P("data"), P(None, "model"), P("model")), P("data"))


def remat_train() -> str:
    """jax.checkpoint'ed layers under jax.grad: rematerialization via optimization_barrier."""
    m = mesh((2, 4), ("data", "model"))

    @jax.checkpoint
    def layer(w, x):
        return jnp.tanh(x @ w)

    def loss(w, x):
        return jnp.sum(layer(w, layer(w, x)))

    args = (spec(D_MODEL, D_MODEL), spec(BATCH, D_MODEL))
    return lower(jax.grad(loss), m, args, (P(None, "model"), P("data")), P(None, "model"))


def kv_cache_decode() -> str:
    """One decoding step: write into a sharded KV cache (dynamic_update_slice), read a window."""
    m = mesh((2, 4), ("data", "model"))

    def f(cache, x, pos):
        cache = jax.lax.dynamic_update_slice(cache, x[:, None, :], (0, pos, 0))
        start = jnp.maximum(pos - 3, 0)
        window = jax.lax.dynamic_slice(cache, (0, start, 0), (BATCH, 4, D_MODEL))
        return cache, window.sum(axis=1)

    args = (spec(BATCH, 32, D_MODEL), spec(BATCH, D_MODEL), spec(dtype=jnp.int32))
    cache = P("data", None, "model")
    return lower(f, m, args, (cache, P("data"), P()), (cache, P("data")))


def random_dropout() -> str:
    """Dropout with jax.random (threefry, nested private functions, erf_inv) on a sharded batch."""
    m = mesh((2, 4), ("data", "model"))

    def f(key, x):
        keep = jax.random.bernoulli(key, 0.9, x.shape)
        noise = jax.random.normal(jax.random.fold_in(key, 1), x.shape)
        return jnp.where(keep, x / 0.9, 0.0) + 0.01 * noise

    args = (jax.ShapeDtypeStruct((2,), jnp.uint32), spec(BATCH, D_MODEL))
    return lower(f, m, args, (P(), P("data", "model")), P("data", "model"))


def explicit_reshard() -> str:
    """Explicit-mode mesh axes: shardings in the types, jax.sharding.reshard between layers."""
    types = (jax.sharding.AxisType.Explicit,) * 2
    m = jax.make_mesh((2, 4), ("data", "model"), axis_types=types)

    def f(x, w1, w2):
        h = jax.sharding.reshard(jax.nn.relu(x @ w1), P("data", None))
        return jax.sharding.reshard(h @ w2, P(None, "model"))

    def typed(shape, parts):
        return jax.ShapeDtypeStruct(shape, F32, sharding=NamedSharding(m, parts))

    args = (typed((BATCH, D_MODEL), P("data")), typed((D_MODEL, D_FF), P(None, "model")))
    args += (typed((D_FF, D_MODEL), P()),)
    with jax.set_mesh(m):
        return jax.jit(f).lower(*args).as_text()


def misc_ops() -> str:
    """A grab bag of shape ops: concat, pad, cumsum, reverse, one_hot, argmax, strided slices."""
    m = mesh((2, 2, 2), ("x", "y", "z"))

    def f(a, b, labels):
        c = jnp.concatenate([a, b], axis=1)  # [8, 128]
        c = jnp.pad(c, ((0, 0), (2, 2)))[:, 2:-2]
        c = jnp.cumsum(c, axis=1)[:, ::-1]
        t = c.reshape(BATCH, 4, 32).transpose(2, 0, 1)  # [32, 8, 4]
        scores = jnp.einsum("kbh,kbg->bhg", t, t)  # batch dim b
        onehot = jax.nn.one_hot(labels, 4, dtype=F32)  # [8, 4]
        best = jnp.argmax(scores, axis=-1)
        bits = jax.lax.bitcast_convert_type(jnp.clip(a, -1.0, 1.0), jnp.int32)
        half = jax.lax.reduce_precision(b, exponent_bits=5, mantissa_bits=10)
        return scores * onehot[:, :, None], best, bits[::2, 1::4], half.astype(jnp.bfloat16)

    args = (spec(BATCH, D_MODEL), spec(BATCH, D_MODEL), spec(BATCH, dtype=jnp.int32))
    in_specs = (P(("x", "y"), "z"), P("x", ("y", "z")), P("x"))
    return lower(f, m, args, in_specs, (P("x"), None, P(None, "y"), P(("x", "y"))))


MODELS: dict[str, Callable[[], str]] = {
    "cond": cond,
    "convnet": convnet,
    "embedding": embedding,
    "fft": fft,
    "explicit_reshard": explicit_reshard,
    "gpt_block": gpt_block,
    "gpt_block_train": gpt_block_train,
    "gpt_fsdp_3d": gpt_fsdp_3d,
    "gpt_stack_4": gpt_stack_4,
    "kv_cache_decode": kv_cache_decode,
    "linalg": linalg,
    "misc_ops": misc_ops,
    "mlp_fwd_dp": mlp_fwd_dp,
    "mlp_fwd_tp": mlp_fwd_tp,
    "mlp_train": mlp_train,
    "moe": moe,
    "nested_calls": nested_calls,
    "random_dropout": random_dropout,
    "remat_train": remat_train,
    "scan_layers": scan_layers,
    "shard_alike": shard_alike_model,
    "shard_map_collectives": shard_map_collectives,
    "sort_topk": sort_topk,
    "while_loop": while_loop,
    "with_sharding_constraint": with_sharding_constraint,
}


def count_ops(text: str) -> int:
    """Number of operations in the module (every nesting level, the module op excluded)."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
        count = 0

        def visit(op):
            nonlocal count
            count += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return count - 1


def check(text: str) -> str:
    """'ok' if the reference parses `text` and runs sdy-propagation-pipeline on it, else why."""
    from shardwise.io.reference import run_pass_isolated

    res = run_pass_isolated(text, "sdy-propagation-pipeline")
    if res.ok:
        return "ok"
    kind = "CRASH" if res.crashed else "error"
    return f"{kind}: {res.text.strip().splitlines()[0] if res.text.strip() else '?'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="models to write (default: all)")
    parser.add_argument("--check", action="store_true", help="run the reference pipeline")
    args = parser.parse_args(argv)
    names = args.names or sorted(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {sorted(MODELS)}")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names:
        text = MODELS[name]()
        if "sdy.mesh" not in text or "#sdy.sharding" not in text:
            print(f"{name}: lowered text has no Shardy mesh/sharding", file=sys.stderr)
            failed += 1
        if "#sdy.sharding_per_value" in text:
            # Op results carry shardings only after propagation; inputs must not have them.
            print(f"{name}: lowered text already has op shardings", file=sys.stderr)
            failed += 1
        (DATA_DIR / f"{name}.mlir").write_text(text)
        if name == "gpt_block":
            EXAMPLE.write_text(text)
        status = check(text) if args.check else "-"
        failed += status not in ("ok", "-")
        kb = len(text.encode()) / 1024
        print(f"{name:28s} {count_ops(text):6d} ops {kb:7.1f} KB  reference: {status}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the planner's benchmark programs, lowered from JAX, to `benchmarks/plan/data/`.

    python benchmarks/plan/gen.py                  # every case
    python benchmarks/plan/gen.py mlp gpt_2x4      # only the named cases
    python benchmarks/plan/gen.py --list

Each case is one JAX program on one mesh, written as

- `data/<case>/input.mlir`: no shardings at all (what `shardwise plan --mesh ...` reads), and
- `data/<case>/<plan>.mlir`: the same program with one standard plan written by hand as
  argument shardings (`jax.jit(..., in_shardings=...)`); nothing else is annotated, so
  Shardy's propagation completes each plan the same way it completes the planner's output.

The plans (rows of `PLANS`, only those that make sense for the program):

| plan | batch | weights |
| --- | --- | --- |
| `dp` | every mesh axis | replicated |
| `fsdp` | every mesh axis | largest dim on every mesh axis (ZeRO-3) |
| `tp` | the non-model axes | Megatron on "model": column-split in, row-split out |
| `tp_sp` | the non-model axes, sequence on "model" | Megatron on "model" |
| `fsdp_tp` | the non-model axes | Megatron on "model", the other dim on the non-model axes |
| `ep` | every mesh axis | experts on "model" (MoE only), the rest replicated |

Widths are small (the files are about structure, and every case lowers in seconds); the
meshes are simulated CPU devices (64, for the 8x8 mesh).
"""

from __future__ import annotations

import os

os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=64"
).strip()

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", True)

DATA_DIR = Path(__file__).resolve().parent / "data"
F32 = jnp.float32

# Widths: batch divisible by 64 devices (data parallel on 8x8), heads by 8.
BATCH, SEQ, D, HEADS, FF, VOCAB = 64, 32, 128, 8, 512, 1024
CACHE = 64  # KV cache length of the decode step
# The MLP is wider and its batch smaller, so that its weights, not its activations, hold
# most of data parallel's memory (as in the GPT), and the 50%/25% budgets mean something.
MLP_D, MLP_FF, MLP_BATCH = 256, 1024, 512


def sds(*shape: int, dtype=F32) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


@dataclass(frozen=True)
class Axes:
    """The mesh's axis roles: `model` for tensor/expert parallelism, `rest` for the batch."""

    names: tuple[str, ...]
    shape: tuple[int, ...]

    @property
    def model(self) -> str:
        return self.names[-1]

    @property
    def rest(self) -> tuple[str, ...]:
        return self.names[:-1]

    @property
    def all(self) -> tuple[str, ...]:
        return self.names

    def mesh(self) -> Mesh:
        devices = np.array(jax.devices()[: int(np.prod(self.shape))]).reshape(self.shape)
        return Mesh(devices, self.names)

    def spec(self) -> str:
        return ",".join(f"{n}={s}" for n, s in zip(self.names, self.shape, strict=True))


MESH_2X4 = Axes(("data", "model"), (2, 4))
MESH_2X2X2 = Axes(("data", "fsdp", "model"), (2, 2, 2))
MESH_8X8 = Axes(("data", "model"), (8, 8))


# --- weight specs per plan ---------------------------------------------------------------------
# A weight is described by its kind: "col" (input-dim x output-dim, split on the output by
# Megatron), "row" (split on the input), "vec" (a bias/scale, replicated), "embed"
# (vocab x d: vocab on "model"), "expert_col"/"expert_row" (a leading expert dim).


def weight_spec(kind: str, plan: str, ax: Axes, stacked: bool = False) -> P:
    lead = (None,) if stacked else ()
    m, rest, every = ax.model, ax.rest, ax.all
    rest_or_none = rest if rest else None
    table = {
        "dp": {},
        "fsdp": {
            "col": (every, None),
            "row": (every, None),
            "embed": (every, None),
            "expert_col": (None, every, None),
            "expert_row": (None, every, None),
        },
        "tp": {
            "col": (None, m),
            "row": (m, None),
            "embed": (m, None),
            "expert_col": (None, None, m),
            "expert_row": (None, m, None),
        },
        "fsdp_tp": {
            "col": (rest_or_none, m),
            "row": (m, rest_or_none),
            "embed": (m, rest_or_none),
            "expert_col": (None, rest_or_none, m),
            "expert_row": (None, m, rest_or_none),
        },
        "ep": {"expert_col": (m, None, None), "expert_row": (m, None, None)},
    }
    table["tp_sp"] = table["tp"]
    parts = table[plan].get(kind)
    if parts is None:
        return P()
    return P(*lead, *parts)


def fit(spec: P, shape: tuple[int, ...], ax: Axes) -> P:
    """`spec` with the axes a dim cannot be split by dropped (a 3-channel image stays whole)."""
    size = dict(zip(ax.names, ax.shape, strict=True))
    parts = []
    for dim, part in zip(shape, tuple(spec) + (None,) * (len(shape) - len(spec)), strict=True):
        axes = () if part is None else (part,) if isinstance(part, str) else tuple(part)
        kept: list[str] = []
        for a in axes:
            if dim % (int(np.prod([size[k] for k in kept])) * size[a]) == 0:
                kept.append(a)
        parts.append(None if not kept else kept[0] if len(kept) == 1 else tuple(kept))
    return P(*parts)


def batch_spec(plan: str, ax: Axes, rank: int, seq_dim: int | None = None) -> P:
    """The activation input: batch on every axis (dp, fsdp, ep) or the non-model axes."""
    batch = ax.all if plan in ("dp", "fsdp", "ep") else (ax.rest or None)
    parts: list = [batch] + [None] * (rank - 1)
    if plan == "tp_sp" and seq_dim is not None:
        parts[seq_dim] = ax.model
    return P(*parts)


# --- programs -----------------------------------------------------------------------------------


def sgd(loss_fn: Callable) -> Callable:
    """A train step: value_and_grad of `loss_fn(params, *data)` and an SGD update."""

    def step(params, *data):
        loss, grads = jax.value_and_grad(loss_fn)(params, *data)
        return jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads), loss

    return step


def layer_norm(x, scale, bias):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale + bias


GPT_LAYER_KINDS = ("vec", "vec", "col", "row", "vec", "vec", "col", "row")


def gpt_layer_params(stacked: int = 0, d: int = D, ff: int = FF):
    lead = (stacked,) if stacked else ()
    shapes = ((d,), (d,), (d, 3 * d), (d, d), (d,), (d,), (d, ff), (ff, d))
    return tuple(sds(*lead, *s) for s in shapes)


def attention(q, k, v, causal: bool = True):
    hd = q.shape[-1]
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.float32(np.sqrt(hd))
    if causal:
        mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), dtype=bool))
        logits = jnp.where(mask, logits, -1e9)
    return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(logits, axis=-1), v)


def gpt_layer(p, x):
    ln1_s, ln1_b, wqkv, wo, ln2_s, ln2_b, w1, w2 = p
    b, s, d = x.shape
    q, k, v = jnp.split(layer_norm(x, ln1_s, ln1_b) @ wqkv, 3, axis=-1)
    q, k, v = (t.reshape(b, s, HEADS, d // HEADS) for t in (q, k, v))
    x = x + attention(q, k, v).reshape(b, s, d) @ wo
    h = jax.nn.gelu(layer_norm(x, ln2_s, ln2_b) @ w1)
    return x + h @ w2


def lm_loss(embed, x, tokens):
    logits = x @ embed.T
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, tokens[..., None], axis=-1))


@dataclass(frozen=True)
class Case:
    """One benchmark program: how to lower it under a plan (None: unannotated)."""

    name: str
    axes: Axes
    plans: tuple[str, ...]
    lower: Callable[[Axes, str | None], str]
    about: str


def _lower(fn: Callable, ax: Axes, args, in_specs) -> str:
    """Lower `fn` on the case's mesh with `in_specs` (None: no shardings at all)."""
    if in_specs is None:
        return jax.jit(fn).lower(*args).as_text()
    m = ax.mesh()
    specs = jax.tree.map(
        lambda s, a: fit(s, a.shape, ax), in_specs, args, is_leaf=lambda s: isinstance(s, P)
    )
    shardings = jax.tree.map(
        lambda s: NamedSharding(m, s), specs, is_leaf=lambda s: isinstance(s, P)
    )
    return jax.jit(fn, in_shardings=shardings).lower(*args).as_text()


def mlp_case(ax: Axes, plan: str | None) -> str:
    """A 4-layer MLP (d -> ff -> d, twice) train step."""
    kinds = ("col", "vec", "row", "vec") * 2
    shapes = ((MLP_D, MLP_FF), (MLP_FF,), (MLP_FF, MLP_D), (MLP_D,)) * 2

    def loss(params, x, y):
        h = x
        for i in range(0, len(params), 4):
            w1, b1, w2, b2 = params[i : i + 4]
            h = h + jax.nn.gelu(h @ w1 + b1) @ w2 + b2
        return jnp.mean((h - y) ** 2)

    params = tuple(sds(*s) for s in shapes)
    args = (params, sds(MLP_BATCH, MLP_D), sds(MLP_BATCH, MLP_D))
    specs = None
    if plan is not None:
        w = tuple(weight_spec(k, plan, ax) for k in kinds)
        specs = (w, batch_spec(plan, ax, 2), batch_spec(plan, ax, 2))
    return _lower(sgd(loss), ax, args, specs)


def gpt_specs(plan: str, ax: Axes, depth: int, stacked: bool):
    layer = tuple(weight_spec(k, plan, ax, stacked) for k in GPT_LAYER_KINDS)
    layers = layer if stacked else tuple(layer for _ in range(depth))
    tokens = batch_spec(plan, ax, 2, seq_dim=1)
    return (weight_spec("embed", plan, ax), layers), tokens, tokens


def gpt_train_case(
    depth: int, stacked: bool = False, d: int = D, ff: int = FF, batch: int = BATCH
) -> Callable[[Axes, str | None], str]:
    """A GPT train step: embedding, `depth` pre-LN layers (unrolled or a `lax.scan`), LM loss."""

    def lower(ax: Axes, plan: str | None) -> str:
        def loss(params, tokens, targets):
            embed, layers = params
            x = jnp.take(embed, tokens, axis=0)
            if stacked:
                x, _ = jax.lax.scan(lambda h, p: (gpt_layer(p, h), None), x, layers)
            else:
                for p in layers:
                    x = gpt_layer(p, x)
            return lm_loss(embed, x, targets)

        layers = (
            gpt_layer_params(depth, d, ff)
            if stacked
            else tuple(gpt_layer_params(0, d, ff) for _ in range(depth))
        )
        tok = sds(batch, SEQ, dtype=jnp.int32)
        args = ((sds(VOCAB, d), layers), tok, tok)
        specs = None if plan is None else gpt_specs(plan, ax, depth, stacked)
        return _lower(sgd(loss), ax, args, specs)

    return lower


def moe_case(ax: Axes, plan: str | None) -> str:
    """4 layers of a top-2 mixture of 8 experts (router, top_k, dense dispatch), train step."""
    n_exp, k, hidden, depth = 8, 2, 256, 4

    def layer(p, x):
        router, w_in, w_out = p
        probs = jax.nn.softmax(x @ router, axis=-1)
        gate, idx = jax.lax.top_k(probs, k)
        dispatch = jnp.sum(jax.nn.one_hot(idx, n_exp) * gate[..., None], axis=1)  # [T, E]
        h = jax.nn.relu(jnp.einsum("td,edf->tef", x, w_in))
        y = jnp.einsum("tef,efd->ted", h, w_out)
        return x + jnp.einsum("ted,te->td", y, dispatch)

    def loss(layers, x, y):
        for p in layers:
            x = layer(p, x)
        return jnp.mean((x - y) ** 2)

    one = (sds(D, n_exp), sds(n_exp, D, hidden), sds(n_exp, hidden, D))
    args = (tuple(one for _ in range(depth)), sds(BATCH * SEQ, D), sds(BATCH * SEQ, D))
    specs = None
    if plan is not None:
        kinds = ("vec", "expert_col", "expert_row")
        w = tuple(tuple(weight_spec(kd, plan, ax) for kd in kinds) for _ in range(depth))
        specs = (w, batch_spec(plan, ax, 2), batch_spec(plan, ax, 2))
    return _lower(sgd(loss), ax, args, specs)


def unet_case(ax: Axes, plan: str | None) -> str:
    """A small U-Net (3 levels: conv, stride-2 down, transposed-conv up, skip concat), train."""
    dn = ("NHWC", "HWIO", "NHWC")
    chans = (16, 32, 64)
    size = 32

    def conv(x, w, stride=1):
        return jax.lax.conv_general_dilated(x, w, (stride, stride), "SAME", dimension_numbers=dn)

    def up(x, w):
        return jax.lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=dn)

    shapes = [(3, 3, 3, chans[0])]
    shapes += [(3, 3, chans[i], chans[i + 1]) for i in range(2)]  # down (stride 2)
    shapes += [(3, 3, chans[i + 1], chans[i]) for i in (1, 0)]  # up (transposed)
    shapes += [(3, 3, 2 * chans[i], chans[i]) for i in (1, 0)]  # after the skip concat
    shapes += [(1, 1, chans[0], 3)]

    def loss(ws, x, y):
        stem, d1, d2, u2, u1, c2, c1, head = ws
        h0 = jax.nn.relu(conv(x, stem))
        h1 = jax.nn.relu(conv(h0, d1, 2))
        h2 = jax.nn.relu(conv(h1, d2, 2))
        g1 = jax.nn.relu(conv(jnp.concatenate([up(h2, u2), h1], -1), c2))
        g0 = jax.nn.relu(conv(jnp.concatenate([up(g1, u1), h0], -1), c1))
        return jnp.mean((conv(g0, head) - y) ** 2)

    img = sds(BATCH, size, size, 3)
    args = (tuple(sds(*s) for s in shapes), img, img)
    specs = None
    if plan is not None:
        # A conv kernel HWIO: "col" = output channels on model, "row" = input channels.
        def kernel(i: int, s: tuple[int, ...]) -> P:
            kind = "col" if i % 2 == 0 else "row"
            two = weight_spec(kind, plan, ax)
            if two == P():
                return P()
            return P(None, None, *two)

        specs = (
            tuple(kernel(i, s) for i, s in enumerate(shapes)),
            batch_spec(plan, ax, 4),
            batch_spec(plan, ax, 4),
        )
    return _lower(sgd(loss), ax, args, specs)


def decode_case(ax: Axes, plan: str | None) -> str:
    """A GPT decode step of 24 layers: one new token, a KV cache per layer updated in place."""
    depth, hd = 24, D // HEADS

    def step(params, cache, tokens, pos):
        embed, layers = params
        x = jnp.take(embed, tokens, axis=0)  # [B, 1, D]
        new_cache = []
        for p, (kc, vc) in zip(layers, cache, strict=True):
            ln1_s, ln1_b, wqkv, wo, ln2_s, ln2_b, w1, w2 = p
            q, k, v = jnp.split(layer_norm(x, ln1_s, ln1_b) @ wqkv, 3, axis=-1)
            q, k, v = (t.reshape(BATCH, 1, HEADS, hd) for t in (q, k, v))
            kc = jax.lax.dynamic_update_slice(kc, k, (0, pos, 0, 0))
            vc = jax.lax.dynamic_update_slice(vc, v, (0, pos, 0, 0))
            x = x + attention(q, kc, vc, causal=False).reshape(BATCH, 1, D) @ wo
            x = x + jax.nn.gelu(layer_norm(x, ln2_s, ln2_b) @ w1) @ w2
            new_cache.append((kc, vc))
        return jnp.argmax(x @ embed.T, axis=-1), tuple(new_cache)

    kv = sds(BATCH, CACHE, HEADS, hd)
    layers = tuple(gpt_layer_params() for _ in range(depth))
    cache = tuple((kv, kv) for _ in range(depth))
    args = ((sds(VOCAB, D), layers), cache, sds(BATCH, 1, dtype=jnp.int32), sds(dtype=jnp.int32))
    specs = None
    if plan is not None:
        (embed, lspecs), _, _ = gpt_specs(plan, ax, depth, False)
        batch = batch_spec(plan, ax, 1)[0]
        heads = ax.model if plan in ("tp", "tp_sp", "fsdp_tp") else None
        seq = ax.model if plan == "tp_sp" else None
        kv_spec = P(batch, seq, heads if seq is None else None, None)
        specs = (
            (embed, lspecs),
            tuple((kv_spec, kv_spec) for _ in range(depth)),
            P(batch, None),
            P(),
        )
    return _lower(step, ax, args, specs)


STANDARD = ("dp", "fsdp", "tp", "tp_sp", "fsdp_tp")
CASES = {
    c.name: c
    for c in (
        Case("mlp", MESH_2X4, ("dp", "fsdp", "tp", "fsdp_tp"), mlp_case, "4-layer MLP train step"),
        Case("gpt_2x4", MESH_2X4, STANDARD, gpt_train_case(24), "GPT-24 train step, 2x4"),
        Case("gpt_2x2x2", MESH_2X2X2, STANDARD, gpt_train_case(24), "GPT-24 train step, 2x2x2"),
        Case("gpt_8x8", MESH_8X8, STANDARD, gpt_train_case(24), "GPT-24 train step, 8x8"),
        Case(
            "gpt_wide",
            MESH_2X4,
            STANDARD,
            gpt_train_case(24, d=512, ff=2048, batch=8),
            "GPT-24, d 512, batch 8 (weights hold most of dp's memory), 2x4",
        ),
        Case("gpt_scan", MESH_2X4, STANDARD, gpt_train_case(24, True), "GPT-24 as a scan, 2x4"),
        Case("moe", MESH_2X4, ("dp", "fsdp", "tp", "fsdp_tp", "ep"), moe_case, "MoE top-2 of 8"),
        Case("unet", MESH_2X4, ("dp", "fsdp", "tp", "fsdp_tp"), unet_case, "U-Net train step"),
        Case("decode", MESH_2X4, STANDARD, decode_case, "GPT-24 decode step, KV cache"),
    )
}


def write_case(case: Case) -> None:
    out = DATA_DIR / case.name
    out.mkdir(parents=True, exist_ok=True)
    (out / "mesh.txt").write_text(case.axes.spec() + "\n")
    for plan in (None, *case.plans):
        start = time.perf_counter()
        text = case.lower(case.axes, plan)
        name = "input" if plan is None else plan
        (out / f"{name}.mlir").write_text(text)
        took = time.perf_counter() - start
        print(f"{case.name}/{name}.mlir: {len(text) // 1024} KB, lowered in {took:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help=f"some of: {', '.join(CASES)}")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    if args.list:
        for c in CASES.values():
            print(f"{c.name:<10} mesh {c.axes.spec():<22} plans {','.join(c.plans):<28} {c.about}")
        return 0
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    for name in args.cases or list(CASES):
        write_case(CASES[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())

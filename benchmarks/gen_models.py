"""Write deep models of other shapes than the GPT stack, lowered from JAX, to `benchmarks/data/`.

    python benchmarks/gen_models.py                   # every family at its default depth
    python benchmarks/gen_models.py moe conv --depth 16

Families (each file is `jax.jit(...).lower(...).as_text()`: before propagation, with only the
user's annotations, as `gen_gpt.py`):

- `moe_<depth>`: `depth` top-2 mixture-of-experts layers with residuals on a (2, 4)
  "data"/"expert" mesh: router softmax, `top_k`, every expert on every token, the top-k outputs
  gathered (`take_along_axis`) and a scatter-add of the expert load.
- `conv_<depth>`: `depth` convolutions (3x3, SAME, ReLU, a stride-2 one every fourth layer)
  with batch on "data" and output channels on "model", then pooling and a dense head.
- `scan_<depth>`: `lax.scan` over `depth` stacked GPT layers (one `stablehlo.while` whose
  body is one layer; the op count does not grow with depth).
- `train_<depth>`: `depth` unrolled GPT layers, forward + backward (`jax.grad`) + SGD update
  (`train --depth 128`: the 128-layer GPT training step of issue 21).
- `adam_<depth>`: `depth` dense + GELU layers (Megatron column/row splits alternating), forward
  + backward + an Adam update (first and second moments in, out with the weights).

`--debug-info` prints each with `as_text(debug_info=True)` (a `loc(...)` of the JAX source on
every op) to `<family>_<depth>_debug.mlir`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "benchmarks" / "data"

sys.path.insert(0, str(ROOT / "tools"))
import make_models as mm  # noqa: E402  (sets the 8 CPU devices before importing jax)
from make_models import P, jax, jnp  # noqa: E402

DEFAULT_DEPTHS = {"moe": 128, "conv": 256, "scan": 64, "train": 32, "adam": 64}


def moe_text(depth: int) -> str:
    m = mm.mesh((2, 4), ("data", "expert"))
    n_exp, k, tokens, hidden = 8, 2, mm.BATCH * mm.SEQ, 32

    def layer(p, x):
        router, w_in, w_out = p
        probs = jax.nn.softmax(x @ router, axis=-1)
        gate, idx = jax.lax.top_k(probs, k)
        h = jnp.einsum("td,edf->tef", x, w_in)
        h = jax.nn.relu(mm.constrain(m, h, "data", "expert", None))
        y = jnp.einsum("tef,efd->ted", h, w_out)
        picked = jnp.take_along_axis(y, idx[:, :, None], axis=1)
        load = jnp.zeros((n_exp,), mm.F32).at[idx.reshape(-1)].add(1.0)
        return x + jnp.sum(picked * gate[:, :, None], axis=1), load

    def model(layers, x):
        loads = []
        for p in layers:
            x, load = layer(p, x)
            loads.append(load)
        return x, sum(loads)

    d = mm.D_MODEL
    params = (mm.spec(d, n_exp), mm.spec(n_exp, d, hidden), mm.spec(n_exp, hidden, d))
    layers = tuple(params for _ in range(depth))
    specs = tuple((P(), P("expert"), P("expert")) for _ in range(depth))
    args = (layers, mm.spec(tokens, d))
    return mm.lower(model, m, args, (specs, P("data")), (P("data"), P()))


def conv_text(depth: int) -> str:
    m = mm.mesh((2, 4), ("data", "model"))
    channels = 16
    dn = ("NHWC", "HWIO", "NHWC")

    def model(ws, head, x):
        for i, w in enumerate(ws):
            stride = (2, 2) if i % 4 == 3 and x.shape[1] > 4 else (1, 1)
            x = jax.nn.relu(
                jax.lax.conv_general_dilated(x, w, stride, "SAME", dimension_numbers=dn)
            )
        return jnp.mean(x, axis=(1, 2)) @ head

    ws = (mm.spec(3, 3, 3, channels),) + tuple(
        mm.spec(3, 3, channels, channels) for _ in range(depth - 1)
    )
    w_specs = tuple(P(None, None, None, "model") for _ in range(depth))
    args = (ws, mm.spec(channels, 10), mm.spec(mm.BATCH, 32, 32, 3))
    return mm.lower(model, m, args, (w_specs, P(), P("data")), P("data"))


def scan_text(depth: int) -> str:
    m = mm.mesh((2, 4), ("data", "model"))

    def model(layers, x):
        def body(h, p):
            return mm.gpt_layer(m, p, h), jnp.mean(h)

        return jax.lax.scan(body, x, layers)

    stacked = tuple(mm.spec(depth, *s.shape) for s in mm.gpt_layer_params())
    specs = tuple(P(None, *s) for s in mm.gpt_layer_specs())
    args = (stacked, mm.spec(mm.BATCH, mm.SEQ, mm.D_MODEL))
    return mm.lower(model, m, args, (specs, P("data")), (P("data"), P()))


def train_text(depth: int) -> str:
    m = mm.mesh((2, 4), ("data", "model"))

    def loss_fn(layers, x):
        for p in layers:
            x = mm.gpt_layer(m, p, x)
        return jnp.mean(x**2)

    def step(layers, x):
        loss, grads = jax.value_and_grad(loss_fn)(layers, x)
        return jax.tree.map(lambda w, g: w - 0.01 * g, layers, grads), loss

    layers = tuple(mm.gpt_layer_params() for _ in range(depth))
    specs = tuple(mm.gpt_layer_specs() for _ in range(depth))
    args = (layers, mm.spec(mm.BATCH, mm.SEQ, mm.D_MODEL))
    return mm.lower(step, m, args, (specs, P("data")), (specs, P()))


def adam_text(depth: int) -> str:
    m = mm.mesh((2, 4), ("data", "model"))
    b1, b2, lr, eps = 0.9, 0.999, 1e-3, 1e-8

    def loss_fn(ws, x, y):
        for w in ws:
            x = jax.nn.gelu(x @ w)
        return jnp.mean((x - y) ** 2)

    def step(ws, mu, nu, count, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ws, x, y)
        count = count + 1
        mu = jax.tree.map(lambda m_, g: b1 * m_ + (1 - b1) * g, mu, grads)
        nu = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, nu, grads)
        c1, c2 = 1 - b1**count, 1 - b2**count
        ws = jax.tree.map(
            lambda w, m_, v: w - lr * (m_ / c1) / (jnp.sqrt(v / c2) + eps), ws, mu, nu
        )
        return ws, mu, nu, count, loss

    d = mm.D_MODEL
    ws = tuple(mm.spec(d, d) for _ in range(depth))
    w_specs = tuple(P(None, "model") if i % 2 == 0 else P("model", None) for i in range(depth))
    batch = mm.spec(mm.BATCH, d)
    args = (ws, ws, ws, mm.spec(dtype=mm.F32), batch, batch)
    in_specs = (w_specs, w_specs, w_specs, P(), P("data"), P("data"))
    return mm.lower(step, m, args, in_specs, (w_specs, w_specs, w_specs, P(), P()))


FAMILIES = {
    "moe": moe_text,
    "conv": conv_text,
    "scan": scan_text,
    "train": train_text,
    "adam": adam_text,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="*", help=f"any of {', '.join(FAMILIES)} (default: all)")
    parser.add_argument("--depth", type=int, help="depth of every family written")
    parser.add_argument("--debug-info", action="store_true", help="as_text(debug_info=True)")
    args = parser.parse_args(argv)
    mm.DEBUG_INFO = args.debug_info
    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown family {unknown[0]!r}; choose from {', '.join(FAMILIES)}")
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for family in args.families or FAMILIES:
        depth = args.depth or DEFAULT_DEPTHS[family]
        text = FAMILIES[family](depth)
        path = DATA_DIR / f"{family}_{depth}{'_debug' if args.debug_info else ''}.mlir"
        path.write_text(text)
        kb = len(text.encode()) / 1024
        print(f"{path.relative_to(ROOT)}: {mm.count_ops(text)} ops, {kb:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

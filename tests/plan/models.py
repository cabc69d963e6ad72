"""Small JAX programs for the planner's tests: lowered without shardings (the plan adds them)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

jax.config.update("jax_use_shardy_partitioner", True)

F32 = jnp.float32


def _spec(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, F32)


def _sgd(loss_fn, params, *data):
    loss, grads = jax.value_and_grad(loss_fn)(params, *data)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss


def mlp_train(batch: int = 256, d: int = 1024, h: int = 4096):
    """A two-layer MLP train step: (step, example args)."""

    def loss_fn(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def step(params, x, y):
        return _sgd(loss_fn, params, x, y)

    params = {"w1": _spec(d, h), "w2": _spec(h, d)}
    return step, (params, _spec(batch, d), _spec(batch, d))


def _layer(p, x, heads: int):
    b, s, d = x.shape
    q, k, v = (jnp.einsum("bsd,de->bse", x, p[n]).reshape(b, s, heads, d // heads) for n in "qkv")
    logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(jnp.float32(d // heads))
    attn = jax.nn.softmax(logits, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, s, d)
    x = x + out @ p["o"]
    return x + jax.nn.relu(x @ p["w1"]) @ p["w2"]


def attention_train(layers: int = 2, batch: int = 16, seq: int = 128, d: int = 512):
    """A stack of attention + MLP layers, train step: (step, example args)."""
    heads, ff = 8, 4 * d

    def loss_fn(ps, x):
        for p in ps:
            x = _layer(p, x, heads)
        return jnp.mean(x**2)

    def step(ps, x):
        return _sgd(loss_fn, ps, x)

    one = {"q": _spec(d, d), "k": _spec(d, d), "v": _spec(d, d), "o": _spec(d, d)}
    params = [{**one, "w1": _spec(d, ff), "w2": _spec(ff, d)} for _ in range(layers)]
    return step, (params, _spec(batch, seq, d))

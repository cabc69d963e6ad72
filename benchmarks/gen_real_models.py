"""Write real models from a published JAX library, lowered with shardings, to `benchmarks/data/`.

    pip install -e '.[bench]'                     # transformers 4.x (its Flax models) + flax
    python benchmarks/gen_real_models.py              # every model
    python benchmarks/gen_real_models.py t5 vit       # only these
    python benchmarks/gen_real_models.py --debug-info # <name>_debug.mlir, with loc(...)

The models are Hugging Face `transformers`' Flax implementations, built from a config with
random weights: nothing is downloaded (the weights are never even materialised: their shapes come
from `jax.eval_shape`, and `lower` needs nothing more). Each file is
`jax.jit(...).lower(...).as_text()` on a (2, 4) "data"/"model" mesh of 8 simulated CPU devices:
the batch on "data", the attention and MLP weights Megatron-split on "model" (column-parallel
kernels `(None, "model")`, row-parallel ones `("model", None)`) through `in_shardings`, every
other weight replicated, outputs unannotated (a train step returns its weights with their input
shardings). So the module is the one before propagation, with only the user's annotations.

- `resnet18_train`: ResNet-18 (basic blocks, depths 2-2-2-2, widths 64-512) train step: forward
  with batch-norm statistics updated, softmax cross-entropy, `jax.grad`, SGD; the last stage's
  conv kernels and the classifier split on "model".
- `t5_small`: T5-small (6 + 6 layers, d_model 512) encoder-decoder forward, logits out.
- `vit_base`: ViT-Base/16 (12 layers, hidden 768, 224x224 images) classification forward.
- `llama`: a Llama-style decoder (8 layers, hidden 512, RMSNorm, rotary, SwiGLU) forward.
- `llama_train`: the same decoder's train step (next-token cross-entropy, grad, SGD).
- `mistral`: a Mistral-style decoder (8 layers, grouped-query attention with 2 KV heads,
  sliding window 64) forward.

transformers 4.57's Flax T5 calls `jnp.clip(..., a_max=...)`, an argument jax 0.10 no longer
takes; `_clip_compat` translates it while T5 is traced (only in this script's process).
"""

from __future__ import annotations

import os

# Eight CPU devices for the mesh; must be set before jax is imported.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
).strip()
# Never reach for the hub: every model is built from a config.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

jax.config.update("jax_use_shardy_partitioner", True)

ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = ROOT / "benchmarks" / "data"
BATCH, SEQ, IMAGE = 8, 128, 224
COL, ROW = P(None, "model"), P("model", None)
# (regex on the "/"-joined parameter path, spec); first match wins, no match: replicated.
Rules = tuple[tuple[str, P], ...]


def _mesh() -> Mesh:
    return Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))


def _specs(tree, rules: Rules):
    def spec(path, leaf) -> P:
        name = "/".join(str(getattr(k, "key", k)) for k in path)
        for pattern, s in rules:
            if re.search(pattern, name) and len(s) <= leaf.ndim:
                return s
        return P()

    return jax.tree_util.tree_map_with_path(spec, tree)


def _lower(f: Callable, args, in_specs, out_specs, debug_info: bool) -> str:
    m = _mesh()

    def named(s):
        return None if s is None else NamedSharding(m, s)

    def is_leaf(x):
        return x is None or isinstance(x, P)

    in_sh = jax.tree.map(named, in_specs, is_leaf=is_leaf)
    out_sh = jax.tree.map(named, out_specs, is_leaf=is_leaf)
    jitted = jax.jit(f, in_shardings=in_sh, out_shardings=out_sh)
    return jitted.lower(*args).as_text(debug_info=debug_info)


def _shapes(model) -> dict:
    """The parameter tree's shapes and dtypes (`_do_init=False`: no weight is ever computed)."""
    return model.params_shape_tree


def _ints(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.int32)


def _xent(logits, labels):
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))


def _sgd(params, grads):
    return jax.tree.map(lambda w, g: w - 0.01 * g, params, grads)


# --- ResNet-18 train step --------------------------------------------------------------------


def resnet18_train(debug_info: bool) -> str:
    from transformers import FlaxResNetForImageClassification, ResNetConfig

    config = ResNetConfig(
        layer_type="basic",
        depths=[2, 2, 2, 2],
        hidden_sizes=[64, 128, 256, 512],
        embedding_size=64,
        num_labels=1000,
    )
    model = FlaxResNetForImageClassification(config, _do_init=False)
    variables = _shapes(model)
    params, stats = variables["params"], variables["batch_stats"]

    def step(params, stats, images, labels):
        def loss_fn(p):
            out, new = model(images, {"params": p, "batch_stats": stats}, train=True)
            return _xent(out.logits, labels), new["batch_stats"]

        (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        return _sgd(params, grads), new_stats, loss

    rules: Rules = ((r"stages/3/.*convolution/kernel", P(None, None, None, "model")),)
    rules += ((r"classifier.*kernel", COL),)
    p_specs, s_specs = _specs(params, rules), _specs(stats, ())
    images = jax.ShapeDtypeStruct((BATCH, 3, IMAGE, IMAGE), jnp.float32)
    args = (params, stats, images, _ints(BATCH))
    in_specs = (p_specs, s_specs, P("data"), P("data"))
    return _lower(step, args, in_specs, (p_specs, s_specs, P()), debug_info)


# --- T5 ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def _clip_compat() -> Iterator[None]:
    """`jnp.clip(x, a_min=, a_max=)` as transformers 4.x's Flax T5 calls it (jax 0.10: min/max)."""
    clip = jnp.clip

    def compat(x, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002
        return clip(x, a_min if min is None else min, a_max if max is None else max)

    jnp.clip = compat
    try:
        yield
    finally:
        jnp.clip = clip


T5_RULES: Rules = (
    (r"(SelfAttention|EncDecAttention)/(q|k|v)/kernel", COL),
    (r"(SelfAttention|EncDecAttention)/o/kernel", ROW),
    (r"DenseReluDense/wi.*/kernel", COL),
    (r"DenseReluDense/wo/kernel", ROW),
)


def t5_small(debug_info: bool) -> str:
    from transformers import FlaxT5ForConditionalGeneration, T5Config

    config = T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8)
    with _clip_compat():  # the constructor traces the model too (for the shapes)
        model = FlaxT5ForConditionalGeneration(config, _do_init=False)
        params = _shapes(model)

        def forward(params, inputs, mask, decoder_inputs):
            out = model(inputs, mask, decoder_input_ids=decoder_inputs, params=params, train=False)
            return out.logits

        specs = _specs(params, T5_RULES)
        args = (params, _ints(BATCH, SEQ), _ints(BATCH, SEQ), _ints(BATCH, SEQ // 2))
        in_specs = (specs, P("data"), P("data"), P("data"))
        return _lower(forward, args, in_specs, None, debug_info)


# --- ViT ---------------------------------------------------------------------------------------


def vit_base(debug_info: bool) -> str:
    from transformers import FlaxViTForImageClassification, ViTConfig

    config = ViTConfig(image_size=IMAGE, patch_size=16, num_labels=1000)
    model = FlaxViTForImageClassification(config, _do_init=False)
    params = _shapes(model)

    def forward(params, images):
        return model(images, params=params, train=False).logits

    rules: Rules = (
        (r"attention/attention/(query|key|value)/kernel", COL),
        (r"attention/output/dense/kernel", ROW),
        (r"intermediate/dense/kernel", COL),
        (r"layer/\d+/output/dense/kernel", ROW),
    )
    specs = _specs(params, rules)
    images = jax.ShapeDtypeStruct((BATCH, 3, IMAGE, IMAGE), jnp.float32)
    return _lower(forward, (params, images), (specs, P("data")), None, debug_info)


# --- Llama / Mistral-style decoders ------------------------------------------------------------

DECODER_RULES: Rules = (
    (r"self_attn/(q|k|v)_proj/kernel", COL),
    (r"self_attn/o_proj/kernel", ROW),
    (r"mlp/(gate|up)_proj/kernel", COL),
    (r"mlp/down_proj/kernel", ROW),
)
DECODER = {
    "vocab_size": 32000,
    "hidden_size": 512,
    "intermediate_size": 1408,
    "num_hidden_layers": 8,
    "num_attention_heads": 8,
    "max_position_embeddings": 2 * SEQ,
}


def _decoder(kind: str):
    if kind == "llama":
        from transformers import FlaxLlamaForCausalLM, LlamaConfig

        return FlaxLlamaForCausalLM(LlamaConfig(**DECODER), _do_init=False)
    from transformers import FlaxMistralForCausalLM, MistralConfig

    config = MistralConfig(**DECODER, num_key_value_heads=2, sliding_window=SEQ // 2)
    return FlaxMistralForCausalLM(config, _do_init=False)


def _decoder_args(model):
    params = _shapes(model)
    specs = _specs(params, DECODER_RULES)
    return params, specs, _ints(BATCH, SEQ)


def _decoder_forward(kind: str, debug_info: bool) -> str:
    model = _decoder(kind)
    params, specs, tokens = _decoder_args(model)

    def forward(params, tokens):
        return model(tokens, params=params, train=False).logits

    return _lower(forward, (params, tokens), (specs, P("data")), None, debug_info)


def llama(debug_info: bool) -> str:
    return _decoder_forward("llama", debug_info)


def mistral(debug_info: bool) -> str:
    return _decoder_forward("mistral", debug_info)


def llama_train(debug_info: bool) -> str:
    model = _decoder("llama")
    params, specs, tokens = _decoder_args(model)

    def step(params, tokens):
        def loss_fn(p):
            logits = model(tokens, params=p, train=False).logits
            return _xent(logits[:, :-1], tokens[:, 1:])

        loss, grads = jax.value_and_grad(loss_fn)(params)
        return _sgd(params, grads), loss

    return _lower(step, (params, tokens), (specs, P("data")), (specs, P()), debug_info)


MODELS: dict[str, Callable[[bool], str]] = {
    "resnet18_train": resnet18_train,
    "t5_small": t5_small,
    "vit_base": vit_base,
    "llama": llama,
    "llama_train": llama_train,
    "mistral": mistral,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"any of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--debug-info", action="store_true", help="as_text(debug_info=True)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model {unknown[0]!r}; choose from {', '.join(MODELS)}")
    sys.path.insert(0, str(ROOT / "tools"))
    from make_models import count_ops

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    for name in args.models or MODELS:
        text = MODELS[name](args.debug_info)
        path = DATA_DIR / f"{name}{'_debug' if args.debug_info else ''}.mlir"
        path.write_text(text)
        kb = len(text.encode()) / 1024
        print(f"{path.relative_to(ROOT)}: {count_ops(text)} ops, {kb:.0f} KB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`shardwise.from_jax` takes what `jax.jit` takes, and says what is wrong in the user's terms.

Each input form is lowered twice: by `from_jax`, and by `jax.jit` itself with the same
shardings given to jit natively (abstract mesh, no devices). The function signatures must hold
the same shardings and names, and our propagation of our module must equal Shardy's
propagation of JAX's module, value by value.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwise
from shardwise.errors import InputError
from shardwise.io.reference import run_pass
from shardwise.ir import func_arg_attrs, func_result_attrs

S = jax.ShapeDtypeStruct
F32 = jnp.float32
MESH = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def ns(*spec):
    return NamedSharding(MESH, P(*spec))


def layer(p, x):
    return jnp.tanh(x @ p["wq"]) @ p["wo"]


def model(params, x):
    for p in params["layers"]:
        x = x + layer(p, x)
    return {"out": x * params["scale"], "aux": jnp.sum(x)}


def params_tree(hidden=32):
    block = {"wq": S((16, hidden), F32), "wo": S((hidden, 16), F32)}
    return {"layers": [block, dict(block)], "scale": S((16,), F32)}


X = S((8, 16), F32)
PARAM_SHARDINGS = {
    "layers": [{"wq": ns(None, "model"), "wo": ns("model")}] * 2,
    "scale": None,
}


def scaled(k, x, *, mode):
    return x * k if mode == "mul" else x + k


def signature(module: shardwise.ShardedModule) -> list[str]:
    """Each main argument and result: its name (loc / jax.result_info) and sharding."""

    func = module._func("main")
    out = []
    for i, arg in enumerate(func.regions[0].entry.args):
        attrs = func_arg_attrs(func, i) or {}
        out.append(f"{arg.loc_text} {attrs.get('sdy.sharding')}")
    n = len(func.regions[0].entry.terminator.operands)
    for i in range(n):
        attrs = func_result_attrs(func, i) or {}
        out.append(f"{attrs.get('jax.result_info')} {attrs.get('sdy.sharding')}")
    return out


def all_shardings(module: shardwise.ShardedModule) -> list[str]:
    values = [v for op in module.ops() for v in op.results]
    values += module._func("main").regions[0].entry.args
    return [str(module.sharding_of(v)) for v in values]


# (id, from_jax args, from_jax kwargs, the same for jax.jit: (args, jit kwargs, call kwargs))
FORMS = [
    (
        "partition-specs-and-dict-mesh",
        (model, params_tree(), X),
        {
            "mesh": {"data": 2, "model": 4},
            "in_shardings": (
                {"layers": [{"wq": P(None, "model"), "wo": P("model")}] * 2, "scale": None},
                P("data"),
            ),
        },
        ((params_tree(), X), {"in_shardings": (PARAM_SHARDINGS, ns("data"))}, {}),
    ),
    (
        "named-shardings-no-mesh-argument",
        (model, params_tree(), X),
        {"in_shardings": (PARAM_SHARDINGS, ns("data"))},
        ((params_tree(), X), {"in_shardings": (PARAM_SHARDINGS, ns("data"))}, {}),
    ),
    (
        "prefix-pytree-one-spec-for-all-layers",
        (model, params_tree(), X),
        {"mesh": MESH, "in_shardings": ({"layers": P(None, "model"), "scale": None}, None)},
        (
            (params_tree(), X),
            {"in_shardings": ({"layers": ns(None, "model"), "scale": None}, None)},
            {},
        ),
    ),
    (
        "shape-dtype-structs-with-sharding",
        (model, params_tree(), S((8, 16), F32, sharding=ns("data"))),
        {},
        ((params_tree(), S((8, 16), F32, sharding=ns("data"))), {}, {}),
    ),
    (
        "out-shardings-pytree-with-none",
        (model, params_tree(), X),
        {
            "in_shardings": (PARAM_SHARDINGS, ns("data")),
            "out_shardings": {"out": P(None, "model"), "aux": None},
            "mesh": {"data": 2, "model": 4},
        },
        (
            (params_tree(), X),
            {
                "in_shardings": (PARAM_SHARDINGS, ns("data")),
                "out_shardings": {"out": ns(None, "model"), "aux": None},
            },
            {},
        ),
    ),
    (
        "one-sharding-for-every-argument",
        (lambda a, b: a @ b.T, X, X),
        {"in_shardings": ns("data")},
        ((X, X), {"in_shardings": ns("data")}, {}),
    ),
    (
        "static-argnums-and-argnames",
        (scaled, 3.0, X),
        {
            "static_argnums": 0,
            "static_argnames": "mode",
            "example_kwargs": {"mode": "mul"},
            "in_shardings": (P(None, "model"),),
            "mesh": {"data": 2, "model": 4},
        },
        # jax.jit refuses in_shardings with kwargs; the sharding rides on the struct there.
        (
            (3.0, S((8, 16), F32, sharding=ns(None, "model"))),
            {"static_argnums": 0, "static_argnames": "mode"},
            {"mode": "mul"},
        ),
    ),
    (
        "concrete-arrays-and-python-scalars",
        (lambda a, k: a * k, np.ones((8, 16), np.float32), 2.0),
        {"in_shardings": (P("data"), None), "mesh": {"data": 2, "model": 4}},
        ((np.ones((8, 16), np.float32), 2.0), {"in_shardings": (ns("data"), None)}, {}),
    ),
]


@pytest.mark.parametrize(
    ("ours", "kwargs", "jit"), [f[1:] for f in FORMS], ids=[f[0] for f in FORMS]
)
def test_input_form_matches_jax_jit_and_shardy(ours, kwargs, jit):
    fn, *args = ours
    module = shardwise.from_jax(fn, *args, **kwargs)
    jit_args, jit_kwargs, call_kwargs = jit
    reference = (
        jax.jit(fn, **jit_kwargs)
        .trace(*jit_args, **call_kwargs)
        .lower(lowering_platforms=("cpu",))
        .as_text(debug_info=True)
    )
    assert signature(module) == signature(shardwise.load(reference))
    propagated = shardwise.load(run_pass(reference, "sdy-propagation-pipeline"))
    module.propagate()
    assert all_shardings(module) == all_shardings(propagated)


def test_named_sharding_on_a_concrete_mesh():
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "model"))
    module = shardwise.from_jax(
        lambda a: jnp.sin(a), X, in_shardings=NamedSharding(mesh, P("data", "model"))
    )
    reference = (
        jax.jit(lambda a: jnp.sin(a), in_shardings=NamedSharding(mesh, P("data", "model")))
        .lower(X)
        .as_text()
    )
    ours = signature(module)[0].split(" ", 1)[1]
    assert ours in reference
    assert module.meshes()["mesh"].axis_size("data") == 1


def test_argument_and_result_names_are_in_the_module():
    from shardwise.explain.run import all_keys
    from shardwise.names import user_name

    module = shardwise.from_jax(model, params_tree(), X, in_shardings=(PARAM_SHARDINGS, ns("data")))
    names = [user_name(module.ir, k) for k in all_keys(module.ir)]
    assert [n for n in names if n is not None] == [
        "params['layers'][0]['wo']",
        "params['layers'][0]['wq']",
        "params['layers'][1]['wo']",
        "params['layers'][1]['wq']",
        "params['scale']",
        "x",
        "result['aux']",
        "result['out']",
    ]


def _error(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        shardwise.from_jax(fn, *args, **kwargs)
    error = info.value
    # Never JAX's traceback: the error is raised fresh, not from inside JAX's.
    assert error.__context__ is None or error.__suppress_context__
    assert error.location.file == __file__
    return error


def _bad_layer(spec):
    tree = {"layers": [{"wq": spec, "wo": None}, None], "scale": None}
    return (tree, None)


ERRORS = [
    (
        "non-dividing-dim",
        (model, params_tree(hidden=6), X),
        {"in_shardings": _bad_layer(P(None, "model")), "mesh": {"data": 2, "model": 4}},
        [
            "params['layers'][0]['wq']: dim 1 has size 6",
            "'model'=4",
            "make the dim a multiple of 4",
        ],
    ),
    (
        "non-dividing-two-axes",
        (model, params_tree(hidden=12), X),
        {"in_shardings": _bad_layer(ns(None, ("data", "model")))},
        ["params['layers'][0]['wq']: dim 1 has size 12", "'data'=2, 'model'=4 (8 shards)"],
    ),
    (
        "unknown-axis",
        (model, params_tree(), X),
        {"in_shardings": _bad_layer(P("tensor")), "mesh": {"data": 2, "model": 4}},
        ["params['layers'][0]['wq']: axis 'tensor'", "not in the mesh (data=2, model=4)"],
    ),
    (
        "rank-mismatch",
        (model, params_tree(), X),
        {"in_shardings": _bad_layer(P(None, "model", None)), "mesh": {"data": 2, "model": 4}},
        ["params['layers'][0]['wq'] has rank 2 (shape (16, 32))", "has 3 entries"],
    ),
    (
        "axis-on-two-dims",
        (model, params_tree(), X),
        {"in_shardings": _bad_layer(P("model", "model")), "mesh": {"data": 2, "model": 4}},
        ["axis 'model' shards both dim 0 and dim 1", "one dim only"],
    ),
    (
        "bad-spec-entry",
        (model, params_tree(), X),
        {"in_shardings": _bad_layer(P(3)), "mesh": {"data": 2, "model": 4}},
        ["params['layers'][0]['wq']: entry 0 of", "is 3; an entry is None"],
    ),
    (
        "in-shardings-wrong-length",
        (model, params_tree(), X),
        {"in_shardings": (None,), "mesh": MESH},
        ["in_shardings has 1 entries", "2 non-static positional arguments (params, x)"],
    ),
    (
        "in-shardings-not-a-prefix",
        (model, params_tree(), X),
        {"in_shardings": ({"layers": None, "bias": None}, None), "mesh": MESH},
        ["in_shardings at params has the entries", "['bias']", "must be a prefix"],
    ),
    (
        "out-shardings-rank-mismatch",
        (model, params_tree(), X),
        {"out_shardings": {"out": P("model", "data"), "aux": P("data")}, "mesh": MESH},
        ["result['aux'] has rank 0 (shape ())", "(P() for a scalar)"],
    ),
    (
        "out-shardings-not-a-prefix",
        (model, params_tree(), X),
        {"out_shardings": (None, None), "mesh": MESH},
        ["out_shardings at result is a tuple but the result there is a dict"],
    ),
    (
        "partition-spec-without-mesh",
        (model, params_tree(), X),
        {"in_shardings": (None, P("data"))},
        ["gives x the PartitionSpec", "pass mesh="],
    ),
    (
        "two-meshes",
        (lambda a, b: a + b, X, X),
        {"in_shardings": (ns("data"), P("data")), "mesh": {"data": 8}},
        ["gives a a NamedSharding on the mesh (data=2, model=4)", "mesh= is (data=8)"],
    ),
    (
        "sharding-given-twice",
        (lambda a: a, S((8, 16), F32, sharding=ns("data"))),
        {"in_shardings": P("model")},
        ["a has .sharding P('data',) but in_shardings gives P('model',)"],
    ),
    (
        "non-array-argument",
        (lambda a, mode: a, X, "mul"),
        {},
        ["argument mode is a str", "static_argnums"],
    ),
    (
        "bad-mesh",
        (lambda a: a, X),
        {"mesh": {"data": 0}},
        ["'data': 0 is not an axis name with a positive size"],
    ),
]


@pytest.mark.parametrize(
    ("call", "kwargs", "expected"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors_name_the_argument_and_the_fix(call, kwargs, expected):
    fn, *args = call
    message = _error(fn, *args, **kwargs).message
    for part in expected:
        assert part in message


def test_function_errors_keep_jax_message_without_its_traceback():
    def broken(a):
        return a @ a  # (8, 16) @ (8, 16): contracting dims differ

    error = _error(broken, X)
    assert "jax.jit could not trace and lower the function" in error.message
    assert "dot_general" in error.message


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((X,), {"static_argnums": 5}, "static_argnums=(5,), but only accepts 2"),
        ((X, [1, 2]), {"static_argnums": 1}, "Non-hashable static arguments"),
    ],
    ids=["static-argnum-out-of-range", "unhashable-static-argument"],
)
def test_bad_static_arguments_keep_jax_message(args, kwargs, expected):
    def fn(a, b=None):
        return a

    error = _error(fn, *args, **kwargs)
    assert error.message.startswith("jax.jit could not trace and lower the function: ")
    assert expected in error.message


def test_negative_static_argnums_count_from_the_last_argument_given():
    def fn(a, k, b=None):
        return a * k

    common = {"in_shardings": (P("data"),), "mesh": {"data": 2}}
    by_sign = shardwise.from_jax(fn, X, 2.0, static_argnums=-1, **common)
    by_index = shardwise.from_jax(fn, X, 2.0, static_argnums=1, **common)
    assert signature(by_sign) == signature(by_index)
    assert signature(by_sign)[0] == 'loc("a") #sdy.sharding<@mesh, [{"data"}, {}]>'


def test_a_spec_tree_where_the_argument_is_an_array():
    error = _error(lambda a: a, X, in_shardings=({"w": P()},), mesh={"data": 2})
    assert "in_shardings has a dict at a where the argument is an array" in error.message

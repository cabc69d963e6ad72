"""shardwise tutorial: a JAX model with NamedShardings, propagated, explained, costed; then a
rule for a custom call.

Run it as a script (`python docs/tutorial/tutorial.py`); the test suite runs it too and checks
what it prints. No devices are needed: JAX lowers against an abstract 2x4 mesh.
"""

import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import shardwise

# 1. A two-layer residual MLP whose parameters are a pytree, as real models are. Data
#    parallelism on the batch, tensor parallelism on the hidden dimension (Megatron style:
#    w_in split by columns, w_out by rows). Only the inputs are annotated, as with jax.jit;
#    propagation decides the rest.

mesh = AbstractMesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def layer(p, x):
    h = jnp.tanh(x @ p["w_in"])
    return h @ p["w_out"]


def model(params, x):
    for p in params["layers"]:
        x = x + layer(p, x)
    return {"y": x, "norm": jnp.sum(x * x)}


f32 = jnp.float32
block = {
    "w_in": jax.ShapeDtypeStruct((64, 256), f32),
    "w_out": jax.ShapeDtypeStruct((256, 64), f32),
}
params = {"layers": [block, dict(block)]}
x = jax.ShapeDtypeStruct((16, 64), f32)
tp = {"w_in": NamedSharding(mesh, P(None, "model")), "w_out": NamedSharding(mesh, P("model"))}
in_shardings = ({"layers": [tp, tp]}, NamedSharding(mesh, P("data")))
module = shardwise.from_jax(model, params, x, in_shardings=in_shardings)

# 2. Propagate with Shardy's full pipeline (what jax.jit runs) and ask by the names the model
#    uses: pytree paths of the arguments and results, Python lines for what lies between.
module.propagate()
print("y:", module.sharding_of("result['y']"))
print("norm:", module.sharding_of("result['norm']"))
hidden_line = layer.__code__.co_firstlineno + 1  # h = jnp.tanh(x @ p["w_in"])
for value in module.explain(f"tutorial.py:{hidden_line}").to_json()[:2]:
    print("hidden:", value["op"].split(" at ")[0], value["sharding"])

# 3. Why is y not sharded on "model"? The second matmul contracts the hidden dimension
#    (sharded on "model"): a reduction factor, which propagation never moves onto a result.
#    The result holds partial sums over "model": an all-reduce, which the report counts.
#    (In a notebook, `module.explain(...)` and `module.report()` render as HTML.)
why = module.explain(f"tutorial.py:{hidden_line + 1}")  # return h @ p["w_out"]
first = why.to_json()[0]
print(str(why).splitlines()[0])
print("  sharding:", first["sharding"])
(stop,) = [s for s in first["stopped"] if s["axis"] == '"model"']
print("  model stops:", stop["kind"], "factor", stop["factor"])
report = module.report()
print(report)
page = Path(tempfile.mkdtemp()) / "report.html"
page.write_text(report.html())
print("html report written:", "<svg" in page.read_text())

# 4. A custom call Shardy does not know blocks propagation. Give it a rule in the einsum-like
#    notation of JAX's custom_partitioning: a row-wise op (the softmax dim needs replication:
#    propagation may still carry the sharding through, explicit reshards then gather it).
TEXT = """
sdy.mesh @mesh = <["data"=2, "model"=4]>
func.func @main(%arg0: tensor<16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}) -> tensor<16x64xf32> {
  %0 = stablehlo.custom_call @my_row_softmax(%arg0) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %1 = stablehlo.exponential %0 : tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}
"""
before = shardwise.load(TEXT).propagate("sdy-basic-propagate")
print("without a rule:", before.sharding_of("main:result0"))

shardwise.register_rule("my_row_softmax", "i j -> i j", need_replication_factors=("j",))
after = shardwise.load(TEXT).propagate("sdy-basic-propagate")
print("with a rule:", after.sharding_of("main:result0"))
print(
    "rule written back:",
    "sdy.op_sharding_rule<([i, j])->([i, j]) {i=16, j=64} need_replication={j}, custom>"
    in after.text,
)

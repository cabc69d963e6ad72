"""shardwise tutorial: lower a JAX model, propagate, explain, add a rule for a custom call.

Run it as a script (`python docs/tutorial/tutorial.py`); the test suite runs it too and checks
what it prints. No devices are needed: JAX lowers against an abstract 2x4 mesh.
"""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

import shardwise

# 1. Lower a two-layer MLP with data parallelism on the batch and tensor parallelism on the
#    hidden dimension. Only the inputs are annotated; propagation decides the rest.


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


x = jax.ShapeDtypeStruct((16, 64), jnp.float32)
w1 = jax.ShapeDtypeStruct((64, 256), jnp.float32)
w2 = jax.ShapeDtypeStruct((256, 64), jnp.float32)
module = shardwise.from_jax(
    mlp,
    x,
    w1,
    w2,
    mesh={"data": 2, "model": 4},
    in_shardings=[P("data", None), P(None, "model"), P("model", None)],
)

# 2. Propagate with Shardy's full pipeline (what jax.jit runs) and look at the results.
module.propagate()
print("output:", module.sharding_of("main:result0"))
for op in module.ops():
    if op.name == "stablehlo.tanh":
        print("hidden activation:", module.sharding_of(op.results[0]))

# 3. Why is the output not sharded on "model"? Ask for the sharding rules: the second matmul
#    contracts the hidden dimension (sharded on "model"), a reduction factor, which propagation
#    never moves onto a result: the result holds partial sums over "model".
rules = shardwise.from_jax(
    mlp,
    x,
    w1,
    w2,
    mesh={"data": 2, "model": 4},
    in_shardings=[P("data", None), P(None, "model"), P("model", None)],
).propagate("sdy-populate-op-sharding-rules")
for op in rules.ops():
    if op.name == "stablehlo.dot_general":
        print("matmul rule:", op.attributes["sdy.sharding_rule"])

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

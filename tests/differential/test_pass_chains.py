"""A chain of passes is verified between passes, as MLIR's pass manager does.

`sdy-close-shardings` turns an open dim with a priority (`{?}p1`) into a closed empty one
that keeps its priority, which the verifier rejects. Run alone, the module fails when it is
written; in a chain, the reference stops right after that pass even when the next pass would
have written a valid module. Ours must stop too, naming the pass (found by the fuzzer, seed
1900). Inputs are ours.
"""

from __future__ import annotations

import pytest

from shardwise.errors import VerifyError
from shardwise.io.mlir import load_text, write_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.passes import run_pass as run_ours

T = "tensor<4x6xf32>"
PRIORITY_ON_OPEN_DIM = f"""sdy.mesh @m = <["y"=1]>
func.func @main(%a: {T}) -> {T} {{
  %0 = sdy.reshard %a <@m, [{{?}}p1, {{}}], replicated={{"y"}}> : {T}
  return %0 : {T}
}}
"""
VALID = f"""sdy.mesh @m = <["x"=2]>
func.func @main(%a: {T} {{sdy.sharding = #sdy.sharding<@m, [{{"x", ?}}, {{?}}]>}}) -> {T} {{
  %0 = stablehlo.negate %a : {T}
  return %0 : {T}
}}
"""
CHAIN = "sdy-close-shardings,sdy-remove-size-one-axes"


def test_chain_stops_after_the_pass_that_writes_an_invalid_module() -> None:
    with pytest.raises(ReferenceError, match="empty and closed but has a priority"):
        run_pass(PRIORITY_ON_OPEN_DIM, CHAIN.split(","))
    module = load_text(PRIORITY_ON_OPEN_DIM, "chain.mlir")
    with pytest.raises(VerifyError) as info:
        run_ours(module, CHAIN)
    message = str(info.value)
    assert "after pass 'sdy-close-shardings'" in message
    assert "dim 0 is empty and closed but has a priority" in message
    assert message.startswith("chain.mlir:3:8:")


def test_valid_chain_matches_the_reference() -> None:
    module = load_text(VALID)
    run_ours(module, CHAIN)
    assert write_text(module) == run_pass(VALID, CHAIN.split(","))

"""`shardwise verify` reports what `sdy-propagation-pipeline` would reject in a module that
MLIR's verifier accepts, with the reference pipeline's message and position. Inputs are our own.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardwise.io.mlir import load_text
from shardwise.io.reference import ReferenceError, run_pass
from shardwise.propagation.preconditions import propagation_precondition_error
from tests.unit.cli_run import run_cli

MESH = 'sdy.mesh @m = <["x"=2, "y"=2]>\n'


def _main(args: str, results: str, body: str, ret: str) -> str:
    return MESH + f"func.func @main({args}) -> ({results}) {{\n{body}  return {ret}\n}}\n"


REJECTED = {
    "dynamic_dim": _main(
        "%a: tensor<?x16xf32>",
        "tensor<?x16xf32>",
        "  %0 = stablehlo.negate %a : tensor<?x16xf32>\n",
        "%0 : tensor<?x16xf32>",
    ),
    "dynamic_in_a_public_helper": _main(
        "%a: tensor<4xf32>", "tensor<4xf32>", "", "%a : tensor<4xf32>"
    )
    + "func.func @helper(%a: tensor<4x?xi32>) -> tensor<4x?xi32> {\n"
    "  %0 = stablehlo.not %a : tensor<4x?xi32>\n  return %0 : tensor<4x?xi32>\n}\n",
    "tuple": _main(
        "%a: tensor<2xf32>, %b: tensor<3xi8>",
        "tuple<tensor<2xf32>, tensor<3xi8>>",
        "  %0 = stablehlo.tuple %a, %b : tuple<tensor<2xf32>, tensor<3xi8>>\n",
        "%0 : tuple<tensor<2xf32>, tensor<3xi8>>",
    ),
    "group_shapes_differ": _main(
        "%a: tensor<2x8xf32>, %b: tensor<8x2xf32>",
        "tensor<2x8xf32>",
        "  sdy.sharding_group %a group_id=3 : tensor<2x8xf32>\n"
        "  sdy.sharding_group %b group_id=3 : tensor<8x2xf32>\n",
        "%a : tensor<2x8xf32>",
    ),
    "group_crosses_manual_computation": _main(
        "%a: tensor<8xf32>",
        "tensor<8xf32>",
        '  %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"x"}]>] '
        'out_shardings=[<@m, [{"x"}]>] manual_axes={"x"} (%l: tensor<4xf32>) {\n'
        "    %1 = stablehlo.negate %l : tensor<4xf32>\n"
        "    sdy.sharding_group %1 group_id=0 : tensor<4xf32>\n"
        "    sdy.return %1 : tensor<4xf32>\n"
        "  } : (tensor<8xf32>) -> tensor<8xf32>\n"
        "  %2 = stablehlo.slice %a [0:4] : (tensor<8xf32>) -> tensor<4xf32>\n"
        "  sdy.sharding_group %2 group_id=0 : tensor<4xf32>\n",
        "%0 : tensor<8xf32>",
    ),
    "manual_axes_without_shardings": _main(
        "%a: tensor<8xf32>",
        "tensor<8xf32>",
        '  sdy.manual_computation() in_shardings=[] out_shardings=[] manual_axes={"y"} () {\n'
        '    "stablehlo.custom_call"() {call_target_name = "tick", has_side_effect = true} '
        ": () -> ()\n"
        "    sdy.return\n"
        "  } : () -> ()\n",
        "%a : tensor<8xf32>",
    ),
}

ACCEPTED = {
    # symbol-dce drops the private callee before propagation looks at shapes
    "dynamic_in_a_dead_private_func": _main(
        "%a: tensor<4xf32>", "tensor<4xf32>", "", "%a : tensor<4xf32>"
    )
    + "func.func private @dead(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
    "  %0 = stablehlo.abs %a : tensor<?xf32>\n  return %0 : tensor<?xf32>\n}\n",
    # only block arguments are dynamic: allValidShapes looks at op results
    "dynamic_argument_returned": _main(
        "%a: tensor<?x4xf32>", "tensor<?x4xf32>", "", "%a : tensor<?x4xf32>"
    ),
    "token": _main(
        "%a: tensor<4xf32>",
        "tensor<4xf32>",
        "  %t = stablehlo.create_token : !stablehlo.token\n",
        "%a : tensor<4xf32>",
    ),
}


def _reference_error(text: str) -> tuple[str, int, int] | None:
    try:
        run_pass(text, "sdy-propagation-pipeline")
    except ReferenceError as e:
        location, message = e.diagnostics[0].split(": ", 1)
    else:
        return None
    line, col = re.search(r":(\d+):(\d+)", location).groups()  # type: ignore[union-attr]
    return message, int(line), int(col)


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_verify_reports_the_pipeline_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = REJECTED[name]
    run_pass(text, None)  # Shardy's verifier accepts it
    expected = _reference_error(text)
    assert expected is not None, "the reference pipeline accepted the case"
    message, line, col = expected
    path = tmp_path / "in.mlir"
    path.write_text(text)
    code, out, err = run_cli(["verify", str(path)], capsys)
    assert code == 1 and out == ""
    assert err.startswith(f"{path}:{line}:{col}: error: {message}\n")


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_verify_accepts_what_the_pipeline_accepts(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = ACCEPTED[name]
    assert _reference_error(text) is None
    path = tmp_path / "in.mlir"
    path.write_text(text)
    assert run_cli(["verify", str(path)], capsys) == (0, f"{path}: ok\n", "")


def test_the_module_is_left_unchanged() -> None:
    module = load_text(REJECTED["group_shapes_differ"])
    before = [op.name for op in module.walk()]
    assert propagation_precondition_error(module) is not None
    assert [op.name for op in module.walk()] == before
